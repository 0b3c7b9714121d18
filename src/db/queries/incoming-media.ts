import { and, eq, inArray, isNotNull, lt, type SQL, sql } from "drizzle-orm";
import { formatTimestamp } from "../../lib/time";
import type { Db } from "../client";
import { messages } from "../schema";

/*
 * The kept media of incoming messages (src/media/incoming.ts): the message row records the R2
 * key and content type once the download is done, the error when it failed, and the time the
 * retention sweep deleted it.
 */

/**
 * The statement that records that incoming message `id` of `accountId` has its media kept under
 * `key`, shown at `url`; `at` is epoch ms. Clears a `metadata.media_error` an earlier try left.
 * Idempotent.
 */
export function keptMediaStatement(
  db: Db,
  input: { id: string; accountId: string; key: string; contentType: string; url: string; at: number },
): SQL {
  return db
    .update(messages)
    .set({
      mediaKey: input.key,
      mediaContentType: input.contentType,
      mediaUrl: input.url,
      metadata: sql`json_remove(${messages.metadata}, '$.media_error')`,
      updatedAt: input.at,
    })
    .where(
      and(
        eq(messages.id, input.id),
        eq(messages.accountId, input.accountId),
        eq(messages.direction, "incoming"),
      ),
    )
    .getSQL();
}

/**
 * The statement that records in `metadata.media_error` of incoming message `id` why its media
 * could not be kept: `{ reason, detail, tries, at }` (`at` given in epoch ms, stored as an API
 * timestamp).
 */
export function mediaErrorStatement(
  db: Db,
  input: {
    id: string;
    accountId: string;
    error: { reason: string; detail: string; tries: number };
    at: number;
  },
): SQL {
  return db
    .update(messages)
    .set({
      metadata: sql`json_set(${messages.metadata}, '$.media_error', json(${JSON.stringify({ ...input.error, at: formatTimestamp(input.at) })}))`,
      updatedAt: input.at,
    })
    .where(
      and(
        eq(messages.id, input.id),
        eq(messages.accountId, input.accountId),
        eq(messages.direction, "incoming"),
      ),
    )
    .getSQL();
}

/**
 * Up to `limit` incoming messages created before `before` (epoch ms) whose media is kept, oldest
 * first (the `messages_incoming_media` index): `{ id, mediaKey }`.
 */
export async function expiredMediaBatch(
  db: Db,
  before: number,
  limit: number,
): Promise<{ id: string; mediaKey: string }[]> {
  const rows = await db
    .select({ id: messages.id, mediaKey: messages.mediaKey })
    .from(messages)
    .where(
      and(eq(messages.direction, "incoming"), isNotNull(messages.mediaKey), lt(messages.createdAt, before)),
    )
    .orderBy(messages.createdAt)
    .limit(limit);
  return rows.flatMap((row) => (row.mediaKey ? [{ id: row.id, mediaKey: row.mediaKey }] : []));
}

/**
 * Forgets the kept media of messages `ids` (their objects deleted): `media_key`,
 * `media_content_type` and `media_url` become null and `metadata.media_expired_at` is `at`
 * (given in epoch ms, stored as an API timestamp).
 */
export async function recordExpiredMedia(db: Db, ids: string[], at: number): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(messages)
    .set({
      mediaKey: null,
      mediaContentType: null,
      mediaUrl: null,
      metadata: sql`json_set(${messages.metadata}, '$.media_expired_at', ${formatTimestamp(at)})`,
      updatedAt: at,
    })
    .where(and(inArray(messages.id, ids), eq(messages.direction, "incoming")));
}
