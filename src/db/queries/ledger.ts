import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { ledgerEntries } from "../schema";
import { accountNumberOf } from "./accounts";
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

/** The ids of a subquery's messages as a JSON array, at most one more than {@link LEDGER_MESSAGE_IDS}. */
function idsOf(messagesInOrder: SQL): SQL {
  return sql`(SELECT json_group_array(id) FROM (${messagesInOrder} LIMIT ${LEDGER_MESSAGE_IDS + 1}))`;
}

/**
 * The ids, in send order, of the messages the entry in scope charged, read in order from an
 * index (no sort), each message once:
 * - a campaign's charge (the entry names the campaign): through the partial index
 *   `messages_charge`, by `send_index` (the recipient's `seq`), its messages being made step by
 *   step at different times;
 * - a send's charge: its messages were written with the entry, at its `created_at`
 *   (src/messages/send.ts `sendMessages`), and their ids ascend in send order, so
 *   `messages_account_created` finds them in order, reading only the account's messages of that
 *   millisecond. (Sends made before their ids ascended list in id order.)
 * `accountId` is the entries' account.
 */
function chargedMessageIds(accountId: string): SQL {
  return sql`CASE WHEN ${ledgerEntries.campaignId} IS NOT NULL
    THEN ${idsOf(sql`SELECT id FROM messages WHERE charge_id = ${ledgerEntries.id} AND campaign_id IS NOT NULL
      ORDER BY send_index, id`)}
    ELSE ${idsOf(sql`SELECT id FROM messages WHERE account_number = ${accountNumberOf(accountId)}
      AND created_at = ${ledgerEntries.createdAt} AND charge_id = ${ledgerEntries.id} ORDER BY id`)} END`;
}

/**
 * The ids, in send order, of the messages the entry in scope refunded, read from the partial
 * index `messages_refund` alone.
 */
