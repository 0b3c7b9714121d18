import type { OtpRow } from "../db/queries/otps";
import { formatTimestamp } from "../lib/time";
import { OTP_RULES } from "../otp/code";
import type { CreatedReverseOtp } from "../otp/reverse";
import { otpStatusAt } from "../otp/status";

/**
 * An OTP as the API shows it (README, One-time codes): `{id, app_id, mode, to_number, channel,
 * status, expires_at, verified_number, attempts_remaining, sends_remaining, message_id, created_at,
 * updated_at}`. Never the code, nor its HMAC (a reverse OTP's create response adds the code itself:
 * src/routes/otp).
 */
export function toOtpRecord(row: OtpRow, now: number = Date.now()) {
  return {
    id: row.id,
    app_id: row.appId,
    mode: row.mode,
    to_number: row.toNumber,
    channel: "chatapp" as const,
    status: otpStatusAt(row, now),
    expires_at: formatTimestamp(row.expiresAt),
    verified_number: row.verifiedNumber,
    // A reverse OTP takes no typed code and sends none.
    attempts_remaining:
      row.mode === "reverse" ? 0 : Math.max(OTP_RULES.maxFailedAttempts - row.failedAttempts, 0),
    sends_remaining: row.mode === "reverse" ? 0 : Math.max(OTP_RULES.maxSends - row.sends, 0),
    message_id: row.messageId,
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

/**
 * A new reverse OTP as its create response alone shows it (README, One-time codes → Reverse OTP):
 * {@link toOtpRecord} with `code`, `link` (the wa.me link with the text written in) and `qr_code`
 * (the link as a PNG data URI). No other response shows these three.
 */
export function toReverseOtpRecord(created: CreatedReverseOtp, now: number = Date.now()) {
  return {
    ...toOtpRecord(created.otp, now),
    code: created.code,
    link: created.link,
    qr_code: created.qrCode,
  };
}
