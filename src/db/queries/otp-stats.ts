import { type SQL, sql } from "drizzle-orm";
import { batchSql, type Db } from "../client";

/** The OTP counts of one group (a bucket, or a bucket and a channel or mode). */
export interface OtpCounts {
  /** OTPs started. */
  sent: number;
  /** OTPs one of whose messages got a `delivered` (or `read`) ack; reverse OTPs never count. */
  delivered: number;
  verified: number;
  failed: number;
  /** Stored `expired`, or still `pending` past `expires_at` at `now`. */
  expired: number;
}

/** One row of {@link otpStats}: a bucket (`start`, epoch ms) and a group within it. */
export type OtpStatsRow = OtpCounts & {
  start: number;
  mode: "send" | "reverse";
  /** The OTP's channel: the session of its latest attempt, or the session a reverse OTP waits on. */
  channel: string | null;
};

/** A bucket's median time from start to verification, ms; absent for a bucket without verified OTPs. */
export interface OtpMedianRow {
  start: number;
  median_ms: number;
}

/**
 * SQL over `alias` (an `otps` alias), for a query grouping OTPs: each of {@link OtpCounts} as an
 * aggregate, statuses as at `now` (epoch ms), and the OTP's `channel` (the session of its latest
 * attempt, else the session a reverse OTP waits on; null for neither). Shared by the statistics'
 * read and the archive that adds OTPs to `otp_stats_hours` (src/db/queries/otp-archives.ts).
 */
export function otpCounts(alias: string, now: number) {
  const o = sql.raw(alias);
  return {
    channel: sql`COALESCE((SELECT a.session_id FROM otp_attempts a WHERE a.otp_id = ${o}.id ORDER BY a.seq DESC LIMIT 1),
      ${o}.session_id)`,
    sent: sql`COUNT(*)`,
    delivered: sql`SUM(EXISTS (SELECT 1 FROM otp_attempts a JOIN messages m ON m.id = a.message_id
      WHERE a.otp_id = ${o}.id AND m.status IN ('delivered', 'read')))`,
    verified: sql`SUM(${o}.status = 'verified')`,
    failed: sql`SUM(${o}.status = 'failed')`,
    expired: sql`SUM(${o}.status = 'expired' OR (${o}.status = 'pending' AND ${o}.expires_at <= ${now}))`,
  };
}

/** SQL over `alias` (an `otps` alias): the whole seconds from the OTP's start to its verification. */
export function verifySeconds(alias: string): SQL {
  const o = sql.raw(alias);
  return sql`(${o}.verified_at - ${o}.created_at) / 1000`;
}

/**
 * An app's OTPs in `[from, to)` (epoch ms, by `created_at`, bounds on whole hours; index
 * `otps_app`), counted per bucket of `bucketMs` (UTC hours or days), mode and channel, with each
 * bucket's median time from start to `verified` (of an even count, the mean of the two middle
 * values). The OTPs still in D1 count with their statuses as they are at `now` (a `pending` OTP
 * past its expiry counts as expired), so a bucket's counts move as its OTPs do; archived OTPs
 * count as `otp_stats_hours` keeps them (final), and their verify times to the whole second
 * (`otp_verify_times`). Both are read in one D1 batch, so they agree with each other. Every OTP
 * counts in one group: summing the groups of a bucket gives its totals.
 */
export async function otpStats(
  db: Db,
  accountId: string,
  appId: string,
  range: { from: number; to: number; bucketMs: number },
  now: number,
): Promise<{ rows: OtpStatsRow[]; medians: OtpMedianRow[] }> {
  const scope = sql`o.account_id = ${accountId} AND o.app_id = ${appId}
    AND o.created_at >= ${range.from} AND o.created_at < ${range.to}`;
  const archived = (table: string) =>
    sql`${sql.raw(table)} s WHERE s.app_id = ${appId} AND s.start >= ${range.from} AND s.start < ${range.to}`;
  const bucket = (time: string) => sql`${sql.raw(time)} - ${sql.raw(time)} % ${range.bucketMs}`;
  const counts = otpCounts("o", now);
  const [rows, medians] = await batchSql(db, [
    sql`SELECT start, mode, NULLIF(channel, '') AS channel, SUM(sent) AS sent, SUM(delivered) AS delivered,
        SUM(verified) AS verified, SUM(failed) AS failed, SUM(expired) AS expired
      FROM (SELECT ${bucket("o.created_at")} AS start, o.mode AS mode, COALESCE(${counts.channel}, '') AS channel,
          ${counts.sent} AS sent, ${counts.delivered} AS delivered, ${counts.verified} AS verified,
          ${counts.failed} AS failed, ${counts.expired} AS expired
        FROM otps o WHERE ${scope} GROUP BY 1, 2, 3
        UNION ALL
        SELECT ${bucket("s.start")}, s.mode, s.channel, s.sent, s.delivered, s.verified, s.failed, s.expired
        FROM ${archived("otp_stats_hours")})
      GROUP BY start, mode, channel ORDER BY start, mode, channel`,
    // A weighted median: an OTP in D1 weighs 1, an archived verify time its count.
    sql`WITH v AS (
        SELECT ${bucket("o.created_at")} AS start, o.verified_at - o.created_at AS d, 1 AS w
        FROM otps o WHERE ${scope} AND o.status = 'verified'
        UNION ALL
        SELECT ${bucket("s.start")}, s.seconds * 1000, s.count FROM ${archived("otp_verify_times")}),
      c AS (SELECT start, d, SUM(w) OVER (PARTITION BY start ORDER BY d ROWS UNBOUNDED PRECEDING) AS at,
          SUM(w) OVER (PARTITION BY start) AS n FROM v)
      SELECT start, (MIN(CASE WHEN at >= (n + 1) / 2 THEN d END) + MIN(CASE WHEN at >= (n + 2) / 2 THEN d END)) / 2.0
        AS median_ms
      FROM c GROUP BY start ORDER BY start`,
  ]);
  return {
    rows: (rows?.results ?? []).map((row) => ({
      start: Number(row.start),
      mode: row.mode === "reverse" ? "reverse" : "send",
      channel: typeof row.channel === "string" ? row.channel : null,
      sent: Number(row.sent),
      delivered: Number(row.delivered),
      verified: Number(row.verified),
      failed: Number(row.failed),
      expired: Number(row.expired),
    })),
    medians: (medians?.results ?? []).map((row) => ({
      start: Number(row.start),
      median_ms: Number(row.median_ms),
    })),
  };
}
