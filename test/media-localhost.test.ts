import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { incomingMediaKey } from "../src/media/incoming";
import { createCampaign, recipients } from "./campaign-fixtures";
import { accountD1 } from "./databases";
import { call, createAccount, expectProblem, sessionStub, waitFor } from "./helpers";
import { MEDIA_HOST, mediaBytes } from "./media-host";
import { connectedSession, type SendResponse, storedMessageCount, waitForMessages } from "./message-fixtures";
import { network } from "./network";

// MEDIA_ALLOW_HTTP_LOCALHOST (docs/configuration.md, Overview; src/lib/media-url.ts `mediaUrlProblem`):
// this file runs in the `sandbox` project (the default, false) and in `media-localhost` (true,
// vitest.config.ts), each the whole runtime, so the session objects that download inbound media
// see the setting as a deployment would. The file server on the developer's machine is faked on
// the test network at its own origins, like the public media host (test/media-host.ts).

const ALLOWED = env.MEDIA_ALLOW_HTTP_LOCALHOST === "true";
const LOCAL = "http://localhost:8123";
const CONTACT = "+14155550101";

/** Answers GETs of `origin` + `path` with a PNG of {@link mediaBytes}(`path`), counting them. */
function localFile(origin: string, path: string, contentType = "image/png") {
  const hits: string[] = [];
  network.use(
    http.get(`${origin}${path}`, ({ request }) => {
      hits.push(request.url);
      return HttpResponse.arrayBuffer(mediaBytes(path).slice().buffer, {
        headers: { "Content-Type": contentType },
      });
    }),
  );
  return hits;
}

/** Sends an image at `mediaUrl` to one number from a fresh connected session of a fresh account. */
async function sendImage(mediaUrl: string) {
  const { key, accountId } = await createAccount(10);
  const session = (await connectedSession(key)).id;
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: session, to_number: [CONTACT], type: "image", media_url: mediaUrl },
  });
  return { res, key, accountId, session };
}

