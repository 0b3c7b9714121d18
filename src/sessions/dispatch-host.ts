import { ConfigError } from "../config";
import { databaseFor } from "../db/databases";
import { claimMessages } from "../db/queries/messages";
import { Dispatcher, SYNC_RETRY_MS } from "../delivery/dispatcher";
import { failover } from "../delivery/failover";
import type { DispatchHost } from "../delivery/host";
import type { CampaignHold, Outbox } from "../delivery/outbox";
import type { KeptReceipts } from "../delivery/receipts";
import type { ChatGateway, HealthEvent, OwnReceipts, StatusEvent } from "../gateways/gateway";
import { log } from "../lib/log";
import type { StoredHealth } from "../lib/session-health";
import type { DispatchRequest } from "../messages/dispatch-request";
import { applyFailMoves, applyMoves } from "../moves/apply";
import { failMoves, type MessageMove } from "../moves/message";
import type { Deadline, Deadlines } from "./deadlines";
import type { SessionCore } from "./session-core";
import type { SessionStatus } from "./session-record";

/** What a campaign hold came to (see SessionDispatchHost.holdCampaign). */
export type HoldResult = "held" | "no_session" | "unsynced";

/**
 * What the fan-out needs of the session's link: its deadlines (its session row owed to D1, QR
 * rotation and timeout, gateway checks), run by {@link SessionDispatchHost.runDueDeadlines} with
 * the others, and the status moves a send reveals (session-moves.ts `SessionMoves.move`).
 */
export interface LinkDeadlines {
  /** Runs `deadline` if it is one of the link's; any other kind is left alone. */
  runDeadline(deadline: Deadline): Promise<void>;
  /** Moves the session as a gateway status event says (DispatchHost.reported). */
  reported(event: StatusEvent | HealthEvent): Promise<void>;
}

/**
 * The session's side of its fan-out: what the {@link Dispatcher} calls back into (the session,
 * its gateway, its outbox and deadlines, its chain of changes, the deadlines due in a pacing
 * gap), and the work that feeds and holds the dispatcher: messages taken from the outbound
 * Queue, campaign holds, the receipts a gateway makes itself and the failover of messages that reach a deleted
 * session. It also runs the object's due deadlines for the alarm, handing the link's to
 * {@link LinkDeadlines}: one alarm serves every deadline (see deadlines.ts).
 */
export class SessionDispatchHost implements DispatchHost {
  readonly dispatcher: Dispatcher;

  constructor(
    private readonly core: SessionCore,
    private readonly link: LinkDeadlines,
  ) {
    this.dispatcher = new Dispatcher(this, core.env);
  }

  get outbox(): Outbox {
    return this.core.outbox;
  }

  get receipts(): KeptReceipts {
    return this.core.receipts;
  }

  get deadlines(): Deadlines {
    return this.core.deadlines;
  }

  /** The session (see DispatchHost.session), or null once it is gone. */
  session(): {
    id: string;
    accountId: string;
    status: SessionStatus;
    sessionId: string;
    phoneNumber: string | null;
    health: StoredHealth | null;
  } | null {
    const state = this.core.state();
    return (
      state && {
        id: state.id,
        accountId: state.account_id,
        status: state.status,
        sessionId: state.session_id,
        phoneNumber: state.phone_number,
        health: this.core.store.health(),
      }
    );
  }

  gateway(): ChatGateway {
    return this.core.gateway();
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.core.exclusive(fn);
  }

  /** Moves the session as `event` says (see DispatchHost.reported); in the chain already. */
  reported(event: StatusEvent | HealthEvent): Promise<void> {
    return this.link.reported(event);
  }

  /**
   * On a wake of a stored session: work a stop left (entries to send, outcomes not yet in D1)
   * gets a `dispatch` deadline now. Call `deadlines.rearm()` after (the constructor checks
   * `deadlines.stale()`).
   */
  resume(): void {
    if (this.core.outbox.nextDueAt() !== null || this.core.outbox.unsyncedCount() > 0) {
      this.core.deadlines.schedule("dispatch", "", Date.now());
    }
  }

