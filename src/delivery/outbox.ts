import type { MediaRef, QuotedMessage, TypingOutcome } from "../gateways/gateway";
import type { DispatchRequest } from "../messages/dispatch-request";
import type { SettledBy } from "../moves/message";

/** A message waiting in (or done with) a session's outbox. */
export type OutboxItem = {
  id: string;
  account_id: string;
  to_number: string;
  type: DispatchRequest["type"];
  content: string | null;
  media_url: string | null;
  /** The stored copy of the media (its `MEDIA` key and content type), or null. */
  media_key: string | null;
  media_content_type: string | null;
  delay_between: number;
  priority: number;
  accepted_at: number;
  send_ref: string;
  send_index: number;
  not_before: number;
  /** 1 while the message is still `scheduled` in D1. */
  scheduled: number;
  /**
   * `unknown`: the last gateway call may or may not have sent it; it waits to be settled by
   * asking the gateway (Settlement.settle) and is neither resent nor failed until then.
   */
  state: "pending" | "sending" | "unknown" | "sent" | "failed" | "moved";
  attempts: number;
  /** When the first gateway call for it began (epoch ms): the lookup's lower bound and window start. */
  first_attempt_at: number | null;
  /** When the last gateway call for it began (epoch ms). */
  attempted_at: number | null;
  /** How a `sent` entry's outcome became known (see SettledBy). */
  settled_by: SettledBy | null;
  next_attempt_at: number;
  expires_at: number;
  done_at: number | null;
  provider_message_id: string | null;
  /** Why a `failed` entry failed (the message's `reason`). */
  reason: string | null;
  /** 0 while a `sent` or `failed` outcome is not yet written through to D1 (see Dispatcher.flush). */
  synced: number;
  /** The campaign it belongs to, or null. */
  campaign_id: string | null;
  /** JSON of the campaign's send window (SendWindow), or null. */
  send_window: string | null;
  /** How long "typing…" shows before the first attempt (ms; 0: none). See Dispatcher.run. */
  typing_ms: number;
  /** When its typing began (epoch ms), or null while it has not. */
  typing_at: number | null;
  /** JSON of the typing call's outcome (TypingOutcome), or null while it has not answered. */
  typing: string | null;
  /** JSON of the quoted (or reacted) message (QuotedMessage), or null. */
  quoted: string | null;
};

/** Why a campaign's entries are held: paused (they wait) or cancelled (they fail on arrival). */
export type CampaignHold = "paused" | "cancelled";

/** Entries no hold keeps back: not of a campaign, or of one that is neither paused nor cancelled. */
const NOT_HELD = "(campaign_id IS NULL OR campaign_id NOT IN (SELECT campaign_id FROM campaign_holds))";

/** How long sent and failed entries are kept, so a redelivered queue message is recognised. */
export const OUTBOX_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * The session object's queue of messages to send, in its SQLite storage. Entries are keyed by
 * message id and kept after sending, so a queue message delivered twice is ignored (at-least-once
 * delivery must never send twice). An entry's content is dropped once its outcome is known: a
 * one-time code's text is held only while the message waits for the gateway.
 *
 * Outcomes (sent, failed) are owed to D1 until written there: `synced = 0` marks them, and the
 * dispatcher's flush writes them, retried from the alarm until D1 has them.
 *
 * A campaign's entries can be held (`campaign_holds`): a paused campaign's wait, a cancelled
 * one's fail. They never expire (a campaign ends by completing, being cancelled, or moving its
 * messages to another session, src/delivery/failover.ts); a `moved` entry went to another session.
 *
 * Its tables (`outbox`, `campaign_holds`, `outbox_pacing`) are created by
 * sessions/storage-schema.ts with the object's other tables.
 */
export class Outbox {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Recovers from a stop (on every wake of the object): an entry left `sending` means the object
   * stopped during a gateway call, whose outcome is therefore `unknown`: it is settled by asking
   * the gateway before anything else happens to it (Settlement.settle).
   */
  recover(): void {
    this.sql.exec("UPDATE outbox SET state = 'unknown', next_attempt_at = 0 WHERE state = 'sending'");
  }

