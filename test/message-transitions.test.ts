import { env } from "cloudflare:workers";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { findMessage } from "../src/db/queries/messages";
import { parseMessageMetadata } from "../src/messages/metadata";
import { MESSAGE_STATUSES, type MessageStatus } from "../src/messages/types";
import { applyMoves } from "../src/moves/apply";
import { MESSAGE_TRANSITIONS, type MessageMove, type MoveKind, sentStatement } from "../src/moves/message";
import { accountD1, accountDb, firstAccountD1 } from "./databases";
import { call, createAccount, sessionStub, waitFor } from "./helpers";
import {
  balanceOf,
  connectedSession,
  deliverBatch,
  getMessage,
  ledgerOf,
  queueBodyOf,
  seedMessages,
  sendText,
  waitForMessages,
} from "./message-fixtures";

// The message status table (src/moves/message.ts) is the one place a message's status moves.
// Every (move, status) pair is tried on a real D1 row; then the paths that used to fail messages
// the chat network already had (a redelivery after a ban, the dead-letter queue) are checked.

const MOVES = Object.keys(MESSAGE_TRANSITIONS) as MoveKind[];

/** The status a message in `status` has after move `kind` by the table, or null when not allowed. */
function nextStatus(kind: MoveKind, status: MessageStatus): MessageStatus | null {
  const rule = MESSAGE_TRANSITIONS[kind];
  return (rule.from as readonly MessageStatus[]).includes(status) ? rule.to : null;
}
const SESSION = "11111111-1111-4111-8111-111111111111";

/** The move `kind` for one message, with fixed times and a receipt id the row carries. */
function moveOf(kind: MoveKind, accountId: string, id: string, at: number): MessageMove {
  const receipt = { sessionId: SESSION, providerMessageId: `gw-${id}` };
  switch (kind) {
    case "due":
      return { kind, target: { ids: [id] }, at };
    case "sent":
      return {
        kind,
        id,
        at,
        providerMessageId: `gw-${id}`,
        fromNumber: "+14155550100",
        attempts: 1,
        gateway: "t",
        settledBy: "answer",
      };
    case "delivered":
    case "read":
      return { kind, target: receipt, at, gatewayAt: at };
    case "fail":
      return { kind, accountId, target: { ids: [id] }, reason: "test_failure", at };
    case "gateway_failed":
      return { kind, accountId, target: receipt, reason: "gateway_ack_error", at, gatewayAt: at };
  }
}

describe("message transitions", () => {
  const pairs = MOVES.flatMap((kind) => MESSAGE_STATUSES.map((status) => [kind, status] as const));

  it.each(pairs)(
    "%s from %s: moves only as the table says, refunding only failures",
    async (kind, status) => {
      const { accountId } = await createAccount(1);
      const [id] = await seedMessages([
        { accountId, sessionId: SESSION, toNumber: "+14155552671", status, createdAt: Date.now() - 10_000 },
      ]);
      await (await accountD1(accountId))
        .prepare("UPDATE messages SET provider_message_id = ? WHERE id = ?")
        .bind(`gw-${id}`, id)
        .run();
      const [moved] = await applyMoves(env, accountId, [moveOf(kind, accountId, id!, Date.now())]);

      const expected = nextStatus(kind, status as MessageStatus);
      const row = await findMessage(await accountDb(accountId), accountId, id!);
      expect(row?.status).toBe(expected ?? status);
      expect(moved).toBe(expected !== null);
      const refunds = (await ledgerOf(accountId)).filter((entry) => entry.kind === "refund");
      // Seeded rows cost 1 minor unit (message-fixtures.ts).
      expect(refunds).toEqual(
        expected === "failed" ? [{ kind: "refund", amount: 1, balance_after: 101, message_count: 1 }] : [],
      );
    },
  );

  it("allows exactly the documented moves", () => {
    const allowed = pairs
      .filter(([kind, status]) => nextStatus(kind, status) !== null)
      .map((p) => p.join(" "));
    expect(allowed).toEqual([
      "due scheduled",
      "sent queued",
      "sent scheduled",
      "delivered sent",
      "read sent",
      "read delivered",
      "fail queued",
      "fail scheduled",
      "gateway_failed sent",
    ]);
  });

  it("refunds a failure once however often it is applied", async () => {
    const { accountId } = await createAccount(1);
    const [id] = await seedMessages([
      { accountId, sessionId: SESSION, toNumber: "+14155552671", createdAt: 1 },
    ]);
    const move = moveOf("fail", accountId, id!, Date.now());
    expect(await applyMoves(env, accountId, [move, move])).toEqual([true, false]);
    expect((await ledgerOf(accountId)).filter((entry) => entry.kind === "refund")).toHaveLength(1);
  });

  it("never lets stage times run backwards when the gateway's clock is behind, and keeps the gateway's time", async () => {
    const { accountId } = await createAccount(1);
    const [id] = await seedMessages([
      { accountId, sessionId: SESSION, toNumber: "+14155552671", createdAt: 1 },
    ]);
    await (await accountD1(accountId))
      .prepare("UPDATE messages SET provider_message_id = ? WHERE id = ?")
      .bind(`gw-${id}`, id)
      .run();
    const db = await accountDb(accountId);
    const sentAt = Date.parse("2026-11-21T10:00:00.000Z");
    await applyMoves(env, accountId, [moveOf("sent", accountId, id!, sentAt)]);
    const behind = sentAt - 3600_000; // a gateway whose local time is labelled UTC, an hour behind
    const receipt = { sessionId: SESSION, providerMessageId: `gw-${id}` };
    await applyMoves(env, accountId, [
      { kind: "delivered", target: receipt, at: sentAt + 2000, gatewayAt: behind },
    ]);
    await applyMoves(env, accountId, [
      { kind: "read", target: receipt, at: sentAt + 3000, gatewayAt: behind + 1000 },
    ]);
    const row = await findMessage(db, accountId, id!);
    expect(row).toMatchObject({ status: "read", sentAt, deliveredAt: sentAt, readAt: sentAt });
    // Stored in epoch ms, shown as API timestamps.
    expect(JSON.parse(row?.metadata ?? "{}").events).toEqual([
      { type: "delivered", at: sentAt + 2000, gateway_at: behind },
      { type: "read", at: sentAt + 3000, gateway_at: behind + 1000 },
    ]);
    expect(parseMessageMetadata(row?.metadata ?? "{}").events).toEqual([
      { type: "delivered", at: "2026-11-21T10:00:02.000000Z", gateway_at: "2026-11-21T09:00:00.000000Z" },
      { type: "read", at: "2026-11-21T10:00:03.000000Z", gateway_at: "2026-11-21T09:00:01.000000Z" },
    ]);
  });
});

