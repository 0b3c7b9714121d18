import type { OtpRow } from "../db/queries/otps";
import { formatTimestamp } from "../lib/time";
import { OTP_RULES } from "../otp/code";
import { otpStatusAt } from "../otp/status";

/**
 * An OTP as the API shows it (README, One-time codes): `{id, app_id, to_number, channel, status,
 * expires_at, attempts_remaining, sends_remaining, message_id, created_at, updated_at}`. Never the
 * code, nor its HMAC.
 */
export function toOtpRecord(row: OtpRow, now: number = Date.now()) {
  return {
    id: row.id,
    app_id: row.appId,
    to_number: row.toNumber,
    channel: "chatapp" as const,
    status: otpStatusAt(row, now),
    expires_at: formatTimestamp(row.expiresAt),
    attempts_remaining: Math.max(OTP_RULES.maxFailedAttempts - row.failedAttempts, 0),
    sends_remaining: Math.max(OTP_RULES.maxSends - row.sends, 0),
    message_id: row.messageId,
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}