  /** Adds new entries; ids already present (redeliveries) are ignored. Returns how many were new. */
  add(requests: DispatchRequest[], ttlMs: number): number {
    let added = 0;
    for (const r of requests) {
      const notBefore = r.notBefore ?? 0;
      const cursor = this.sql.exec(
        `INSERT INTO outbox (id, account_id, to_number, type, content, media_url, media_key, media_content_type,
           delay_between, priority, accepted_at, send_ref, send_index, not_before, scheduled, state, expires_at,
           campaign_id, send_window, typing_ms, quoted)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
        r.id,
        r.accountId,
        r.to,
        r.type,
        r.content,
        r.mediaUrl,
        r.mediaKey ?? null,
        r.mediaContentType ?? null,
        r.delayBetween,
        r.priority,
        r.acceptedAt,
        r.sendRef,
        r.sendIndex,
        notBefore,
        r.notBefore === null ? 0 : 1,
        Math.max(r.acceptedAt, notBefore) + ttlMs,
        r.campaignId ?? null,
        r.sendWindow ? JSON.stringify(r.sendWindow) : null,
        r.typingMs ?? 0,
        r.quoted ? JSON.stringify(r.quoted) : null,
      );
      added += cursor.rowsWritten > 0 ? 1 : 0;
    }
    return added;
  }

  get(id: string): OutboxItem | null {
    return this.sql.exec<OutboxItem>("SELECT * FROM outbox WHERE id = ?", id).toArray()[0] ?? null;
  }

  /** The next entry to send at `now`: by lane (DispatchRequest `priority`), then in order of acceptance. */
  next(now: number): OutboxItem | null {
    return (
      this.sql
        .exec<OutboxItem>(
          `SELECT * FROM outbox WHERE state = 'pending' AND not_before <= ? AND next_attempt_at <= ? AND ${NOT_HELD}
           ORDER BY priority, accepted_at, send_ref, send_index LIMIT 1`,
          now,
          now,
        )
        .toArray()[0] ?? null
    );
  }

  /**
   * The earliest time a pending entry becomes sendable (scheduled time or retry backoff) or an
   * unknown outcome is to be asked about.
   */
  nextDueAt(): number | null {
    const row = this.sql
      .exec<{ due: number | null }>(
        `SELECT MIN(due) AS due FROM (
           SELECT MAX(not_before, next_attempt_at) AS due FROM outbox WHERE state = 'pending' AND ${NOT_HELD}
           UNION ALL SELECT next_attempt_at FROM outbox WHERE state = 'unknown')`,
      )
      .toArray()[0];
    return row?.due ?? null;
  }

  /** Entries whose unknown outcome is due to be asked about at `now`, oldest first. */
  unknownDue(now: number): OutboxItem[] {
    return this.sql
      .exec<OutboxItem>(
        "SELECT * FROM outbox WHERE state = 'unknown' AND next_attempt_at <= ? ORDER BY next_attempt_at",
        now,
      )
      .toArray();
  }

  /** Every entry whose outcome is unknown. */
  unsettled(): OutboxItem[] {
    return this.sql.exec<OutboxItem>("SELECT * FROM outbox WHERE state = 'unknown'").toArray();
  }

  /** The last call for `id` may have sent it: it waits to be asked about at `askAt` (epoch ms). */
  markUnknown(id: string, askAt: number): void {
    this.sql.exec("UPDATE outbox SET state = 'unknown', next_attempt_at = ? WHERE id = ?", askAt, id);
  }

  /** Scheduled entries whose time has come (still `scheduled` here until {@link markUnscheduled}). */
  dueScheduled(now: number): string[] {
    return this.sql
      .exec<{ id: string }>(
        "SELECT id FROM outbox WHERE state = 'pending' AND scheduled = 1 AND not_before <= ?",
        now,
      )
      .toArray()
      .map((r) => r.id);
  }

  /** D1 took these entries' move from `scheduled` to `queued`. */
  markUnscheduled(ids: string[]): void {
    for (const id of ids) this.sql.exec("UPDATE outbox SET scheduled = 0 WHERE id = ?", id);
  }

  /** Pending entries past their time to live at `now` (campaign entries never expire, see the class). */
  expired(now: number): OutboxItem[] {
    return this.sql
      .exec<OutboxItem>(
        "SELECT * FROM outbox WHERE state = 'pending' AND campaign_id IS NULL AND expires_at <= ?",
        now,
      )
      .toArray();
  }

  /** The earliest expiry among pending entries. */
  nextExpiryAt(): number | null {
    return (
      this.sql
        .exec<{ at: number | null }>(
          "SELECT MIN(expires_at) AS at FROM outbox WHERE state = 'pending' AND campaign_id IS NULL",
        )
        .toArray()[0]?.at ?? null
    );
  }

  /** Every pending entry (to fail them when the session is banned or deleted). */
  pending(): OutboxItem[] {
    return this.sql.exec<OutboxItem>("SELECT * FROM outbox WHERE state IN ('pending', 'sending')").toArray();
  }

  /** Holds campaign `campaignId`'s entries (see {@link CampaignHold}); holding again replaces the hold. */
  hold(campaignId: string, hold: CampaignHold): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO campaign_holds (campaign_id, hold) VALUES (?, ?)",
      campaignId,
      hold,
    );
  }

  /** Lifts a pause: the campaign's entries may be sent again. A cancel is never lifted. */
  release(campaignId: string): void {
    this.sql.exec("DELETE FROM campaign_holds WHERE campaign_id = ? AND hold = 'paused'", campaignId);
  }

  /** Whether entry `id` may be sent now as far as holds go (its campaign is neither paused nor cancelled). */
  unheld(id: string): boolean {
    return this.sql.exec(`SELECT 1 FROM outbox WHERE id = ? AND ${NOT_HELD}`, id).toArray().length > 0;
  }

  /** Pending entries of cancelled campaigns (they fail). */
  cancelledPending(): OutboxItem[] {
    return this.sql
      .exec<OutboxItem>(
        `SELECT * FROM outbox WHERE state IN ('pending', 'sending') AND campaign_id IN
           (SELECT campaign_id FROM campaign_holds WHERE hold = 'cancelled')`,
      )
      .toArray();
  }

  /** Whether campaign `campaignId` still has entries waiting here. */
  holdsPending(campaignId: string): boolean {
    return (
      this.sql
        .exec(
          "SELECT 1 FROM outbox WHERE campaign_id = ? AND state IN ('pending', 'sending', 'unknown') LIMIT 1",
          campaignId,
        )
        .toArray().length > 0
    );
  }

  /** Pending campaign entries, whatever their hold (to move them to another session). */
  campaignPending(): OutboxItem[] {
    return this.sql
      .exec<OutboxItem>(
        "SELECT * FROM outbox WHERE state IN ('pending', 'sending') AND campaign_id IS NOT NULL",
      )
      .toArray();
  }

  /** Keeps campaign `campaignId`'s pending entries back until `until` (epoch ms): its send window is shut. */
  deferCampaign(campaignId: string, until: number): void {
    this.sql.exec(
      "UPDATE outbox SET not_before = MAX(not_before, ?) WHERE campaign_id = ? AND state = 'pending'",
      until,
      campaignId,
    );
  }

  /**
   * Campaign entries deferred past `now` (by {@link deferCampaign}) become due at `now`; a
   * scheduled entry keeps its time. An entry whose campaign's send window is shut is deferred again
   * by the next run.
   */
  releaseCampaigns(now: number): void {
    this.sql.exec(
      "UPDATE outbox SET not_before = ? WHERE campaign_id IS NOT NULL AND state = 'pending' AND scheduled = 0 AND not_before > ?",
      now,
      now,
    );
  }

  /** Entries now another session's to send (campaign failover): done here, nothing owed to D1. */
  markMoved(ids: string[]): void {
    for (const id of ids)
      this.sql.exec(
        "UPDATE outbox SET state = 'moved', done_at = ?, content = NULL WHERE id = ? AND state IN ('pending', 'sending')",
        Date.now(),
        id,
      );
  }

  /** A gateway call for `id` begins at `at` (epoch ms). */
  markSending(id: string, at: number): void {
    this.sql.exec(
      `UPDATE outbox SET state = 'sending', attempts = attempts + 1, attempted_at = ?,
         first_attempt_at = COALESCE(first_attempt_at, ?) WHERE id = ?`,
      at,
      at,
      id,
    );
  }

  /**
   * Entry `id`'s typing began at `at` (epoch ms); `outcome` is what the gateway answered, or null
   * while the call is under way (a stop meanwhile does not start it again).
   */
  markTyping(id: string, at: number, outcome: TypingOutcome | null): void {
    this.sql.exec(
      "UPDATE outbox SET typing_at = ?, typing = ? WHERE id = ?",
      at,
      outcome && JSON.stringify(outcome),
      id,
    );
  }

  markRetry(id: string, nextAttemptAt: number): void {
    this.sql.exec("UPDATE outbox SET state = 'pending', next_attempt_at = ? WHERE id = ?", nextAttemptAt, id);
  }

  /**
   * The gateway holds the entry since `at`, as its `answer` to the send, a `lookup` or a receipt
   * (`status_webhook`) showed; D1 learns it at the next flush.
   */
  markSent(id: string, at: number, providerMessageId: string, settledBy: SettledBy = "answer"): void {
    this.sql.exec(
      `UPDATE outbox SET state = 'sent', done_at = ?, provider_message_id = ?, settled_by = ?, synced = 0,
         content = NULL WHERE id = ?`,
      at,
      providerMessageId,
      settledBy,
      id,
    );
  }

  /** Entries that will not be sent, with the reason; D1 learns it (and refunds) at the next flush. */
  markFailed(ids: string[], at: number, reason: string): void {
    for (const id of ids)
      this.sql.exec(
        `UPDATE outbox SET state = 'failed', done_at = ?, reason = ?, synced = 0, content = NULL
         WHERE id = ? AND state IN ('pending', 'sending', 'unknown')`,
        at,
        reason,
        id,
      );
  }

  /** Sent and failed entries not yet written through to D1, oldest first. */
  unsynced(limit: number): OutboxItem[] {
    return this.sql
      .exec<OutboxItem>("SELECT * FROM outbox WHERE synced = 0 ORDER BY done_at LIMIT ?", limit)
      .toArray();
  }

  unsyncedCount(): number {
    return (
      this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox WHERE synced = 0").toArray()[0]?.n ?? 0
    );
  }

  markSynced(ids: string[]): void {
    for (const id of ids) this.sql.exec("UPDATE outbox SET synced = 1 WHERE id = ?", id);
  }

  /**
   * The pacing reference (epoch ms; 0 if never): when the session's last gateway call ended, or,
   * while the gateway throttles the session, the end of that pause ({@link pauseUntil}).
   */
  lastCallAt(): number {
    return (
      this.sql.exec<{ last_call_at: number }>("SELECT last_call_at FROM outbox_pacing").toArray()[0]
        ?.last_call_at ?? 0
    );
  }

  recordCall(at: number): void {
    this.sql.exec("INSERT OR REPLACE INTO outbox_pacing (id, last_call_at) VALUES (1, ?)", at);
  }

  /** The gateway throttled the session: no call before `until` (epoch ms; never moves back). */
  pauseUntil(until: number): void {
    this.sql.exec(
      `INSERT INTO outbox_pacing (id, last_call_at) VALUES (1, ?)
       ON CONFLICT (id) DO UPDATE SET last_call_at = MAX(last_call_at, excluded.last_call_at)`,
      until,
    );
  }

  /** Forgets finished entries older than {@link OUTBOX_RETENTION_MS}. */
  purge(now: number): void {
    this.sql.exec(
      "DELETE FROM outbox WHERE state IN ('sent', 'failed', 'moved') AND done_at < ?",
      now - OUTBOX_RETENTION_MS,
    );
  }
}

/** The stored copy of an entry's media (src/media/), or null for a text or an entry queued without one. */
/** The message an entry quotes or reacts to, as the gateway knows it, or null. */
export function quotedOf(item: OutboxItem): QuotedMessage | null {
  return item.quoted ? (JSON.parse(item.quoted) as QuotedMessage) : null;
}

export function mediaOf(item: OutboxItem): MediaRef | null {
  return item.media_key && item.media_content_type
    ? { key: item.media_key, contentType: item.media_content_type }
    : null;
}
