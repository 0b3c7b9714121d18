import type { Db } from "../db/client";
import { expiredMediaBatch, recordExpiredMedia } from "../db/queries/incoming-media";

/** Messages whose media one step of the sweep deletes (R2 deletes up to 1,000 keys per call). */
const SWEEP_BATCH = 200;

/** Most steps of one sweep: 10,000 media an hour; what is left waits for the next hour. */
const SWEEP_MAX_BATCHES = 50;

const DAY_MS = 86_400_000;

/**
 * The hourly retention sweep of incoming media (README, Incoming media): deletes from `bucket`
 * the kept media of incoming messages created more than `retentionDays` (`MEDIA_RETENTION_DAYS`)
 * days before `now` (epoch ms), and records it on their rows (src/db/queries/incoming-media.ts
 * `recordExpiredMedia`: `media_key`, `media_url` null, `metadata.media_expired_at`). Objects
 * are deleted before the rows change, so a failure leaves rows that the next sweep takes again
 * (deleting a missing object is no error). @returns how many messages' media were deleted.
 * @throws Error when R2 or D1 refuses (the cron job's log; the next hour tries again).
 */
export async function sweepIncomingMedia(
  bucket: R2Bucket,
  db: Db,
  now: number,
  retentionDays: number,
): Promise<number> {
  const before = now - retentionDays * DAY_MS;
  let deleted = 0;
  for (let step = 0; step < SWEEP_MAX_BATCHES; step++) {
    const batch = await expiredMediaBatch(db, before, SWEEP_BATCH);
    if (batch.length === 0) break;
    await bucket.delete(batch.map((row) => row.mediaKey));
    await recordExpiredMedia(
      db,
      batch.map((row) => row.id),
      now,
    );
    deleted += batch.length;
    if (batch.length < SWEEP_BATCH) break;
  }
  return deleted;
}