/** A sandbox inbound image from `mediaUrl`; its message once the session kept or refused its media. */
async function inboundImage(mediaUrl: string) {
  const { key, accountId } = await createAccount(10);
  const session = await connectedSession(key);
  const res = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${session.id}/inbound`, {
    key,
    body: { from_number: CONTACT, type: "image", content: "look", media_url: mediaUrl },
  });
  expect(res.status).toBe(201);
  const id = res.body.data.id;
  const row = await waitFor(
    async () => {
      await runDurableObjectAlarm(sessionStub(session.id));
      const found = await (await accountD1(accountId))
        .prepare("SELECT media_url, media_key, media_content_type, metadata FROM messages WHERE id = ?")
        .bind(id)
        .first<{
          media_url: string;
          media_key: string | null;
          media_content_type: string | null;
          metadata: string;
        }>();
      return found && (found.media_key || JSON.parse(found.metadata).media_error) ? found : undefined;
    },
    { reason: "the session's alarm to keep or refuse the media", timeoutMs: 5_000, intervalMs: 10 },
  );
  return { id, row, metadata: JSON.parse(row.metadata) as Record<string, unknown> };
}

describe.runIf(ALLOWED)("MEDIA_ALLOW_HTTP_LOCALHOST=true", () => {
  it("sends an image from http://localhost:8123: fetched there once, stored, sent with that media_url", async () => {
    const hits = localFile(LOCAL, "/pic.png");
    const { res, key, accountId, session } = await sendImage(`${LOCAL}/pic.png`);

    expect(res.status).toBe(201);
    expect(hits).toEqual([`${LOCAL}/pic.png`]);
    const [sent] = res.body.data.messages;
    expect(sent?.media_url).toBe(`${LOCAL}/pic.png`);
    const row = await (await accountD1(accountId))
      .prepare("SELECT media_url, media_key, media_content_type FROM messages WHERE id = ?")
      .bind(sent?.id)
      .first<{ media_url: string; media_key: string; media_content_type: string }>();
    expect(row).toMatchObject({ media_url: `${LOCAL}/pic.png`, media_content_type: "image/png" });
    const object = await env.MEDIA.get(row?.media_key ?? "");
    expect(new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(
      mediaBytes("/pic.png"),
    );

    const [message] = await waitForMessages(key, [sent?.id ?? ""]);
    expect(message?.status).toBe("sent");
    const received = await call<{ data: { type: string; media_url: string }[] }>(
      "GET",
      `/sandbox/sessions/${session}/received?to_number=${encodeURIComponent(CONTACT)}`,
      { key },
    );
    expect(received.body.data).toMatchObject([{ type: "image", media_url: `${LOCAL}/pic.png` }]);
    expect(hits).toHaveLength(1);
  });

  it.each(["https://localhost:8443/pic.png", "http://127.0.0.1:9000/pic.png", "http://127.0.0.1/pic.png"])(
    "takes %s too (http or https, any port)",
    async (url) => {
      const origin = new URL(url).origin;
      const hits = localFile(origin, "/pic.png");
      const { res } = await sendImage(url);
      expect(res.status).toBe(201);
      expect(res.body.data.messages[0]?.media_url).toBe(url);
      expect(hits).toEqual([url]);
    },
  );

  it("creates a campaign whose media is on 127.0.0.1, fetched once at creation", async () => {
    const hits = localFile("http://127.0.0.1:8123", "/promo.jpg", "image/jpeg");
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const campaign = await createCampaign(key, {
      chatapp_session_ids: [session],
      type: "image",
      content: "Hi {{name}}",
      media_url: "http://127.0.0.1:8123/promo.jpg",
      recipients: recipients(2),
    });
    expect(hits).toEqual(["http://127.0.0.1:8123/promo.jpg"]);
    const stored = await (await accountD1(accountId))
      .prepare("SELECT media_url, media_key, media_content_type FROM campaigns WHERE id = ?")
      .bind(campaign.id)
      .first<{ media_url: string; media_key: string; media_content_type: string }>();
    expect(stored).toMatchObject({
      media_url: "http://127.0.0.1:8123/promo.jpg",
      media_content_type: "image/jpeg",
    });
    expect(await env.MEDIA.head(stored?.media_key ?? "")).not.toBeNull();
  });

  it("keeps a sandbox inbound image from http://localhost:8123", async () => {
    const hits = localFile(LOCAL, "/in/photo.png");
    const { id, row } = await inboundImage(`${LOCAL}/in/photo.png`);
    expect(hits).toEqual([`${LOCAL}/in/photo.png`]);
    expect(row.media_key).toBe(incomingMediaKey(id));
    expect(row.media_content_type).toBe("image/png");
    expect(row.media_url).toBe(`http://localhost/v1/chatapp/messages/${id}/media`);
    const object = await env.MEDIA.get(incomingMediaKey(id));
    expect(new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(
      mediaBytes("/in/photo.png"),
    );
  });

  it.each([
    ["http://10.0.0.1/pic.png", "must use https"],
    ["http://example.com/pic.png", "must use https"],
    ["https://10.0.0.1/pic.png", "must not point at a private address"],
    ["http://[::1]:8123/pic.png", "must use https"],
    ["http://127.0.0.2:8123/pic.png", "must use https"],
    ["http://localhost.example.com/pic.png", "must use https"],
    ["http://user:pw@localhost:8123/pic.png", "must use https"],
    ["http://localhost:8123@example.com/pic.png", "must use https"],
    ["https://cdn.example.test:8443/pic.png", "must use port 443"],
  ])("still refuses %s at validation (%s), fetching nothing", async (url, problem) => {
    const { res, accountId } = await sendImage(url);
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual({ media_url: [problem] });
    expect(await storedMessageCount(accountId)).toBe(0);
  });

  it.each(["http://10.0.0.1/pic.png", "http://example.com/pic.png"])(
    "still refuses a sandbox inbound %s (media_error refused), fetching nothing",
    async (url) => {
      const { row, metadata } = await inboundImage(url);
      expect(row.media_key).toBeNull();
      expect(metadata.media_error).toMatchObject({ reason: "refused", tries: 1 });
    },
  );

  const redirect = (from: string, to: string) => {
    network.use(http.get(from, () => HttpResponse.text("", { status: 302, headers: { Location: to } })));
  };

  it("follows a redirect from localhost to another port of localhost", async () => {
    redirect(`${LOCAL}/moved.png`, "http://localhost:9000/pic.png");
    const hits = localFile("http://localhost:9000", "/pic.png");
    const { res } = await sendImage(`${LOCAL}/moved.png`);
    expect(res.status).toBe(201);
    expect(hits).toEqual(["http://localhost:9000/pic.png"]);
  });

  it.each([
    [`${LOCAL}/out.png`, `${MEDIA_HOST}/pic.png`, /another host \(cdn\.example\.test\)/],
    [`${LOCAL}/out.png`, "http://127.0.0.1:8123/pic.png", /another host \(127\.0\.0\.1\)/],
    [`${LOCAL}/out.png`, "http://10.0.0.1/pic.png", /http:\/\/10\.0\.0\.1 is refused: it must use https/],
    [`${MEDIA_HOST}/in.png`, `${LOCAL}/pic.png`, /another host \(localhost\)/],
  ])("refuses a redirect from %s to %s (redirect_refused)", async (from, to, detail) => {
    redirect(from, to);
    const { res, accountId } = await sendImage(from);
    const problem = expectProblem(res, 422, "media_unavailable");
    expect(problem.reason).toBe("redirect_refused");
    expect(problem.detail).toMatch(detail);
    expect(await storedMessageCount(accountId)).toBe(0);
  });
});

describe.skipIf(ALLOWED)("MEDIA_ALLOW_HTTP_LOCALHOST=false (the default)", () => {
  it.each([
    [`${LOCAL}/pic.png`, "must use https"],
    ["http://127.0.0.1:9000/pic.png", "must use https"],
    ["https://localhost/pic.png", "must point at a public host"],
    ["https://127.0.0.1/pic.png", "must not point at a loopback address"],
  ])("refuses a send of %s at validation (%s), fetching nothing", async (url, problem) => {
    const hits = localFile(new URL(url).origin, "/pic.png");
    const { res, accountId } = await sendImage(url);
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual({ media_url: [problem] });
    expect(hits).toEqual([]);
    expect(await storedMessageCount(accountId)).toBe(0);
  });

  it("refuses a campaign whose media_url is on localhost, creating nothing", async () => {
    const hits = localFile(LOCAL, "/promo.jpg", "image/jpeg");
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const res = await call("POST", "/v1/chatapp/campaigns", {
      key,
      body: {
        name: "Run",
        chatapp_session_ids: [session],
        type: "image",
        content: "Hi {{name}}",
        media_url: `${LOCAL}/promo.jpg`,
        recipients: recipients(2),
      },
    });
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual({ media_url: ["must use https"] });
    expect(hits).toEqual([]);
    const count = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM campaigns WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });

  it("records a sandbox inbound image from localhost as refused, fetching nothing", async () => {
    const hits = localFile(LOCAL, "/in/photo.png");
    const { row, metadata } = await inboundImage(`${LOCAL}/in/photo.png`);
    expect(row.media_key).toBeNull();
    expect(metadata.media_error).toMatchObject({ reason: "refused", tries: 1 });
    expect(hits).toEqual([]);
  });
});
