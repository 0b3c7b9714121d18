import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { INCOMING_MEDIA_MAX_BYTES, incomingMediaKey } from "../../src/media/incoming";
import type { ChatSession } from "../../src/sessions/chat-session";
import { MEDIA_FETCH_TRIES } from "../../src/sessions/incoming-media";
import { accountD1 } from "../databases";
import { PUBLIC_URL } from "../gateway-config";
import { call, createAccount, createSession, sessionStub } from "../helpers";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Evolution API's incoming media (docs/messages.md, Incoming media): the session object asks
// `POST /chat/getBase64FromMediaMessage/{instance}` once for the message's id, decodes the base64
// as the JSON streams in and keeps the bytes in R2, counting them against the cap.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const BYTES = new TextEncoder().encode("an image from Evolution");

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

async function connectedEvolutionSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
    sender: OWNER_JID,
  });
  return { id: session.id, name };
}

/**
 * The incoming message's id and row once its media is kept or has failed: one alarm per try, each
 * retry made due first (the test owns the clock; retries wait minutes).
 */
async function settledMedia(sessionId: string, accountId: string) {
  const d1 = await accountD1(accountId);
  const id =
    (
      await d1
        .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
        .bind(accountId)
        .first<{ id: string }>()
    )?.id ?? "";
  for (let i = 0; i < 10; i++) {
    await runInDurableObject(sessionStub(sessionId), (_instance: ChatSession, state) => {
      state.storage.sql.exec("UPDATE deadlines SET due_at = 0 WHERE kind = 'media_fetch'");
    });
    await runDurableObjectAlarm(sessionStub(sessionId));
    const row = await d1
      .prepare("SELECT media_key, media_content_type, metadata FROM messages WHERE id = ?")
      .bind(id)
      .first<{ media_key: string | null; media_content_type: string | null; metadata: string }>();
    const metadata = JSON.parse(row?.metadata ?? "{}") as Record<string, unknown>;
    if (row?.media_key || metadata.media_error) return { id, row, metadata };
  }
  throw new Error(`the media of ${id} was neither kept nor failed`);
}

const mediaCalls = () => evolution.calls.filter((c) => c.startsWith("POST /chat/getBase64FromMediaMessage/"));

