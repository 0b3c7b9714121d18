import type { RouteHandler } from "@hono/zod-openapi";
import { findApp } from "../../db/queries/apps";
import { type OtpCounts, type OtpStatsRow, otpStats } from "../../db/queries/otp-stats";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { formatTimestamp } from "../../lib/time";
import { bucketRange } from "../buckets";
import type * as routes from "./otp-stats.routes";

const ZERO: OtpCounts = { sent: 0, delivered: 0, verified: 0, failed: 0, expired: 0 };

/** `a` + the counts of `b`. */
function add(a: OtpCounts, b: OtpCounts): OtpCounts {
  return {
    sent: a.sent + b.sent,
    delivered: a.delivered + b.delivered,
    verified: a.verified + b.verified,
    failed: a.failed + b.failed,
    expired: a.expired + b.expired,
  };
}

/** The rows' counts summed per `key`, in first-seen order. */
function sumBy<K>(rows: OtpStatsRow[], key: (row: OtpStatsRow) => K): [K, OtpCounts][] {
  const sums = new Map<K, OtpCounts>();
  for (const row of rows) sums.set(key(row), add(sums.get(key(row)) ?? ZERO, row));
  return [...sums];
}

export const stats: RouteHandler<typeof routes.stats, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const { time_from, time_to, granularity } = c.req.valid("query");
  const { db, principal } = c.var;
  if (!(await findApp(db, principal.accountId, id))) throw new ApiError("not_found", "No such app.");
  const range = bucketRange(time_from, time_to, granularity);
  const { rows, medians } = await otpStats(db, principal.accountId, id, range, Date.now());
  const median = new Map(medians.map((row) => [row.start, row.median_ms]));
  const buckets = sumBy(rows, (row) => row.start).map(([start]) => {
    const inBucket = rows.filter((row) => row.start === start);
    const total = inBucket.reduce<OtpCounts>(add, ZERO);
    const medianMs = median.get(start);
    return {
      start: formatTimestamp(start),
      ...total,
      conversion_rate: total.sent === 0 ? null : Math.round((total.verified / total.sent) * 10_000) / 10_000,
      median_seconds_to_verify: medianMs === undefined ? null : Math.round(medianMs) / 1000,
      by_channel: sumBy(inBucket, (row) => row.channel).map(([session_id, counts]) => ({
        session_id,
        ...counts,
      })),
      by_mode: sumBy(inBucket, (row) => row.mode).map(([mode, counts]) => ({ mode, ...counts })),
    };
  });
  return c.json(
    {
      success: true as const,
      data: {
        app_id: id,
        granularity,
        time_from: formatTimestamp(range.from),
        time_to: formatTimestamp(range.to),
        buckets,
      },
    },
    200,
  );
};
