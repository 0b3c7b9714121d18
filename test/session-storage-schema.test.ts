import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ChatSession } from "../src/sessions/chat-session";
import { SessionCore } from "../src/sessions/session-core";
import { applySchema, SCHEMA_VERSION } from "../src/sessions/storage-schema";
import { createAccount, createSession, sessionStub } from "./helpers";

// The session object's storage schema (src/sessions/storage-schema.ts), on real Durable Objects.
// A wake is a new ChatSession on the object's state: what the runtime constructs after eviction.

/** Every table of a session object at SCHEMA_VERSION, with its columns in order. */
const TABLES: Record<string, string[]> = {
  alarm_state: ["id", "armed_for"],
  campaign_holds: ["campaign_id", "hold"],
  cloud_api_number: ["phone_number_id", "waba_id", "access_token_sealed", "throughput_mps"],
  deadlines: ["kind", "ref", "due_at"],
  gateway_health: ["key", "value"],
  incoming_media: ["message_id", "ref", "mimetype", "tries"],
  kept_receipts: [
    "provider_message_id",
    "status",
    "reason",
    "gateway_at",
    "kept_at",
    "message_id",
    "pricing",
  ],
  outbox: [
    "id",
    "account_id",
    "to_number",
    "type",
    "content",
    "media_url",
    "delay_between",
    "priority",
    "accepted_at",
    "send_ref",
    "send_index",
    "not_before",
    "scheduled",
    "state",
    "attempts",
    "next_attempt_at",
    "expires_at",
    "done_at",
    "provider_message_id",
    "synced",
    "reason",
    "campaign_id",
    "send_window",
    "settled_by",
    "first_attempt_at",
    "attempted_at",
    "media_key",
    "media_content_type",
    "typing_ms",
    "typing_at",
    "typing",
    "quoted",
  ],
  outbox_pacing: ["id", "last_call_at"],
  pending_events: ["id", "type", "snapshot", "created_at"],
  sandbox_held_acks: ["message_id", "held_at"],
  sandbox_link: ["key", "value"],
  sandbox_received: ["message_id", "to_number", "type", "content", "media_url", "received_at", "reply_to"],
  sandbox_sent: ["message_id", "sent_at"],
  session: [
    "id",
    "account_id",
    "session_id",
    "phone_number",
    "display_name",
    "status",
    "reason",
    "last_seen_at",
    "created_at",
    "updated_at",
    "origin",
    "qr",
    "gateway",
    "health",
  ],
};

const INDEXES = ["outbox_campaign", "outbox_order", "outbox_unsynced", "sandbox_received_to"];

/** The object's own tables (not the runtime's `_cf_` ones, nor `_schema`), by name. */
function tableNames(sql: SqlStorage): string[] {
  return sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name",
    )
    .toArray()
    .map((t) => t.name);
}

/**
 * Each table's columns as SQLite declares them (name, type, NOT NULL, default, key), by name: a
 * column back-filled by ALTER TABLE comes last, so order is compared for new objects only.
 */
function shape(sql: SqlStorage): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const name of tableNames(sql)) {
    out[name] = sql
      .exec('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY name', name)
      .toArray();
  }
  out["(indexes)"] = sql
    .exec("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
    .toArray();
  return out;
}

/** Everything the object stores: its schema (every table, index and its DDL) and every row. */
function dump(sql: SqlStorage): string {
  const schema = sql
    .exec(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY name",
    )
    .toArray();
  const rows = sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY name",
    )
    .toArray()
    .map(({ name }) => [name, sql.exec(`SELECT * FROM "${name}" ORDER BY rowid`).toArray()]);
  return JSON.stringify({ schema, rows });
}

function storedVersion(sql: SqlStorage): number | null {
  return sql.exec<{ version: number }>("SELECT version FROM _schema").toArray()[0]?.version ?? null;
}

/**
 * The oldest shape of a session object on main: the tables of commit 4b34155, the first whose
 * object keeps an outbox (`git show 4b34155:src/sessions/chat-session.ts`, `…:src/delivery/outbox.ts`,
 * `…:src/gateways/sandbox.ts`), verbatim. No version row: versions came later.
 */
