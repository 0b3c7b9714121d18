import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Money and usage: the ledger of balance changes and the hourly usage counters. Money is integer
// minor units (lib/money.ts); conventions of every table: see index.ts.

/**
 * Every change of an account's balance, with the balance after it and what caused it: the
 * messages it paid for or refunded (theirs `charge_id` / `refund_id` name the entry), and the
 * campaign or OTP behind it, or the operator's note on a credit (set by src/billing/ledger.ts's
 * callers).
 */
export const ledgerEntries = sqliteTable(
  "ledger_entries",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    kind: text({ enum: ["credit", "charge", "refund"] }).notNull(),
    /** Signed minor units: positive for credits and refunds, negative for charges. */
    amount: integer().notNull(),
    balanceAfter: integer().notNull(),
    /** How many messages a charge or refund covers (0 for credits). */
    messageCount: integer().notNull().default(0),
    /** The campaign a charge or refund is for (a refund of messages: when all are of one campaign). */
    campaignId: text(),
    /** The OTP a charge or refund is for (as for `campaign_id`). */
    otpId: text(),
    /** A credit's note (the admin API's `description`, or `Opening balance`); null otherwise. */
    description: text(),
    createdAt: integer().notNull(),
  },
  // Keyset paging of the ledger, newest first: all of it, or one kind (GET /v1/account/ledger).
  (t) => [
    index("ledger_entries_account").on(t.accountId, t.createdAt, t.id),
    index("ledger_entries_account_kind").on(t.accountId, t.kind, t.createdAt, t.id),
  ],
);

/**
 * Running counters of an account's outgoing messages per UTC hour (`hour`, epoch ms of its start,
 * by the message's `created_at`) and type: how many are in each status now, what they cost and
 * what of that was refunded (minor units). A send's new messages are counted by the statement
 * before their INSERT, in its batch (src/db/queries/messages.ts `insertOutgoingStatements`); a
 * trigger on `messages` (migrations/accounts/0016_account_usage.sql) moves them between counters in the
 * statement that moves their status or refunds them. `GET /v1/account/usage` reads them, never the messages.
 */
export const accountUsage = sqliteTable(
  "account_usage",
  {
    accountId: text().notNull(),
    hour: integer().notNull(),
    type: text({ enum: ["text", "image", "video", "audio", "document"] }).notNull(),
    queued: integer().notNull().default(0),
    scheduled: integer().notNull().default(0),
    sent: integer().notNull().default(0),
    delivered: integer().notNull().default(0),
    read: integer().notNull().default(0),
    failed: integer().notNull().default(0),
    cost: integer().notNull().default(0),
    refunded: integer().notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.hour, t.type] })],
);

/** A row of {@link accountUsage}, as Drizzle reads it. */
export type AccountUsageRow = typeof accountUsage.$inferSelect;
