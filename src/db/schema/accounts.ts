import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Accounts, their API keys and the stored answers of idempotent requests. Conventions of every
// table: see index.ts.

/** `max_sessions` of a new account: sessions it may hold (docs/security.md, Account limits). */
export const DEFAULT_MAX_SESSIONS = 50;
/**
 * `max_draft_recipients` of a new account: recipients its `draft` campaigns may hold together
 * (docs/security.md, Account limits).
 */
export const DEFAULT_MAX_DRAFT_RECIPIENTS = 1_000_000;

/**
 * An account: who owns every other row. `balance` is in minor units and never negative (a check
 * constraint); src/billing/ledger.ts moves it, with a ledger entry each time.
 */
export const accounts = sqliteTable(
  "accounts",
  {
    id: text().primaryKey(),
    name: text().notNull(),
    balance: integer().notNull().default(0),
    /**
     * Minor units, or null for no alert: a charge that takes the balance from at least this to
     * below it records `account.balance_low` (src/billing/ledger.ts).
     */
    lowBalanceThreshold: integer(),
    /** Sessions the account may hold (every session not deleted); the admin API changes it. */
    maxSessions: integer().notNull().default(DEFAULT_MAX_SESSIONS),
    /**
     * Recipients the account's `draft` campaigns may hold together (drafts are not charged until
     * they start); the admin API changes it.
     */
    maxDraftRecipients: integer().notNull().default(DEFAULT_MAX_DRAFT_RECIPIENTS),
    /**
     * Days a final message stays in D1 before the hourly job archives it to R2 (0–3,650; 0: as
     * soon as it is final; docs/retention.md, Archives); null follows the deployment's
     * `MESSAGE_RETENTION_DAYS`. The admin API changes it.
     */
    messageRetentionDays: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
    /**
     * A small number of the account's own (1, 2, …), one past the highest when it is made: the
     * tables that hold a row per event key by it in place of the 36-character id
     * (src/db/schema/events.ts). Never reused, never changed.
     */
    number: integer().notNull(),
  },
  (t) => [
    // The database itself refuses a negative balance, so concurrent charges can never overdraw:
    // a charge that would cross zero aborts its whole batch (src/billing/ledger.ts checks first).
    check("accounts_balance_non_negative", sql`${t.balance} >= 0`),
    uniqueIndex("accounts_number").on(t.number),
  ],
);

/**
 * An account's API keys. The key itself is never stored: only its hash (`key_hash`, unique) and
 * its visible `prefix` (`sk_` and its first 8 random characters, shown to tell keys apart;
 * src/db/queries/api-keys.ts). `revoked_at` or `expires_at` (epoch ms) ends it; `created_by` keeps
 * who made it, so a key and the keys it made can be revoked together.
 */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    prefix: text().notNull(),
    keyHash: text().notNull(),
    name: text(),
    /** JSON array of scopes (src/keys/scopes.ts); keys made before scopes existed hold `*`. */
    scopes: text({ mode: "json" }).$type<string[]>().notNull().default(["*"]),
    createdAt: integer().notNull(),
    lastUsedAt: integer(),
    revokedAt: integer(),
    /** Epoch ms after which the key is refused like a revoked one; null: it does not expire. */
    expiresAt: integer(),
    /**
     * The id of the key that created this one (`POST /v1/api-keys`); null for keys the admin API
     * made, and for keys made before this column existed. A revocation with `cascade` follows it
     * down (src/keys/revoke.ts).
     */
    createdBy: text(),
  },
  (t) => [
    uniqueIndex("api_keys_key_hash").on(t.keyHash),
    index("api_keys_account").on(t.accountId),
    index("api_keys_created_by").on(t.createdBy),
  ],
);

/** Stored first responses of requests sent with an `Idempotency-Key` header, kept 24 hours. */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: text().notNull(),
    key: text().notNull(),
    /** SHA-256 (hex) of method, path and body: a reused key with another request is refused. */
    requestHash: text().notNull(),
    status: text({ enum: ["in_progress", "done"] }).notNull(),
    responseStatus: integer(),
    responseBody: text(),
    createdAt: integer().notNull(),
    expiresAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_expires").on(t.expiresAt)],
);