const OLDEST_DDL = `
  CREATE TABLE IF NOT EXISTS session (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, session_id TEXT NOT NULL, phone_number TEXT,
    display_name TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, last_seen_at INTEGER,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, origin TEXT NOT NULL, qr TEXT);
  CREATE TABLE IF NOT EXISTS deadlines (
    kind TEXT NOT NULL, ref TEXT NOT NULL, due_at INTEGER NOT NULL, PRIMARY KEY (kind, ref));
  CREATE TABLE IF NOT EXISTS alarm_state (id INTEGER PRIMARY KEY CHECK (id = 1), armed_for INTEGER);
  CREATE TABLE IF NOT EXISTS outbox (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, to_number TEXT NOT NULL, type TEXT NOT NULL,
    content TEXT, media_url TEXT, delay_between INTEGER NOT NULL, priority INTEGER NOT NULL,
    accepted_at INTEGER NOT NULL, send_ref TEXT NOT NULL, send_index INTEGER NOT NULL,
    not_before INTEGER NOT NULL, scheduled INTEGER NOT NULL, state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL, done_at INTEGER);
  CREATE INDEX IF NOT EXISTS outbox_order ON outbox (state, priority, accepted_at, send_ref, send_index);
  CREATE TABLE IF NOT EXISTS outbox_pacing (id INTEGER PRIMARY KEY CHECK (id = 1), last_call_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS sandbox_link (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** Rows an object of that shape held: a connected sandbox session that sent one message. */
function oldRows(sql: SqlStorage, id: string, at: number): void {
  sql.exec(
    `INSERT INTO session VALUES (?, 'account-old', ?, '+15550001111', 'Old phone', 'connected', NULL, ?, ?, ?,
       'http://localhost:8787', NULL)`,
    id,
    `session_${id}`,
    at,
    at,
    at,
  );
  sql.exec(
    `INSERT INTO outbox (id, account_id, to_number, type, content, media_url, delay_between, priority,
       accepted_at, send_ref, send_index, not_before, scheduled, state, attempts, expires_at, done_at)
     VALUES ('msg-old', 'account-old', '+15550002222', 'text', NULL, NULL, 0, 0, ?, 'send-old', 0, 0, 0,
       'sent', 1, ?, ?)`,
    at,
    at + 86_400_000,
    at,
  );
  // A deadline far ahead, and the alarm recorded as armed for it (nothing to re-arm on wake).
  sql.exec("INSERT INTO deadlines VALUES ('ack_read', 'msg-old', ?)", at + 86_400_000);
  sql.exec("INSERT INTO alarm_state VALUES (1, ?)", at + 86_400_000);
  sql.exec("INSERT INTO outbox_pacing VALUES (1, ?)", at);
  sql.exec("INSERT INTO sandbox_link VALUES ('phone_number', '+15550001111'), ('display_name', 'Old phone')");
}

describe("the session object's storage schema", () => {
  it("a new session's object holds every table and column at the current version", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const stored = await runInDurableObject(sessionStub(session.id), (_instance: ChatSession, state) => {
      const { sql } = state.storage;
      return {
        version: storedVersion(sql),
        tables: Object.fromEntries(
          tableNames(sql).map((name) => [
            name,
            sql
              .exec<{ name: string }>("SELECT name FROM pragma_table_info(?)", name)
              .toArray()
              .map((c) => c.name),
          ]),
        ),
        indexes: sql
          .exec<{ name: string }>(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
          )
          .toArray()
          .map((i) => i.name),
      };
    });
    expect(SCHEMA_VERSION).toBe(1);
    expect(stored).toEqual({ version: SCHEMA_VERSION, tables: TABLES, indexes: INDEXES });
  });

  it("an object that never held a session keeps no storage when it wakes, not even a version", async () => {
    const tables = await runInDurableObject(sessionStub(crypto.randomUUID()), (_i: ChatSession, state) => {
      new ChatSession(state, env);
      return state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\'")
        .toArray();
    });
    expect(tables).toEqual([]);
  });

  it("an object of the oldest shape on main is brought to the current version when it wakes, its rows kept", async () => {
    const { key } = await createAccount();
    const fresh = await createSession(key);
    const current = await runInDurableObject(sessionStub(fresh.session.id), (_i: ChatSession, state) =>
      shape(state.storage.sql),
    );

    const id = crypto.randomUUID();
    const at = Date.parse("2026-11-21T13:10:00Z");
    const woken = await runInDurableObject(sessionStub(id), async (_i: ChatSession, state) => {
      const { sql } = state.storage;
      sql.exec(OLDEST_DDL);
      oldRows(sql, id, at);
      const before = sql.exec("SELECT * FROM outbox").toArray();

      const object = new ChatSession(state, env);
      const snapshot = await object.snapshot();
      return {
        version: storedVersion(sql),
        shape: shape(sql),
        before,
        outbox: sql.exec("SELECT * FROM outbox").toArray(),
        session: sql.exec("SELECT * FROM session").toArray(),
        deadlines: sql.exec("SELECT * FROM deadlines").toArray(),
        alarm: sql.exec("SELECT * FROM alarm_state").toArray(),
        pacing: sql.exec("SELECT * FROM outbox_pacing").toArray(),
        link: sql.exec("SELECT * FROM sandbox_link ORDER BY key").toArray(),
        snapshot,
      };
    });

    expect(woken.version).toBe(SCHEMA_VERSION);
    // Every table and column of a new object, with the same types, constraints and defaults.
    expect(woken.shape).toEqual(current);
    // The rows are kept; back-filled columns hold their defaults (null, synced 1, typing_ms 0).
    expect(woken.outbox).toEqual([
      {
        ...woken.before[0],
        provider_message_id: null,
        synced: 1,
        reason: null,
        campaign_id: null,
        send_window: null,
        settled_by: null,
        first_attempt_at: null,
        attempted_at: null,
        media_key: null,
        media_content_type: null,
        typing_ms: 0,
        typing_at: null,
        typing: null,
        quoted: null,
      },
    ]);
    expect(woken.session).toEqual([
      {
        id,
        account_id: "account-old",
        session_id: `session_${id}`,
        phone_number: "+15550001111",
        display_name: "Old phone",
        status: "connected",
        reason: null,
        last_seen_at: at,
        created_at: at,
        updated_at: at,
        origin: "http://localhost:8787",
        qr: null,
        gateway: null,
        health: null,
      },
    ]);
    expect(woken.deadlines).toEqual([{ kind: "ack_read", ref: "msg-old", due_at: at + 86_400_000 }]);
    expect(woken.alarm).toEqual([{ id: 1, armed_for: at + 86_400_000 }]);
    expect(woken.pacing).toEqual([{ id: 1, last_call_at: at }]);
    expect(woken.link).toEqual([
      { key: "display_name", value: "Old phone" },
      { key: "phone_number", value: "+15550001111" },
    ]);
    // The object reads its session: a null gateway is the deployment's CHATAPP_GATEWAY.
    expect(woken.snapshot).toMatchObject({
      ok: true,
      value: { session: { id, status: "connected", phone_number: "+15550001111", gateway: "sandbox" } },
    });
  });

  it("an object stored just before versions gains its version row and nothing else", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const result = await runInDurableObject(sessionStub(session.id), (_i: ChatSession, state) => {
      const { sql } = state.storage;
      // Today's tables without a version: what main's code left before storage-schema.ts.
      sql.exec("DROP TABLE _schema");
      const before = dump(sql);
      new ChatSession(state, env);
      const version = storedVersion(sql);
      sql.exec("DROP TABLE _schema");
      return { before, after: dump(sql), version };
    });
    expect(result.version).toBe(SCHEMA_VERSION);
    expect(result.after).toBe(result.before);
  });

  it("setting up again changes nothing, for a new object and for one brought up from the oldest shape", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const id = crypto.randomUUID();
    await runInDurableObject(sessionStub(id), (_i: ChatSession, state) => {
      state.storage.sql.exec(OLDEST_DDL);
      oldRows(state.storage.sql, id, Date.parse("2026-11-21T13:10:00Z"));
      new ChatSession(state, env);
    });

    for (const objectId of [session.id, id]) {
      const result = await runInDurableObject(sessionStub(objectId), (_i: ChatSession, state) => {
        const { sql } = state.storage;
        const before = dump(sql);
        const applied = applySchema(state.storage);
        new SessionCore(state, env).setUp();
        new ChatSession(state, env);
        return { before, after: dump(sql), applied };
      });
      expect(result.applied).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
      expect(result.after).toBe(result.before);
    }
  });

  it("storage at a newer version than the code's (code rolled back) is left as it is", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const result = await runInDurableObject(sessionStub(session.id), (_i: ChatSession, state) => {
      const { sql } = state.storage;
      sql.exec("UPDATE _schema SET version = ?", SCHEMA_VERSION + 1);
      const before = dump(sql);
      const applied = applySchema(state.storage);
      return { before, after: dump(sql), applied };
    });
    expect(result.applied).toEqual({ from: SCHEMA_VERSION + 1, to: SCHEMA_VERSION + 1 });
    expect(result.after).toBe(result.before);
  });
});
