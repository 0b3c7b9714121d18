import type { OtpRow } from "../db/queries/otps";
import { formatTimestamp } from "../lib/time";
import { OTP_RULES } from "./code";

export type OtpStatus = OtpRow["status"];

export const OTP_STATUSES = [
  "pending",
  "verified",
  "failed",
  "expired",
] as const satisfies readonly OtpStatus[];

/**
 * The status an OTP has at `now` (epoch ms): a `pending` OTP whose `expires_at` has passed is
 * `expired`, whether or not a verify has stored that yet.
 */
export function otpStatusAt(row: OtpRow, now: number): OtpStatus {
  return row.status === "pending" && row.expiresAt <= now ? "expired" : row.status;
}

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
