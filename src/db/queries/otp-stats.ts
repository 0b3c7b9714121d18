import { sql } from "drizzle-orm";
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
 * An app's OTPs in `[from, to)` (epoch ms, by `created_at`; index `otps_app`), counted per bucket of
 * `bucketMs` (UTC hours or days), mode and channel, with each bucket's median time from start to
 * `verified` (of an even count, the mean of the two middle values). Statuses are as they are at
 * `now` (a `pending` OTP past its expiry counts as expired), so a bucket's counts move as its OTPs
 * do. Both are read in one D1 batch, so they agree with each other. Every OTP counts in one group:
 * summing the groups of a bucket gives its totals.
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
  const [rows, medians] = await batchSql(db, [
    sql`SELECT o.created_at - o.created_at % ${range.bucketMs} AS start, o.mode AS mode,
        COALESCE((SELECT a.session_id FROM otp_attempts a WHERE a.otp_id = o.id ORDER BY a.seq DESC LIMIT 1),
          o.session_id) AS channel,
        COUNT(*) AS sent,
        SUM(EXISTS (SELECT 1 FROM otp_attempts a JOIN messages m ON m.id = a.message_id
          WHERE a.otp_id = o.id AND m.status IN ('delivered', 'read'))) AS delivered,
        SUM(o.status = 'verified') AS verified,
        SUM(o.status = 'failed') AS failed,
        SUM(o.status = 'expired' OR (o.status = 'pending' AND o.expires_at <= ${now})) AS expired
      FROM otps o WHERE ${scope}
      GROUP BY start, mode, channel ORDER BY start, mode, channel`,
    sql`WITH v AS (
        SELECT o.created_at - o.created_at % ${range.bucketMs} AS start, o.verified_at - o.created_at AS d,
          ROW_NUMBER() OVER (PARTITION BY o.created_at - o.created_at % ${range.bucketMs}
            ORDER BY o.verified_at - o.created_at) AS rn,
          COUNT(*) OVER (PARTITION BY o.created_at - o.created_at % ${range.bucketMs}) AS n
        FROM otps o WHERE ${scope} AND o.status = 'verified')
      SELECT start, AVG(d) AS median_ms FROM v WHERE rn IN ((n + 1) / 2, (n + 2) / 2)
      GROUP BY start ORDER BY start`,
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
