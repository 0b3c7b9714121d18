const encoder = new TextEncoder();

/** Lower-case hex SHA-256 of a UTF-8 string (Web Crypto). */
export async function sha256Hex(input: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(input));
  return toHex(new Uint8Array(digest));
}

/** Lower-case hex HMAC of `message` keyed with `secret` (RFC 2104, Web Crypto), with `hash`. */
export async function hmacHex(hash: "SHA-256" | "SHA-512", secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash }, false, [
    "sign",
  ]);
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message))));
}

/** Lower-case hex HMAC-SHA256 of `message` keyed with `secret` (RFC 2104, Web Crypto). */
export function hmacSha256Hex(secret: string, message: string): Promise<string> {
  return hmacHex("SHA-256", secret, message);
}

/**
 * Compares two strings without an early exit, so the time taken does not reveal where they first
 * differ (`crypto.subtle.timingSafeEqual`, a Workers extension of Web Crypto).
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) return false;
  return crypto.subtle.timingSafeEqual(left, right);
}

/** `bytes` random bytes from the platform CSPRNG, base64url without padding (RFC 4648 §5). */
export function randomToken(bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replaceAll("=", "");
}

/** Random bytes in a webhook signing secret: 32, within the 24–64 the Standard Webhooks spec allows. */
export const WEBHOOK_SECRET_BYTES = 32;

/**
 * A new webhook signing secret in the Standard Webhooks format ("Signature scheme", symmetric):
 * `whsec_` + standard base64 (RFC 4648 §4, padded) of {@link WEBHOOK_SECRET_BYTES} bytes from the
 * platform CSPRNG, e.g. `whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw…=` (50 characters in all). The
 * `standardwebhooks` package takes this string as is.
 */
export function webhookSecret(): string {
  const raw = crypto.getRandomValues(new Uint8Array(WEBHOOK_SECRET_BYTES));
  return `whsec_${btoa(String.fromCharCode(...raw))}`;
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