function refundedMessageIds(): SQL {
  return idsOf(sql`SELECT id FROM messages WHERE refund_id = ${ledgerEntries.id} ORDER BY send_index, id`);
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
    WHEN 'charge' THEN ${chargedMessageIds(accountId)}
    WHEN 'refund' THEN ${refundedMessageIds()}
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

// The statements that move money: a charge, refunds and credits, each with its ledger entry in
// the same D1 batch. src/billing/ledger.ts runs them (the only writer of balances); amounts are
// integer minor units.

/** What a charge, refund or credit is for, stored with its ledger entry. */
export interface LedgerCause {
  /** The campaign charged or refunded. */
  campaignId?: string | null;
  /** The OTP whose code the charged messages carry. */
  otpId?: string | null;
  /** A credit's note. */
  description?: string | null;
}

/** The condition that holds once charge `chargeId` is made (its ledger entry exists). */
export function chargeMade(chargeId: string): SQL {
  return sql`EXISTS (SELECT 1 FROM ledger_entries WHERE id = ${chargeId})`;
}

/**
 * The two statements of a charge of `amount` minor units for `messageCount` messages, as ledger
 * entry `id` recording `cause`: the entry (written only when the balance covers the amount and
 * `guard` holds) and the balance's fall (only once `charged`, {@link chargeMade}, holds).
 */
export function chargeStatements(
  input: {
    id: string;
    accountId: string;
    amount: number;
    messageCount: number;
    now: number;
    guard?: SQL;
    cause?: LedgerCause;
  },
  charged: SQL,
): SQL[] {
  const { id: chargeId, accountId, amount, messageCount, now, cause = {} } = input;
  return [
    sql`INSERT INTO ledger_entries (id, account_id, kind, amount, balance_after, message_count, campaign_id, otp_id, created_at)
      SELECT ${chargeId}, id, 'charge', ${-amount}, balance - ${amount}, ${messageCount},
        ${cause.campaignId ?? null}, ${cause.otpId ?? null}, ${now}
      FROM accounts WHERE id = ${accountId} AND balance >= ${amount} AND ${input.guard ?? sql`1`}`,
    sql`UPDATE accounts SET balance = balance - ${amount}, updated_at = ${now}
      WHERE id = ${accountId} AND ${charged}`,
  ];
}

/**
 * Of an account's row after a charge of `amount` (made once `charged` holds): the balance went
 * from at least its `low_balance_threshold` to below it.
 */
export function balanceCrossedLow(amount: number, charged: SQL): SQL {
  return sql`low_balance_threshold IS NOT NULL AND balance < low_balance_threshold
    AND balance + ${amount} >= low_balance_threshold AND ${charged}`;
}

/** The statement reading an account's balance (`{ balance }`, no row for an unknown account). */
export function balanceStatement(accountId: string): SQL {
  return sql`SELECT balance FROM accounts WHERE id = ${accountId}`;
}

/**
 * The statements that refund the messages tagged with `refundId` (their `refund_id` column, set by
 * a statement placed before these in the same batch): the balance rises by their summed cost and a
 * `refund` ledger entry records it. When no message carries the tag, nothing is written, so a
 * message is refunded at most once: whatever tags it must match only messages not yet refunded.
 * The entry's cause is read from the messages: their campaign, or their OTP, when they all have
 * the same one (a session's deletion may fail messages of several campaigns and sends at once).
 */
export function refundTaggedStatements(accountId: string, refundId: string, now: number): SQL[] {
  return [
    sql`UPDATE accounts SET balance = balance + (SELECT COALESCE(SUM(cost), 0) FROM messages WHERE refund_id = ${refundId}),
        updated_at = ${now} WHERE id = ${accountId}`,
    sql`INSERT INTO ledger_entries (id, account_id, kind, amount, balance_after, message_count, campaign_id, otp_id, created_at)
      SELECT ${refundId}, ${accountId}, 'refund', SUM(cost), (SELECT balance FROM accounts WHERE id = ${accountId}), COUNT(*),
        ${onlyValue(sql`campaign_id`)}, ${onlyValue(sql`otp_id`)}, ${now}
      FROM messages WHERE refund_id = ${refundId} HAVING COUNT(*) > 0`,
  ];
}

/** Of an aggregate's rows: `column`'s value when every row has the same one, else NULL. */
function onlyValue(column: SQL): SQL {
  return sql`CASE WHEN COUNT(DISTINCT ${column}) = 1 AND COUNT(${column}) = COUNT(*) THEN MIN(${column}) END`;
}

/**
 * The statements that refund `count` paid items that never became messages (a campaign's
 * recipients not yet sent when it was cancelled), for `amount` minor units in all, as ledger entry
 * `refundId` recording `cause`. `amount` and `count` are SQL expressions evaluated once, when the
 * entry is written; nothing is written when `count` is 0. The balance then rises by the entry's
 * amount, so later statements of the batch may change what `count` counted (mark those items
 * refunded), and the entry is the record of what was refunded: read it back with {@link refundedBy}.
 */
export function refundCountStatements(
  accountId: string,
  refundId: string,
  refund: { amount: SQL; count: SQL; cause: LedgerCause },
  now: number,
): SQL[] {
  return [
    sql`INSERT INTO ledger_entries (id, account_id, kind, amount, balance_after, message_count, campaign_id, otp_id, created_at)
      SELECT ${refundId}, id, 'refund', ${refund.amount}, balance + ${refund.amount}, ${refund.count},
        ${refund.cause.campaignId ?? null}, ${refund.cause.otpId ?? null}, ${now}
      FROM accounts WHERE id = ${accountId} AND ${refund.count} > 0`,
    sql`UPDATE accounts SET balance = balance + ${refundedBy(refundId).amount}, updated_at = ${now}
      WHERE id = ${accountId} AND EXISTS (SELECT 1 FROM ledger_entries WHERE id = ${refundId})`,
  ];
}

/** SQL reading back what ledger entry `refundId` refunded (0 and 0 when it was not written). */
export function refundedBy(refundId: string): { amount: SQL; count: SQL } {
  return {
    amount: sql`COALESCE((SELECT amount FROM ledger_entries WHERE id = ${refundId}), 0)`,
    count: sql`COALESCE((SELECT message_count FROM ledger_entries WHERE id = ${refundId}), 0)`,
  };
}

/**
 * The statements that credit `amount` minor units to an account, with its `credit` ledger entry
 * holding `description` (the operator's note, or null); nothing is written for an unknown account.
 * Run them in a batch of their own or after the account's INSERT.
 */
export function creditStatements(
  accountId: string,
  amount: number,
  now: number,
  description: string | null = null,
): SQL[] {
  return [
    sql`INSERT INTO ledger_entries (id, account_id, kind, amount, balance_after, message_count, description, created_at)
      SELECT ${crypto.randomUUID()}, id, 'credit', ${amount}, balance + ${amount}, 0, ${description}, ${now}
      FROM accounts WHERE id = ${accountId}`,
    sql`UPDATE accounts SET balance = balance + ${amount}, updated_at = ${now} WHERE id = ${accountId}`,
  ];
}