  /**
   * Runs the deadlines due by now, or by the time the alarm was armed for (see Deadlines): for
   * the alarm, and for the dispatcher in its pacing gaps, so acks and QR deadlines need not wait
   * for a long fan-out run to end. Runs in the chain of changes.
   * @returns that horizon (epoch ms), or null when there is no session.
   */
  runDueDeadlines(): Promise<number | null> {
    return this.core.exclusive(async () => {
      if (!this.core.stored) return null;
      const { horizon, due } = this.core.deadlines.takeDue();
      const acks: Deadline[] = [];
      for (const deadline of due) {
        if (deadline.kind === "ack_delivered" || deadline.kind === "ack_read") {
          acks.push(deadline);
          continue;
        }
        try {
          if (deadline.kind === "expire") await this.dispatcher.expire(horizon);
          // Sockets opened with a credential that expired by now (or by the alarm's time).
          else if (deadline.kind === "socket_expiry")
            this.core.live.closeLapsed(deadline.ref, "expired", horizon);
          // The link's own (the session row's write, QR, gateway checks). A `dispatch` wake-up
          // is the run the alarm starts next; the outbox's `sync` is the flush below.
          else await this.link.runDeadline(deadline);
        } catch (error) {
          // Taken from the table already: set again, so that a failure delays it, never drops it.
          log.error("deadline_failed", { kind: deadline.kind, error });
          this.core.deadlines.schedule(deadline.kind, deadline.ref, Date.now() + SYNC_RETRY_MS);
        }
      }
      // Acks only move messages D1 already knows as sent; an offline phone acks nothing.
      await this.applyOwnReceipts(this.unlessOffline(acks));
      this.core.outbox.purge(Date.now());
      this.core.receipts.purge(Date.now());
      return horizon;
    });
  }

  /**
   * The `enqueue` RPC's work, in the chain of changes: claims messages from the outbound Queue
   * in D1 (claimMessages: only those still waiting for this session), takes the claimed ones
   * into the outbox and wakes the dispatcher; known ids are ignored. A banned session fails the new ones at once, with a refund; a deleted one fails
   * those that never left (a campaign's move to its other sessions first).
   * @returns how many were new.
   */
  async enqueue(requests: DispatchRequest[]): Promise<number> {
    const state = this.core.state();
    const accountId = state?.account_id ?? requests[0]?.accountId;
    if (accountId === undefined) return 0;
    const db = await databaseFor(this.core.env, accountId);
    const now = Date.now();
    if (!state) {
      // Deleted: D1 got every outcome before the storage went, so only a message that never
      // reached this object can still be waiting. A campaign's move to its other sessions.
      const moved = new Set(await this.strandedFailover(requests));
      const waiting = requests
        .filter((r) => !moved.has(r.id))
        .map((r) => ({ id: r.id, accountId: r.accountId }));
      await applyFailMoves(this.core.env, failMoves(waiting, "session_deleted", now));
      return 0;
    }
    // Claimed in D1 first: what the object holds, nothing else may fail (see claimMessages).
    const claimed = await claimMessages(
      db,
      state.id,
      requests.map((r) => r.id),
      now,
    );
    const added = this.dispatcher.accept(
      requests.filter((r) => claimed.has(r.id)),
      now,
    );
    await this.dispatcher.failCancelled();
    if (state.status === "banned" || state.status === "failed") {
      await this.dispatcher.handOver(
        { id: state.id, accountId: state.account_id },
        `session_${state.status}`,
      );
    }
    if (state.status === "banned") await this.dispatcher.failPending("session_banned");
    if (added > 0) await this.core.deadlines.rearm();
    return added;
  }