describe("Evolution API incoming media", () => {
  it("downloads the media once by the message id, keeps it and serves it", async () => {
    const { key, accountId } = await createAccount();
    const { id: sessionId, name } = await connectedEvolutionSession(key);
    const data = evolution.incomingImage(name, "3EB0MEDIA0001", "+14155550199", BYTES);
    await postEvolutionEvent(name, "messages.upsert", data);
    await postEvolutionEvent(name, "messages.upsert", data);
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>();
    const id = row?.id ?? "";
    for (let i = 0; i < 10 && !(await env.MEDIA.head(incomingMediaKey(id))); i++)
      await runDurableObjectAlarm(sessionStub(sessionId));
    await runDurableObjectAlarm(sessionStub(sessionId));

    expect(mediaCalls()).toEqual([`POST /chat/getBase64FromMediaMessage/${name}`]);
    const body = evolution.bodies.find((b) =>
      b.call.startsWith("POST /chat/getBase64FromMediaMessage/"),
    )?.body;
    expect(body).toEqual({ message: { key: { id: "3EB0MEDIA0001" } } });
    const shown = await call<{ data: { media_url: string; type: string } }>(
      "GET",
      `/v1/chatapp/messages/${id}`,
      {
        key,
      },
    );
    expect(shown.body.data).toMatchObject({
      type: "image",
      media_url: `${PUBLIC_URL}/v1/chatapp/messages/${id}/media`,
    });
    const res = await call("GET", `/v1/chatapp/messages/${id}/media`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/jpeg");
    expect(res.text).toBe("an image from Evolution");
  });

  it("records an error when Evolution no longer holds the message (400), without trying again", async () => {
    const { key, accountId } = await createAccount();
    const { id: sessionId, name } = await connectedEvolutionSession(key);
    const data = evolution.incomingImage(name, "3EB0MEDIA0002", "+14155550199", BYTES);
    evolution.media.clear();
    await postEvolutionEvent(name, "messages.upsert", data);
    const d1 = await accountD1(accountId);
    const row = await d1
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>();
    let metadata: Record<string, unknown> = {};
    for (let i = 0; i < 10 && !metadata.media_error; i++) {
      await runDurableObjectAlarm(sessionStub(sessionId));
      const found = await d1
        .prepare("SELECT metadata FROM messages WHERE id = ?")
        .bind(row?.id ?? "")
        .first<{ metadata: string }>();
      metadata = JSON.parse(found?.metadata ?? "{}");
    }
    expect(metadata.media_error).toMatchObject({ reason: "http_error", tries: 1 });
    expect(mediaCalls()).toHaveLength(1);
  });

  it("streams a chunked answer into R2 as it decodes, in parts, with the answer's mimetype", async () => {
    const { key, accountId } = await createAccount();
    const { id: sessionId, name } = await connectedEvolutionSession(key);
    // 6 MiB and 1 byte: two R2 parts, and a last group with padding.
    const bytes = new Uint8Array(6 * 1024 * 1024 + 1);
    for (let at = 0; at < bytes.byteLength; at += 65_536)
      crypto.getRandomValues(bytes.subarray(at, Math.min(at + 65_536, bytes.byteLength)));
    // Pieces of an odd length cut the JSON and the base64 groups anywhere.
    evolution.mediaAnswer.chunkChars = 65_537;
    await postEvolutionEvent(
      name,
      "messages.upsert",
      evolution.incomingImage(name, "3EB0MEDIA0003", "+14155550199", bytes, "image/png"),
    );

    const { id, row, metadata } = await settledMedia(sessionId, accountId);

    expect(metadata.media_error).toBeUndefined();
    expect(row).toMatchObject({ media_key: incomingMediaKey(id), media_content_type: "image/png" });
    const stored = await env.MEDIA.get(incomingMediaKey(id));
    expect(stored?.size).toBe(bytes.byteLength);
    expect(stored?.httpMetadata?.contentType).toBe("image/png");
    expect(await sha256((await stored?.arrayBuffer()) ?? new ArrayBuffer(0))).toBe(await sha256(bytes));
  });

  it("refuses a chunked answer past 100 MB on the bytes read, stops reading it, and keeps nothing", async () => {
    const { key, accountId } = await createAccount();
    const { id: sessionId, name } = await connectedEvolutionSession(key);
    // 20 MiB past the cap, made as it is read: no Content-Length says how long it is.
    const length = INCOMING_MEDIA_MAX_BYTES + 20 * 1024 * 1024;
    await postEvolutionEvent(
      name,
      "messages.upsert",
      evolution.incomingImage(name, "3EB0MEDIA0004", "+14155550199", { length }),
    );

    const { id, row, metadata } = await settledMedia(sessionId, accountId);

    expect(metadata.media_error).toMatchObject({
      reason: "too_large",
      detail: "it is larger than 100 MB.",
      tries: 1,
    });
    expect(row?.media_key).toBeNull();
    expect(await env.MEDIA.head(incomingMediaKey(id))).toBeNull();
    // It read the base64 of the cap (the bytes were counted, not a declared length), and stopped
    // within 1 MiB after it, of the 26 MiB of base64 more on offer: the body was never held whole.
    const capChars = Math.ceil(INCOMING_MEDIA_MAX_BYTES / 3) * 4;
    expect(evolution.mediaAnswer.pulled).toBeGreaterThan(capChars);
    expect(evolution.mediaAnswer.pulled).toBeLessThan(capChars + 1024 * 1024);
    expect(mediaCalls()).toHaveLength(1);
  });

  it.each([
    ["garbled", "http_error", "Evolution API answered base64 that does not decode."],
    ["broken", "unreachable", "The media at media_url cannot be sent: the download broke off."],
  ] as const)(
    "records a %s streamed answer as %s after its tries, keeping nothing",
    async (fault, reason, detail) => {
      const { key, accountId } = await createAccount();
      const { id: sessionId, name } = await connectedEvolutionSession(key);
      evolution.mediaAnswer.chunkChars = 64;
      evolution.mediaAnswer.fault = fault;
      const bytes = new Uint8Array(3000).fill(7);
      await postEvolutionEvent(
        name,
        "messages.upsert",
        evolution.incomingImage(name, "3EB0MEDIA0005", "+14155550199", bytes),
      );

      const { id, row, metadata } = await settledMedia(sessionId, accountId);

      expect(metadata.media_error).toMatchObject({ reason, detail, tries: MEDIA_FETCH_TRIES });
      expect(row?.media_key).toBeNull();
      expect(await env.MEDIA.head(incomingMediaKey(id))).toBeNull();
      expect(mediaCalls()).toHaveLength(MEDIA_FETCH_TRIES);
    },
  );
});

async function sha256(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
