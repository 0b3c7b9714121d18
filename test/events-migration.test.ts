import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { batchSql, createDb } from "../src/db/client";
import { eventsForRows } from "../src/db/queries/events";
import { messages } from "../src/db/schema";
import { newEventId } from "../src/events/record";
import { call, createAccount } from "./helpers";
import { connectedSession, driveAlarmUntil, getMessage, sendText } from "./message-fixtures";

// Migration 0049 (smaller_events_and_indexes) rebuilds `events` (a nullable `dedupe_key`) and rewrites the snapshots of message
// events from the old MESSAGE_EVENT_FIELDS (12 fields) to the new ones. This file stores message
// events as they were before it (random id, dedupe key, the old array), runs the migration's
// statements on `events` again, and checks that they render as before and are still recorded once.

/** The statements of migrations/0049_smaller_events_and_indexes.sql that rebuild `events` (PRAGMAs left out). */
function rebuild(): string[] {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.includes("_smaller_events_and_indexes"));
  if (!migration) throw new Error("migration smaller_events_and_indexes is not among the test migrations");
  const code = (q: string) => q.replace(/^\s*--.*$/gm, "");
  const statements = migration.queries.filter((q) => /`(__new_)?events`/.test(code(q)) && !/PRAGMA/.test(q));
  expect(statements).toHaveLength(8);
  return statements;
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

describe("migration smaller_events_and_indexes (message events without dedupe keys)", () => {
  it("keeps every event, renders old message events as before, and still records each change once", async () => {
    const { key } = await createAccount(1);
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
    const renamed = new Map<string, string>();
    for (const event of before.filter((e) => e.type.startsWith("message."))) {
      const old = newEventId();
      renamed.set(event.id, old);
      await env.DB.prepare(
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
    const read = await env.DB.prepare("SELECT snapshot FROM events WHERE id = ?")
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

    const count = await env.DB.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>();
    for (const statement of rebuild()) await env.DB.prepare(statement).run();
    expect(await env.DB.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>()).toEqual(count);

    // Rendered as before, under the ids they had; the session's event, stored whole, untouched.
    expect(await eventsOf(key)).toEqual(before.map((e) => ({ ...e, id: renamed.get(e.id) ?? e.id })));
    const stored = await env.DB.prepare("SELECT snapshot FROM events WHERE id = ?")
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
      createDb(env.DB),
      (["message.sent", "message.delivered", "message.read"] as const).map((type) =>
        eventsForRows(type, messages, sql`id = ${id}`),
      ),
    );
    expect(again.map((r) => r.results)).toEqual([[], [], []]);
    expect(await eventsOf(key)).toHaveLength(before.length);
  });
});
