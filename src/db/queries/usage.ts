import { sql } from "drizzle-orm";
import type { Db } from "../client";
import type { AccountUsageRow } from "../schema";

/** The counters of one bucket and message type; `start` is the bucket's start (epoch ms). */
export type UsageBucketRow = Omit<AccountUsageRow, "accountId" | "hour"> & { start: number };

/**
 * The account's usage counters (table `account_usage`) summed into buckets of `bucketMs` (an hour
 * or a day: a multiple of the hour that divides the day, so buckets start at UTC boundaries) for
 * the hours in `[from, to)` (epoch ms), per bucket and message type, oldest first. Only buckets
 * and types with messages appear. Reads the counter rows alone (its primary key `(account_id,
 * hour, type)`): at most 24 per day and type, whatever the number of messages.
 */
export async function usageBuckets(
  db: Db,
  accountId: string,
  range: { from: number; to: number; bucketMs: number },
): Promise<UsageBucketRow[]> {
  return db.all<UsageBucketRow>(sql`SELECT hour - hour % ${range.bucketMs} AS start, type,
      SUM(queued) AS queued, SUM(scheduled) AS scheduled, SUM(sent) AS sent, SUM(delivered) AS delivered,
      SUM("read") AS "read", SUM(failed) AS failed, SUM(cost) AS cost, SUM(refunded) AS refunded
    FROM account_usage
    WHERE account_id = ${accountId} AND hour >= ${range.from} AND hour < ${range.to}
    GROUP BY start, type ORDER BY start, type`);
}
