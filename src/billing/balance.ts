import type { Db } from "../db/client";
import { findAccount } from "../db/queries/accounts";
import { ApiError } from "../errors";

/**
 * The 402 `insufficient_balance` problem of something costing `cost` against `balance` (both
 * minor units); `what` names it in the detail ("This send", "One image message").
 */
export function insufficientBalance(what: string, cost: number, balance: number): ApiError {
  return new ApiError(
    "insufficient_balance",
    `${what} costs ${cost} minor units, more than the balance (${balance}).`,
  );
}

/**
 * Refuses work the account's balance cannot pay for before the service spends anything on it
 * (docs/security.md, Media: no media is fetched or stored for an account that cannot pay one
 * message of its type). A read, not a hold: a later charge (src/billing/ledger.ts `charge`)
 * still decides atomically; a draft campaign is charged only when it starts.
 *
 * @param cost minor units the balance must cover; `what` names it in the problem's detail.
 * @throws ApiError `not_found` (404) for no such account, `insufficient_balance` (402) when the
 *   balance is below `cost`.
 */
export async function requireBalance(db: Db, accountId: string, cost: number, what: string): Promise<void> {
  const account = await findAccount(db, accountId);
  if (!account) throw new ApiError("not_found", "No such account.");
  if (account.balance < cost) throw insufficientBalance(what, cost, account.balance);
}
