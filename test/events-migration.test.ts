import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { batchSql } from "../src/db/client";
import { eventsForRows } from "../src/db/queries/events";
import { messages } from "../src/db/schema";
import { newEventId } from "../src/events/record";
import { accountD1, accountDb } from "./databases";
import { EVENTS } from "./event-fixtures";
import { call, createAccount } from "./helpers";
import { connectedSession, driveAlarmUntil, getMessage, sendText } from "./message-fixtures";

// Two migrations of `events`, run again in order on events stored as they were before each:
// - 0049 (smaller_events_and_indexes) rebuilds `events` (a nullable `dedupe_key`) and rewrites the
//   snapshots of message events from the old MESSAGE_EVENT_FIELDS (12 fields) to the new ones;
// - 0050 (events_keyed_small) rebuilds it again WITHOUT ROWID: ids as 16 bytes, the account by its
//   number (which it adds), the type by its code.
// This file puts `events` back as 0049 left it, stores message events as they were before 0049
// (random id, dedupe key, the old array), runs both migrations' statements on `events` again, and
// checks that every event renders as before and each change is still recorded once.

/** The statements (PRAGMAs and comments left out) of the migration named `name` that touch `tables`. */
function statementsOf(name: string, tables: RegExp): string[] {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.includes(name));
  if (!migration) throw new Error(`migration ${name} is not among the test migrations`);
  const code = (q: string) => q.replace(/^\s*--.*$/gm, "");
  return migration.queries.filter((q) => tables.test(code(q)) && !/PRAGMA/.test(q));
}

/** 0049's statements that rebuild `events`. */
const rebuild0049 = () => statementsOf("_smaller_events_and_indexes", /`(__new_)?events`/);

/**
 * `events` and `accounts` of account database `d1` as 0049 left them: its table and indexes (no
 * account numbers), holding the events there are now, converted back (text ids, account ids, type
 * names, `object_id` set).
 */
async function backToShapeOf0049(d1: D1Database): Promise<void> {
  const table = rebuild0049().find((q) => /CREATE TABLE/.test(q));
  const indexes = rebuild0049().filter((q) => /CREATE (UNIQUE )?INDEX/.test(q));
  expect(indexes).toHaveLength(4);
  const { results } = await d1.prepare(`SELECT * FROM ${EVENTS}`).all<Record<string, unknown>>();
  await d1.batch(
    [
      "DROP TABLE events",
      (table ?? "").replaceAll("__new_events", "events"),
      ...indexes,
      "DROP INDEX accounts_number",
      "ALTER TABLE accounts DROP COLUMN number",
    ].map((q) => d1.prepare(q)),
  );
  const insert = d1.prepare(
    "INSERT INTO events (id, account_id, type, dedupe_key, snapshot, object_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  await d1.batch(
    results.map((e) =>
      insert.bind(e.id, e.account_id, e.type, e.dedupe_key, e.snapshot, e.message_id, e.created_at),
    ),
  );
}

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

async function eventsOf(key: string): Promise<Event[]> {
  const res = await call<{ data: Event[] }>("GET", "/v1/events?limit=100", { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describe("migrations smaller_events_and_indexes and events_keyed_small", () => {
  it("keeps every event, renders old message events as before, and still records each change once", async () => {
    const { key, accountId } = await createAccount(1);
    const d1 = await accountD1(accountId);
    const session = (await connectedSession(key)).id;
    const id = (await sendText(key, session, ["+14155552671"])).body.data.messages[0]!.id;
    await driveAlarmUntil(session, async () => (await getMessage(key, id)).status === "read");
    const before = await eventsOf(key);
    expect(before.map((e) => e.type)).toEqual([
      "message.read",
      "message.delivered",
      "message.sent",
      "session.status_changed",
    ]);

    // As events were stored before: a random id, the dedupe key `type:<message id>`, and the old
    // fields (session, gateway id, from, media, status, reason, cost, sent, delivered, read,
    // metadata, updated), each time absolute.
    await backToShapeOf0049(d1);
    const renamed = new Map<string, string>();
    for (const event of before.filter((e) => e.type.startsWith("message."))) {
      const old = newEventId();
      renamed.set(event.id, old);
      await d1
        .prepare(
          `UPDATE events SET id = ?, dedupe_key = type || ':' || object_id, snapshot = (SELECT json_array(
           m.chatapp_session_id, m.provider_message_id, m.from_number, json_extract(events.snapshot, '$[0]'),
           json_extract(events.snapshot, '$[1]'), json_extract(events.snapshot, '$[2]'), m.cost, m.sent_at,
           events.created_at + json_extract(events.snapshot, '$[3]'), events.created_at + json_extract(events.snapshot, '$[4]'),
           json(?), events.created_at) FROM messages m WHERE m.id = events.object_id)
         WHERE id = ?`,
        )
        .bind(old, JSON.stringify(event.data.metadata), event.id)
        .run();
    }
    const read = await d1
      .prepare("SELECT snapshot FROM events WHERE id = ?")
      .bind(renamed.get(before[0]?.id ?? ""))
      .first<{ snapshot: string }>();
    const shownRead = await getMessage(key, id);
    expect(JSON.parse(read?.snapshot ?? "[]")).toEqual([
      session,
      shownRead.provider_message_id,
      shownRead.from_number,
      null,
      "read",
      null,
      1,
      Date.parse(shownRead.sent_at ?? ""),
      Date.parse(shownRead.delivered_at ?? ""),
      Date.parse(shownRead.read_at ?? ""),
      shownRead.metadata,
      Date.parse(before[0]?.created_at ?? ""),
    ]);

    const count = await d1.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>();
    expect(rebuild0049()).toHaveLength(8);
    for (const statement of rebuild0049()) await d1.prepare(statement).run();
    const migrated = statementsOf("_events_keyed_small", /`(__new_)?events`|`accounts`/);
    expect(migrated).toHaveLength(10);
    for (const statement of migrated) await d1.prepare(statement).run();
    expect(await d1.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>()).toEqual(count);

    // Rendered as before, under the ids they had; the session's event, stored whole, untouched.
    expect(await eventsOf(key)).toEqual(before.map((e) => ({ ...e, id: renamed.get(e.id) ?? e.id })));
    const stored = await d1
      .prepare(`SELECT snapshot FROM ${EVENTS} WHERE id = ?`)
      .bind(renamed.get(before[0]?.id ?? ""))
      .first<{ snapshot: string }>();
    const readAt = Date.parse(before[0]?.created_at ?? "");
    expect(JSON.parse(stored?.snapshot ?? "[]")).toEqual([
      null,
      "read",
      null,
      Date.parse(shownRead.delivered_at ?? "") - readAt,
      Date.parse(shownRead.read_at ?? "") - readAt,
      shownRead.metadata,
    ]);

    // Their dedupe keys still make each change once.
    const again = await batchSql(
      await accountDb(accountId),
      (["message.sent", "message.delivered", "message.read"] as const).map((type) =>
        eventsForRows(type, messages, sql`id = ${id}`),
      ),
    );
    expect(again.map((r) => r.results)).toEqual([[], [], []]);
    expect(await eventsOf(key)).toHaveLength(before.length);
  });
});
