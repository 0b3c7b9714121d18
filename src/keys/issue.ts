import type { Db } from "../db/client";
import { directoryOf } from "../db/databases";
import { type ApiKeyRow, insertApiKey, type KeyGrant, mintApiKey } from "../db/queries/api-keys";
import { addRoutes, keyRoutes } from "../db/queries/directory";
import { ApiError } from "../errors";
import { formatTimestamp } from "../lib/time";
import { type Scope, scopesBeyond } from "./scopes";

/** The key that asks for a new one: who it is and what it holds. The admin API issues as `null`. */
export interface KeyIssuer {
  /** Recorded as the new key's `created_by`. */
  apiKeyId: string;
  scopes: readonly Scope[];
  /** Epoch ms, or null when it does not expire. */
  expiresAt: number | null;
}

/**
 * Issues a key for `accountId` and stores it (its SHA-256 only) in the account's database `db`
 * and its routes in the directory: the row, and the plaintext to
 * show once. A key may issue only what it holds itself (no escalation, OWASP API Security Top 10
 * 2023, API5): scopes within its own, and an expiry no later than its own (a key that expires
 * gives its expiry to a new key that names none). The new key's `created_by` is the issuer's id
 * (null for the admin API), which a cascading revocation follows (src/keys/revoke.ts).
 * @throws ApiError `insufficient_scope` (403) when the grant goes beyond the issuer, naming what;
 *   `validation_failed` (422) when `expiresAt` is not in the future.
 */
export async function issueKey(
  env: { DB: D1Database },
  db: Db,
  accountId: string,
  grant: KeyGrant,
  issuer: KeyIssuer | null,
  now: number,
): Promise<{ row: ApiKeyRow; plaintext: string }> {
  if (grant.expiresAt !== null && grant.expiresAt <= now)
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: { expires_at: ["must be in the future"] },
    });
  let expiresAt = grant.expiresAt;
  if (issuer) {
    const beyond = scopesBeyond(issuer.scopes, grant.scopes as Scope[]);
    if (beyond.length > 0)
      throw new ApiError(
        "insufficient_scope",
        `This key cannot grant ${beyond.map((s) => `\`${s}\``).join(", ")}: a key creates keys only within its own scopes.`,
      );
    if (issuer.expiresAt !== null) {
      if (expiresAt !== null && expiresAt > issuer.expiresAt)
        throw new ApiError(
          "insufficient_scope",
          `This key expires at ${formatTimestamp(issuer.expiresAt)}: the keys it creates cannot outlive it.`,
        );
      expiresAt ??= issuer.expiresAt;
    }
  }
  const minted = await mintApiKey(accountId, { ...grant, expiresAt }, now, issuer?.apiKeyId ?? null);
  // The directory first: a key whose row is written is one that authenticates.
  await addRoutes(directoryOf(env), keyRoutes(minted.row));
  await insertApiKey(db, minted.row);
  return minted;
}
