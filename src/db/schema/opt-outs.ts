import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// The account's suppression list. Conventions of every table: see index.ts.

/**
 * The account's suppression list: numbers (E.164) that bulk campaigns skip. A number is added
 * through the API (`source` `api`) or by the contact texting an opt-out keyword to one of the
 * account's sessions (`keyword`, with the keyword matched; src/opt-outs/keywords.ts). One row per
 * (account, number): adding it again changes nothing. Single sends and OTP codes ignore the list.
 */
export const optOuts = sqliteTable(
  "opt_outs",
  {
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    toNumber: text().notNull(),
    source: text({ enum: ["api", "keyword"] }).notNull(),
    /** The opt-out keyword the contact sent (upper case, e.g. `STOP`); null for `api`. */
    keyword: text(),
    createdAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.toNumber] }),
    // Keyset paging of the list, newest first: (created_at, to_number) within the account.
    index("opt_outs_account_created").on(t.accountId, t.createdAt, t.toNumber),
  ],
);

/** A row of {@link optOuts}, as Drizzle reads it. */
export type OptOutRow = typeof optOuts.$inferSelect;
