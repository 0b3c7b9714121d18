import type { OtpRow } from "../db/queries/otps";

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
