import { z } from "@hono/zod-openapi";
import { ApiError } from "../errors";
import { once, TimeBound } from "./paging";

// Time buckets of the statistics routes (`GET /v1/account/usage`, `GET /v1/apps/{id}/otp-stats`):
// UTC hours or days, a range rounded out to whole buckets, bounded so a response stays small.

export const GRANULARITIES = ["hour", "day"] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Bucket size (ms) of each granularity, and the longest range it may cover (days). */
export const BUCKET_RANGES: Record<Granularity, { bucketMs: number; maxDays: number }> = {
  hour: { bucketMs: 3_600_000, maxDays: 31 },
  day: { bucketMs: 86_400_000, maxDays: 366 },
};

/** The query of a bucketed statistics route: `time_from`, `time_to` (epoch ms once parsed), `granularity`. */
export const BucketQuery = z.object({
  time_from: TimeBound.openapi({
    description: "Start of the range; rounded down to the start of its hour or day (UTC).",
  }),
  time_to: TimeBound.openapi({
    description: "End of the range, after `time_from`; rounded up to the end of its hour or day (UTC).",
  }),
  granularity: z
    .enum(GRANULARITIES, { error: once("one of hour, day") })
    .default("day")
    .openapi({ description: "Bucket size: `hour` (ranges up to 31 days) or `day` (up to 366 days)." }),
});

/** Days covered by `GET /v1/account/usage` when the request gives no `time_from`. */
export const DEFAULT_RANGE_DAYS = 30;

/** The query of `GET /v1/account/usage`: {@link BucketQuery} with both bounds optional ({@link defaultBounds}). */
export const DefaultedBucketQuery = BucketQuery.extend({
  time_from: TimeBound.optional().openapi({
    description:
      "Start of the range; rounded down to the start of its hour or day (UTC). Default: 30 days before " +
      "`time_to` rounded up to the end of its UTC day (with neither bound, the start of the UTC day 29 days ago).",
  }),
  time_to: TimeBound.optional().openapi({
    description:
      "End of the range, after `time_from`; rounded up to the end of its hour or day (UTC). Default: now.",
  }),
});

/**
 * Fills in the bounds a request left out, before {@link bucketRange} rounds them:
 * `time_to` defaults to `now`; `time_from` to {@link DEFAULT_RANGE_DAYS} days before `time_to`
 * rounded up to the end of its UTC day. With neither, that is the last 30 UTC days, today
 * included: from the start of the UTC day 29 days ago to now. Each bound given is kept as given,
 * as a list filter on `created` keeps a lone `gte` or `lte` (Stripe's list API).
 * @param now epoch ms; the bounds are epoch ms.
 */
export function defaultBounds(
  timeFrom: number | undefined,
  timeTo: number | undefined,
  now: number,
): { timeFrom: number; timeTo: number } {
  const to = timeTo ?? now;
  const dayMs = BUCKET_RANGES.day.bucketMs;
  const from = timeFrom ?? Math.ceil(to / dayMs) * dayMs - DEFAULT_RANGE_DAYS * dayMs;
  return { timeFrom: from, timeTo: to };
}

/** A range of whole buckets: `[from, to)` in epoch ms and the bucket size in ms. */
export interface BucketRange {
  from: number;
  to: number;
  bucketMs: number;
}

/**
 * The buckets a request covers: `time_from` rounded down and `time_to` rounded up to the
 * granularity (UTC hours or days).
 * @throws ApiError `time_range_invalid` (422) when `time_to` is not after `time_from`, or the
 *   range spans more days than the granularity allows ({@link BUCKET_RANGES}).
 */
export function bucketRange(timeFrom: number, timeTo: number, granularity: Granularity): BucketRange {
  if (timeTo <= timeFrom) {
    throw new ApiError("time_range_invalid", "time_to must be after time_from.", {
      fields: { time_to: ["must be after time_from"] },
    });
  }
  const { bucketMs, maxDays } = BUCKET_RANGES[granularity];
  const from = Math.floor(timeFrom / bucketMs) * bucketMs;
  const to = Math.ceil(timeTo / bucketMs) * bucketMs;
  if (to - from > maxDays * BUCKET_RANGES.day.bucketMs) {
    throw new ApiError(
      "time_range_invalid",
      `A range by ${granularity} spans at most ${maxDays} days (after rounding to whole ${granularity}s).`,
      { fields: { time_to: [`at most ${maxDays} days after time_from`] } },
    );
  }
  return { from, to, bucketMs };
}
