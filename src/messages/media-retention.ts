import type { Db } from "../db/client";
import { expiredMediaBatch, recordExpiredMedia } from "../db/queries/incoming-media";
import {
  expiredCampaignMedia,
  expiredMessageMedia,
  forgetCampaignMedia,
  recordExpiredOutgoingMedia,
} from "../db/queries/outgoing-media";
import { FINISHED_CAMPAIGN_STATUSES } from "../moves/campaign";
import { WAITING_STATUSES } from "../moves/message";

/** Messages whose media one step of the sweep deletes (R2 deletes up to 1,000 keys per call). */
const SWEEP_BATCH = 200;

/** Most steps of one sweep: 10,000 media an hour; what is left waits for the next hour. */
const SWEEP_MAX_BATCHES = 50;

const DAY_MS = 86_400_000;

/**
 * The hourly retention sweep of incoming media (docs/messages.md, Incoming media): deletes from `bucket`
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

/** Stored copies one step of the outgoing sweep takes (R2 deletes up to 1,000 keys per call). */
const COPY_BATCH = 100;

/** Messages one step of the outgoing sweep marks: a campaign's copy may be shared by 100,000. */
const MESSAGE_BATCH = 1_000;

/** What one run of {@link sweepOutgoingMedia} did. */
export interface OutgoingSweep {
  /** Campaigns whose stored copy it deleted. */
  campaigns: number;
  /** Outgoing messages it marked `metadata.media_expired_at` (their copy deleted). */
  messages: number;
}

/**
 * The hourly retention sweep of outgoing media (docs/security.md, Media): deletes from `bucket`
 * each stored copy of a send or campaign (src/media/store.ts) that no message can still need, and
 * records it. A copy may go once none of its messages waits (`queued` or `scheduled`, the
 * statuses a send starts from, src/moves/message.ts: failover and retries move only those, so a
 * sent, delivered, read or failed message never needs its copy again) and its campaign, if any,
 * is `completed` or `cancelled`; or, whatever still waits, `retentionDays`
 * (`MEDIA_RETENTION_DAYS`) after the last of a send's messages was due (a draft campaign: after
 * its creation). A scheduled, running or paused campaign keeps its copy until it is finished,
 * however long that takes.
 *
 * First the campaigns: their key is forgotten on the campaign (checked again as it is written, so
 * a draft started meanwhile keeps it), then the objects deleted. Then the messages: the objects
 * are deleted, then their rows marked (`media_key` and `media_content_type` null,
 * `metadata.media_expired_at` = `now`, `media_url` kept), {@link MESSAGE_BATCH} rows a step, so a
 * failure leaves rows the next run takes again (deleting a missing object is no error). At most
 * {@link SWEEP_MAX_BATCHES} steps of each kind a run; what is left waits for the next hour.
 * @param now epoch ms. @throws Error when R2 or D1 refuses (the cron job's log; the next hour
 *   tries again).
 */
export async function sweepOutgoingMedia(
  bucket: R2Bucket,
  db: Db,
  now: number,
  retentionDays: number,
): Promise<OutgoingSweep> {
  const rule = {
    before: now - retentionDays * DAY_MS,
    waiting: WAITING_STATUSES,
    finished: FINISHED_CAMPAIGN_STATUSES,
  };
  const done: OutgoingSweep = { campaigns: 0, messages: 0 };
  for (let step = 0; step < SWEEP_MAX_BATCHES; step++) {
    const batch = await expiredCampaignMedia(db, rule, COPY_BATCH);
    if (batch.length === 0) break;
    const forgotten = new Set(
      await forgetCampaignMedia(
        db,
        batch.map((row) => row.id),
        rule,
      ),
    );
    const keys = batch.filter((row) => forgotten.has(row.id)).map((row) => row.mediaKey);
    if (keys.length > 0) await bucket.delete(keys);
    done.campaigns += keys.length;
    if (batch.length < COPY_BATCH) break;
  }
  for (let step = 0; step < SWEEP_MAX_BATCHES; step++) {
    const keys = await expiredMessageMedia(db, rule, COPY_BATCH);
    if (keys.length === 0) break;
    await bucket.delete(keys);
    const marked = await recordExpiredOutgoingMedia(db, keys, now, MESSAGE_BATCH);
    done.messages += marked;
    if (keys.length < COPY_BATCH && marked < MESSAGE_BATCH) break;
  }
  return done;
}
