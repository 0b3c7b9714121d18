import { ConfigError } from "../config";
import type { Db } from "../db/client";
import {
  listClearSecretEndpoints,
  replaceEndpointSecrets,
  type WebhookEndpointRow,
} from "../db/queries/webhook-endpoints";
import { deriveSealingKey, openSecret, sealSecret } from "../lib/sealed-secret";
import { MIN_SECRET_LENGTH } from "../otp/code";

/*
 * Webhook signing secrets at rest (docs/security.md, Hardening): D1 holds each endpoint's secret
 * and previous secret only sealed with AES-256-GCM (lib/sealed-secret.ts), bound to the endpoint
 * id, under a key derived from `OTP_SECRET`, the secret every deployment sets (README, Deploying).
 * Whoever reads the database without that secret cannot sign an event as the service.
 */

/** Characters of a secret shown as `secret_prefix`: `whsec_` and 8 of its base64, as API keys show `sk_` and 8. */
export const SECRET_PREFIX_LENGTH = 14;

/** The `secret_prefix` an endpoint shows for its secret `secret` (in clear). */
export function secretPrefixOf(secret: string): string {
  return secret.slice(0, SECRET_PREFIX_LENGTH);
}

/**
 * `OTP_SECRET`, the root of the webhook keys.
 * @throws ConfigError (500 `service_misconfigured`, naming it) when it is missing or shorter than
 *   {@link MIN_SECRET_LENGTH} characters: webhook endpoints cannot be made, rotated or signed
 *   (docs/configuration.md, Overview).
 */
function rootSecret(env: Env): string {
  const secret = env.OTP_SECRET;
  if (!secret || secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      "OTP_SECRET",
      `is required, at least ${MIN_SECRET_LENGTH} characters: it seals the webhook endpoints' secrets`,
    );
  }
  return secret;
}

/**
 * The key (32 bytes, standard base64) that seals webhook endpoints' secrets: HKDF-SHA-256 of
 * `OTP_SECRET`, info `webhook-endpoint-secret` (lib/sealed-secret.ts `deriveSealingKey`).
 * @throws ConfigError as {@link rootSecret}.
 */
export function endpointSecretsKey(env: Env): Promise<string> {
  return deriveSealingKey(rootSecret(env), "webhook-endpoint-secret");
}

/**
 * The key that seals the stored answers of `POST /v1/webhooks` and `…/rotate-secret` for their
 * `Idempotency-Key` replays (middleware/idempotency.ts `sealedIdempotency`), which carry the new
 * secret: HKDF-SHA-256 of `OTP_SECRET`, info `webhook-idempotency-replay`, as the reverse-OTP
 * create's replays are sealed (otp/code.ts `otpReplayKey`).
 * @throws ConfigError as {@link rootSecret}.
 */
export function webhookReplayKey(env: Env): Promise<string> {
  return deriveSealingKey(rootSecret(env), "webhook-idempotency-replay");
}

/** The additional authenticated data of endpoint `endpointId`'s secrets: a sealed value copied to another endpoint does not open. */
const context = (endpointId: string) => `webhook-endpoint:${endpointId}`;

/**
 * Whether a stored secret is in clear: a Standard Webhooks secret (`whsec_…`), as rows made
 * before sealing hold it; a sealed one is `v1.<nonce>.<ciphertext>`.
 */
export function isClearSecret(stored: string): boolean {
  return stored.startsWith("whsec_");
}

/** Seals endpoint `endpointId`'s secret `secret` under `key` ({@link endpointSecretsKey}). */
export function sealEndpointSecret(key: string, endpointId: string, secret: string): Promise<string> {
  return sealSecret(key, context(endpointId), secret);
}

/**
 * Endpoint `endpoint` with its secret and previous secret in clear, for signing (sign.ts
 * `signedHeaders`). A secret still in clear ({@link isClearSecret}) is taken as it is, so an
 * endpoint made before sealing signs as before; the key is derived only for a sealed one.
 * @throws ConfigError as {@link rootSecret}; Error when a sealed secret does not open (another
 *   `OTP_SECRET`, or an altered value).
 */
export async function withOpenSecrets<T extends Pick<WebhookEndpointRow, "id" | "secret" | "previousSecret">>(
  env: Env,
  endpoint: T,
): Promise<T> {
  let key: Promise<string> | null = null;
  const open = async (stored: string): Promise<string> => {
    if (isClearSecret(stored)) return stored;
    key ??= endpointSecretsKey(env);
    try {
      return await openSecret(await key, context(endpoint.id), stored);
    } catch (cause) {
      if (cause instanceof ConfigError) throw cause;
      throw new Error(
        `webhook endpoint ${endpoint.id}: its secret does not open (was OTP_SECRET changed? rotate the secret)`,
        { cause },
      );
    }
  };
  return {
    ...endpoint,
    secret: await open(endpoint.secret),
    previousSecret: endpoint.previousSecret === null ? null : await open(endpoint.previousSecret),
  };
}

/** Endpoints whose secrets one run of {@link sealClearSecrets} seals at most. */
export const SEAL_BATCH = 500;

/**
 * Seals the secrets that rows made before sealing still hold in clear (the hourly housekeeping,
 * src/index.ts): up to {@link SEAL_BATCH} endpoints a run, each with a compare-and-set, so a
 * rotation meanwhile is never undone. Repeats harmlessly.
 * @returns how many endpoints it sealed.
 * @throws ConfigError as {@link rootSecret}, when there is anything to seal.
 */
export async function sealClearSecrets(env: Env, db: Db): Promise<number> {
  const rows = await listClearSecretEndpoints(db, SEAL_BATCH);
  if (rows.length === 0) return 0;
  const key = await endpointSecretsKey(env);
  const seal = (row: (typeof rows)[number], stored: string) =>
    isClearSecret(stored) ? sealEndpointSecret(key, row.id, stored) : Promise.resolve(stored);
  let sealed = 0;
  for (const row of rows) {
    const after = {
      secret: await seal(row, row.secret),
      previousSecret: row.previousSecret === null ? null : await seal(row, row.previousSecret),
    };
    if (await replaceEndpointSecrets(db, row.id, row, after)) sealed += 1;
  }
  return sealed;
}
