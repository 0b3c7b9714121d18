import { createScheduledController, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { STALE_AFTER_MS, staleQuery } from "../src/delivery/reconcile";
import worker from "../src/index";
import type { ChatSession } from "../src/sessions/chat-session";
import { accountD1, accountDb, firstAccountD1 } from "./databases";
import { call, createAccount, sessionStub, waitFor } from "./helpers";
import {
  balanceOf,
  connectedSession,
  getMessage,
  ledgerOf,
  seedMessages,
  sendText,
  waitForMessages,
} from "./message-fixtures";

async function runCron() {
  await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env);
}

describe("reconciliation sweep (hourly cron)", () => {
  it("re-enqueues a message whose queue message was lost, and it is sent once", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    // A message charged and stored, whose queue message never reached the session object.
    const [id] = await seedMessages([
      {
        accountId,
        sessionId: session.id,
        toNumber: "+14155552671",
        createdAt: Date.now() - STALE_AFTER_MS - 60_000,
      },
    ]);
    await runCron();
    const [sent] = await waitForMessages(key, [id!]);
    expect(sent).toMatchObject({ status: "sent", metadata: { attempts: 1 } });
    // Sweeping again (the message is no longer waiting; even if it were, the object knows it).
    await runCron();
    const outbox = await runInDurableObject(sessionStub(session.id), (_i: ChatSession, state) =>
      state.storage.sql.exec<{ id: string; attempts: number }>("SELECT id, attempts FROM outbox").toArray(),
    );
    expect(outbox).toEqual([{ id: id!, attempts: 1 }]);
  });

  it("sweeps only messages no session object accepted, so waiting ones cannot crowd out a lost one", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    // A real send, scheduled for later: the object accepts it and records that in D1.
    const later = new Date(Date.now() + 3600_000).toISOString();
    const res = await sendText(key, session.id, ["+14155552676"], { scheduled_at: later });
    const waiting = res.body.data.messages[0]!.id;
    const d1 = await accountD1(accountId);
    await waitFor(
      async () =>
        (await d1.prepare("SELECT accepted_at FROM messages WHERE id = ?").bind(waiting).first())
          ?.accepted_at,
      { reason: "the session to accept the message (the outbound queue hands it over)", timeoutMs: 5_000 },
    );
    const old = Date.now() - STALE_AFTER_MS - 3600_000;
    // 1,000 more messages the object holds, older than the one that was really lost.
    const held = await seedMessages(
      Array.from({ length: 1000 }, (_, i) => ({
        accountId,
        sessionId: session.id,
        toNumber: `+1415555${String(3000 + i)}`,
        createdAt: old + i,
      })),
    );
    await d1
      .prepare(
        `UPDATE messages SET accepted_at = created_at, updated_at = ${old} WHERE id IN (SELECT value FROM json_each(?)) OR id = ?`,
      )
      .bind(JSON.stringify(held), waiting)
      .run();
    const [lost] = await seedMessages([
      { accountId, sessionId: session.id, toNumber: "+14155552677", createdAt: old + 60_000 },
    ]);
    expect((await staleQuery(await accountDb(accountId), Date.now())).map((row) => row.id)).toEqual([lost]);
  });

  it("fails and refunds a lost one-time code instead of re-sending it (only its queue message held the code)", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    const [lost] = await seedMessages([
      {
        accountId,
        sessionId: session.id,
        toNumber: "+14155552678",
        createdAt: Date.now() - STALE_AFTER_MS - 60_000,
      },
    ]);
    await (await accountD1(accountId))
      .prepare("UPDATE messages SET otp_id = ?, content = '•••••• is your code' WHERE id = ?")
      .bind(crypto.randomUUID(), lost)
      .run();
    await runCron();
    expect(await getMessage(key, lost!)).toMatchObject({ status: "failed", reason: "dispatch_failed" });
    expect(await balanceOf(accountId)).toBe(1.01);
    const outbox = await runInDurableObject(sessionStub(session.id), (_i: ChatSession, state) =>
      state.storage.sql.exec("SELECT id FROM outbox").toArray(),
    );
    expect(outbox).toEqual([]);
  });

  it("leaves recent and future-scheduled messages alone", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    await call("PATCH", `/v1/chatapp/sessions/${session.id}/disconnect`, { key });
    const [recent, old] = await seedMessages([
      { accountId, sessionId: session.id, toNumber: "+14155552672", createdAt: Date.now() },
      {
        accountId,
        sessionId: session.id,
        toNumber: "+14155552675",
        createdAt: Date.now() - STALE_AFTER_MS - 1000,
      },
    ]);
    const later = Date.now() + 3600_000;
    await (await accountD1(accountId))
      .prepare("UPDATE messages SET status = 'scheduled', scheduled_at = ? WHERE id = ?")
      .bind(later, old)
      .run();
    const db = await accountDb(accountId);
    const found = (await staleQuery(db, Date.now())).map((row) => row.id);
    expect(found).not.toContain(recent);
    expect(found).not.toContain(old);
    // The same messages are stale once their time has passed long enough.
    const future = (await staleQuery(db, later + STALE_AFTER_MS + 1000)).map((row) => row.id);
    expect(future).toEqual(expect.arrayContaining([recent, old]));
  });

  it("reads only waiting messages, through the partial index", async () => {
    const d1 = firstAccountD1();
    const { sql, params } = staleQuery(createDb(d1), Date.now()).toSQL();
    const plan = await d1
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...params)
      .all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail).join("\n")).toMatch(/USING INDEX messages_unaccepted/);
  });
});

describe("deleting a session", () => {
  it("fails and refunds its messages that never reached the session object", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    const [lost] = await seedMessages([
      { accountId, sessionId: session.id, toNumber: "+14155552673", createdAt: Date.now() },
    ]);
    await call("DELETE", `/v1/chatapp/sessions/${session.id}`, { key });
    expect(await getMessage(key, lost!)).toMatchObject({ status: "failed", reason: "session_deleted" });
    expect(await balanceOf(accountId)).toBe(1.01);
    expect((await ledgerOf(accountId)).at(-1)).toMatchObject({ kind: "refund", amount: 1, message_count: 1 });
  });
});

describe("a restarted session object", () => {
  it("writes sent outcomes that had not reached D1 when it stopped", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    const res = await sendText(key, session.id, ["+14155552674"]);
    const id = res.body.data.messages[0]!.id;
    const [sent] = await waitForMessages(key, [id]);
    // The state a stop between the gateway's acceptance and the D1 write leaves behind.
    await runInDurableObject(sessionStub(session.id), (_i: ChatSession, state) => {
      state.storage.sql.exec("UPDATE outbox SET synced = 0 WHERE id = ?", id);
    });
    await (await accountD1(accountId))
      .prepare("UPDATE messages SET status = 'queued', sent_at = NULL WHERE id = ?")
      .bind(id)
      .run();
    await evictDurableObject(sessionStub(session.id));
    await runInDurableObject(sessionStub(session.id), () => undefined);
    const [again] = await waitForMessages(key, [id]);
    expect(again).toMatchObject({
      status: "sent",
      sent_at: sent!.sent_at,
      provider_message_id: `sandbox.${id}`,
    });
  });
});
