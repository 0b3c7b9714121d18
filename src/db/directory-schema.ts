import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// The directory's tables, in the `DB` binding: what must be found before the account is known,
// beside the account databases that hold everything else of each account (src/db/schema/, one
// per `DB_ACCOUNTS_<n>` binding; src/db/databases.ts; docs/databases.md, Databases).
// drizzle.directory.config.ts writes their migrations into migrations/directory/. Conventions of every table:
// see src/db/schema/index.ts.

/** The admin API's Idempotency-Keys, which span accounts (src/middleware/idempotency.ts). */
export { idempotencyKeys } from "./schema/accounts";

/**
 * Where each account lives: the name of the D1 binding of its account database (`DB`, or one of
 * `DB_ACCOUNTS_<n>`), and its `number`, given here so that it is unique across every database
 * (the tables that hold a row per event key by it: src/db/schema/events.ts), and a
 * move between databases copies rows that hold it unchanged.
 */
export const directoryAccounts = sqliteTable(
  "directory_accounts",
  {
    id: text().primaryKey(),
    database: text().notNull(),
    number: integer().notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [uniqueIndex("directory_accounts_number").on(t.number)],
);

/**
 * The kinds of key the outside world reaches an account by, before it knows the account:
 * `api_key` (the SHA-256 of a key, as `api_keys.key_hash`), `api_key_id` (a key's id, for the
 * admin API's revocation), `session` (a session's id: a gateway's webhook, the pairing page),
 * `link_token` (the SHA-256 of a link token), `phone_number_id` (a Cloud API business number:
 * Meta's webhooks).
 */
export const ROUTE_KINDS = ["api_key", "api_key_id", "session", "link_token", "phone_number_id"] as const;
export type RouteKind = (typeof ROUTE_KINDS)[number];

/**
 * One key → the account it belongs to, and the session it names where it names one
 * (`phone_number_id`, `link_token`, `session`). The primary key makes each key unique across every
 * account database: a Cloud API number is claimed here before its session row is written.
 * `expires_at` (epoch ms): a link token's route goes with its token (hourly job
 * `purge_link_tokens`); null for the others, which stay. `WITHOUT ROWID`.
 */
export const directoryRoutes = sqliteTable(
  "directory_routes",
  {
    kind: text({ enum: ROUTE_KINDS }).notNull(),
    key: text().notNull(),
    accountId: text().notNull(),
    sessionId: text(),
    expiresAt: integer(),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.key] }),
    index("directory_routes_expires").on(t.expiresAt).where(sql`${t.expiresAt} IS NOT NULL`),
  ],
);

/**
 * The phases of an account's move between account databases (docs/databases.md,
 * Databases, Moving an account), in order: `holding` (the account is refused while every isolate's cached place runs
 * out), `copying` (its rows are copied to the target, table by table, then counted on both sides),
 * `deleting` (it is served by the target; its rows leave the source), `done`; or, when the copy
 * fails, `unwinding` (the target's partial copy is deleted; the account is served by the source
 * again) and `failed`.
 */
export const MOVE_PHASES = ["holding", "copying", "deleting", "done", "unwinding", "failed"] as const;
export type MovePhase = (typeof MOVE_PHASES)[number];

/**
 * An account's move between account databases, the newest one per account (src/account-moves/).
 * `step` is the index of the table being copied or deleted (src/db/account-tables.ts
 * `ACCOUNT_TABLES`); `cursor`, while copying, the order of the last row copied in it (JSON; null
 * at the table's start: src/db/account-copy.ts `CopyCursor`), while deleting, how many rows were
 * deleted, so that each page is a position of its own; `copied` and `deleted` count rows.
 * `switched_at`: when the directory switched the account to the target (null before, and for a
 * move that unwound). Times are epoch ms; `hold_until`
 * is when the copy may start.
 */
export const directoryMoves = sqliteTable("directory_moves", {
  accountId: text().primaryKey(),
  fromDatabase: text().notNull(),
  toDatabase: text().notNull(),
  phase: text({ enum: MOVE_PHASES }).notNull(),
  step: integer().notNull(),
  cursor: text(),
  copied: integer().notNull(),
  deleted: integer().notNull(),
  error: text(),
  holdUntil: integer().notNull(),
  switchedAt: integer(),
  createdAt: integer().notNull(),
  updatedAt: integer().notNull(),
});
