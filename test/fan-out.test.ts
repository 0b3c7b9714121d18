import {
  createExecutionContext,
  createMessageBatch,
  evictDurableObject,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findMessage } from "../src/db/queries/messages";
import worker from "../src/index";
import { redeliveryDelaySeconds } from "../src/lib/queue";
import { type DispatchRequest, dispatchRequestOf } from "../src/messages/dispatch-request";
import type { ChatSession } from "../src/sessions/chat-session";
import { accountDb } from "./databases";
import { createAccount, sessionStub } from "./helpers";
import {
  balanceOf,
  connectedSession,
  driveAlarmUntil,
  ledgerOf,
  ms,
  seedMessages,
  sendText,
  waitForMessages,
} from "./message-fixtures";

const numbers = (count: number, base = 4155552100) =>
  Array.from({ length: count }, (_, i) => `+1${base + i}`);

/** Outbox rows of a session object, straight from its SQLite storage. */
function outboxOf(sessionId: string) {
  return runInDurableObject(sessionStub(sessionId), (_instance: ChatSession, state) =>
    state.storage.sql
      .exec<{ id: string; state: string; attempts: number }>("SELECT id, state, attempts FROM outbox")
      .toArray(),
  );
}

describe("pacing", () => {
  it("sends one session's messages in acceptance order, each at least delay_between after the previous", async () => {
    const { key } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const to = numbers(6);
    const res = await sendText(key, session, to, { delay_between: 250 });
    expect(res.status).toBe(201);
    const sent = await waitForMessages(
      key,
      res.body.data.messages.map((m) => m.id),
    );
    expect(sent.every((m) => ["sent", "delivered", "read"].includes(m.status))).toBe(true);
    const bySentAt = [...sent].sort((a, b) => ms(a.sent_at) - ms(b.sent_at));
    expect(bySentAt.map((m) => m.to_number)).toEqual(to);
    for (let i = 1; i < bySentAt.length; i++) {
      const gap = ms(bySentAt[i]!.sent_at) - ms(bySentAt[i - 1]!.sent_at);
      expect(gap).toBeGreaterThanOrEqual(250);
      expect(gap).toBeLessThan(1250);
    }
  });

  it("keeps the spacing when two sends run at once on the same session", async () => {
    const { key } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const [a, b] = await Promise.all([
      sendText(key, session, numbers(4, 4155552200), { delay_between: 150 }),
      sendText(key, session, numbers(4, 4155552300), { delay_between: 150 }),
    ]);
    const ids = [...a.body.data.messages, ...b.body.data.messages].map((m) => m.id);
    const sent = await waitForMessages(key, ids);
    const ordered = [...sent].sort((x, y) => ms(x.sent_at) - ms(y.sent_at));
    for (let i = 1; i < ordered.length; i++) {
      expect(ms(ordered[i]!.sent_at) - ms(ordered[i - 1]!.sent_at)).toBeGreaterThanOrEqual(150);
    }
    for (const send of [a, b]) {
      const own = ordered
        .filter((m) => send.body.data.messages.some((s) => s.id === m.id))
        .map((m) => m.to_number);
      expect(own).toEqual(send.body.data.messages.map((m) => m.to_number));
    }
  });

  it("records from_number, provider_message_id and attempts when the gateway accepts", async () => {
    const { key } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155552671"]);
    const [message] = await waitForMessages(key, [res.body.data.messages[0]!.id]);
    expect(message).toMatchObject({
      status: "sent",
      from_number: expect.stringMatching(/^\+120255501\d\d$/),
      provider_message_id: `sandbox.${message!.id}`,
      metadata: { attempts: 1, gateway: "sandbox" },
    });
    expect(ms(message!.sent_at)).toBeGreaterThanOrEqual(ms(message!.created_at));
  });
});

describe("at-least-once delivery never sends twice", () => {
  it("ignores a redelivered queue message for a message already sent", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, numbers(2, 4155552400), { delay_between: 0 });
    const ids = res.body.data.messages.map((m) => m.id);
    const first = await waitForMessages(key, ids);

    const db = await accountDb(accountId);
    const bodies: DispatchRequest[] = [];
    for (const id of ids) bodies.push(dispatchRequestOf((await findMessage(db, accountId, id))!, 1));
    const batch = createMessageBatch<DispatchRequest>(
      "chatapp-outbound",
      bodies.map((body, i) => ({ id: `redelivery-${i}`, timestamp: new Date(), attempts: 2, body })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["redelivery-0", "redelivery-1"]);
    await runDurableObjectAlarm(sessionStub(session));

    const after = await waitForMessages(key, ids);
    expect(after.map((m) => [m.sent_at, m.metadata.attempts])).toEqual(first.map((m) => [m.sent_at, 1]));
    const outbox = await outboxOf(session);
    expect(outbox.map((row) => [row.state, row.attempts])).toEqual([
      ["sent", 1],
      ["sent", 1],
    ]);
    expect((await ledgerOf(accountId)).filter((e) => e.kind === "charge")).toHaveLength(1);
  });

  it("sends every message once across an object restart", async () => {
    const { key } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, numbers(5, 4155552500), { delay_between: 200 });
    const ids = res.body.data.messages.map((m) => m.id);
    await waitForMessages(key, ids.slice(0, 1));
    await evictDurableObject(sessionStub(session));
    const sent = await waitForMessages(key, ids);
    // Sent once each; the first may have had its delivery receipt meanwhile on a slow machine.
    expect(sent.map((m) => [["sent", "delivered", "read"].includes(m.status), m.metadata.attempts])).toEqual(
      ids.map(() => [true, 1]),
    );
    const outbox = await outboxOf(session);
    expect(outbox.every((row) => row.state === "sent" && row.attempts === 1)).toBe(true);
    expect(outbox).toHaveLength(5);
  });
});

