import { readConfig } from "../config";
import { databaseFor } from "../db/databases";
import { lastIncomingMessageId } from "../db/queries/messages";
import { clientMessageIdOf } from "../gateways/client-id";
import type { ChatGateway, SendOutcome, TypingOutcome } from "../gateways/gateway";
import { log } from "../lib/log";
import { redactReason } from "../lib/redact";
import { windowOpensAt } from "../lib/send-window";
import { coldContactLimit } from "../lib/session-health";
import type { DispatchRequest } from "../messages/dispatch-request";
import { applyMoves } from "../moves/apply";
import { failMoves, type MessageMove, type SentTyping } from "../moves/message";
import { failover } from "./failover";
import type { DispatchHost } from "./host";
import { mediaOf, type OutboxItem, quotedOf } from "./outbox";
import { receiptMoves } from "./receipts";
import { MAX_SEND_ATTEMPTS, minCallGapMs, retryDelayMs, throttleDelayMs } from "./retry";
import { noteAttempt, Settlement } from "./settlement";

/** Longest a limited session holds its campaign messages before it looks at its health again. */
const LIMIT_RECHECK_MS = 60_000;
/** Longest pacing gap a run waits out in-line; longer gaps go through the alarm. */
const INLINE_WAIT_MS = 5_000;
/**
 * How long one run may last before it hands over to a fresh alarm. Deadlines that fall due
 * meanwhile (acks, QR, expiry) run in the pacing gaps and after each flush, not only between runs.
 */
const RUN_MS = 30_000;
/**
 * Sent outcomes written to D1 per batch. Writing each one at once would hold the next gateway
 * call for a D1 round trip and fill D1's single writer with small writes; instead they are written
 * in batches, during pacing gaps, and before the run ends or any ack is applied. A campaign step
 * hands each session this many at once (src/campaigns/materialise.ts, STEP_PER_SESSION).
 */
const FLUSH_BATCH = 100;
/** How soon the alarm tries again to write outcomes D1 refused (an outage, a failed batch). */
export const SYNC_RETRY_MS = 15_000;
/**
 * How long outcomes left when a run ends may wait to be written with the next ones: a session fed
 * a few messages at a time by the queue writes them in one batch, not one per hand-over (D1 is one
 * writer for the deployment: its statements are the fan-out's scarce resource).
 */
const FLUSH_COALESCE_MS = 500;
/**
 * The fan-out end of a session: takes messages into the outbox and sends them through the
 * gateway one at a time, paced, retried and, when they cannot be sent, failed and refunded.
 * Every outcome is recorded in the outbox first and then written to D1 ({@link flush}), so none
 * is lost when D1 refuses a write or the object stops.
 */
export class Dispatcher {
  /** True while a run is in progress (one at a time per object). */
  private running = false;
  /** Settles the sends whose outcome is unknown (by lookups, and by receipts the host hands it). */
  readonly settlement: Settlement;

  constructor(
    private readonly host: DispatchHost,
    private readonly env: Env,
  ) {
    this.settlement = new Settlement(host, env, {
      fail: (items, reason) => this.fail(items, reason),
      failCancelled: () => this.failCancelled(),
      sentAt: (id, at) => this.scheduleOwnReceipts(this.host.gateway(), id, at),
    });
  }

  /**
   * Adds queue messages to the outbox (known ids are ignored) and schedules a run and their
   * expiry. Call `deadlines.rearm()` after. @returns how many were new.
   */
  accept(requests: DispatchRequest[], now: number): number {
    const added = this.host.outbox.add(requests, readConfig(this.env).MESSAGE_TTL_SECONDS * 1000);
    if (added > 0) {
      this.host.deadlines.schedule("dispatch", "", now);
      this.scheduleExpiry();
    }
    return added;
  }

  /**
   * The network no longer limits the session's new chats: the campaign messages it held for the
   * limit (see {@link run}) may go at once. Call `deadlines.rearm()` after.
   */
  limitLifted(now: number): void {
    this.host.outbox.releaseCampaigns(now);
    this.wake(now);
  }

  /** Schedules a run when messages wait (the session just became connected). */
  wake(now: number): void {
    if (this.host.outbox.nextDueAt() !== null) this.host.deadlines.schedule("dispatch", "", now);
  }