async function ban(key: string, session: string): Promise<void> {
  const res = await call("POST", `/sandbox/sessions/${session}/ban`, { key, body: {} });
  expect(res.status).toBe(200);
}

describe("only messages that never left can be failed by the fan-out's failure paths", () => {
  it("a queue message redelivered after a ban leaves the sent message and the balance alone", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155552671"]);
    const id = res.body.data.messages[0]!.id;
    await waitForMessages(key, [id]);
    const body = await queueBodyOf(accountId, id);
    await ban(key, session);

    expect(await sessionStub(session).enqueue([body])).toBe(0);
    expect(await getMessage(key, id)).toMatchObject({
      status: expect.stringMatching(/^(sent|delivered|read)$/),
    });
    expect(await balanceOf(accountId)).toBe(0.99);
    expect((await ledgerOf(accountId)).map((entry) => entry.kind)).toEqual(["credit", "charge"]);
  });

  it("a queue message redelivered after a ban fails and refunds a message that never reached the session", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    await ban(key, session);
    const [lost] = await seedMessages([
      { accountId, sessionId: session, toNumber: "+14155552672", createdAt: 1 },
    ]);
    expect(await sessionStub(session).enqueue([await queueBodyOf(accountId, lost!)])).toBe(1);
    expect(await getMessage(key, lost!)).toMatchObject({ status: "failed", reason: "session_banned" });
    expect(await balanceOf(accountId)).toBe(1.01);
  });

  it("a dead-lettered message leaves a sent message and one the session object accepted alone", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155552671"]);
    const sent = res.body.data.messages[0]!.id;
    await waitForMessages(key, [sent]);
    const later = new Date(Date.now() + 3600_000).toISOString();
    const scheduled = (await sendText(key, session, ["+14155552673"], { scheduled_at: later })).body.data
      .messages[0]!.id;
    // The object accepted it (its hand-over may have failed after that, as far as the queue knows).
    await waitForAccepted(accountId, scheduled);
    const [lost] = await seedMessages([
      { accountId, sessionId: session, toNumber: "+14155552674", createdAt: 1 },
    ]);

    const bodies = await Promise.all([sent, scheduled, lost!].map((id) => queueBodyOf(accountId, id)));
    await deliverBatch("chatapp-outbound-dlq", bodies);
    expect((await getMessage(key, sent)).status).toMatch(/^(sent|delivered|read)$/);
    expect(await getMessage(key, scheduled)).toMatchObject({ status: "scheduled", reason: null });
    expect(await getMessage(key, lost!)).toMatchObject({ status: "failed", reason: "dispatch_failed" });
    // 1 − two charges of 0.01 + the seeded message's refund of 0.01.
    expect(await balanceOf(accountId)).toBe(0.99);
  });
});

async function waitForAccepted(accountId: string, id: string): Promise<void> {
  const d1 = await accountD1(accountId);
  await waitFor(
    async () =>
      (
        await d1
          .prepare("SELECT accepted_at FROM messages WHERE id = ?")
          .bind(id)
          .first<{ accepted_at: number | null }>()
      )?.accepted_at ?? undefined,
    { reason: `message ${id} to be accepted (the outbound queue hands it over)`, timeoutMs: 5_000 },
  );
}

describe("the plan of a batch's sent moves", () => {
  it("looks each message up by its primary key, driven by the batch's list", async () => {
    const query = new SQLiteAsyncDialect({ casing: "snake_case" }).sqlToQuery(
      sentStatement([
        {
          kind: "sent",
          id: SESSION,
          at: 1,
          providerMessageId: "p",
          fromNumber: null,
          attempts: 1,
          gateway: "sandbox",
          settledBy: "answer",
        },
      ]),
    );
    const plan = await firstAccountD1()
      .prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...query.params)
      .all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail).join("\n");
    expect(details).toMatch(/SEARCH messages USING INDEX sqlite_autoindex_messages_1 \(id=\?\)/);
    expect(details).not.toMatch(/SCAN messages/);
  });
});
