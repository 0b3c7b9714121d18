import { readConfig } from "../config";
import { batchSql, type Db, type Statement } from "../db/client";
import { databaseFor } from "../db/databases";
import { keptMediaStatement, mediaErrorStatement } from "../db/queries/incoming-media";
import { ownIncomingMessage } from "../db/queries/messages";
import { messages } from "../db/schema";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";
import {
  INCOMING_MEDIA_TIMEOUT_MS,
  IncomingMediaError,
  incomingMediaUrl,
  keepIncomingMedia,
} from "../media/incoming";
import type { SessionCore } from "./session-core";

/** Downloads tried for one message's media before its error is recorded. */
export const MEDIA_FETCH_TRIES = 3;

/** Milliseconds before the second and the third try: 1 minute, then 5. */
export const MEDIA_RETRY_MS = [60_000, 5 * 60_000] as const;

/**
 * The media of a session's incoming messages, kept in R2 (docs/messages.md, Incoming media). A message
 * stored with media is {@link note}d: a row of the object's `incoming_media` table
 * (storage-schema.ts) (what to download, by the gateway's `ref`) and a `media_fetch` deadline now. The download runs from the
 * alarm, off the gateway's webhook call (a 100 MB file may take a minute, longer than a
 * gateway waits for its webhook's answer), in the object's chain of changes like every other
 * deadline. A message is noted only when it is stored for the first time, and its object key is
 * its id: a redelivered event downloads nothing again.
 *
 * A failed download is tried again {@link MEDIA_RETRY_MS} later, {@link MEDIA_FETCH_TRIES} times
 * in all (once for a permanent failure), then `metadata.media_error` records why.
 */
export class IncomingMediaKeeper {
  constructor(private readonly core: SessionCore) {}

  /** Owes the download of message `messageId`'s media, by `ref`; schedules it now. Call `rearm` after. */
  note(messageId: string, ref: string, mimetype: string | null): void {
    this.core.sql.exec(
      "INSERT INTO incoming_media (message_id, ref, mimetype) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      messageId,
      ref,
      mimetype,
    );
    this.core.deadlines.schedule("media_fetch", messageId, Date.now());
  }

  /**
   * The `media_fetch` deadline of `messageId`: one try of its download. Kept → the message row
   * gets `media_key`, `media_content_type` and its API `media_url`, with a `message.media_kept`
   * event; failed → tried again later, or its error recorded, with a `message.media_failed` event.
   * @throws Error only when D1 refuses the write (the deadline is set again).
   */
  async run(messageId: string): Promise<void> {
    const owed = this.core.sql
      .exec<{ ref: string; mimetype: string | null; tries: number }>(
        "SELECT ref, mimetype, tries FROM incoming_media WHERE message_id = ?",
        messageId,
      )
      .toArray()[0];
    const state = this.core.state();
    if (!owed || !state) return;
    const db = await databaseFor(this.core.env, state.account_id);
    const message = { id: messageId, accountId: state.account_id };
    try {
      const gateway = this.core.gateway();
      if (!gateway.openIncomingMedia)
        throw new IncomingMediaError("not_supported", `${gateway.name} does not download media.`, true);
      const signal = AbortSignal.timeout(INCOMING_MEDIA_TIMEOUT_MS);
      const response = await gateway.openIncomingMedia(state.session_id, owed.ref, signal);
      const kept = await keepIncomingMedia(this.core.env.MEDIA, messageId, response, owed.mimetype);
      const origin = readConfig(this.core.env).publicUrl ?? state.origin;
      await this.record(
        db,
        "message.media_kept",
        message,
        keptMediaStatement(db, {
          ...message,
          key: kept.key,
          contentType: kept.contentType,
          url: incomingMediaUrl(origin, messageId),
          at: Date.now(),
        }),
      );
      this.forget(messageId);
    } catch (error) {
      if (!(error instanceof IncomingMediaError)) throw error;
      const tries = owed.tries + 1;
      const retryMs = MEDIA_RETRY_MS[tries - 1];
      if (!error.permanent && tries < MEDIA_FETCH_TRIES && retryMs !== undefined) {
        this.core.sql.exec("UPDATE incoming_media SET tries = ? WHERE message_id = ?", tries, messageId);
        this.core.deadlines.schedule("media_fetch", messageId, Date.now() + retryMs);
        return;
      }
      const at = Date.now();
      await this.record(
        db,
        "message.media_failed",
        message,
        mediaErrorStatement(db, {
          ...message,
          error: { reason: error.reason, detail: error.message, tries },
          at,
        }),
      );
      this.forget(messageId);
    }
  }

  /**
   * Writes `change` to the message's D1 row with its `type` event (the Message after it, once per
   * message: the event's dedupe key), in one batch, then publishes the event.
   */
  private async record(
    db: Db,
    type: "message.media_kept" | "message.media_failed",
    message: { id: string; accountId: string },
    change: Statement,
  ): Promise<void> {
    const where = ownIncomingMessage(message.id, message.accountId);
    const results = await batchSql(db, [change, eventsForRows(type, messages, where)]);
    await publishEvents(this.core.env, recordedIn(results, [1]));
  }

  private forget(messageId: string): void {
    this.core.sql.exec("DELETE FROM incoming_media WHERE message_id = ?", messageId);
  }
}