describe("gateway failures", () => {
  it("fails a permanent failure at once with its reason and refunds it", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155550000", "+14155552671"], { delay_between: 0 });
    expect(res.body.data.new_balance).toBe(0.98);
    const [failed, sent] = await waitForMessages(
      key,
      res.body.data.messages.map((m) => m.id),
    );
    expect(failed).toMatchObject({ status: "failed", reason: "recipient_not_on_chatapp", sent_at: null });
    expect(failed!.metadata).toMatchObject({ attempts: 1, last_error: "recipient_not_on_chatapp" });
    expect(sent!.status).toBe("sent");
    expect(await balanceOf(accountId)).toBe(0.99);
    expect(await ledgerOf(accountId)).toEqual([
      { kind: "credit", amount: 100, balance_after: 100, message_count: 0 },
      { kind: "charge", amount: -2, balance_after: 98, message_count: 2 },
      { kind: "refund", amount: 1, balance_after: 99, message_count: 1 },
    ]);
  });

  it("retries a transient failure with backoff until the gateway accepts", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155550001"]);
    const id = res.body.data.messages[0]!.id;
    await waitForMessages(key, [id], (m) => m.metadata.attempts === 1);
    const retrying = (await waitForMessages(key, [id], () => true))[0]!;
    expect(retrying).toMatchObject({
      status: "queued",
      metadata: { attempts: 1, last_error: "sandbox_transient_failure" },
    });
    await driveAlarmUntil(
      session,
      async () => (await waitForMessages(key, [id], () => true))[0]!.status === "sent",
    );
    const [sent] = await waitForMessages(key, [id]);
    expect(sent).toMatchObject({ status: "sent", metadata: { attempts: 3 } });
    // The errors of the attempts before stay in send_attempts; none is the message's error now.
    expect(sent?.metadata.last_error).toBeUndefined();
    expect(sent?.metadata).not.toHaveProperty("next_attempt_at");
    expect(sent?.metadata.send_attempts).toHaveLength(2);
    expect(await balanceOf(accountId)).toBe(0.99);
  });

  it("fails with retries_exhausted after the last attempt, and refunds", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155550002"]);
    const id = res.body.data.messages[0]!.id;
    await driveAlarmUntil(
      session,
      async () => (await waitForMessages(key, [id], () => true))[0]!.status === "failed",
    );
    const [failed] = await waitForMessages(key, [id]);
    expect(failed).toMatchObject({
      status: "failed",
      reason: "retries_exhausted",
      metadata: { attempts: 5 },
    });
    expect(await balanceOf(accountId)).toBe(1);
  });
});

describe("queue consumer", () => {
  it("acks and drops a poison message instead of retrying it forever", async () => {
    const batch = createMessageBatch("chatapp-outbound", [
      { id: "poison", timestamp: new Date(), attempts: 1, body: { sessionId: "x" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["poison"]);
    expect(result.retryMessages).toEqual([]);
  });

  it("backs off redeliveries exponentially, capped at 10 minutes", () => {
    expect([1, 2, 3, 9, 10, 20].map(redeliveryDelaySeconds)).toEqual([2, 4, 8, 512, 600, 600]);
  });

  it("fails and refunds messages that reach the dead-letter queue without reaching their session", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    // Charged and stored, but their queue messages never reached the session object.
    const ids = await seedMessages(
      numbers(2, 4155552600).map((toNumber) => ({ accountId, sessionId: session, toNumber, createdAt: 1 })),
    );
    const db = await accountDb(accountId);
    const bodies: DispatchRequest[] = [];
    for (const id of ids) bodies.push(dispatchRequestOf((await findMessage(db, accountId, id))!, 1));
    const batch = createMessageBatch<DispatchRequest>(
      "chatapp-outbound-dlq",
      bodies.map((body, i) => ({ id: `dead-${i}`, timestamp: new Date(), attempts: 9, body })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks.sort()).toEqual(["dead-0", "dead-1"]);
    const failed = await waitForMessages(key, ids);
    expect(failed.map((m) => [m.status, m.reason])).toEqual([
      ["failed", "dispatch_failed"],
      ["failed", "dispatch_failed"],
    ]);
    // Seeded messages cost 0.01 each and were never charged: the refunds add them.
    expect(await balanceOf(accountId)).toBe(1.02);
  });
});
