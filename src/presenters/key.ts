import type { ApiKeyRow, KeyRevocation } from "../db/queries/api-keys";
import type { Scope } from "../keys/scopes";
import { formatTimestamp } from "../lib/time";

/**
 * An API key as the API shows it (never its secret):
 * `{ id, name, prefix, scopes, created_at, expires_at, last_used_at, created_by }`, times as API
 * timestamps (null when unset). `last_used_at` moves at most once a minute
 * (src/middleware/auth.ts); `created_by` is the creating key's id, null for the admin API's keys.
 */
export function toKeyRecord(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes as Scope[],
    created_at: formatTimestamp(row.createdAt),
    expires_at: row.expiresAt === null ? null : formatTimestamp(row.expiresAt),
    last_used_at: row.lastUsedAt === null ? null : formatTimestamp(row.lastUsedAt),
    created_by: row.createdBy,
  };
}

/**
 * What a cascading revoke answers (`RevokedApiKeys` in the OpenAPI document):
 * `{ revoked, disabled_webhook_endpoints }`, the ids of the keys revoked (the key named first, then
 * the keys under it, nearest first) and of the webhook endpoints turned off with them
 * (src/keys/revoke.ts). Link tokens revoked with them are not listed: their ids are never shown.
 */
export function toRevocationRecord(revocation: KeyRevocation) {
  return { revoked: revocation.keyIds, disabled_webhook_endpoints: revocation.webhookEndpointIds };
}
