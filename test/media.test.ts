import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { PART_BYTES } from "../src/media/store";
import { campaignMessages, command, createCampaign, recipients, waitForCampaign } from "./campaign-fixtures";
import { accountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem } from "./helpers";
import { MEDIA_HOST, mediaBytes } from "./media-host";
import {
  balanceOf,
  connectedSession,
  ledgerOf,
  type SendResponse,
  storedMessageCount,
  waitForMessages,
} from "./message-fixtures";
import { network } from "./network";

// The service fetches a message's media itself, from the Worker (which reaches only the public
// internet), once per send or campaign, under WhatsApp's limits, and stores it in R2; nothing
// else ever fetches the caller's URL (docs/security.md, Media). The media host is faked on the
// test network (test/media-host.ts); these tests run on the sandbox gateway, which fetches
// nothing. test/waha/waha-media.test.ts covers the signed links real gateways get.

const TO = ["+14155552671", "+14155552672", "+14155552673"];
const MB = 1024 * 1024;

/** Sends `type` media at `mediaUrl` to `to` from a fresh connected session of a fresh account. */
async function sendMedia(mediaUrl: string, type = "image", to = TO.slice(0, 1)) {
  const { key, accountId } = await createAccount(10);
  const session = (await connectedSession(key)).id;
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: session, to_number: to, type, media_url: mediaUrl, content: null },
  });
  return { res, key, accountId, session };
}

/** The keys of the objects in the `MEDIA` bucket. */
async function storedKeys(): Promise<string[]> {
  return (await env.MEDIA.list()).objects.map((object) => object.key);
}

/** A handler for one path of the media host that counts its requests in `hits`. */
function counted(path: string, answer: () => Response) {
  const hits: string[] = [];
  return {
    hits,
    handler: http.get(`${MEDIA_HOST}${path}`, ({ request }) => {
      hits.push(request.url);
      return answer();
    }),
  };
}

/**
 * A body of `total` bytes served in 64 KiB chunks as they are read, without `Content-Length`;
 * `pulled()` says how many bytes the reader asked for.
 */
function streamedBody(total: number, fill = 0x41) {
  let pulled = 0;
  const chunk = new Uint8Array(64 * 1024).fill(fill);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= total) return controller.close();
      const size = Math.min(chunk.byteLength, total - pulled);
      pulled += size;
      controller.enqueue(chunk.slice(0, size));
    },
  });
  return { body, pulled: () => pulled };
}

