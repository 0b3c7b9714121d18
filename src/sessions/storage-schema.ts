/**
 * The session object's SQLite schema, in one place and versioned, as cloudflare/agents versions
 * its own (packages/agents/src/index.ts, `_ensureSchema`: a version row, and DDL only when the
 * stored version is older, https://github.com/cloudflare/agents). {@link applySchema} runs it:
 * when a session is created (SessionCore.setUp) and on every wake of an object that holds one
 * (the ChatSession constructor). An object that holds no session keeps no storage, this table
 * included (see SessionStore).
 *
 * The tables, and the module that reads and writes each:
 *
 * | table | holds | module |
 * |---|---|---|
 * | `session` | the session's one row (`StoredSession`) | session-store.ts |
 * | `pending_events` | its events not yet in D1 | session-store.ts |
 * | `cloud_api_number` | a `cloud_api` session's number, token sealed | session-store.ts |
 * | `outbox`, `campaign_holds`, `outbox_pacing` | messages to send (`OutboxItem`), campaign holds, the pacing reference | delivery/outbox.ts |
 * | `kept_receipts` | receipts that came before their message's outcome | delivery/receipts.ts |
 * | `deadlines`, `alarm_state` | the deadlines behind the one alarm, and the time it was armed for | deadlines.ts |
 * | `gateway_health` | gateway events and checks, by key | gateway-health.ts |
 * | `incoming_media` | incoming media downloads owed: `message_id`, the gateway's `ref`, `mimetype`, `tries` | incoming-media.ts |
 * | `sandbox_link`, `sandbox_received`, `sandbox_sent`, `sandbox_held_acks` | the sandbox gateway's link, phone and network (empty on other gateways) | gateways/sandbox.ts |
 *
 * To change the schema, append a migration to {@link MIGRATIONS} (the next version; its `up` is
 * plain DDL, run once per object) and never edit one that shipped: objects hold every version.
 * Migrations add and never drop or rename, so code rolled back to an older version still runs
 * on storage a newer one migrated (its version is then above {@link SCHEMA_VERSION}, and left).
 */

/** One step of the schema: `up` takes storage from `version - 1` to `version`. */
interface Migration {
  version: number;
  up(sql: SqlStorage): void;
}

/**
 * Version 1: the schema as it stood when versions began, whole. Every statement is `IF NOT
 * EXISTS`, because objects stored before versions already hold some of these tables.
 */
const VERSION_1 = `
  CREATE TABLE IF NOT EXISTS session (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, session_id TEXT NOT NULL, phone_number TEXT,
    display_name TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, last_seen_at INTEGER,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, origin TEXT NOT NULL, qr TEXT,
    gateway TEXT, health TEXT);
  CREATE TABLE IF NOT EXISTS pending_events (
    id TEXT PRIMARY KEY, type TEXT NOT NULL, snapshot TEXT NOT NULL, created_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS cloud_api_number (
    phone_number_id TEXT NOT NULL, waba_id TEXT NOT NULL, access_token_sealed TEXT NOT NULL,
    throughput_mps INTEGER NOT NULL);

  CREATE TABLE IF NOT EXISTS outbox (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, to_number TEXT NOT NULL, type TEXT NOT NULL,
    content TEXT, media_url TEXT, delay_between INTEGER NOT NULL, priority INTEGER NOT NULL,
    accepted_at INTEGER NOT NULL, send_ref TEXT NOT NULL, send_index INTEGER NOT NULL,
    not_before INTEGER NOT NULL, scheduled INTEGER NOT NULL, state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL, done_at INTEGER, provider_message_id TEXT,
    synced INTEGER NOT NULL DEFAULT 1, reason TEXT, campaign_id TEXT, send_window TEXT,
    settled_by TEXT, first_attempt_at INTEGER, attempted_at INTEGER, media_key TEXT,
    media_content_type TEXT, typing_ms INTEGER NOT NULL DEFAULT 0, typing_at INTEGER, typing TEXT, quoted TEXT);
  CREATE TABLE IF NOT EXISTS campaign_holds (campaign_id TEXT PRIMARY KEY, hold TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS outbox_campaign ON outbox (campaign_id, state) WHERE campaign_id IS NOT NULL;
  CREATE INDEX IF NOT EXISTS outbox_unsynced ON outbox (synced) WHERE synced = 0;
  CREATE INDEX IF NOT EXISTS outbox_order ON outbox (state, priority, accepted_at, send_ref, send_index);
  CREATE TABLE IF NOT EXISTS outbox_pacing (id INTEGER PRIMARY KEY CHECK (id = 1), last_call_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS kept_receipts (
    provider_message_id TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, gateway_at INTEGER NOT NULL,
    kept_at INTEGER NOT NULL, message_id TEXT, pricing TEXT, PRIMARY KEY (provider_message_id, status));

  CREATE TABLE IF NOT EXISTS deadlines (
    kind TEXT NOT NULL, ref TEXT NOT NULL, due_at INTEGER NOT NULL, PRIMARY KEY (kind, ref));
  CREATE TABLE IF NOT EXISTS alarm_state (id INTEGER PRIMARY KEY CHECK (id = 1), armed_for INTEGER);
  CREATE TABLE IF NOT EXISTS gateway_health (key TEXT PRIMARY KEY, value TEXT);
  CREATE TABLE IF NOT EXISTS incoming_media (
    message_id TEXT PRIMARY KEY, ref TEXT NOT NULL, mimetype TEXT, tries INTEGER NOT NULL DEFAULT 0);

  CREATE TABLE IF NOT EXISTS sandbox_link (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS sandbox_received (
    message_id TEXT PRIMARY KEY, to_number TEXT NOT NULL, type TEXT NOT NULL, content TEXT,
    media_url TEXT, received_at INTEGER NOT NULL, reply_to TEXT);
  CREATE INDEX IF NOT EXISTS sandbox_received_to ON sandbox_received (to_number, received_at);
  CREATE TABLE IF NOT EXISTS sandbox_sent (message_id TEXT PRIMARY KEY, sent_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS sandbox_held_acks (message_id TEXT PRIMARY KEY, held_at INTEGER NOT NULL);
`;

