import type { Db } from "../db/client";
import { missingRecord } from "../db/queries/archives";
import { eventRowAttemptsJson } from "../db/queries/otp-attempts";
import { findOtp, markExpired, markVerified, type OtpRow, recordWrongCode } from "../db/queries/otps";
import { otps } from "../db/schema";
import { ApiError } from "../errors";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";
import { timingSafeEqual } from "../lib/crypto";
import { codeHmac, OTP_RULES, otpSecret } from "./code";
import { reverseRefusal } from "./send";
import { otpStatusAt } from "./status";

/** What an `otp.*` event's snapshot holds beside the row: the OTP's attempts, as its GET shows them. */
const withAttempts = { attempts: eventRowAttemptsJson() };

/**
 * Rounds of read-compare-write before giving up. A round is repeated only when the OTP changed
 * between the read and the conditional write (a concurrent verify, a resend, the expiry); each
 * such change is final or bounded (5 resends), so a few rounds always settle.
 */
const MAX_ROUNDS = 8;

/** The error for an OTP that can no longer be verified at `now`, storing `expired`; null while pending. */
async function verifyRefusal(db: Db, otp: OtpRow, now: number): Promise<ApiError | null> {
  switch (otpStatusAt(otp, now)) {
    case "pending":
      return null;
    case "verified":
      return new ApiError(
        "otp_already_verified",
        "This OTP is already verified; a code is accepted once only.",
      );
    case "failed":
      return new ApiError(
        "otp_attempts_exceeded",
        "Too many wrong codes: this OTP has failed; start a new one.",
        {
          extra: { attempts_remaining: 0 },
        },
      );
    case "expired":
      await markExpired(db, otp.accountId, otp.id, now);
      return new ApiError("otp_expired", "This OTP has expired; start a new one.");
  }
}

/**
 * Checks a code against an OTP (`POST /v1/otp/{id}/verify`, docs/otp.md, Sending and verifying; OWASP MFA
 * cheat sheet and NIST SP 800-63B §5.1.3: single use, limited attempts, short lifetime). The presented
 * code's HMAC is compared in constant time with the stored one; then one conditional UPDATE either
 * verifies the OTP or counts the wrong code, each only if the OTP still is what was compared
 * (pending, unexpired, attempts left, same code). So two concurrent right codes verify once, and
 * concurrent wrong codes count at most 5.
 *
 * @param input.code the digits the user typed (4–10, validated by the route).
 * @returns the verified OTP row.
 * @throws ApiError `not_found` (no such OTP of the account), `otp_invalid` (422, with
 *   `attempts_remaining`; the 5th wrong code fails the OTP), `otp_attempts_exceeded` (429),
 *   `otp_expired` (410), `otp_already_verified` (409), `otp_is_reverse` (409: a reverse OTP is
 *   verified by the user's message, src/otp/reverse.ts). Error when `OTP_SECRET` is missing (→ 500).
 */
export async function verifyOtp(
  env: Env,
  db: Db,
  input: { accountId: string; otpId: string; code: string },
): Promise<OtpRow> {
  const secret = otpSecret(env);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const now = Date.now();
    const otp = await findOtp(db, input.accountId, input.otpId);
    if (!otp) throw await missingRecord(db, input.accountId, "otps", input.otpId);
    if (otp.mode === "reverse") throw reverseRefusal();
    const refusal = await verifyRefusal(db, otp, now);
    if (refusal) throw refusal;

    const presented = await codeHmac(secret, otp.id, input.code);
    if (timingSafeEqual(presented, otp.codeHmac)) {
      const verified = await markVerified(
        db,
        input.accountId,
        otp.id,
        otp.codeHmac,
        OTP_RULES.maxFailedAttempts,
        now,
        (row) => [eventsForRows("otp.verified", otps, row, withAttempts)],
      );
      if (verified) {
        await publishEvents(env, recordedIn(verified.effects, [0]));
        return verified.otp;
      }
    } else {
      // The last wrong code allowed (`OTP_RULES.maxFailedAttempts`) fails the OTP and records
      // `otp.failed` in the same batch.
      const counted = await recordWrongCode(
        db,
        input.accountId,
        otp.id,
        otp.codeHmac,
        OTP_RULES.maxFailedAttempts,
        now,
        (row) => [eventsForRows("otp.failed", otps, row, withAttempts)],
      );
      if (counted) {
        await publishEvents(env, recordedIn(counted.effects, [0]));
        const remaining = Math.max(OTP_RULES.maxFailedAttempts - counted.otp.failedAttempts, 0);
        throw new ApiError(
          "otp_invalid",
          remaining > 0
            ? `The code is wrong; ${remaining} attempt${remaining === 1 ? "" : "s"} left.`
            : "The code is wrong; no attempts left: this OTP has failed.",
          { extra: { attempts_remaining: remaining } },
        );
      }
    }
  }
  throw new Error(`OTP ${input.otpId}: verify did not settle in ${MAX_ROUNDS} rounds`);
}
