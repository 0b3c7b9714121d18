import { type SQL, sql } from "drizzle-orm";
import type { Db, Statement } from "../client";
import { otpSends } from "../schema";
import { type Purge, type PurgeBudget, purgeBefore } from "./purge";

// The retention of the OTP send log (schema/otp.ts `otpSends`): it serves only the per-number
// limit's rolling window (otps.ts `PerNumberLimit`), so a send older than the window is counted by
// nothing and goes hourly; the rest goes with its OTP.

/**
 * Deletes the sends (of every account) logged before `before` (epoch ms), in bounded chunks
 * through `otp_sends_sent` (the hourly job `purge_otp_sends`, with `before` the start of the
 * per-number window, src/otp/code.ts `OTP_RULES.perNumberWindowMs`).
 */
export function purgeOtpSends(db: Db, before: number, budget?: PurgeBudget): Promise<Purge> {
  return purgeBefore(db, otpSends, otpSends.sentAt, before, budget);
}

/**
 * The statement that deletes the send log of the OTPs `otpIds` (SQL: a subquery of OTP ids), by
 * the primary key `(otp_id, seq)`. For the batch that archives those OTPs
 * (src/db/queries/otp-archives.ts): it goes before the OTPs' own delete, which the foreign key
 * `otp_sends.otp_id` refuses while a send of them remains (with {@link purgeOtpSends} hourly, only
 * the last hour's).
 */
export function deleteOtpSendsOf(otpIds: SQL): Statement {
  return sql`DELETE FROM otp_sends WHERE otp_id IN ${otpIds}`;
}
