import { type SQL, sql } from "drizzle-orm";
import { readConfig } from "../config";
import { batchSql, type Db } from "../db/client";
import { publishEvents } from "../events/publish";
import { eventForAccount, recordedIn } from "../events/record";
import { pricesOf } from "./prices";

// The only writer of balances and ledger entries. Every change of a balance goes with a ledger
// entry holding the balance after it, in the same D1 batch (one transaction), so the ledger always
// adds up to the balance. Amounts are integer minor units (lib/money.ts). The accounts table's
// CHECK constraint `accounts_balance_non_negative` stays as a backstop: a charge checks the
// balance itself, so it never relies on that constraint's error. Each entry records what caused it
// (its `campaign_id`, `otp_id` or `description`; messages name their charge and refund entries),
// which `GET /v1/account/ledger` shows as the entry's `source`.

/** What a charge, refund or credit is for, stored with its ledger entry. */
export interface LedgerCause {
  /** The campaign charged or refunded. */
  campaignId?: string | null;
  /** The OTP whose code the charged messages carry. */
  otpId?: string | null;
  /** A credit's note. */
  description?: string | null;
}

/**
 * What {@link charge} did: charged (with the balance after, and the D1 results of its effects in
 * order) or refused, writing nothing.
 */
export type ChargeResult =
  | { ok: true; balance: number; results: D1Result[] }
  | { ok: false; reason: "insufficient_balance"; balance: number }
  | { ok: false; reason: "no_account" };

/**
 * Charges `amount` minor units for `messageCount` messages, as ledger entry `id` recording
 * `cause`, and, in the same D1 batch, runs the statements `effects` builds (the message rows the
 * charge pays for). `effects` receives a condition that holds only once the charge is made; every
 * effect must state that condition in its WHERE clause, so a refused charge writes nothing at all.
 * D1 runs a batch as one serialized transaction, so concurrent charges can never overdraw.
 *
 * `guard`, when given, is a further condition the charge needs (what it pays for is still as the
 * caller priced it, e.g. a campaign still a draft with the same recipients); when it does not
 * hold, nothing is written and the result is `insufficient_balance` with the balance as it is, so
 * a caller with a guard tells the two apart by comparing that balance with `amount`.
 *
 * A charge that takes the balance from at least the account's `low_balance_threshold` to below it
 * records `account.balance_low` in the same batch (`data`: the Account after the charge, priced
 * as configured now), published once the batch has committed. Only the crossing records it: later
 * charges below the threshold do not, until a credit or refund has lifted the balance back to the
 * threshold or above it. The event's dedupe key is the charge, so each crossing records one.
 */
export async function charge(
  env: Env,
  db: Db,
  input: {
    id: string;
    accountId: string;
    amount: number;
    messageCount: number;
    now: number;
    guard?: SQL;
    cause?: LedgerCause;
  },
  effects: (charged: SQL) => SQL[],
): Promise<ChargeResult> {
  const { id: chargeId, accountId, amount, messageCount, now, cause = {} } = input;
  const charged = sql`EXISTS (SELECT 1 FROM ledger_entries WHERE id = ${chargeId})`;
  const made = effects(charged);
  const crossed = sql`low_balance_threshold IS NOT NULL AND balance < low_balance_threshold
    AND balance + ${amount} >= low_balance_threshold AND ${charged}`;
  const results = await batchSql<{ balance: number }>(db, [
    sql`INSERT INTO ledger_entries (id, account_id, kind, amount, balance_after, message_count, campaign_id, otp_id, created_at)
      SELECT ${chargeId}, id, 'charge', ${-amount}, balance - ${amount}, ${messageCount},
        ${cause.campaignId ?? null}, ${cause.otpId ?? null}, ${now}
      FROM accounts WHERE id = ${accountId} AND balance >= ${amount} AND ${input.guard ?? sql`1`}`,
    sql`UPDATE accounts SET balance = balance - ${amount}, updated_at = ${now}
      WHERE id = ${accountId} AND ${charged}`,
    ...made,
    eventForAccount("account.balance_low", accountId, crossed, `account.balance_low:${chargeId}`, {
      prices: pricesOf(readConfig(env)),
    }),
    sql`SELECT balance FROM accounts WHERE id = ${accountId}`,
  ]);
  const balance = results.at(-1)?.results[0]?.balance;
  if (balance === undefined) return { ok: false, reason: "no_account" };
  if ((results[0]?.meta.changes ?? 0) === 0) return { ok: false, reason: "insufficient_balance", balance };
  await publishEvents(env, recordedIn(results, [results.length - 2]));
  return { ok: true, balance, results: results.slice(2, 2 + made.length) };
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

/**
 * Credits `amount` minor units (an operator's top-up, with its note or null) in one D1 batch.
 * @returns the balance after it, or null for an unknown account (nothing written).
 */
export async function credit(
  db: Db,
  accountId: string,
  amount: number,
  now: number,
  description: string | null = null,
): Promise<number | null> {
  const results = await batchSql<{ balance: number }>(db, [
    ...creditStatements(accountId, amount, now, description),
    sql`SELECT balance FROM accounts WHERE id = ${accountId}`,
  ]);
  return results.at(-1)?.results[0]?.balance ?? null;
}
