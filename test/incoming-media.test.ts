import { env, runDurableObjectAlarm } from "cloudflare:test";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import type { GatewayEvent } from "../src/gateways/gateway";
import { INCOMING_MEDIA_MAX_BYTES, incomingMediaKey } from "../src/media/incoming";
import { sweepIncomingMedia } from "../src/messages/media-retention";
import { MEDIA_FETCH_TRIES } from "../src/sessions/incoming-media";
import { accountD1, everyAccountD1 } from "./databases";
import { call, createAccount, expectProblem, sessionStub, waitFor } from "./helpers";
import { MEDIA_HOST, mediaBytes } from "./media-host";
import { connectedSession } from "./message-fixtures";
import { network } from "./network";

// An incoming message's media is downloaded once by the session object (from its alarm, off the
// inbound call), kept in R2 under the message's id, and served to the account's keys at
// GET /v1/chatapp/messages/{id}/media (docs/messages.md, Incoming media). The sandbox's "gateway" media is
// the inbound call's media_url, served by the fake media host (test/media-host.ts).

const CONTACT = "+14155550101";

interface MediaRow {
  id: string;
  media_url: string | null;
  media_key: string | null;
  media_content_type: string | null;
  metadata: string;
}

/** Message `id` of account `accountId`, as its database holds it. */
async function messageRow(accountId: string, id: string): Promise<MediaRow> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT id, media_url, media_key, media_content_type, metadata FROM messages WHERE id = ?")
    .bind(id)
    .first<MediaRow>();
  if (!row) throw new Error(`no message ${id}`);
  return row;
}

/**
 * Runs session `sessionId`'s alarm until message `id` (of account `accountId`) has its media kept
 * or its error recorded.
 */
async function settleMedia(accountId: string, sessionId: string, id: string): Promise<MediaRow> {
  return waitFor(
    async () => {
      await runDurableObjectAlarm(sessionStub(sessionId));
      const row = await messageRow(accountId, id);
      return row.media_key || JSON.parse(row.metadata).media_error ? row : undefined;
    },
    // An alarm the runtime is already running makes a driven one a no-op: hence the looking again.
    { reason: "the session's alarm to keep or fail the media", timeoutMs: 2_000, intervalMs: 10 },
  );
}

/** The account's events of `type`: each one's message id and `media_url`. */
async function mediaEvents(key: string, type: string) {
  const res = await call<{ data: { type: string; data: { id: string; media_url: string | null } }[] }>(
    "GET",
    `/v1/events?filter[type]=${type}`,
    { key },
  );
  expect(res.status).toBe(200);
  return res.body.data.map((event) => ({
    type: event.type,
    id: event.data.id,
    media_url: event.data.media_url,
  }));
}

/** A handler for one path of the media host that counts its requests. */
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

/** A fresh account with a connected sandbox session, and an inbound image from `mediaUrl`. */
async function inboundImage(mediaUrl: string) {
  const { key, accountId } = await createAccount(10);
  const session = await connectedSession(key);
  const res = await call<{ data: { id: string; media_url: string } }>(
    "POST",
    `/sandbox/sessions/${session.id}/inbound`,
    { key, body: { from_number: CONTACT, type: "image", content: "look", media_url: mediaUrl } },
  );
  expect(res.status).toBe(201);
  return { key, accountId, session, id: res.body.data.id };
}

