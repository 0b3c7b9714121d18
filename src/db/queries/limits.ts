import { eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { batchSql, type Db } from "../client";
import { accounts, campaignRecipients, campaigns, sessions } from "../schema";

// The account limits (docs/security.md, Account limits): what each counts, and the conditional
// statements that create a row only while the account is within its limit. D1 runs the
// statements of one database one at a time and a batch as one transaction, so a count read in the
// statement (or batch) that inserts cannot be overtaken by a concurrent insert: of two requests
// racing for the last slot, one inserts and the other sees the slot taken.

/** A limit, named as the admin API sets it (`accounts.max_sessions`, `accounts.max_draft_recipients`). */
export type LimitName = "max_sessions" | "max_draft_recipients";

/** A limit and how much of it the account uses: `current` of at most `max`. */
export interface LimitUsage {
  limit: LimitName;
  max: number;
  current: number;
}

/** Sessions the account holds: every session not deleted (a deleted session's row is removed). */
export const sessionCount = (accountId: string): SQL =>
  sql`(SELECT count(*) FROM ${sessions} WHERE ${sessions.accountId} = ${accountId})`;

/**
 * Recipients the account's `draft` campaigns hold together, from each draft's `total` (kept with
 * every add in the add's own batch), so the count reads one row per campaign, not per recipient.
 */
export const draftRecipientCount = (accountId: string): SQL =>
  sql`(SELECT coalesce(sum(${campaigns.total}), 0) FROM ${campaigns}
    WHERE ${campaigns.accountId} = ${accountId} AND ${campaigns.status} = 'draft')`;

const maxOf = (accountId: string, column: typeof accounts.maxSessions | typeof accounts.maxDraftRecipients) =>
  sql`(SELECT ${column} FROM ${accounts} WHERE ${accounts.id} = ${accountId})`;

/** The account's `max_draft_recipients`, as a scalar subquery. */
export const maxDraftRecipients = (accountId: string): SQL => maxOf(accountId, accounts.maxDraftRecipients);

/**
 * `INSERT INTO table (every column) SELECT <row's values> WHERE condition`: inserts `row` (every
 * column given, encoded as Drizzle encodes them) only when `condition` holds when the statement
 * runs. For a D1 batch.
 */
export function insertWhere<T extends SQLiteTable>(
  db: Db,
  table: T,
  row: T["$inferSelect"],
  condition: SQL,
): SQL {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) =>
    sql.param((row as Record<string, unknown>)[key] ?? null, column),
  );
  // Drizzle's insert-select writes the column list in the order getTableColumns gives.
  return db
    .insert(table)
    .select(sql`SELECT ${sql.join(values, sql`, `)} WHERE ${condition}`)
    .getSQL();
}

/**
 * Inserts the D1 row of a new session if the account holds fewer sessions than its
 * `max_sessions`, in one statement (a batch with the count it was decided on).
 * @returns null when inserted, else the limit it would exceed. @throws Error when D1 refuses.
 */
export async function insertSessionWithinLimit(
  db: Db,
  row: typeof sessions.$inferSelect,
): Promise<LimitUsage | null> {
  const { accountId } = row;
  const [usage, inserted] = await batchSql<{ current: number; max: number | null }>(db, [
    sql`SELECT ${sessionCount(accountId)} AS current, ${maxOf(accountId, accounts.maxSessions)} AS max`,
    insertWhere(
      db,
      sessions,
      row,
      sql`${sessionCount(accountId)} < ${maxOf(accountId, accounts.maxSessions)}`,
    ),
  ]);
  if ((inserted?.meta.changes ?? 0) > 0) return null;
  const counted = usage?.results[0];
  return { limit: "max_sessions", max: counted?.max ?? 0, current: counted?.current ?? 0 };
}

/**
 * The account's limits and their use now (its row and two index reads: its sessions, its drafts),
 * or null for an unknown account.
 */
export async function accountLimits(
  db: Db,
  accountId: string,
): Promise<Record<LimitName, LimitUsage> | null> {
  const [row] = await db
    .select({
      maxSessions: accounts.maxSessions,
      maxDraftRecipients: accounts.maxDraftRecipients,
      sessions: sql<number>`${sessionCount(accountId)}`,
      draftRecipients: sql<number>`${draftRecipientCount(accountId)}`,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  if (!row) return null;
  return {
    max_sessions: { limit: "max_sessions", max: row.maxSessions, current: row.sessions },
    max_draft_recipients: {
      limit: "max_draft_recipients",
      max: row.maxDraftRecipients,
      current: row.draftRecipients,
    },
  };
}

/**
 * How many numbers of `list` (a JSON array of `{n: <E.164 number>, v}` objects, bound as one
 * parameter as the add statements bind it) campaign `campaignId` does not hold yet, each number
 * counted once: the recipients an add would create.
 */
export const newRecipientCount = (campaignId: string, list: string): SQL =>
  sql`(SELECT count(DISTINCT json_extract(j.value, '$.n')) FROM json_each(${list}) j
    WHERE json_extract(j.value, '$.n') NOT IN
      (SELECT ${campaignRecipients.toNumber} FROM ${campaignRecipients} WHERE ${campaignRecipients.campaignId} = ${campaignId}))`;
