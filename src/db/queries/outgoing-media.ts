import { type SQL, sql } from "drizzle-orm";
import { formatTimestamp } from "../../lib/time";
import type { Db } from "../client";
import type { CampaignRow, MessageStatus } from "../schema";
import { statusIn } from "./status-in";

/*
 * The stored copies of outgoing media (src/media/store.ts): one per send, shared by its messages
 * (`messages.media_key`), or one per campaign (`campaigns.media_key`, copied to each message the
 * campaign makes). The retention sweep (src/messages/media-retention.ts) finds the copies no
 * message can still need and forgets them here once their objects are deleted.
 */

/** What decides whether a copy may go; the caller states the rules (src/moves/ owns them). */
export interface OutgoingMediaRule {
  /** Epoch ms: a copy whose messages were all due before it goes even if some still wait. */
  before: number;
  /** The statuses of a message that may still be sent (it still needs the copy). */
  waiting: readonly MessageStatus[];
  /** The statuses of a campaign that makes and sends no more messages. */
  finished: readonly CampaignRow["status"][];
}

/** The campaigns (in scope as `campaigns`) whose copy may go under `rule`. */
function campaignMediaExpired(rule: OutgoingMediaRule): SQL {
  return sql`campaigns.media_key IS NOT NULL AND (
    (${statusIn("campaigns.status", rule.finished)} AND NOT EXISTS (SELECT 1 FROM messages m
      WHERE m.campaign_id = campaigns.id AND ${statusIn("m.status", rule.waiting)}))
    OR (campaigns.status = 'draft' AND campaigns.created_at < ${rule.before}))`;
}

/**
 * Up to `limit` campaigns whose stored copy no message can still need: the campaign is finished
 * and none of its messages waits, or it is a draft created before `rule.before` (the
 * `campaigns_media` index). @returns `{ id, mediaKey }`, oldest first.
 */
export async function expiredCampaignMedia(
  db: Db,
  rule: OutgoingMediaRule,
  limit: number,
): Promise<{ id: string; mediaKey: string }[]> {
  return db.all<{ id: string; mediaKey: string }>(sql`SELECT id, media_key AS mediaKey FROM campaigns
    WHERE ${campaignMediaExpired(rule)} ORDER BY created_at LIMIT ${limit}`);
}

/**
 * Forgets the stored copy of campaigns `ids` (`media_key` and `media_content_type` become null)
 * where it still may go under `rule`, checked again in the same statement: a draft started since
 * {@link expiredCampaignMedia} read it keeps its copy. The caller deletes the objects after.
 * @returns the ids forgotten.
 */
export async function forgetCampaignMedia(db: Db, ids: string[], rule: OutgoingMediaRule): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.all<{
    id: string;
  }>(sql`UPDATE campaigns SET media_key = NULL, media_content_type = NULL
    WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND ${campaignMediaExpired(rule)}
    RETURNING id`);
  return rows.map((row) => row.id);
}

/**
 * Up to `limit` stored copies of outgoing messages that no message can still need (the
 * `messages_outgoing_media` index): no campaign holds the key any more, and none of its messages
 * waits or the last of them was due (`scheduled_at`, else `created_at`) before `rule.before`.
 * @returns the copies' `MEDIA` keys.
 */
export async function expiredMessageMedia(db: Db, rule: OutgoingMediaRule, limit: number): Promise<string[]> {
  const rows = await db.all<{ key: string }>(sql`SELECT media_key AS key FROM messages
    WHERE direction = 'outgoing' AND media_key IS NOT NULL
    GROUP BY media_key
    HAVING (sum(${statusIn("status", rule.waiting)}) = 0 OR max(coalesce(scheduled_at, created_at)) < ${rule.before})
      AND NOT EXISTS (SELECT 1 FROM campaigns c WHERE c.media_key = messages.media_key)
    LIMIT ${limit}`);
  return rows.map((row) => row.key);
}

/**
 * Records on up to `limit` outgoing messages that use one of `keys` that their copy was deleted:
 * `media_key` and `media_content_type` become null and `metadata.media_expired_at` is `at`
 * (epoch ms, stored as an API timestamp); `media_url` stays the caller's URL. A message that
 * still waits is then sent without a copy, which the gateways refuse (`media_not_stored`,
 * src/gateways/media.ts). @returns how many messages it changed (fewer than `limit`: none left).
 */
export async function recordExpiredOutgoingMedia(
  db: Db,
  keys: string[],
  at: number,
  limit: number,
): Promise<number> {
  if (keys.length === 0) return 0;
  const result = await db.run(sql`UPDATE messages SET media_key = NULL, media_content_type = NULL,
      metadata = json_set(metadata, '$.media_expired_at', ${formatTimestamp(at)}), updated_at = ${at}
    WHERE id IN (SELECT id FROM messages WHERE direction = 'outgoing'
      AND media_key IN (SELECT value FROM json_each(${JSON.stringify(keys)})) LIMIT ${limit})`);
  return result.meta.changes;
}