  /**
   * Sends due outbox entries while the session is connected, in the outbox's order (one-time
   * codes first, then by acceptance), each gateway call starting at least the message's
   * `delay_between`, and at least `1000 / maxPerSecond` ms for a gateway that sets a rate
   * (ChatGateway `maxPerSecond`: a Cloud API number's throughput), after the previous call ended
   * (or after a pause the gateway's throttling set, Outbox.pauseUntil). `horizon` is the logical
   * now for scheduled times and retry backoff (see Deadlines); the gaps are measured on the real clock.
   */
  async run(horizon: number): Promise<void> {
    if (this.running) return;
    this.running = true;
    const { outbox, deadlines } = this.host;
    const startedAt = Date.now();
    /** The gateway's own gap between calls (ms), read once a run (see {@link minCallGapMs}). */
    let gatewayGapMs: number | null = null;
    try {
      // Every pass starts by checking the session: it may have gone while the last pass awaited.
      for (;;) {
        const session = this.host.session();
        if (session?.status !== "connected") return;
        gatewayGapMs ??= minCallGapMs(this.host.gateway().maxPerSecond);
        const now = Math.max(Date.now(), horizon);
        // Scheduled messages whose time came are `queued` in D1 before they are sent; while D1
        // refuses that write, they stay scheduled here and the run ends (a retry is set).
        const due = outbox.dueScheduled(now);
        if (due.length > 0) {
          if (!(await this.writeDue(due))) return;
          continue;
        }
        const unsettled = outbox.unknownDue(now);
        if (unsettled.length > 0) {
          await this.settlement.settle(unsettled, now);
          continue;
        }
        const item = outbox.next(now);
        if (!item) {
          const wake = outbox.nextDueAt();
          if (wake !== null) deadlines.schedule("dispatch", "", wake);
          return;
        }
        // A campaign's send window is shut: its entries wait for the window's next start.
        const opensAt = item.send_window ? windowOpensAt(JSON.parse(item.send_window), now) : now;
        if (item.campaign_id && opensAt > now) {
          outbox.deferCampaign(item.campaign_id, opensAt);
          continue;
        }
        // The network limits the session's new chats (docs/sessions.md, Session health): a campaign hands
        // it nothing until the limit ends, its messages held here when no other session took them.
        const limit = item.campaign_id ? coldContactLimit(session.health, now) : null;
        if (item.campaign_id && limit) {
          outbox.deferCampaign(item.campaign_id, limitRecheckAt(limit.until, now));
          continue;
        }
        let readyAt = outbox.lastCallAt() + Math.max(item.delay_between, gatewayGapMs);
        // "Typing…" before the first attempt (docs/messages.md, Typing before a send): it starts `typing_ms`
        // before the paced time (never before the last call ended) and the send waits for it.
        if (item.typing_ms > 0 && item.attempts === 0) {
          if (item.typing_at === null) {
            const typeAt = Math.max(readyAt - item.typing_ms, outbox.lastCallAt());
            if (typeAt <= Date.now()) {
              await this.startTyping(item);
              continue;
            }
            readyAt = typeAt;
          } else if (item.typing_at + item.typing_ms > now) {
            // Waited out through the alarm, on the logical clock: a driven alarm sends at once.
            deadlines.schedule("dispatch", "", item.typing_at + item.typing_ms);
            return;
          }
        }
        const wait = readyAt - Date.now();
        // Pacing gaps are for bookkeeping: write outcomes, run due deadlines, then look again.
        if (wait > 0 && outbox.unsyncedCount() > 0) {
          // D1 refusing writes ends the run; the `sync` deadline's alarm starts the next one.
          if (!(await this.flush())) return;
          continue;
        }
        if (wait > 0 && deadlines.anyDue(Date.now())) {
          await this.host.runDueDeadlines();
          continue;
        }
        if (wait > INLINE_WAIT_MS || Date.now() - startedAt > RUN_MS) {
          deadlines.schedule("dispatch", "", Math.max(readyAt, Date.now()));
          return;
        }
        if (wait > 0) await scheduler.wait(wait);
        else {
          await this.host.exclusive(() => this.sendOne(item.id));
          if (outbox.unsyncedCount() >= FLUSH_BATCH) {
            if (!(await this.flush())) return;
            if (deadlines.anyDue(Date.now())) await this.host.runDueDeadlines();
          }
        }
      }
    } finally {
      this.running = false;
      // A session deleted during the run took the outbox with it: nothing is left to write.
      if (this.host.session() !== null) {
        // A full batch goes at once; fewer outcomes wait a moment for more (the `sync` deadline).
        if (outbox.unsyncedCount() >= FLUSH_BATCH) await this.flush();
        else if (outbox.unsyncedCount() > 0) deadlines.schedule("sync", "", Date.now() + FLUSH_COALESCE_MS);
      }
    }
  }

