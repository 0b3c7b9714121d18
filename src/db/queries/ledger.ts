import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { ledgerEntries } from "../schema";
import { pageOf, pageWindow, readOrder } from "./keyset";

export type LedgerEntryRow = typeof ledgerEntries.$inferSelect;
export type LedgerKind = LedgerEntryRow["kind"];

/** Most message ids a listed ledger entry carries (the first, in send order). */
export const LEDGER_MESSAGE_IDS = 100;

/** A ledger entry as listed: the row, and the ids of its messages (one more than listed when there are more). */
export interface LedgerListRow extends LedgerEntryRow {
  /** JSON array of message ids, at most {@link LEDGER_MESSAGE_IDS} + 1. */
  messageIds: string;
}

/** One page request of the ledger: kinds (none: all), epoch-ms bounds (inclusive), size and cursor. */
export interface LedgerListQuery {
  kinds: LedgerKind[];
  timeFrom?: number;
  timeTo?: number;
  limit: number;
  cursor: Cursor | null;
}

/**
 * The ids, in send order, of the messages that name the entry in scope in `column` (`charge_id`
 * or `refund_id`): at most one more than {@link LEDGER_MESSAGE_IDS}, read from the index
 * `messages_charge` / `messages_refund` alone.
 */
function messageIdsOf(column: "charge_id" | "refund_id"): SQL {
  return sql`(SELECT json_group_array(id) FROM (SELECT id FROM messages
    WHERE ${sql.raw(column)} = ${ledgerEntries.id} ORDER BY send_index, id LIMIT ${LEDGER_MESSAGE_IDS + 1}))`;
}

/**
 * The query of one page of the account's ledger entries of `kind` (null: every kind), newest
 * first, by keyset on `(created_at, id)` from index `ledger_entries_account_kind` (or
 * `ledger_entries_account`), at most `limit + 1` entries, each with the first message ids of its
 * charge or refund (see {@link LedgerListRow}; a credit has none). Exposed as a query builder so
 * that tests can check its plan.
 */
export function buildLedgerQuery(db: Db, accountId: string, query: LedgerListQuery, kind: LedgerKind | null) {
  const messageIds = sql<string>`CASE ${ledgerEntries.kind}
    WHEN 'charge' THEN ${messageIdsOf("charge_id")}
    WHEN 'refund' THEN ${messageIdsOf("refund_id")}
    ELSE '[]' END`;
  const where: (SQL | undefined)[] = [eq(ledgerEntries.accountId, accountId)];
  if (kind !== null) where.push(eq(ledgerEntries.kind, kind));
  where.push(...pageWindow(ledgerEntries, query.cursor, { from: query.timeFrom, to: query.timeTo }));
  return db
    .select({ ...getTableColumns(ledgerEntries), messageIds })
    .from(ledgerEntries)
    .where(and(...where))
    .orderBy(...readOrder(ledgerEntries, query.cursor))
    .limit(query.limit + 1);
}

/**
 * One page of the account's ledger, newest first: one query per kind asked for, or one over all
 * (see {@link buildLedgerQuery}), run as one D1 batch and merged.
 * @returns the page newest first, and whether more rows lie beyond it in the direction read.
 */
export async function listLedger(
  db: Db,
  accountId: string,
  query: LedgerListQuery,
): Promise<{ rows: LedgerListRow[]; more: boolean }> {
  const kinds = query.kinds.length === 0 ? [null] : query.kinds;
  const [first, ...rest] = kinds.map((kind) => buildLedgerQuery(db, accountId, query, kind));
  if (!first) return { rows: [], more: false };
  const results = rest.length === 0 ? [await first] : await db.batch([first, ...rest]);
  return pageOf(results, query.limit, query.cursor);
}
