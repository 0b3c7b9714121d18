import type { Db } from "../db/client";
import { findRevocableKeys, type KeyRevocation, revokeKeys } from "../db/queries/api-keys";
import { ApiError } from "../errors";
import { closeKeySockets } from "../sessions/live-revocation";
import { type Scope, scopesBeyond } from "./scopes";

/** The key that asks for a revocation: what it holds. The admin API revokes as `null`. */
export interface KeyRevoker {
  scopes: readonly Scope[];
}

/**
 * `disabled_reason` of a webhook endpoint turned off because the key that created it, or last
 * pointed it elsewhere, was revoked (docs/security.md, Keys and scopes).
 */
export const KEY_REVOKED_REASON = "key_revoked";

/**
 * Revokes the account's key `keyId` at `now` (epoch ms) and, with `cascade`, every key it created,
 * directly or through keys it created (`created_by`, followed transitively, also through keys
 * revoked before). A key may revoke only keys within its own scopes, the rule of creating them
 * (src/keys/issue.ts; no escalation, OWASP API Security Top 10 2023, API5): a send-only key cannot
 * end the `*` key. Checked on every key the call would revoke. Expired keys are revoked too.
 *
 * What the revoked keys set up goes with them, in the same D1 batch (docs/security.md, Keys and
 * scopes): the account's webhook endpoints one of them created or last pointed elsewhere
 * (`created_by`, `url_set_by`) are turned off with `disabled_reason` {@link KEY_REVOKED_REASON},
 * and the link tokens one of them minted are revoked. Rows from before those columns existed (a
 * null creator) are left alone. Once stored, the live sockets opened with a revoked key or token
 * are closed (4401 `key revoked`, 4403 `link revoked`; src/sessions/live-revocation.ts, which
 * never throws).
 *
 * @returns what this call revoked: `keyIds` with `keyId` first, then the keys under it, nearest
 *   first (a key another call revoked meanwhile is left out); the endpoints turned off; the link
 *   tokens revoked.
 * @throws ApiError `not_found` (404) when the account has no unrevoked key `keyId`;
 *   `insufficient_scope` (403) when one of the keys holds a scope `revoker` does not (nothing is
 *   revoked then).
 */
export async function revokeKey(
  env: Env,
  db: Db,
  accountId: string,
  keyId: string,
  revoker: KeyRevoker | null,
  options: { cascade: boolean; now: number },
): Promise<KeyRevocation> {
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
    KEY_REVOKED_REASON,
  );
  // A concurrent call revoked them between the read and the write: gone all the same.
  if (revoked.keyIds.length === 0) throw new ApiError("not_found", "No such live API key.");
  await closeKeySockets(
    env,
    db,
    accountId,
    revoked.keyIds,
    revoked.linkTokens.map((token) => token.id),
  );
  return revoked;
}