  /**
   * Writes the outcomes not yet in D1 (see {@link FLUSH_BATCH}): sent messages, and failed ones
   * with their refunds, through the message transitions. They wait in the outbox flagged unsynced,
   * so outcomes of an object that stopped are written after its restart; when D1 refuses the
   * write, a `sync` deadline tries again after {@link SYNC_RETRY_MS}, until D1 has them.
   * @returns whether D1 now holds every outcome.
   */
  async flush(): Promise<boolean> {
    const { outbox } = this.host;
    const session = this.host.session();
    if (!session) return true;
    try {
      for (;;) {
        const rows = outbox.unsynced(FLUSH_BATCH);
        if (rows.length === 0) return true;
        // Campaigns these outcomes may have finished: those with nothing left waiting here (a
        // cancel's failures finish none: it cancels).
        const campaignIds = [
          ...new Set(
            rows.flatMap((row) =>
              row.campaign_id && row.reason !== "campaign_cancelled" ? [row.campaign_id] : [],
            ),
          ),
        ].filter((id) => !outbox.holdsPending(id));
        // Receipts kept for these messages apply once their provider ids are in D1: in the same batch.
        const providerIds = rows.flatMap((row) => (row.provider_message_id ? [row.provider_message_id] : []));
        const kept = this.host.receipts.of(providerIds).flatMap((receipt) => receiptMoves(session, receipt));
        await applyMoves(this.env, session.accountId, [...this.movesOf(rows, session.phoneNumber), ...kept], {
          campaignIds,
        });
        outbox.markSynced(rows.map((row) => row.id));
        this.host.receipts.drop(providerIds);
      }
    } catch (error) {
      log.error("outcome_write_failed", { error });
      this.host.deadlines.schedule("sync", "", Date.now() + SYNC_RETRY_MS);
      await this.host.deadlines.rearm();
      return false;
    }
  }

  /**
   * Moves scheduled entries whose time came to `queued` in D1, then here.
   * @returns false when D1 refused (a `dispatch` deadline tries again after {@link SYNC_RETRY_MS}).
   */
  private async writeDue(ids: string[]): Promise<boolean> {
    const session = this.host.session();
    if (!session) return false;
    try {
      await applyMoves(this.env, session.accountId, [{ kind: "due", target: { ids }, at: Date.now() }]);
    } catch (error) {
      log.error("due_write_failed", { error });
      this.host.deadlines.schedule("dispatch", "", Date.now() + SYNC_RETRY_MS);
      return false;
    }
    this.host.outbox.markUnscheduled(ids);
    return true;
  }

  /** Outbox outcomes as message moves: one per sent message, one per failure reason and account. */
  private movesOf(rows: OutboxItem[], fromNumber: string | null): MessageMove[] {
    const gateway = this.host.gateway().name;
    const moves: MessageMove[] = [];
    const failedByReason = new Map<string, { id: string; accountId: string }[]>();
    for (const row of rows) {
      if (row.state === "sent") {
        moves.push({
          kind: "sent",
          id: row.id,
          at: row.done_at ?? Date.now(),
          providerMessageId: row.provider_message_id ?? "",
          fromNumber,
          attempts: row.attempts,
          gateway,
          settledBy: row.settled_by ?? "answer",
          typing: typingOf(row),
        });
      } else {
        const reason = row.reason ?? "failed";
        failedByReason.set(reason, [
          ...(failedByReason.get(reason) ?? []),
          { id: row.id, accountId: row.account_id },
        ]);
      }
    }
    for (const [reason, failed] of failedByReason) moves.push(...failMoves(failed, reason, Date.now()));
    return moves;
  }

  /** Fails waiting messages whose time to live ran out while the session was unavailable. */
  async expire(now: number): Promise<void> {
    const expired = this.host.outbox.expired(now);
    await this.fail(expired, "message_expired");
    this.scheduleExpiry();
  }