/**
 * Columns that a table of an object stored before versions may lack: each was added to a table
 * that already existed in an object on main without it, so an object created then and not woken
 * since still lacks it. `since` is the first commit of main whose code creates the column
 * (`git show <since>`); the table's oldest shape on main is that of 4b34155 (the first commit
 * whose object keeps an outbox). A column that no shape on main ever lacked needs no entry.
 */
const UNVERSIONED_BACKFILLS: readonly { table: string; column: string; since: string }[] = [
  { table: "session", column: "gateway TEXT", since: "7497d8f" },
  { table: "session", column: "health TEXT", since: "eda28fd" },
  // Never back-filled before versions, yet an outbox made by 4b34155 … 0c8214c lacks them.
  { table: "outbox", column: "provider_message_id TEXT", since: "33ad699" },
  { table: "outbox", column: "synced INTEGER NOT NULL DEFAULT 1", since: "33ad699" },
  { table: "outbox", column: "reason TEXT", since: "84bd1a7" },
  { table: "outbox", column: "campaign_id TEXT", since: "6557cdf" },
  { table: "outbox", column: "send_window TEXT", since: "6557cdf" },
  { table: "outbox", column: "settled_by TEXT", since: "20f4df9" },
  { table: "outbox", column: "first_attempt_at INTEGER", since: "20f4df9" },
  { table: "outbox", column: "attempted_at INTEGER", since: "20f4df9" },
  { table: "outbox", column: "media_key TEXT", since: "376926d" },
  { table: "outbox", column: "media_content_type TEXT", since: "376926d" },
  { table: "outbox", column: "typing_ms INTEGER NOT NULL DEFAULT 0", since: "68c5447" },
  { table: "outbox", column: "typing_at INTEGER", since: "68c5447" },
  { table: "outbox", column: "typing TEXT", since: "68c5447" },
  { table: "outbox", column: "quoted TEXT", since: "c4d25e3" },
  { table: "kept_receipts", column: "message_id TEXT", since: "c4d44e6" },
  { table: "kept_receipts", column: "pricing TEXT", since: "c4d44e6" },
  { table: "sandbox_received", column: "reply_to TEXT", since: "c4d25e3" },
];

/**
 * Adds {@link UNVERSIONED_BACKFILLS}' columns to the tables that exist and lack them. Runs before
 * version 1's DDL, whose indexes name some of these columns (`outbox_campaign`, `outbox_unsynced`).
 */
function backFillUnversioned(sql: SqlStorage): void {
  const columnsOf = new Map<string, Set<string>>();
  for (const { table, column } of UNVERSIONED_BACKFILLS) {
    let columns = columnsOf.get(table);
    if (!columns) {
      columns = new Set(
        sql
          .exec<{ name: string }>("SELECT name FROM pragma_table_info(?)", table)
          .toArray()
          .map((c) => c.name),
      );
      columnsOf.set(table, columns);
    }
    // A table the object does not hold yet is created whole by version 1.
    if (columns.size === 0) continue;
    const name = column.split(" ", 1)[0] ?? column;
    if (columns.has(name)) continue;
    sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column}`);
    columns.add(name);
  }
}

/** Every version, in order: the migration at index `i` is version `i + 1`. */
const MIGRATIONS: readonly Migration[] = [
  {
    // An object with no version row: new (nothing to back-fill) or stored before versions.
    version: 1,
    up(sql) {
      backFillUnversioned(sql);
      sql.exec(VERSION_1);
    },
  },
];

/** The schema version this code reads and writes: the last of {@link MIGRATIONS}. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the object's storage to {@link SCHEMA_VERSION}: reads the version row of `_schema`
 * (none: 0), runs the migrations above it in order and records the last, in one transaction (a
 * failure leaves the storage as it was). Storage already at the version, or above it (code
 * rolled back), is left as it is; so running it again changes nothing.
 * @returns the version found (`from`) and the version the storage is at now (`to`).
 */
export function applySchema(storage: DurableObjectStorage): { from: number; to: number } {
  return storage.transactionSync(() => {
    const { sql } = storage;
    sql.exec(
      "CREATE TABLE IF NOT EXISTS _schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
    );
    const from = sql.exec<{ version: number }>("SELECT version FROM _schema").toArray()[0]?.version ?? 0;
    if (from >= SCHEMA_VERSION) return { from, to: from };
    for (const migration of MIGRATIONS) if (migration.version > from) migration.up(sql);
    sql.exec("INSERT OR REPLACE INTO _schema (id, version) VALUES (1, ?)", SCHEMA_VERSION);
    return { from, to: SCHEMA_VERSION };
  });
}