describe("incoming media, kept", () => {
  it("downloads a sandbox inbound message's media once into R2 and serves it with its content type", async () => {
    const { hits, handler } = counted("/in/photo.png", () =>
      HttpResponse.arrayBuffer(mediaBytes("photo").slice().buffer, {
        headers: { "Content-Type": "image/png" },
      }),
    );
    network.use(handler);
    const { key, accountId, session, id } = await inboundImage(`${MEDIA_HOST}/in/photo.png`);

    // Not kept before the session object ran its download.
    expectProblem(await call("GET", `/v1/chatapp/messages/${id}/media`, { key }), 404, "media_not_kept");

    const row = await settleMedia(accountId, session.id, id);
    expect(hits).toEqual([`${MEDIA_HOST}/in/photo.png`]);
    expect(row.media_key).toBe(incomingMediaKey(id));
    expect(row.media_content_type).toBe("image/png");
    expect(row.media_url).toBe(`http://localhost/v1/chatapp/messages/${id}/media`);
    const object = await env.MEDIA.get(incomingMediaKey(id));
    expect(new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(mediaBytes("photo"));

    const shown = await call<{ data: { media_url: string } }>("GET", `/v1/chatapp/messages/${id}`, { key });
    expect(shown.body.data.media_url).toBe(`http://localhost/v1/chatapp/messages/${id}/media`);

    const res = await call("GET", `/v1/chatapp/messages/${id}/media`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/png");
    expect(res.headers.get("Content-Length")).toBe(String(mediaBytes("photo").byteLength));
    expect(res.text).toBe(new TextDecoder().decode(mediaBytes("photo")));

    // Another alarm downloads nothing again.
    await runDurableObjectAlarm(sessionStub(session.id));
    expect(hits).toHaveLength(1);
    // The Message with its new media_url is a message.media_kept event, once.
    expect(await mediaEvents(key, "message.media_kept")).toEqual([
      { type: "message.media_kept", id, media_url: `http://localhost/v1/chatapp/messages/${id}/media` },
    ]);
    expect(await mediaEvents(key, "message.media_failed")).toEqual([]);
  });

  it.each([
    ["image", "/in/photo.png", "image/png", "inline"],
    ["video", "/in/clip.mp4", "video/mp4", "inline"],
    ["audio", "/in/voice.ogg", "audio/ogg", "inline"],
    ["document", "/in/invoice.pdf", "application/pdf", "attachment"],
    // The sender chooses the type: a page or a script-carrying image is a file, never rendered.
    ["document", "/in/page.html", "text/html", "attachment"],
    ["image", "/in/drawing.svg", "image/svg+xml", "attachment"],
    ["document", "/in/blob", "application/octet-stream", "attachment"],
  ])("serves a kept %s of %s (%s) %s, with nosniff", async (type, path, contentType, disposition) => {
    network.use(
      http.get(`${MEDIA_HOST}${path}`, () =>
        HttpResponse.arrayBuffer(mediaBytes(path).slice().buffer, {
          headers: { "Content-Type": contentType },
        }),
      ),
    );
    const { key, accountId } = await createAccount(10);
    const session = await connectedSession(key);
    const inbound = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACT, type, content: "file", media_url: `${MEDIA_HOST}${path}` },
    });
    expect(inbound.status).toBe(201);
    const id = inbound.body.data.id;
    expect((await settleMedia(accountId, session.id, id)).media_content_type).toBe(contentType);

    const res = await call("GET", `/v1/chatapp/messages/${id}/media`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe(contentType);
    expect(res.headers.get("Content-Disposition")).toBe(disposition);
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(res.headers.get("Cache-Control")).toBe("private, no-store");
    expect(res.text).toBe(new TextDecoder().decode(mediaBytes(path)));
  });

  it("answers 404 not_found to another account's key", async () => {
    const { accountId, session, id } = await inboundImage(`${MEDIA_HOST}/in/other.png`);
    await settleMedia(accountId, session.id, id);
    const other = await createAccount(10);
    expectProblem(
      await call("GET", `/v1/chatapp/messages/${id}/media`, { key: other.key }),
      404,
      "not_found",
    );
  });

  it("answers 404 media_not_kept for a message without media", async () => {
    const { key } = await createAccount(10);
    const session = await connectedSession(key);
    const res = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACT, type: "text", content: "hi" },
    });
    const problem = expectProblem(
      await call("GET", `/v1/chatapp/messages/${res.body.data.id}/media`, { key }),
      404,
      "media_not_kept",
    );
    expect(problem.detail).toBe("The message carries no media.");
  });

  it("downloads a redelivered event's media once", async () => {
    const { hits, handler } = counted("/in/again.png", () =>
      HttpResponse.arrayBuffer(mediaBytes("again").slice().buffer, {
        headers: { "Content-Type": "image/png" },
      }),
    );
    network.use(handler);
    const { key, accountId } = await createAccount(10);
    const session = await connectedSession(key);
    const event: GatewayEvent = {
      type: "incoming",
      providerMessageId: "gw-media-1",
      from: { phoneNumber: CONTACT },
      messageType: "image",
      content: null,
      mediaUrl: null,
      media: { mimetype: "image/png", ref: `${MEDIA_HOST}/in/again.png` },
      at: Date.now(),
    };
    await sessionStub(session.id).gatewayEvents("sandbox", [event]);
    const d1 = await accountD1(accountId);
    const { id } = (await d1
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>()) ?? { id: "" };
    await settleMedia(accountId, session.id, id);
    await sessionStub(session.id).gatewayEvents("sandbox", [event, event]);
    await runDurableObjectAlarm(sessionStub(session.id));

    expect(hits).toHaveLength(1);
    const row = await messageRow(accountId, id);
    expect(row.media_key).toBe(incomingMediaKey(id));
    // The gateway's reference is never shown: metadata keeps the mimetype only.
    expect(JSON.parse(row.metadata)).toEqual({ media: { mimetype: "image/png" } });
  });

  it("tries a failing download again, then records its error", async () => {
    const { hits, handler } = counted("/in/down.png", () => new HttpResponse("busy", { status: 503 }));
    network.use(handler);
    const { key, accountId, session, id } = await inboundImage(`${MEDIA_HOST}/in/down.png`);

    const row = await settleMedia(accountId, session.id, id);
    expect(hits).toHaveLength(MEDIA_FETCH_TRIES);
    expect(row.media_key).toBeNull();
    expect(row.media_url).toBe(`${MEDIA_HOST}/in/down.png`);
    expect(JSON.parse(row.metadata).media_error).toMatchObject({
      reason: "http_error",
      detail: "cdn.example.test answered 503.",
      tries: MEDIA_FETCH_TRIES,
    });
    const problem = expectProblem(
      await call("GET", `/v1/chatapp/messages/${id}/media`, { key }),
      404,
      "media_not_kept",
    );
    expect(problem.detail).toMatch(/media_error/);
    expect(await mediaEvents(key, "message.media_failed")).toEqual([
      { type: "message.media_failed", id, media_url: `${MEDIA_HOST}/in/down.png` },
    ]);
    expect(await mediaEvents(key, "message.media_kept")).toEqual([]);
  });

  it("gives up at once on a 404 (asking again cannot help)", async () => {
    const { hits, handler } = counted("/in/gone.png", () => new HttpResponse("no", { status: 404 }));
    network.use(handler);
    const { accountId, session, id } = await inboundImage(`${MEDIA_HOST}/in/gone.png`);
    const row = await settleMedia(accountId, session.id, id);
    expect(hits).toHaveLength(1);
    expect(JSON.parse(row.metadata).media_error).toMatchObject({ reason: "http_error", tries: 1 });
  });

  it("refuses media over 100 MB without reading it, and keeps nothing", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(1024));
      },
    });
    network.use(
      http.get(
        `${MEDIA_HOST}/in/huge.pdf`,
        () =>
          new HttpResponse(body, {
            headers: {
              "Content-Type": "application/pdf",
              "Content-Length": String(INCOMING_MEDIA_MAX_BYTES + 1),
            },
          }),
      ),
    );
    const { accountId, session, id } = await inboundImage(`${MEDIA_HOST}/in/huge.pdf`);
    const row = await settleMedia(accountId, session.id, id);
    expect(JSON.parse(row.metadata).media_error).toMatchObject({ reason: "too_large", tries: 1 });
    expect(await env.MEDIA.head(incomingMediaKey(id))).toBeNull();
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it("records a media_url outside the public https rule as refused, fetching nothing", async () => {
    const { accountId, session, id } = await inboundImage("http://10.0.0.1/x.png");
    const row = await settleMedia(accountId, session.id, id);
    expect(JSON.parse(row.metadata).media_error).toMatchObject({ reason: "refused", tries: 1 });
  });
});

