import { readConfig } from "../config";
import { batchSql, type Condition, type Db, type Statement } from "../db/client";
import {
  balanceCrossedLow,
  balanceStatement,
  chargeMade,
  chargeStatements,
  creditStatements,
  type LedgerCause,
} from "../db/queries/ledger";
import { publishEvents } from "../events/publish";
import { eventForAccount, recordedIn } from "../events/record";
import { pricesOf } from "./prices";

// The only writer of balances and ledger entries. Every change of a balance goes with a ledger
// entry holding the balance after it, in the same D1 batch (one transaction), so the ledger always
// adds up to the balance. Amounts are integer minor units (lib/money.ts). The accounts table's
// CHECK constraint `accounts_balance_non_negative` stays as a backstop: a charge checks the
// balance itself, so it never relies on that constraint's error. Each entry records what caused it
// (its `campaign_id`, `otp_id` or `description`; messages name their charge and refund entries),
// which `GET /v1/account/ledger` shows as the entry's `source`. The statements themselves live in
// src/db/queries/ledger.ts; this module runs them, with what hangs off a charge (its event).

export {
  creditStatements,
  type LedgerCause,
  refundCountStatements,
  refundedBy,
  refundTaggedStatements,
} from "../db/queries/ledger";

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
    guard?: Condition;
    cause?: LedgerCause;
  },
  effects: (charged: Condition) => Statement[],
): Promise<ChargeResult> {
  const { id: chargeId, accountId, amount } = input;
  const charged = chargeMade(chargeId);
  const made = effects(charged);
  const results = await batchSql<{ balance: number }>(db, [
    ...chargeStatements(input, charged),
    ...made,
    eventForAccount(
      "account.balance_low",
      accountId,
      balanceCrossedLow(amount, charged),
      `account.balance_low:${chargeId}`,
      { prices: pricesOf(readConfig(env)), defaultRetentionDays: readConfig(env).MESSAGE_RETENTION_DAYS },
    ),
    balanceStatement(accountId),
  ]);
  const balance = results.at(-1)?.results[0]?.balance;
  if (balance === undefined) return { ok: false, reason: "no_account" };
  if ((results[0]?.meta.changes ?? 0) === 0) return { ok: false, reason: "insufficient_balance", balance };
  await publishEvents(env, recordedIn(results, [results.length - 2]));
  return { ok: true, balance, results: results.slice(2, 2 + made.length) };
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
    balanceStatement(accountId),
  ]);
  return results.at(-1)?.results[0]?.balance ?? null;
}
