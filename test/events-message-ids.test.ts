import { sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { batchSql } from "../src/db/client";
import { eventsForRows, materialiseMessageEventsStatement } from "../src/db/queries/events";
import { messages } from "../src/db/schema";
import { EVENT_TYPES } from "../src/events/catalogue";
import { accountD1, accountDb, firstAccountD1 } from "./databases";
import { EVENTS } from "./event-fixtures";
import { call, createAccount } from "./helpers";
import { connectedSession, driveAlarmUntil, getMessage, seedMessages, sendText } from "./message-fixtures";

// A message event's id is made of its message's id and type (src/db/queries/events.ts
// `messageEventId`), so it needs no dedupe key: recording the same change again is a primary-key
// conflict. Messages whose id is not a version 4 UUID keep a random event id and a dedupe key.

interface StoredEvent {
  id: string;
  type: string;
  dedupe_key: string | null;
  object_id: string | null;
  message_id: string | null;
  snapshot: string;
}

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

const MESSAGE_EVENT_TYPES = EVENT_TYPES.filter((type) => type.startsWith("message."));

/** The stored events of message `messageId` of account `accountId`, in the account's database. */
async function storedEvents(accountId: string, messageId: string): Promise<StoredEvent[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(
      `SELECT id, type, dedupe_key, object_id, message_id, snapshot FROM ${EVENTS}
     WHERE message_id = ? OR dedupe_key LIKE ? ORDER BY created_at, type`,
    )
    .bind(messageId, `%:${messageId}`)
    .all<StoredEvent>();
  return results;
}

/** `evt_` and the message id's hex digits with the 13th (the UUID's version) replaced by `code`. */
function derived(messageId: string, code: string): string {
  const hex = messageId.replaceAll("-", "");
  return `evt_${hex.slice(0, 12)}${code}${hex.slice(13)}`;
}

async function shown(key: string, id: string): Promise<Event> {
  const res = await call<{ data: Event }>("GET", `/v1/events/${id}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describe("message event ids", () => {
  it("are the message's id with a digit per type, and store no dedupe key", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const id = (await sendText(key, session, ["+14155552671"])).body.data.messages[0]!.id;
    await driveAlarmUntil(session, async () => (await getMessage(key, id)).status === "read");

    const stored = await storedEvents(accountId, id);
    // The id names the message: no `object_id` either.
    expect(stored.map((e) => [e.type, e.id, e.dedupe_key, e.object_id, e.message_id])).toEqual([
      ["message.sent", derived(id, "1"), null, null, id],
      ["message.delivered", derived(id, "2"), null, null, id],
      ["message.read", derived(id, "3"), null, null, id],
    ]);
    for (const e of stored) expect(e.id).toMatch(/^evt_[0-9a-f]{32}$/);

    // The same change recorded again (the event statements run again) adds nothing.
    const db = await accountDb(accountId);
    const again = await batchSql(
      db,
      (["message.sent", "message.delivered", "message.read"] as const).map((type) =>
        eventsForRows(type, messages, sql`id = ${id}`),
      ),
    );
    expect(again.map((r) => r.results)).toEqual([[], [], []]);
    expect(await storedEvents(accountId, id)).toEqual(stored);
  });

  it("of a message whose id is not a version 4 UUID are random, with a dedupe key doing the work", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    const upper = crypto.randomUUID().toUpperCase();
    const ids = await seedMessages(
      ["msg-not-a-uuid", upper].map((id) => ({
        id,
        accountId,
        sessionId: session.id,
        toNumber: "+14155552671",
        status: "sent" as const,
        createdAt: Date.now(),
      })),
    );
    const db = await accountDb(accountId);
    for (let round = 0; round < 2; round++)
      await batchSql(
        db,
        ids.map((id) => eventsForRows("message.sent", messages, sql`id = ${id}`)),
      );
    for (const id of ids) {
      const stored = await storedEvents(accountId, id);
      expect(stored.map((e) => [e.type, e.dedupe_key, e.object_id, e.message_id])).toEqual([
        ["message.sent", `message.sent:${id}`, id, id],
      ]);
      expect(stored[0]?.id).toMatch(/^evt_[0-9a-f]{32}$/);
    }
  });

  it("are found, as are keyed ones, when their messages' events are rendered whole", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const id = (await sendText(key, session, ["+14155552671"])).body.data.messages[0]!.id;
    await driveAlarmUntil(session, async () => (await getMessage(key, id)).status === "read");
    const [keyedId] = await seedMessages([
      {
        id: "msg-keyed",
        accountId,
        sessionId: session,
        toNumber: "+14155552672",
        status: "sent",
        createdAt: 1,
      },
    ]);
    const db = await accountDb(accountId);
    await batchSql(db, [eventsForRows("message.sent", messages, sql`id = ${keyedId}`)]);
    const events = [
      ...(await storedEvents(accountId, id)),
      ...(await storedEvents(accountId, keyedId ?? "")),
    ];
    expect(events).toHaveLength(4);
    const before = await Promise.all(events.map((e) => shown(key, e.id)));

    // Another account's statement finds nothing of this one, even run where its messages are.
    const other = await createAccount(1);
    const both = sql`(SELECT value AS id FROM json_each(${JSON.stringify([id, keyedId])}))`;
    await batchSql(db, [materialiseMessageEventsStatement(other.accountId, both, MESSAGE_EVENT_TYPES)]);
    expect((await storedEvents(accountId, id)).every((e) => e.message_id === id)).toBe(true);

    await batchSql(db, [materialiseMessageEventsStatement(accountId, both, MESSAGE_EVENT_TYPES)]);
    // Whole now (the message's row), and rendered as before.
    expect(await Promise.all(events.map((e) => shown(key, e.id)))).toEqual(before);
    const rows = await (await accountD1(accountId))
      .prepare(
        `SELECT object_id, json_type(snapshot) AS shape FROM ${EVENTS} WHERE id IN (SELECT value FROM json_each(?))`,
      )
      .bind(JSON.stringify(events.map((e) => e.id)))
      .all<{ object_id: string | null; shape: string }>();
    expect(rows.results).toEqual(events.map(() => ({ object_id: null, shape: "object" })));
  });

  it("are looked up by primary key and dedupe key when rendered whole, not by the account's events", async () => {
    const query = new SQLiteAsyncDialect({ casing: "snake_case" }).sqlToQuery(
      materialiseMessageEventsStatement(
        "a",
        sql`(SELECT value AS id FROM json_each(${'["m"]'}))`,
        MESSAGE_EVENT_TYPES,
      ),
    );
    const plan = await firstAccountD1()
      .prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...query.params)
      .all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail).join("\n");
    expect(details).toMatch(/SEARCH events USING PRIMARY KEY \(id=\?\)/);
    expect(details).toMatch(/USING COVERING INDEX events_dedupe_key \(dedupe_key=\?\)/);
    expect(details).not.toMatch(/events_account_/);
  });
});