  /** Fails every message still waiting (session banned or deleted), with refunds. */
  async failPending(reason: string): Promise<void> {
    await this.fail(this.host.outbox.pending(), reason);
  }

  /** Fails the waiting entries of cancelled campaigns (reason `campaign_cancelled`), with refunds. */
  async failCancelled(): Promise<void> {
    const cancelled = this.host.outbox.cancelledPending();
    if (cancelled.length > 0) await this.fail(cancelled, "campaign_cancelled");
  }

  /**
   * The session can no longer send (banned, failed, deleted, as `reason` says): its waiting
   * campaign entries move to their campaigns' other connected sessions (src/delivery/failover.ts);
   * those with nowhere to go fail with `reason` and are refunded, or with `keep` (a session the
   * network limits, which may still send to warm contacts), stay here. When D1 cannot be reached,
   * they stay here and the caller's own handling (failing the waiting messages, or keeping them)
   * applies.
   */
  async handOver(from: { id: string; accountId: string }, reason: string, keep = false): Promise<void> {
    const entries = this.host.outbox.campaignPending();
    if (entries.length === 0) return;
    let unmoved: string[];
    try {
      const moved = await failover(this.env, from, entries, reason);
      this.host.outbox.markMoved(moved);
      const movedIds = new Set(moved);
      unmoved = entries.filter((entry) => !movedIds.has(entry.id)).map((entry) => entry.id);
    } catch (error) {
      log.error("failover_failed", { error });
      return;
    }
    if (keep) return;
    await this.fail(
      unmoved.map((id) => ({ id })),
      reason,
    );
  }

  /** Fails outbox entries that will not be sent, then writes them (failed, refunded) to D1. */
  async fail(items: Pick<OutboxItem, "id">[], reason: string): Promise<void> {
    this.host.outbox.markFailed(
      items.map((item) => item.id),
      Date.now(),
      reason,
    );
    await this.flush();
  }

  /**
   * Shows "typing…" to the entry's recipient (ChatGateway `typing`, `start`), its start time
   * recorded before the call (an Evolution API call lasts the whole typing) and its outcome
   * after. Best effort: a typing the gateway did not show is logged and recorded, never retried,
   * and the send goes on (docs/messages.md, Typing before a send).
   */
  private async startTyping(item: OutboxItem): Promise<void> {
    const session = this.host.session();
    if (!session) return;
    const gateway = this.host.gateway();
    const at = Date.now();
    this.host.outbox.markTyping(item.id, at, null);
    const outcome: TypingOutcome = gateway.typing
      ? await gateway.typing(session.sessionId, item.to_number, "start", {
          ms: item.typing_ms,
          lastIncomingId: async () =>
            lastIncomingMessageId(
              await databaseFor(this.env, item.account_id),
              item.account_id,
              session.id,
              item.to_number,
            ),
        })
      : { shown: false, reason: "not_supported_by_gateway" };
    // A session deleted during the call took the outbox with it.
    if (this.host.session() === null) return;
    // The gateway's words as the message keeps them: cut, and without the message's own text.
    const kept: TypingOutcome = outcome.shown
      ? outcome
      : { shown: false, reason: redactReason(outcome.reason, item.content) };
    this.host.outbox.markTyping(item.id, at, kept);
    if (!kept.shown) logTypingNotShown(item.id, "start", kept.reason);
  }

