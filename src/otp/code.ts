import { hmacSha256Hex } from "../lib/crypto";
import { deriveSealingKey } from "../lib/sealed-secret";

/**
 * The rules of one-time codes, in one place. Sources: the numbers are this API's own, documented in
 * docs/otp.md, "Sending and verifying"; OWASP's Multifactor Authentication and Forgot Password cheat sheets
 * and NIST SP 800-63B §5.1.3 / §5.2.2 for single-use codes, short lifetimes and attempt limits.
 */
export const OTP_RULES = {
  /** Wrong codes an OTP accepts; the last one turns it `failed` (docs/otp.md: "After 5 wrong codes"). */
  maxFailedAttempts: 5,
  /** Codes sent per OTP, the first one included (docs/otp.md: "limited to 5 codes per OTP"). */
  maxSends: 5,
  /** Shortest gap between two sends of one OTP, ms (docs/otp.md: "at least 30 seconds apart"). */
  resendIntervalMs: 30_000,
  /** Window of the per-number limit `OTP_MAX_PER_NUMBER_PER_HOUR`, ms (a rolling hour). */
  perNumberWindowMs: 3_600_000,
} as const;

/**
 * Default and bounds of an app's `code_size`, in digits (default 6: docs/otp.md, Apps; bounds
 * 4–10: this API's own). An incoming message's candidate codes for a reverse OTP are its digit runs
 * of these lengths (src/otp/reverse.ts).
 */
export const CODE_SIZE = { min: 4, max: 10, default: 6 } as const;

/**
 * Shortest accepted `OTP_SECRET`, in characters: RFC 2104 §3 strongly discourages HMAC keys
 * shorter than the hash output (32 bytes for SHA-256).
 */
export const MIN_SECRET_LENGTH = 32;

/**
 * A code of `size` decimal digits from the platform CSPRNG (`crypto.getRandomValues`). Each digit
 * comes from one random byte by rejection sampling: bytes 250–255 are drawn again, so that
 * `byte % 10` is uniform (a plain modulo of 0–255 would favour 0–5). The result may start with 0.
 *
 * @param size number of digits, 1–64 (apps allow 4–10).
 * @throws RangeError for a size outside 1–64.
 */
export function generateCode(size: number): string {
  if (!Number.isInteger(size) || size < 1 || size > 64) throw new RangeError(`code size ${size} is not 1–64`);
  let code = "";
  while (code.length < size) {
    // Twice the digits still needed: 250/256 of bytes are kept, so one round almost always suffices.
    for (const byte of crypto.getRandomValues(new Uint8Array(2 * (size - code.length)))) {
      if (byte < 250 && code.length < size) code += String(byte % 10);
    }
  }
  return code;
}

/**
 * The stored form of a code: lower-case hex HMAC-SHA256 (RFC 2104) of `${otpId}:${code}` keyed
 * with `secret`. Binding the OTP id means a hash copied to another OTP row matches nothing, and
 * without the key a leaked row does not give the code away (a 6-digit code's hash alone could
 * be brute-forced in microseconds). Compare results with `timingSafeEqual` (lib/crypto.ts).
 */
export function codeHmac(secret: string, otpId: string, code: string): Promise<string> {
  return hmacSha256Hex(secret, `${otpId}:${code}`);
}

/**
 * The index key of a reverse OTP's code (`otps.code_lookup`, index `otps_code_lookup` on
 * `(session_id, code_lookup)`): lower-case hex HMAC-SHA256 (RFC 2104) of
 * `reverse:${sessionId}:${code}` keyed with `secret` (`OTP_SECRET`). An incoming message on session
 * `sessionId` finds the OTP its candidate codes belong to by this value (src/otp/reverse.ts), so the
 * code is never stored; without the key the value does not give the code away. It binds the
 * session, not the OTP (the OTP is what it finds), so a code is unique among a session's live reverse
 * OTPs; the `reverse:` prefix keeps it apart from {@link codeHmac}'s `${otpId}:${code}`.
 *
 * @param sessionId the session's uuid (`sessions.id`).
 * @param code the digits.
 */
export function codeLookup(secret: string, sessionId: string, code: string): Promise<string> {
  return hmacSha256Hex(secret, `reverse:${sessionId}:${code}`);
}

/**
 * The `OTP_SECRET` secret. Absent or shorter than {@link MIN_SECRET_LENGTH}, it is a deployment
 * error: this throws a plain Error, which `onError` logs and answers as 500 `internal_error`.
 * There is deliberately no fallback key, which would make every code forgeable by anyone who
 * reads the source.
 *
 * @throws Error when the secret is missing or too short.
 */
export function otpSecret(env: Env): string {
  const secret = env.OTP_SECRET;
  if (!secret)
    throw new Error("OTP_SECRET is not set: one-time codes are unavailable (wrangler secret put OTP_SECRET)");
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new Error(
      `OTP_SECRET is shorter than ${MIN_SECRET_LENGTH} characters: one-time codes are unavailable`,
    );
  }
  return secret;
}

/**
 * The key that seals the stored Idempotency-Key answers of `POST /v1/apps/{id}/otp`
 * (src/middleware/idempotency.ts): a reverse OTP's answer carries its code, which D1 may hold only
 * unreadable without `OTP_SECRET`, as the code's HMACs are. HKDF-SHA-256 (RFC 5869) of
 * `OTP_SECRET`, info `otp-idempotency-replay`, 32 bytes, as standard base64.
 * @throws Error when `OTP_SECRET` is missing or too short ({@link otpSecret}).
 */
export function otpReplayKey(env: Env): Promise<string> {
  return deriveSealingKey(otpSecret(env), "otp-idempotency-replay");
}
