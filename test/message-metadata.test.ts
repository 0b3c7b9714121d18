/// <reference types="vite/client" />
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  keptMediaStatement,
  mediaErrorStatement,
  recordExpiredMedia,
} from "../src/db/queries/incoming-media";
import { recordRetry } from "../src/db/queries/messages";
import { recordExpiredOutgoingMedia } from "../src/db/queries/outgoing-media";
import { failover } from "../src/delivery/failover";
import {
  MessageMetadataSchema,
  metadataObject,
  metadataText,
  parseMessageMetadata,
} from "../src/messages/metadata";
import { receiveMessage } from "../src/messages/receive";
import { applyMoves } from "../src/moves/apply";
import { createCampaign, recipients } from "./campaign-fixtures";
import { accountD1, accountDb } from "./databases";
import { call, createAccount } from "./helpers";
import { connectedSession, driveAlarmUntil, getMessage, seedMessages, sendText } from "./message-fixtures";
import { metadataProblems } from "./metadata-check";

// Every key the service writes into a message's `metadata` is declared in MessageMetadataSchema
// (src/messages/metadata.ts), the schema the API document shows as `Message.metadata`: the SQL
// writers' paths are read from the source, and each writer is run on real D1 rows whose stored
// metadata is then checked key by key, nested objects included.

/**
 * Checks the stored metadata of every message of the account: each fits the schema and holds no
 * undeclared key at any depth. @returns the top-level keys seen, sorted.
 */
async function checkStored(accountId: string): Promise<string[]> {
  const { results } = await (await accountD1(accountId))
    .prepare("SELECT id, metadata FROM messages WHERE account_id = ?")
    .bind(accountId)
    .all<{ id: string; metadata: string }>();
  const seen = new Set<string>();
  for (const row of results) {
    expect(metadataProblems(row.metadata), `${row.id}: ${row.metadata}`).toEqual([]);
    for (const key of Object.keys(metadataObject(row.metadata))) seen.add(key);
  }
  return [...seen].sort();
}

const SESSION = "11111111-1111-4111-8111-111111111111";