  /** One gateway call for one outbox entry, and its outcome written to the outbox and to D1. */
  private async sendOne(id: string): Promise<void> {
    const { outbox, deadlines } = this.host;
    const env = this.env;
    const session = this.host.session();
    const item = outbox.get(id);
    if (session?.status !== "connected" || item?.state !== "pending" || !outbox.unheld(id)) return;
    const startedAt = Date.now();
    outbox.markSending(id, startedAt);
    const attempts = item.attempts + 1;
    const gateway = this.host.gateway();
    // The typing shown before it ends before the send (WAHA's docs stop it first); best effort.
    const typing = typingOf(item);
    if (typing?.shown && item.attempts === 0 && gateway.typing) {
      const stopped = await gateway.typing(session.sessionId, item.to_number, "stop", {
        ms: item.typing_ms,
        lastIncomingId: async () => null,
      });
      if (!stopped.shown) logTypingNotShown(id, "stop", stopped.reason);
    }
    let outcome: SendOutcome;
    try {
      outcome = await gateway.send(session.sessionId, {
        id,
        clientMessageId: clientMessageIdOf(id),
        to: item.to_number,
        type: item.type,
        content: item.content,
        mediaUrl: item.media_url,
        media: mediaOf(item),
        replyTo: quotedOf(item),
      });
    } catch (error) {
      outcome = { outcome: "unknown", reason: error instanceof Error ? error.message : String(error) };
    }
    const at = Date.now();
    outbox.recordCall(at);
    const db = await databaseFor(env, item.account_id);
    if (outcome.outcome === "accepted") {
      outbox.markSent(id, at, outcome.providerMessageId);
      this.scheduleOwnReceipts(gateway, id, at);
      return;
    }
    // The gateway's words as the message keeps them: cut, and without the message's own text.
    const reason = redactReason(outcome.reason, item.content);
    const note = (nextAttemptAt: number | null) =>
      noteAttempt(db, id, { attempts, error: reason, nextAttemptAt, at, outcome: outcome.outcome });
    if (outcome.outcome === "unknown") {
      // Neither resent nor failed on a guess: the gateway is asked after the grace period.
      const askAt = at + readConfig(env).OUTCOME_GRACE_SECONDS * 1000;
      outbox.markUnknown(id, askAt);
      deadlines.schedule("dispatch", "", askAt);
      await note(null);
    } else if (!outcome.retryable || attempts >= MAX_SEND_ATTEMPTS) {
      await note(null);
      await this.fail([item], outcome.retryable ? "retries_exhausted" : reason);
    } else {
      // A throttled call waits longer; a session throttled as a whole makes no call meanwhile.
      const nextAttemptAt = at + (outcome.throttled ? throttleDelayMs(attempts) : retryDelayMs(attempts));
      if (outcome.throttled === "session") outbox.pauseUntil(nextAttemptAt);
      outbox.markRetry(id, nextAttemptAt);
      await note(nextAttemptAt);
    }
    // What the refusal says of the session (credentials refused → failed) moves it, as a check would.
    if (outcome.outcome === "rejected" && outcome.sessionEvent)
      await this.host.reported(outcome.sessionEvent);
  }

  /**
   * The receipts a gateway that makes its own (`ChatGateway.ownReceipts`, the sandbox) gives for
   * message `id`, which it took at `at`: deadlines the session object applies when they fall due.
   */
  private scheduleOwnReceipts(gateway: ChatGateway, id: string, at: number): void {
    if (!gateway.ownReceipts) return;
    const times = gateway.ownReceipts.timesFor(at);
    this.host.deadlines.schedule("ack_delivered", id, times.delivered);
    this.host.deadlines.schedule("ack_read", id, times.read);
  }

  private scheduleExpiry(): void {
    const at = this.host.outbox.nextExpiryAt();
    if (at === null) this.host.deadlines.clear("expire");
    else this.host.deadlines.schedule("expire", "", at);
  }
}

/**
 * Until when a campaign's messages wait on a limited session (epoch ms): the limit's end when
 * the gateway told it (`until`, ISO 8601), but no later than {@link LIMIT_RECHECK_MS} from `now`,
 * as a limit may be lifted early (a reading that clears it also releases them at once:
 * Outbox.releaseCampaigns).
 */
function limitRecheckAt(until: string | null, now: number): number {
  const end = until === null ? Number.POSITIVE_INFINITY : Date.parse(until);
  return Math.min(end, now + LIMIT_RECHECK_MS);
}

/**
 * The typing shown before entry `item` (moves/message.ts `SentTyping`), or null when it had none
 * or its call never answered (the object stopped during it).
 */
function typingOf(item: OutboxItem): SentTyping | null {
  if (item.typing_at === null || item.typing === null) return null;
  const outcome = JSON.parse(item.typing) as TypingOutcome;
  return outcome.shown
    ? { ms: item.typing_ms, at: item.typing_at, shown: true }
    : { ms: item.typing_ms, at: item.typing_at, shown: false, reason: outcome.reason };
}

/** Logs a typing call the gateway did not carry out (best effort: nothing else follows from it). */
function logTypingNotShown(messageId: string, state: "start" | "stop", reason: string): void {
  log.warn("typing_not_shown", { message_id: messageId, state, reason });
}
