import type { Db } from "../db/client";
import { hasErasedOptOuts, relistErased } from "../db/queries/opt-outs";
import { erasedAddress, erasedAddresses, erasureKeys } from "./address";

// An erased contact stays opted out (docs/contacts.md, Erasure): the erasure keeps their opt-out as the
// keyed hash of each address (src/erasures/address.ts), and the paths that read the list match
// an address by its hash too.

/**
 * Lists again by the address each of `addresses` (E.164 numbers or user ids the account gives, a
 * campaign's recipients) whose erased form is on account `accountId`'s opt-out list: the start of
 * a campaign then skips them (`recipient_opted_out`) as any opted-out recipient. Reads nothing but
 * one key range while the account has no erased opt-out; else one HMAC per address.
 * @returns how many were listed again.
 * @throws ConfigError when `OTP_SECRET` is missing and the account has erased opt-outs.
 */
export async function relistErasedOptOuts(
  env: Env,
  db: Db,
  accountId: string,
  addresses: readonly string[],
): Promise<number> {
  if (addresses.length === 0 || !(await hasErasedOptOuts(db, accountId))) return 0;
  return relistErased(db, accountId, await erasedAddresses(await erasureKeys(env), accountId, addresses));
}

/** The erased form of `address` in account `accountId` (src/erasures/address.ts `erasedAddress`). */
export async function erasedFormOf(env: Env, accountId: string, address: string): Promise<string> {
  return erasedAddress(await erasureKeys(env), accountId, address);
}

/** {@link erasedFormOf} of each of `addresses`, in order. */
export async function erasedFormsOf(
  env: Env,
  accountId: string,
  addresses: readonly string[],
): Promise<string[]> {
  const keys = await erasureKeys(env);
  return Promise.all(addresses.map((address) => erasedAddress(keys, accountId, address)));
}
