import { Webhook } from "standardwebhooks";
import type { WebhookEndpointRow } from "../db/queries/webhook-endpoints";

/** `User-Agent` of every delivery: the service and its version (package.json). */
export const WEBHOOK_USER_AGENT = "chatapp-otp-api-webhooks/0.1.0";

/**
 * The headers of one delivery of `payload` (the JSON body, exactly as sent) for message id
 * `msgId` at `now` (epoch ms), signed by the `standardwebhooks` package as the Standard Webhooks
 * spec says (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md,
 * "Signature scheme"): `webhook-id`, `webhook-timestamp` (whole seconds since the epoch) and
 * `webhook-signature`, the space-separated `v1,<base64 HMAC-SHA256>` of the endpoint's secret and,
 * while `previous_secret_expires_at` is after `now`, of its previous secret too ("Zero downtime
 * secret rotation"). Also `Content-Type: application/json` and {@link WEBHOOK_USER_AGENT}.
 *
 * @throws Error from `standardwebhooks` when a stored secret is not valid base64.
 */
export function signedHeaders(
  endpoint: Pick<WebhookEndpointRow, "secret" | "previousSecret" | "previousSecretExpiresAt">,
  msgId: string,
  payload: string,
  now: number,
): Record<string, string> {
  const at = new Date(now);
  const secrets = [endpoint.secret];
  if (
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt > now
  )
    secrets.push(endpoint.previousSecret);
  return {
    "Content-Type": "application/json",
    "User-Agent": WEBHOOK_USER_AGENT,
    "webhook-id": msgId,
    "webhook-timestamp": String(Math.floor(now / 1000)),
    "webhook-signature": secrets.map((secret) => new Webhook(secret).sign(msgId, at, payload)).join(" "),
  };
}