  /**
   * The `holdCampaign` RPC's work, in the chain of changes: holds campaign `campaignId`'s
   * messages (`paused` or `cancelled`, see Outbox.hold), fails the cancelled ones waiting, and
   * writes every outcome it holds to D1: a cancel then fails in D1 only messages no session
   * claimed, so a message sent a moment ago ends `sent`, never failed and refunded. A message
   * whose outcome is unknown stays the object's: settled, it ends `sent`, or fails
   * `campaign_cancelled` when the gateway confirms it absent.
   * @returns `held`; `no_session` when this object holds none; `unsynced` when D1 refused the
   *   outcomes (the caller answers 503; holding again is harmless). An answer, not a throw: an
   *   RPC method's exception is the platform's "uncaught exception" in the object's log.
   */
  async holdCampaign(campaignId: string, hold: CampaignHold): Promise<HoldResult> {
    if (!this.core.stored) return "no_session";
    this.core.outbox.hold(campaignId, hold);
    // Outcomes first: while entries of the campaign still wait, none of them completes it.
    if (!(await this.dispatcher.flush())) return "unsynced";
    await this.dispatcher.failCancelled();
    if (!(await this.dispatcher.flush())) return "unsynced";
    return "held";
  }

  /**
   * The `releaseCampaign` RPC's work, in the chain of changes: lifts a pause of campaign
   * `campaignId` and wakes the dispatcher. @returns false when this object holds no session.
   */
  async releaseCampaign(campaignId: string): Promise<boolean> {
    if (!this.core.stored) return false;
    this.core.outbox.release(campaignId);
    this.dispatcher.wake(Date.now());
    await this.core.deadlines.rearm();
    return true;
  }

  /** Campaign messages that reached this object after its session was deleted: moved if they can be. */
  private async strandedFailover(requests: DispatchRequest[]): Promise<string[]> {
    const stranded = requests.filter((r) => r.campaignId);
    const first = stranded[0];
    if (!first) return [];
    const from = { id: first.sessionId, accountId: first.accountId };
    return failover(
      this.core.env,
      from,
      stranded.map((r) => ({ id: r.id, campaign_id: r.campaignId })),
      "session_deleted",
    );
  }

  /**
   * `acks`, or none when the gateway that makes them holds them (`OwnReceipts.hold`: the
   * sandbox's phone is offline), to be acked anew when it comes back online
   * (session-stand-in.ts `SessionStandIn.phone`).
   */
  private unlessOffline(acks: Deadline[]): Deadline[] {
    if (acks.length === 0 || !this.core.state()) return acks;
    let receipts: OwnReceipts | undefined;
    try {
      receipts = this.core.gateway().ownReceipts;
    } catch (error) {
      // A gateway the deployment no longer enables holds nothing: the acks are applied.
      if (!(error instanceof ConfigError)) throw error;
    }
    const held = receipts?.hold(
      acks.map((ack) => ack.ref),
      Date.now(),
    );
    return held ? [] : acks;
  }

  /**
   * The receipts a gateway makes itself (`ChatGateway.ownReceipts`), once D1 holds every sent outcome; while D1 refuses writes they wait
   * for the next `sync` retry.
   */
  private async applyOwnReceipts(acks: Deadline[]): Promise<void> {
    const synced = await this.dispatcher.flush();
    if (acks.length === 0) return;
    try {
      if (!synced) throw new Error("sent outcomes are not in D1 yet");
      // One move per kind (two statements each, whatever the number of acks).
      const now = Date.now();
      const moves = (["delivered", "read"] as const).flatMap((kind): MessageMove[] => {
        const ids = acks.filter((ack) => ack.kind === `ack_${kind}`).map((ack) => ack.ref);
        return ids.length > 0 ? [{ kind, target: { ids }, at: now, gatewayAt: now }] : [];
      });
      await applyMoves(this.core.env, this.core.current().account_id, moves);
    } catch (error) {
      log.error("receipts_deferred", { error });
      for (const ack of acks) this.core.deadlines.schedule(ack.kind, ack.ref, Date.now() + SYNC_RETRY_MS);
    }
  }
}
