import { and, getTableColumns, type SQL, sql } from "drizzle-orm";
import { batchSql, type Db } from "../client";
import { type MessageArchiveRow, messageArchives, otps } from "../schema";
import type { ArchivedVersion, ArchiveRule } from "./archives";
import { sameVersions } from "./archives";
import { type AttemptView, attemptsJson, deleteOtpAttemptsOf } from "./otp-attempts";
import { deleteOtpSendsOf } from "./otp-sends";
import { otpCounts, verifySeconds } from "./otp-stats";
import type { OtpRow } from "./otps";
import { statusIn } from "./status-in";

// OTP archives (src/archives/otps.ts): a final OTP leaves D1 with its attempts and send log,
// leaving a tombstone (`archived_otps`: its id's 16 bytes and the archive's `seq`) and its share
// of its app's OTP statistics (`otp_stats_hours`, `otp_verify_times`).

/** An OTP as an archive line renders it: the row and its attempts. */
export type ArchivableOtp = OtpRow & { attempts: AttemptView[] };

/** One UTC hour, the bucket OTP statistics keep archived OTPs by (ms). */
const HOUR_MS = 3_600_000;

/**
 * Up to `limit` of the account's OTPs that `rule` lets go, oldest first after `after` (the last
 * `(created_at, id)` of the previous call), with their attempts: created before `rule.before`,
 * final at `rule.now` (verified, failed, or expired: also a `pending` one past `expires_at`), whose
 * last code went out more than `rule.otpSendWindowMs` ago (its send log, which goes with it, no
 * longer counts toward the per-number limit), and none of whose messages still waits to be sent or
 * on an unknown outcome. Reads `otps_account`.
 */
export async function archivableOtps(
  db: Db,
  accountId: string,
  rule: ArchiveRule,
  after: { createdAt: number; id: string } | null,
  limit: number,
): Promise<ArchivableOtp[]> {
  const where: SQL[] = [
    sql`${otps.accountId} = ${accountId}`,
    sql`${otps.createdAt} < ${rule.before}`,
    sql`(${otps.status} <> 'pending' OR ${otps.expiresAt} <= ${rule.now})`,
    sql`${otps.lastSentAt} <= ${rule.now - rule.otpSendWindowMs}`,
    sql`NOT EXISTS (SELECT 1 FROM otp_attempts a JOIN messages m ON m.id = a.message_id
      WHERE a.otp_id = otps.id AND (${statusIn("m.status", rule.waiting)} OR (m.metadata ->> '$.outcome') IS 'unknown'))`,
  ];
  if (after) where.push(sql`(${otps.createdAt}, ${otps.id}) > (${after.createdAt}, ${after.id})`);
  const rows = await db
    .select({ ...getTableColumns(otps), attempts: sql<string | null>`${attemptsJson(sql`otps.id`)}` })
    .from(otps)
    .where(and(...where))
    .orderBy(otps.createdAt, otps.id)
    .limit(limit);
  return rows.map((row) => ({
    ...row,
    attempts: row.attempts ? (JSON.parse(row.attempts) as AttemptView[]) : [],
  }));
}

/**
 * Records archive `archive` (of kind `otps`) and moves its OTPs out of D1, in one D1 batch: the
 * archive row; the OTPs of `versions` still as archived (an OTP that changed since it was read
 * stays, for a later archive) added to their app's statistics of their hour (src/db/queries/otp-stats.ts
 * `otpCounts`, statuses as at `rule.now`; their messages are still in D1, so `delivered` reads them)
 * and to its verify times in whole seconds; a tombstone for each; their attempts, send log and the
 * OTPs deleted. The statistics are added from the rows the same batch deletes, so an OTP counts
 * once however many runs race.
 * @returns the ids deleted.
 */
export async function recordOtpArchive(
  db: Db,
  archive: Omit<MessageArchiveRow, "seq">,
  versions: ArchivedVersion[],
  rule: ArchiveRule,
): Promise<string[]> {
  const matched = sameVersions("otps", "o", archive.accountId, versions);
  const ids = sql`(SELECT o.id FROM otps o WHERE ${matched})`;
  const hour = sql`o.created_at - o.created_at % ${HOUR_MS}`;
  const counts = otpCounts("o", rule.now);
  const results = await batchSql<{ id: string }>(db, [
    db.insert(messageArchives).values(archive).getSQL(),
    sql`INSERT INTO otp_stats_hours (app_id, start, mode, channel, sent, delivered, verified, failed, expired)
      SELECT o.app_id, ${hour}, o.mode, COALESCE(${counts.channel}, ''), ${counts.sent}, ${counts.delivered},
        ${counts.verified}, ${counts.failed}, ${counts.expired}
      FROM otps o WHERE ${matched} GROUP BY 1, 2, 3, 4
      ON CONFLICT DO UPDATE SET sent = sent + excluded.sent, delivered = delivered + excluded.delivered,
        verified = verified + excluded.verified, failed = failed + excluded.failed, expired = expired + excluded.expired`,
    sql`INSERT INTO otp_verify_times (app_id, start, seconds, count)
      SELECT o.app_id, ${hour}, ${verifySeconds("o")}, COUNT(*)
      FROM otps o WHERE ${matched} AND o.status = 'verified' GROUP BY 1, 2, 3
      ON CONFLICT DO UPDATE SET count = count + excluded.count`,
    sql`INSERT INTO archived_otps (otp_id, archive_seq)
      SELECT unhex(replace(o.id, '-', '')), (SELECT seq FROM message_archives WHERE id = ${archive.id})
      FROM otps o WHERE ${matched}`,
    deleteOtpAttemptsOf(ids),
    deleteOtpSendsOf(ids),
    sql`DELETE FROM otps AS o WHERE ${matched} RETURNING id`,
  ]);
  return (results.at(-1)?.results ?? []).map((row) => row.id);
}