describe("the retention sweep of incoming media", () => {
  it("deletes media older than MEDIA_RETENTION_DAYS and leaves newer ones", async () => {
    const old = await inboundImage(`${MEDIA_HOST}/in/old.png`);
    const fresh = await inboundImage(`${MEDIA_HOST}/in/fresh.png`);
    await settleMedia(old.accountId, old.session.id, old.id);
    await settleMedia(fresh.accountId, fresh.session.id, fresh.id);
    const now = Date.now();
    await (await accountD1(old.accountId))
      .prepare("UPDATE messages SET created_at = ? WHERE id = ?")
      .bind(now - 31 * 86_400_000, old.id)
      .run();
    // Over every account database, as the hourly job sweeps: the two accounts may be in either.
    const sweep = async () => {
      let swept = 0;
      for (const d1 of everyAccountD1()) swept += await sweepIncomingMedia(env.MEDIA, createDb(d1), now, 30);
      return swept;
    };

    const deleted = await sweep();

    expect(deleted).toBe(1);
    expect(await env.MEDIA.head(incomingMediaKey(old.id))).toBeNull();
    expect(await env.MEDIA.head(incomingMediaKey(fresh.id))).not.toBeNull();
    const oldRow = await messageRow(old.accountId, old.id);
    expect(oldRow).toMatchObject({ media_key: null, media_url: null, media_content_type: null });
    expect(JSON.parse(oldRow.metadata).media_expired_at).toBe(
      new Date(now).toISOString().replace("Z", "000Z"),
    );
    expect((await messageRow(fresh.accountId, fresh.id)).media_key).toBe(incomingMediaKey(fresh.id));
    const problem = expectProblem(
      await call("GET", `/v1/chatapp/messages/${old.id}/media`, { key: old.key }),
      404,
      "media_not_kept",
    );
    expect(problem.detail).toMatch(/retention/);
    expect((await call("GET", `/v1/chatapp/messages/${fresh.id}/media`, { key: fresh.key })).status).toBe(
      200,
    );
    // A second sweep finds nothing more.
    expect(await sweep()).toBe(0);
  });
});