describe("the SQL that writes metadata", () => {
  it("names only declared keys", () => {
    const sources = import.meta.glob<string>("../src/**/*.ts", {
      query: "?raw",
      import: "default",
      eager: true,
    });
    const paths = new Set<string>();
    for (const text of Object.values(sources)) {
      if (!text.includes("metadata")) continue;
      // A JSON path literal, not one read from a json_each row (`value`, `j.value`, `r.value`).
      for (const match of text.matchAll(/(\(\s*(?:\w\.)?value,\s*)?'\$\.([A-Za-z_]+)/g)) {
        if (match[1] === undefined && match[2]) paths.add(match[2]);
      }
    }
    const declared = Object.keys(MessageMetadataSchema.shape);
    expect([...paths].filter((key) => !declared.includes(key))).toEqual([]);
    // The scan finds the writers it is meant to find.
    for (const key of ["attempts", "send_attempts", "events", "failover", "media_error", "media_expired_at"])
      expect([...paths]).toContain(key);
  });
});

describe("metadata as the service writes it", () => {
  it("retries, an unknown outcome, the send with its typing, receipts, a price and failures", async () => {
    const { accountId } = await createAccount(10);
    const now = Date.now();
    const [retried, sent, failed, gatewayFailed, unknown] = await seedMessages(
      [0, 1, 2, 3, 4].map(() => ({
        accountId,
        sessionId: SESSION,
        toNumber: "+14155552671",
        createdAt: now - 10_000,
      })),
    );
    const db = await accountDb(accountId);
    const d1 = await accountD1(accountId);
    for (const id of [retried, sent, gatewayFailed]) {
      await recordRetry(db, id ?? "", {
        attempts: 1,
        error: "timeout",
        nextAttemptAt: now + 1000,
        at: now,
        outcome: "unknown",
      });
    }
    await recordRetry(db, retried ?? "", {
      attempts: 2,
      error: "refused",
      nextAttemptAt: null,
      at: now,
      outcome: "rejected",
    });
    await recordRetry(db, unknown ?? "", {
      attempts: 1,
      error: "no answer",
      nextAttemptAt: null,
      at: now,
      outcome: "unreachable",
    });
    await d1
      .prepare("UPDATE messages SET provider_message_id = 'gw-' || id WHERE account_id = ?")
      .bind(accountId)
      .run();
    const receipt = (id: string | undefined) => ({ sessionId: SESSION, providerMessageId: `gw-${id}` });
    for (const id of [sent, gatewayFailed]) {
      await applyMoves(env, accountId, [
        {
          kind: "sent",
          id: id ?? "",
          at: now,
          providerMessageId: `gw-${id}`,
          fromNumber: "+14155550100",
          attempts: 2,
          gateway: "sandbox",
          settledBy: "lookup",
          typing: { ms: 1000, at: now - 1000, shown: false, reason: "sandbox_typing_refused" },
        },
      ]);
    }
    await applyMoves(env, accountId, [
      { kind: "delivered", target: receipt(sent), at: now, gatewayAt: now },
      { kind: "read", target: receipt(sent), at: now, gatewayAt: now },
      {
        kind: "priced",
        target: receipt(sent),
        pricing: { category: "service", billable: false, pricing_model: "PMP" },
        at: now,
      },
      { kind: "fail", accountId, target: { ids: [failed ?? ""] }, reason: "retries_exhausted", at: now },
      {
        kind: "gateway_failed",
        accountId,
        target: receipt(gatewayFailed),
        reason: "gateway_ack_error",
        at: now,
        gatewayAt: now,
      },
    ]);

    expect(await checkStored(accountId)).toEqual([
      "attempts",
      "events",
      "failed_at",
      "gateway",
      "last_error",
      "next_attempt_at",
      "outcome",
      "pricing",
      "send_attempts",
      "settled_by",
      "typing",
    ]);
    const shown = parseMessageMetadata(
      (
        await d1
          .prepare("SELECT metadata FROM messages WHERE id = ?")
          .bind(sent)
          .first<{ metadata: string }>()
      )?.metadata ?? "",
    );
    expect(shown.settled_by).toBe("lookup");
    expect(shown.events?.map((event) => event.type)).toEqual(["delivered", "read"]);
    expect(shown.send_attempts).toEqual([{ at: expect.any(String), outcome: "unknown", reason: "timeout" }]);
  });

  it("a send with typing, a reply to it, a contact's reactions set and taken off", async () => {
    const { accountId, key } = await createAccount(10);
    const session = await connectedSession(key);
    const contact = "+14155552671";
    const res = await sendText(key, session.id, [contact], { simulate_typing: true });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    await driveAlarmUntil(session.id, async () => (await getMessage(key, id)).status !== "queued");
    const reply = await sendText(key, session.id, [contact], { reply_to: id });
    expect(reply.status, reply.text).toBe(201);
    const replyId = reply.body.data.messages[0]?.id ?? "";
    await driveAlarmUntil(session.id, async () => (await getMessage(key, replyId)).status !== "queued");
    for (const [messageId, emoji] of [
      [id, "👍"],
      [replyId, "🎉"],
      [id, ""],
    ]) {
      const reacted = await call("POST", `/sandbox/sessions/${session.id}/reactions`, {
        key,
        body: { from_number: contact, message_id: messageId, emoji },
      });
      expect(reacted.status, reacted.text).toBe(200);
    }

    // Receipts (`events`) may have come meanwhile: the sandbox's own time.
    expect(await checkStored(accountId)).toEqual(
      expect.arrayContaining([
        "attempts",
        "gateway",
        "quoted",
        "reactions",
        "reactions_removed",
        "settled_by",
        "typing",
      ]),
    );
    const shown = await getMessage(key, id);
    expect(shown.metadata).toMatchObject({
      typing: { ms: 1000, shown: true },
      reactions: [],
      reactions_removed: [{ from: contact }],
    });
    expect((await getMessage(key, replyId)).metadata).toMatchObject({
      quoted: { from_me: true },
      reactions: [{ from: contact, emoji: "🎉" }],
    });
  });

  it("incoming media noted, failed, kept and expired; an outgoing copy expired", async () => {
    const { accountId, key } = await createAccount(10);
    const session = await connectedSession(key);
    const now = Date.now();
    const incoming = {
      accountId,
      sessionId: session.id,
      contact: { phoneNumber: "+14155552671" },
      toNumber: "+14155550100",
      type: "image" as const,
      content: null,
      mediaUrl: null,
      media: { mimetype: "image/png" },
      at: now,
    };
    const failedRow = await receiveMessage(env, incoming);
    const keptRow = await receiveMessage(env, incoming);
    const db = await accountDb(accountId);
    const error = { reason: "too_large", detail: "it is larger than 100 MB.", tries: 1 };
    for (const row of [failedRow, keptRow]) {
      await db.run(mediaErrorStatement(db, { id: row?.id ?? "", accountId, error, at: now }));
    }
    await db.run(
      keptMediaStatement(db, {
        id: keptRow?.id ?? "",
        accountId,
        key: "incoming/x",
        contentType: "image/png",
        url: "https://example.com/m",
        at: now,
      }),
    );
    await recordExpiredMedia(db, [keptRow?.id ?? ""], now);
    const [outgoing] = await seedMessages([
      { accountId, sessionId: SESSION, toNumber: "+14155552671", type: "image", createdAt: now },
    ]);
    const copy = `test-copy-${crypto.randomUUID()}`;
    await (await accountD1(accountId))
      .prepare("UPDATE messages SET media_key = ? WHERE id = ?")
      .bind(copy, outgoing)
      .run();
    expect(await recordExpiredOutgoingMedia(db, [copy], now, 10)).toBe(1);

    expect(await checkStored(accountId)).toEqual(["media", "media_error", "media_expired_at"]);
    expect(
      parseMessageMetadata(JSON.stringify({ media_error: { ...error, at: "x" } })).media_error?.reason,
    ).toBe("too_large");
  });

  it("a campaign's waiting message moved to its other session", async () => {
    const { accountId, key } = await createAccount(10);
    const a = (await connectedSession(key)).id;
    const b = (await connectedSession(key)).id;
    const draft = await createCampaign(key, { chatapp_session_ids: [a, b], recipients: recipients(1) });
    const [id] = await seedMessages([
      { accountId, sessionId: a, toNumber: "+14155552671", status: "scheduled", createdAt: Date.now() },
    ]);
    await (await accountD1(accountId))
      .prepare("UPDATE messages SET campaign_id = ?, scheduled_at = ? WHERE id = ?")
      .bind(draft.id, Date.now() + 3_600_000, id)
      .run();
    expect(
      await failover(env, { id: a, accountId }, [{ id: id ?? "", campaign_id: draft.id }], "session_banned"),
    ).toEqual([id]);

    expect(await checkStored(accountId)).toEqual(["failover"]);
  });
});

describe("parseMessageMetadata", () => {
  it("keeps the stored members in their order, undeclared keys included", () => {
    const text = '{"zeta":1,"settled_by":"answer","attempts":1,"later":{"a":[1]}}';
    const parsed = parseMessageMetadata(text);
    expect(JSON.stringify(parsed)).toBe(text);
    expect(parsed.attempts).toBe(1);
  });

  it("never throws: a declared key that does not fit is left out, text that is not an object reads as {}", () => {
    expect(parseMessageMetadata('{"attempts":"two","gateway":"waha","x":null}')).toEqual({
      gateway: "waha",
      x: null,
    });
    expect(parseMessageMetadata('{"quoted":{"from_me":true}}')).toEqual({});
    expect(parseMessageMetadata("[1]")).toEqual({});
    expect(parseMessageMetadata("not json")).toEqual({});
    expect(parseMessageMetadata("")).toEqual({});
  });

  it("writes what it reads", () => {
    const metadata = { quoted: { provider_message_id: "gw-1", from_me: true }, attempts: 1 };
    expect(parseMessageMetadata(metadataText(metadata))).toEqual(metadata);
  });
});