async function sha256(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("a send with media", () => {
  it("fetches the media once for every recipient, stores it, and shows the caller's URL", async () => {
    const { hits, handler } = counted("/catalogue/cat.png", () =>
      HttpResponse.arrayBuffer(mediaBytes("cat").slice().buffer, {
        headers: { "Content-Type": "image/png" },
      }),
    );
    network.use(handler);
    const before = await storedKeys();
    const { res, key, accountId, session } = await sendMedia(`${MEDIA_HOST}/catalogue/cat.png`, "image", TO);

    expect(res.status).toBe(201);
    expect(hits).toEqual([`${MEDIA_HOST}/catalogue/cat.png`]);
    expect(res.body.data.messages.map((m) => m.media_url)).toEqual(
      TO.map(() => `${MEDIA_HOST}/catalogue/cat.png`),
    );
    const { results: rows } = await (await accountD1(accountId))
      .prepare("SELECT media_url, media_key, media_content_type FROM messages WHERE account_id = ?")
      .bind(accountId)
      .all<{ media_url: string; media_key: string; media_content_type: string }>();
    expect(rows).toHaveLength(3);
    const mediaKey = rows[0]?.media_key ?? "";
    expect(mediaKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(rows).toEqual(
      TO.map(() => ({
        media_url: `${MEDIA_HOST}/catalogue/cat.png`,
        media_key: mediaKey,
        media_content_type: "image/png",
      })),
    );
    expect(await storedKeys()).toEqual([...before, mediaKey].sort());
    const object = await env.MEDIA.get(mediaKey);
    expect(object?.httpMetadata?.contentType).toBe("image/png");
    expect(new Uint8Array(await (object as R2ObjectBody).arrayBuffer())).toEqual(mediaBytes("cat"));

    // The sandbox phones get the message with the caller's URL; no one fetched it again.
    const ids = res.body.data.messages.map((m) => m.id);
    await waitForMessages(key, ids);
    for (const to of TO) {
      const received = await call<{ data: { type: string; media_url: string }[] }>(
        "GET",
        `/sandbox/sessions/${session}/received?to_number=${encodeURIComponent(to)}`,
        { key },
      );
      expect(received.body.data).toMatchObject([
        { type: "image", media_url: `${MEDIA_HOST}/catalogue/cat.png` },
      ]);
    }
    expect(hits).toHaveLength(1);
  });

  it("follows a redirect to https on the same host and stores what it leads to", async () => {
    network.use(
      http.get(`${MEDIA_HOST}/moved/report.pdf`, () =>
        HttpResponse.text("", { status: 302, headers: { Location: "/files/report-2026.pdf" } }),
      ),
    );
    const { res, accountId } = await sendMedia(`${MEDIA_HOST}/moved/report.pdf`, "document");
    expect(res.status).toBe(201);
    const row = await (await accountD1(accountId))
      .prepare("SELECT media_key, media_content_type FROM messages WHERE account_id = ?")
      .bind(accountId)
      .first<{ media_key: string; media_content_type: string }>();
    expect(row?.media_content_type).toBe("application/pdf");
    const object = (await env.MEDIA.get(row?.media_key ?? "")) as R2ObjectBody;
    expect(new Uint8Array(await object.arrayBuffer())).toEqual(mediaBytes("/files/report-2026.pdf"));
  });

  it("streams a document larger than one R2 part in parts, byte for byte", async () => {
    const total = PART_BYTES + 1_234_567;
    const source = streamedBody(total, 0x37);
    network.use(
      http.get(
        `${MEDIA_HOST}/big/manual.pdf`,
        () => new HttpResponse(source.body, { headers: { "Content-Type": "application/pdf" } }),
      ),
    );
    const { res, accountId } = await sendMedia(`${MEDIA_HOST}/big/manual.pdf`, "document");
    expect(res.status).toBe(201);
    const row = await (await accountD1(accountId))
      .prepare("SELECT media_key FROM messages WHERE account_id = ?")
      .bind(accountId)
      .first<{ media_key: string }>();
    const object = (await env.MEDIA.get(row?.media_key ?? "")) as R2ObjectBody;
    expect(object.size).toBe(total);
    expect(await sha256(await object.arrayBuffer())).toBe(await sha256(new Uint8Array(total).fill(0x37)));
  });

  it("refuses a media_url on a port other than 443 at validation, fetching nothing", async () => {
    const { hits, handler } = counted("/cat.png", () => HttpResponse.text("never"));
    network.use(handler);
    const { res, accountId } = await sendMedia("https://cdn.example.test:8443/cat.png");
    const problem = expectProblem(res, 422, "validation_failed");
    expect(problem.errors).toEqual({ media_url: ["must use port 443"] });
    expect(hits).toEqual([]);
    expect(await storedMessageCount(accountId)).toBe(0);
  });

  const redirect = (location: string) => () =>
    HttpResponse.text("", { status: 302, headers: { Location: location } });
  const image =
    (body: BodyInit | null, headers: Record<string, string> = {}) =>
    () =>
      new HttpResponse(body, { headers: { "Content-Type": "image/png", ...headers } });

  it.each<[string, () => Response, string, RegExp]>([
    [
      "a redirect to the metadata service over http",
      redirect("http://169.254.169.254/latest/meta-data/iam/security-credentials/"),
      "redirect_refused",
      /redirect to http:\/\/169\.254\.169\.254 is refused: it must use https/,
    ],
    [
      "a redirect to a link-local address over https",
      redirect("https://169.254.169.254/latest/meta-data/"),
      "redirect_refused",
      /must not point at a linkLocal address/,
    ],
    [
      "a redirect to a private address",
      redirect("https://10.0.0.8/admin"),
      "redirect_refused",
      /must not point at a private address/,
    ],
    [
      "a redirect to another host",
      redirect("https://admin.example.test/export.png"),
      "redirect_refused",
      /another host \(admin\.example\.test\)/,
    ],
    [
      "a redirect to another port of the same host",
      redirect("https://cdn.example.test:8443/cat.png"),
      "redirect_refused",
      /must use port 443/,
    ],
    ["a redirect without Location", () => new HttpResponse(null, { status: 302 }), "http_error", /302/],
    ["an error status", () => HttpResponse.text("gone", { status: 404 }), "http_error", /answered 404/],
    [
      "an HTML page",
      () => HttpResponse.html("<h1>Admin</h1>"),
      "wrong_type",
      /content type is text\/html; image takes image\/jpeg, image\/png/,
    ],
    [
      "a GIF, which WhatsApp does not take as image",
      image("GIF89a", { "Content-Type": "image/gif" }),
      "wrong_type",
      /image\/gif/,
    ],
    ["no content type", () => new HttpResponse(new Uint8Array([1, 2, 3])), "wrong_type", /missing/],
    ["a declared length over the cap", image("x", { "Content-Length": String(6 * MB) }), "too_large", /5 MB/],
    ["an empty body", image(null), "empty", /empty/],
    ["a host that cannot be reached", () => HttpResponse.error(), "unreachable", /could not be reached/],
  ])(
    "answers 422 media_unavailable for %s, before charging or writing anything",
    async (_case, answer, reason, detail) => {
      const { hits, handler } = counted("/cat.png", answer);
      network.use(handler);
      const before = await storedKeys();
      const { res, accountId } = await sendMedia(`${MEDIA_HOST}/cat.png`, "image", TO);

      const problem = expectProblem(res, 422, "media_unavailable");
      expect(problem.reason).toBe(reason);
      expect(problem.detail).toMatch(detail);
      expect(hits).toHaveLength(1);
      expect(await balanceOf(accountId)).toBe(10);
      expect((await ledgerOf(accountId)).map((entry) => entry.kind)).toEqual(["credit"]);
      expect(await storedMessageCount(accountId)).toBe(0);
      expect(await storedKeys()).toEqual(before);
    },
  );

  it("follows at most 3 redirects, each on the same host", async () => {
    const hits: string[] = [];
    network.use(
      http.get(`${MEDIA_HOST}/loop/:n`, ({ params, request }) => {
        hits.push(new URL(request.url).pathname);
        return HttpResponse.text("", { status: 301, headers: { Location: `/loop/${Number(params.n) + 1}` } });
      }),
    );
    const { res, accountId } = await sendMedia(`${MEDIA_HOST}/loop/0`);
    const problem = expectProblem(res, 422, "media_unavailable");
    expect(problem).toMatchObject({
      reason: "redirect_refused",
      detail: expect.stringMatching(/more than 3 redirects/),
    });
    expect(hits).toEqual(["/loop/0", "/loop/1", "/loop/2", "/loop/3"]);
    expect(await storedMessageCount(accountId)).toBe(0);
  });

  it("stops reading a body that passes the cap, whatever Content-Length says, and keeps nothing", async () => {
    const source = streamedBody(50 * MB);
    network.use(
      http.get(
        `${MEDIA_HOST}/endless.png`,
        () =>
          new HttpResponse(source.body, {
            headers: { "Content-Type": "image/png", "Content-Length": "1000" },
          }),
      ),
    );
    const before = await storedKeys();
    const { res, accountId } = await sendMedia(`${MEDIA_HOST}/endless.png`);
    const problem = expectProblem(res, 422, "media_unavailable");
    expect(problem).toMatchObject({
      reason: "too_large",
      detail: expect.stringMatching(/larger than 5 MB, the limit for image/),
    });
    // It read a little past 5 MB, not the 50 MB on offer.
    expect(source.pulled()).toBeGreaterThan(5 * MB);
    expect(source.pulled()).toBeLessThan(7 * MB);
    expect(await storedMessageCount(accountId)).toBe(0);
    expect(await balanceOf(accountId)).toBe(10);
    expect(await storedKeys()).toEqual(before);
  });

  it.each([
    ["0", 0],
    ["0.01, less than the send's 0.06", 0.01],
  ])(
    "fetches nothing and keeps no stored copy when the balance (%s) does not cover the send",
    async (_case, balance) => {
      const { key, accountId } = await createAccount(balance);
      const session = (await connectedSession(key)).id;
      const before = await storedKeys();
      const { hits, handler } = counted("/unpaid.png", () =>
        HttpResponse.arrayBuffer(mediaBytes("unpaid").slice().buffer, {
          headers: { "Content-Type": "image/png" },
        }),
      );
      network.use(handler);
      const res = await call("POST", "/v1/chatapp/messages", {
        key,
        body: {
          chatapp_session_id: session,
          to_number: TO,
          type: "image",
          media_url: `${MEDIA_HOST}/unpaid.png`,
        },
      });
      expect(expectProblem(res, 402, "insufficient_balance").detail).toMatch(/This send costs 6 minor units/);
      expect(hits).toEqual([]);
      expect(await storedKeys()).toEqual(before);
      expect(await storedMessageCount(accountId)).toBe(0);
    },
  );
});

describe("a campaign with media", () => {
  it("fetches the media once at creation, and every message of the run carries the stored copy", async () => {
    const { key, accountId } = await createAccount(10);
    const sessions = [(await connectedSession(key)).id, (await connectedSession(key)).id];
    const { hits, handler } = counted("/promo/summer.jpg", () =>
      HttpResponse.arrayBuffer(mediaBytes("summer").slice().buffer, {
        headers: { "Content-Type": "image/jpeg" },
      }),
    );
    network.use(handler);
    const campaign = await createCampaign(key, {
      chatapp_session_ids: sessions,
      type: "image",
      content: "Hi {{name}}",
      media_url: `${MEDIA_HOST}/promo/summer.jpg`,
      recipients: recipients(4),
      delay_between: 0,
    });
    expect(hits).toHaveLength(1);
    const d1 = await accountD1(accountId);
    const stored = await d1
      .prepare("SELECT media_key, media_content_type FROM campaigns WHERE id = ?")
      .bind(campaign.id)
      .first<{ media_key: string; media_content_type: string }>();
    expect(stored?.media_content_type).toBe("image/jpeg");
    expect(await env.MEDIA.head(stored?.media_key ?? "")).not.toBeNull();

    expect((await command(key, campaign.id, "start")).status).toBe(200);
    await waitForCampaign(key, campaign.id, (c) => c.status === "completed", 20_000);
    const messages = await campaignMessages(campaign.id);
    expect(messages).toHaveLength(4);
    const { results } = await d1
      .prepare("SELECT DISTINCT media_url, media_key, media_content_type FROM messages WHERE campaign_id = ?")
      .bind(campaign.id)
      .all();
    expect(results).toEqual([
      {
        media_url: `${MEDIA_HOST}/promo/summer.jpg`,
        media_key: stored?.media_key,
        media_content_type: "image/jpeg",
      },
    ]);
    expect(hits).toHaveLength(1);
  });

  it("answers 422 media_unavailable and creates no campaign for media that cannot be sent", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    network.use(http.get(`${MEDIA_HOST}/promo/page.jpg`, () => HttpResponse.html("<p>not an image</p>")));
    const res = await call("POST", "/v1/chatapp/campaigns", {
      key,
      body: {
        name: "Bad media",
        chatapp_session_ids: [session],
        type: "image",
        media_url: `${MEDIA_HOST}/promo/page.jpg`,
        recipients: recipients(2),
      },
    });
    expect(expectProblem(res, 422, "media_unavailable").reason).toBe("wrong_type");
    const row = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM campaigns WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(row?.n).toBe(0);
  });
});

describe("a campaign's stored copy of its media", () => {
  const promo = (path: string) =>
    counted(path, () =>
      HttpResponse.arrayBuffer(mediaBytes(path).slice().buffer, {
        headers: { "Content-Type": "application/pdf" },
      }),
    );
  const draftBody = (session: string, path: string, count = 2) => ({
    name: "Brochure",
    chatapp_session_ids: [session],
    type: "document",
    content: "Our brochure",
    media_url: `${MEDIA_HOST}${path}`,
    recipients: recipients(count),
  });
  const campaignCount = async (accountId: string) =>
    (
      await (
        await accountD1(accountId)
      )
        .prepare("SELECT COUNT(*) AS n FROM campaigns WHERE account_id = ?")
        .bind(accountId)
        .first<{ n: number }>()
    )?.n;

  it("is not fetched for an account that cannot pay one message of the campaign's type: 402", async () => {
    const { key, accountId } = await createAccount(0);
    const session = (await connectedSession(key)).id;
    // Balance 0.01 is half a document (0.02): not one message either.
    const poor = await createAccount(0.01);
    const poorSession = (await connectedSession(poor.key)).id;
    const { hits, handler } = promo("/unpaid/brochure.pdf");
    network.use(handler);
    const before = await storedKeys();

    for (const [k, s] of [
      [key, session],
      [poor.key, poorSession],
    ] as const) {
      const res = await call("POST", "/v1/chatapp/campaigns", {
        key: k,
        body: draftBody(s, "/unpaid/brochure.pdf"),
      });
      expect(expectProblem(res, 402, "insufficient_balance").detail).toMatch(/One document message costs 2 /);
    }
    expect(hits).toEqual([]);
    expect(await storedKeys()).toEqual(before);
    expect(await campaignCount(accountId)).toBe(0);
    expect(await campaignCount(poor.accountId)).toBe(0);
  });

  it("a text draft needs no balance: nothing is fetched for it", async () => {
    const { key } = await createAccount(0);
    const session = (await connectedSession(key)).id;
    const campaign = await createCampaign(key, {
      chatapp_session_ids: [session],
      type: "text",
      content: "Hi",
      recipients: recipients(2),
    });
    expect(campaign.status).toBe("draft");
  });

  it("is deleted with its draft", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    network.use(promo("/drafts/brochure.pdf").handler);
    const campaign = await createCampaign(key, draftBody(session, "/drafts/brochure.pdf"));
    const stored = await (await accountD1(accountId))
      .prepare("SELECT media_key FROM campaigns WHERE id = ?")
      .bind(campaign.id)
      .first<{ media_key: string }>();
    const mediaKey = stored?.media_key ?? "";
    expect(await env.MEDIA.head(mediaKey)).not.toBeNull();

    expect((await call("DELETE", `/v1/chatapp/campaigns/${campaign.id}`, { key })).status).toBe(204);
    expect(await env.MEDIA.head(mediaKey)).toBeNull();
    expect(await storedKeys()).not.toContain(mediaKey);
  });

  it("is deleted again when the create is refused after the fetch (the draft recipient limit)", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const limited = await call("PATCH", `/admin/accounts/${accountId}`, {
      key: ADMIN_TOKEN,
      body: { max_draft_recipients: 1 },
    });
    expect(limited.status).toBe(200);
    const { hits, handler } = promo("/refused/brochure.pdf");
    network.use(handler);
    const before = await storedKeys();

    const res = await call("POST", "/v1/chatapp/campaigns", {
      key,
      body: draftBody(session, "/refused/brochure.pdf", 2),
    });
    expectProblem(res, 409, "account_limit_reached");
    expect(hits).toHaveLength(1);
    expect(await storedKeys()).toEqual(before);
    expect(await campaignCount(accountId)).toBe(0);
  });
});

describe("GET /media/{key} under the sandbox", () => {
  it("does not exist: the sandbox uses the stored copy itself and signs no links", async () => {
    const key = (await storedKeys())[0] ?? crypto.randomUUID();
    const res = await call("GET", `/media/${key}?expires=9999999999&signature=${"0".repeat(64)}`);
    expectProblem(res, 404, "not_found");
  });
});
