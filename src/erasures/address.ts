import { z } from "zod";
import { ConfigError } from "../config";
import { ERASED_PREFIX } from "../lib/contact-identity";
import { hmacSha256Hex } from "../lib/crypto";
import { deriveSealingKey, openSecret, sealSecret } from "../lib/sealed-secret";

/*
 * The keys of erasures (docs/contacts.md, Erasure): an erased address is a keyed hash, so the rows that keep
 * it (an opt-out, a message's `to_number`) say nothing of the number to whoever reads the database
 * without the key, yet the same number always gives the same hash, and a later send to it still
 * finds its opt-out. Both keys derive from `OTP_SECRET` (HKDF-SHA-256, lib/sealed-secret.ts
 * `deriveSealingKey`), as the webhook keys do (src/webhooks/secret.ts): a deployment that rotates
 * `OTP_SECRET` loses the link between a number and its erased opt-out.
 */

/**
 * Shortest accepted `OTP_SECRET`, in characters, as one-time codes require it (src/otp/code.ts
 * `MIN_SECRET_LENGTH`): RFC 2104 §3 discourages HMAC keys shorter than the hash output.
 */
const MIN_ROOT_SECRET_LENGTH = 32;

/** `OTP_SECRET`, the root of the erasure keys. @throws ConfigError as {@link erasureKeys}. */
function rootSecret(env: Env): string {
  const secret = env.OTP_SECRET;
  if (!secret || secret.length < MIN_ROOT_SECRET_LENGTH) {
    throw new ConfigError(
      "OTP_SECRET",
      `is required, at least ${MIN_ROOT_SECRET_LENGTH} characters: it keys the hashes of erased contacts`,
    );
  }
  return secret;
}

/** The keys of erasures: `hash` keys the erased addresses, `seal` seals a pending erasure's addresses. */
export interface ErasureKeys {
  hash: string;
  seal: string;
}

/**
 * The erasure keys, derived from `OTP_SECRET` (info `contact-erasure-hash` and
 * `contact-erasure-seal`).
 * @throws ConfigError (500 `service_misconfigured`, naming it) when `OTP_SECRET` is missing or
 *   shorter than 32 characters: nothing can be erased, nor an erased opt-out matched.
 */
export async function erasureKeys(env: Env): Promise<ErasureKeys> {
  const secret = rootSecret(env);
  return {
    hash: await deriveSealingKey(secret, "contact-erasure-hash"),
    seal: await deriveSealingKey(secret, "contact-erasure-seal"),
  };
}

/**
 * The key of the request hashes of `POST /v1/erasures`'s `Idempotency-Key` (src/middleware/
 * idempotency.ts `keyedIdempotency`): its body holds the address to erase, which a plain hash
 * kept for 24 hours would let anyone with the database confirm by guessing numbers. HKDF-SHA-256
 * of `OTP_SECRET`, info `contact-erasure-request`.
 * @throws ConfigError as {@link erasureKeys}.
 */
export async function erasureRequestKey(env: Env): Promise<string> {
  return deriveSealingKey(rootSecret(env), "contact-erasure-request");
}

/**
 * The erased form of `address` (an E.164 number or a user id) in account `accountId`:
 * `erased:` and the lower-case hex HMAC-SHA256 (RFC 2104) of `${accountId}:${address}` keyed with
 * `keys.hash`. 71 characters, never a number nor a user id (lib/contact-identity.ts
 * `ERASED_PREFIX`); the same for the same address, and another in another account.
 */
export async function erasedAddress(keys: ErasureKeys, accountId: string, address: string): Promise<string> {
  return `${ERASED_PREFIX}${await hmacSha256Hex(keys.hash, `${accountId}:${address}`)}`;
}

/** {@link erasedAddress} of each of `addresses`: a map from each address to its erased form. */
export async function erasedAddresses(
  keys: ErasureKeys,
  accountId: string,
  addresses: readonly string[],
): Promise<Map<string, string>> {
  const unique = [...new Set(addresses)];
  const hashed = await Promise.all(unique.map((address) => erasedAddress(keys, accountId, address)));
  return new Map(unique.map((address, i) => [address, hashed[i] ?? ""]));
}

/**
 * Who an erasure erases: every address (E.164 numbers and user ids, old ones included) of the
 * person, and the ids of the account's contacts that were them.
 */
export const ErasureSubject = z.object({
  addresses: z.array(z.string()),
  contactIds: z.array(z.string()),
});
export type ErasureSubject = z.infer<typeof ErasureSubject>;

/** The additional authenticated data of erasure `id`'s subject: sealed for one erasure only. */
const context = (id: string) => `erasure:${id}`;

/** `subject` sealed (AES-256-GCM, lib/sealed-secret.ts) for erasure `id`, as `sealed_addresses` keeps it. */
export function sealSubject(keys: ErasureKeys, id: string, subject: ErasureSubject): Promise<string> {
  return sealSecret(keys.seal, context(id), JSON.stringify(subject));
}

/**
 * The subject {@link sealSubject} sealed for erasure `id`.
 * @throws Error when it does not open (another key or erasure, altered) or is not a subject.
 */
export async function openSubject(keys: ErasureKeys, id: string, sealed: string): Promise<ErasureSubject> {
  return ErasureSubject.parse(JSON.parse(await openSecret(keys.seal, context(id), sealed)));
}
