import type { Db } from "../db/client";
import { findRevocableKeys, revokeKeys } from "../db/queries/api-keys";
import { ApiError } from "../errors";
import { type Scope, scopesBeyond } from "./scopes";

/** The key that asks for a revocation: what it holds. The admin API revokes as `null`. */
export interface KeyRevoker {
  scopes: readonly Scope[];
}

/**
 * Revokes the account's key `keyId` at `now` (epoch ms) and, with `cascade`, every key it created,
 * directly or through keys it created (`created_by`, followed transitively, also through keys
 * revoked before), all in one statement. A key may revoke only keys within its own scopes, the
 * rule of creating them (src/keys/issue.ts; no escalation, OWASP API Security Top 10 2023,
 * API5): a send-only key cannot end the `*` key. Checked on every key the call would revoke.
 * Expired keys are revoked too.
 *
 * @returns the ids of the keys this call revoked, `keyId` first, then the keys under it, nearest
 *   first (a key another call revoked meanwhile is left out). Whoever must act on a revocation
 *   (live sockets of those keys) takes this list.
 * @throws ApiError `not_found` (404) when the account has no unrevoked key `keyId`;
 *   `insufficient_scope` (403) when one of the keys holds a scope `revoker` does not (nothing is
 *   revoked then).
 */
export async function revokeKey(
  db: Db,
  accountId: string,
  keyId: string,
  revoker: KeyRevoker | null,
  options: { cascade: boolean; now: number },
): Promise<string[]> {
  const keys = await findRevocableKeys(db, accountId, keyId, options.cascade);
  if (keys.length === 0) throw new ApiError("not_found", "No such live API key.");
  if (revoker) {
    for (const key of keys) {
      const beyond = scopesBeyond(revoker.scopes, key.scopes as Scope[]);
      if (beyond.length === 0) continue;
      const which = key.id === keyId ? `key ${key.id}` : `key ${key.id} (created under ${keyId})`;
      throw new ApiError(
        "insufficient_scope",
        `This key cannot revoke ${which}, which holds ${beyond.map((s) => `\`${s}\``).join(", ")}: a key revokes only keys within its own scopes.`,
      );
    }
  }
  const revoked = await revokeKeys(
    db,
    accountId,
    keys.map((key) => key.id),
    options.now,
  );
  // A concurrent call revoked them between the read and the write: gone all the same.
  if (revoked.length === 0) throw new ApiError("not_found", "No such live API key.");
  return revoked;
}
