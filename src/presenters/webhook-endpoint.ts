import type { WebhookEndpointRow } from "../db/queries/webhook-endpoints";
import { EVENT_TYPES, type EventType } from "../events/catalogue";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";

const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);
const isEventType = (type: string): type is EventType => KNOWN_EVENT_TYPES.has(type);

/**
 * An endpoint row as the API shows it (`WebhookEndpoint` in the OpenAPI document), at `now`
 * (epoch ms). Never the secrets (stored sealed): only `secret_prefix` (`whsec_` and the first 8
 * characters of the secret's base64, as API keys show `sk_` and 8), and the previous secret's
 * expiry while it still signs. A stored type the catalogue no longer has is left out. `created_by`
 * and `url_set_by` are API key ids (null for endpoints made before they were recorded).
 */
export function toEndpointRecord(row: WebhookEndpointRow, now: number) {
  const previousSigns =
    row.previousSecret !== null && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now;
  return {
    id: row.id,
    account_id: row.accountId,
    url: row.url,
    description: row.description,
    events: row.events === null ? null : row.events.filter(isEventType),
    enabled: row.enabled,
    disabled_reason: row.disabledReason,
    secret_prefix: row.secretPrefix,
    previous_secret_expires_at: previousSigns ? formatNullableTimestamp(row.previousSecretExpiresAt) : null,
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
    created_by: row.createdBy,
    url_set_by: row.urlSetBy,
  };
}
