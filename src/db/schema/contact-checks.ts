import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// What the chat network answered about numbers, per account. Conventions of every table: see
// index.ts.

/**
 * Whether `number` (E.164) was on the chat network when the account last asked (docs/sessions.md,
 * Number checks): `on_chatapp` true or false, as a session's gateway answered at `checked_at` (epoch
 * ms). A check younger than `CONTACT_CHECK_TTL_MS` (src/number-checks/check.ts, 7 days) is answered
 * from here without asking the gateway again; older rows are overwritten by the next check and
 * purged by the hourly housekeeping. A gateway that could not tell is never stored, so the next
 * check asks it again. One row per (account, number).
 */
export const contactChecks = sqliteTable(
  "contact_checks",
  {
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    number: text().notNull(),
    onChatapp: integer({ mode: "boolean" }).notNull(),
    checkedAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.number] }),
    // The hourly purge of checks past their 7 days.
    index("contact_checks_checked").on(t.checkedAt),
  ],
);

/** A row of {@link contactChecks}, as Drizzle reads it. */
export type ContactCheckRow = typeof contactChecks.$inferSelect;
