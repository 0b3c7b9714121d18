import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { MEDIA_LINK_TTL_SECONDS, signedMediaUrl } from "../../src/media/link";
import { MEDIA_URL_SECRET, PUBLIC_URL } from "../gateway-config";
import { call, createAccount, createSession, expectProblem } from "../helpers";
import { MEDIA_HOST, mediaBytes } from "../media-host";
import { balanceOf, type SendResponse, storedMessageCount, waitForMessages } from "../message-fixtures";
import { network } from "../network";
import { FakeWaha, postWahaEvent } from "./fake-waha";

// WAHA runs inside the operator's network, so it must never fetch a caller's media_url: it gets
// a short-lived signed link of ours to the copy the service fetched and stored, and that link
// answers the same bytes (docs/security.md, Media).

const PHONE = "+14155552671";
const ME = { id: "14155552671@c.us", pushName: "Ada" };
const TO = ["+14155550123", "+14155550124"];

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

async function connectedWahaSession(key: string) {
  const { session } = await createSession(key);
  waha.link(session.session_id, PHONE, ME.pushName);
  await postWahaEvent(session.session_id, "session.status", { status: "WORKING" }, { me: ME });
  return session.id;
}

/** The path and query of a link on our host (`PUBLIC_URL`), to call the Worker with. */
function onOurHost(link: string): string {
  expect(link.startsWith(`${PUBLIC_URL}/media/`)).toBe(true);
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
}

/** Sends an image to `TO` from a connected WAHA session; answers its key and the sendImage bodies. */
async function sendImage(mediaUrl: string) {
  const { key, accountId } = await createAccount(10);
  const session = await connectedWahaSession(key);
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: session, to_number: TO, type: "image", media_url: mediaUrl, content: "Look" },
  });
  return { res, key, accountId };
}

describe("media on WAHA", () => {
  it("hands WAHA a signed link of ours, never the caller's URL, fetched once for every recipient", async () => {
    const hits: string[] = [];
    network.use(
      http.get(`${MEDIA_HOST}/shop/cat.jpg`, ({ request }) => {
        hits.push(request.url);
        return HttpResponse.arrayBuffer(mediaBytes("cat").slice().buffer, {
          headers: { "Content-Type": "image/jpeg" },
        });
      }),
    );
    const { res, key } = await sendImage(`${MEDIA_HOST}/shop/cat.jpg`);
    expect(res.status).toBe(201);
    await waitForMessages(
      key,
      res.body.data.messages.map((m) => m.id),
    );

    const sends = waha.sent.filter((s) => s.path === "/api/sendImage");
    expect(sends).toHaveLength(2);
    expect(JSON.stringify(waha.bodies)).not.toContain(MEDIA_HOST);
    for (const sent of sends) {
      const file = sent.body.file as { url: string; mimetype: string };
      expect(file.mimetype).toBe("image/jpeg");
      const served = await call("GET", onOurHost(file.url));
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe("image/jpeg");
      expect(served.headers.get("x-content-type-options")).toBe("nosniff");
      expect(served.headers.get("cache-control")).toBe("private, no-store");
      expect(new TextEncoder().encode(served.text)).toEqual(mediaBytes("cat"));
    }
    expect(hits).toHaveLength(1);
    // What the API shows is the caller's URL.
    const shown = await call<{ data: { media_url: string } }>(
      "GET",
      `/v1/chatapp/messages/${res.body.data.messages[0]?.id}`,
      { key },
    );
    expect(shown.body.data.media_url).toBe(`${MEDIA_HOST}/shop/cat.jpg`);
  });

  it("refuses media that redirect into the network with 422, before WAHA or the ledger sees anything", async () => {
    network.use(
      http.get(`${MEDIA_HOST}/shop/cat.jpg`, () =>
        HttpResponse.text("", {
          status: 302,
          headers: { Location: "http://169.254.169.254/latest/meta-data/" },
        }),
      ),
    );
    const { res, accountId } = await sendImage(`${MEDIA_HOST}/shop/cat.jpg`);
    expect(expectProblem(res, 422, "media_unavailable").reason).toBe("redirect_refused");
    expect(waha.sent).toEqual([]);
    expect(await balanceOf(accountId)).toBe(10);
    expect(await storedMessageCount(accountId)).toBe(0);
  });
});

describe("GET /media/{key}", () => {
  const stored = async () => {
    const key = crypto.randomUUID();
    await env.MEDIA.put(key, mediaBytes(key), { httpMetadata: { contentType: "application/pdf" } });
    return key;
  };
  const signer = { publicUrl: PUBLIC_URL, secret: MEDIA_URL_SECRET };

  it("answers the stored bytes and content type for a valid link", async () => {
    const key = await stored();
    const res = await call("GET", onOurHost(await signedMediaUrl(signer, key, Date.now())));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-length")).toBe(String(mediaBytes(key).byteLength));
    expect(res.headers.get("content-disposition")).toBe("attachment");
    expect(res.text).toBe(new TextDecoder().decode(mediaBytes(key)));
  });

  it("refuses an expired link with 403 media_link_invalid", async () => {
    const key = await stored();
    const issued = Date.now() - (MEDIA_LINK_TTL_SECONDS + 1) * 1000;
    const res = await call("GET", onOurHost(await signedMediaUrl(signer, key, issued)));
    expect(expectProblem(res, 403, "media_link_invalid").detail).toBe("The media link has expired.");
  });

  it.each([
    ["a tampered signature", (url: URL) => url.searchParams.set("signature", "0".repeat(64))],
    [
      "a later expiry",
      (url: URL) => url.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600)),
    ],
    ["no signature", (url: URL) => url.searchParams.delete("signature")],
    ["no expiry", (url: URL) => url.searchParams.delete("expires")],
    ["another secret", (url: URL) => url.searchParams.set("signature", "f".repeat(64))],
  ])("refuses %s with 403 media_link_invalid", async (_case, tamper) => {
    const key = await stored();
    const url = new URL(await signedMediaUrl(signer, key, Date.now()));
    tamper(url);
    const res = await call("GET", `${url.pathname}${url.search}`);
    expect(expectProblem(res, 403, "media_link_invalid").detail).toBe(
      "The media link's signature is missing or wrong.",
    );
  });

  it("refuses the link of one file for another", async () => {
    const [first, second] = [await stored(), await stored()];
    const url = new URL(await signedMediaUrl(signer, first, Date.now()));
    const res = await call("GET", `/media/${second}${url.search}`);
    expectProblem(res, 403, "media_link_invalid");
  });

  it("answers 404 for a validly signed key that is not stored, and for a malformed key", async () => {
    const missing = crypto.randomUUID();
    expectProblem(
      await call("GET", onOurHost(await signedMediaUrl(signer, missing, Date.now()))),
      404,
      "not_found",
    );
    expectProblem(await call("GET", "/media/not-a-key?expires=1&signature=00"), 404, "not_found");
  });
});
