import { readConfig } from "../config";
import { batchSql } from "../db/client";
import { databaseFor } from "../db/databases";
import { upsertSessionStatement } from "../db/queries/sessions";
import { type Dispatcher, SYNC_RETRY_MS } from "../delivery/dispatcher";
import { publishEvents } from "../events/publish";
import { insertEventStatement, recordedIn } from "../events/record";
import { GatewayError, type HealthEvent } from "../gateways/gateway";
import { log } from "../lib/log";
import {
  applyReading,
  coldContactLimit,
  type HealthReading,
  healthChanged,
  UNKNOWN_HEALTH,
} from "../lib/session-health";
import { GatewayChecks } from "./gateway-health";
import type { ShownQr } from "./live";
import { type Failure, fail, ok, type SessionResult } from "./result";
import type { SessionCore } from "./session-core";
import type { SessionRecord, SessionStatus } from "./session-record";
import type { SessionEventType } from "./session-store";
import {
  conflictOf,
  next,
  type SessionChange,
  type SessionCommand,
  type SessionInput,
  type Transition,
} from "./transitions";

/** What a status move needs of the session's fan-out: a link wakes it, a ban or a failure ends it. */
export type MoveFanOut = Pick<Dispatcher, "handOver" | "failPending" | "wake" | "limitLifted">;

/**
 * The one place a session's status moves (STYLE.md, "One home per rule"): asks transitions.ts
 * `next`, applies its answer to the object's storage with what goes with it (QR deadlines,
 * gateway checks, the fan-out), and commits the change: its event, the write through to the D1
 * `sessions` row, and its live frame. Events and frames hang off {@link commit}, and nowhere else.
 *
 * Every method runs inside the object's chain of changes (`SessionCore.exclusive`): the callers
 * (the RPC surface, the alarm) hold it.
 */
export class SessionMoves {
  /** Checks of a real gateway's view of the session; their answers move it through {@link move}. */
  readonly checks: GatewayChecks;

  constructor(
    private readonly core: SessionCore,
    private readonly fanOut: MoveFanOut,
  ) {
    this.checks = new GatewayChecks(
      {
        health: core.health,
        deadlines: core.deadlines,
        state: () => core.state(),
        gateway: () => core.gateway(),
        move: (input) => this.move(input),
        applyHealth: (reading) => this.applyHealth(reading),
      },
      core.env,
    );
  }

  /**
   * Moves the session as `input` says: asks transitions.ts `next`, fetches the QR a `qr` event
   * came without (a gateway that cannot be reached leaves the QR shown as it is), and applies the
   * answer. A conflict changes nothing; `now` (epoch ms) is the time of a link.
   * @returns the transition applied. @throws Error when the object holds no session.
   */
  async move(input: SessionInput, now = Date.now()): Promise<Transition> {
    const state = this.core.current();
    let transition = next(state, input);
    if (transition.type === "needs_qr" && input.type === "qr") {
      const qr = (await this.freshQr(state.session_id)) ?? state.qr;
      transition = qr === null ? { type: "unchanged" } : next(state, { ...input, qr });
    }
    if (transition.type === "move") await this.apply(transition.to, now);
    else if (transition.type === "replace_qr") await this.showQr(transition.qr);
    return transition;
  }

  /** {@link move} for a command: the record after it, or the command's 409. */
  async command(input: SessionInput & { type: SessionCommand }): Promise<SessionResult<SessionRecord>> {
    const { status } = this.core.current();
    const transition = await this.move(input);
    if (transition.type === "conflict") return refused(transition.code, status, input.type);
    return ok(this.core.store.record());
  }

  /**
   * The 409 of `command` when the status does not allow it, checked before its gateway call;
   * `not_found` when the object holds no session; null when the command may go ahead.
   */
  guard(command: SessionCommand): Failure | null {
    const state = this.core.state();
    if (!state) return fail("not_found", "No such session.");
    const conflict = conflictOf(command, state.status);
    return conflict ? refused(conflict, state.status, command) : null;
  }

  /**
   * Applies a move decided by transitions.ts: stores the new status and reason with what goes
   * with them, clears what only a pending session has (the QR and its deadlines) or starts it
   * again, starts gateway checks and waiting messages on a link, hands campaign messages over and
   * fails the waiting messages on a ban, and commits: `session.status_changed` when the status
   * or reason changed (see {@link commit}); a failed session's session at the gateway is then
   * removed ({@link releaseGateway}). `now` is the link's time (epoch ms), `last_seen_at` of a
   * connected session.
   */
  async apply(change: SessionChange, now: number): Promise<void> {
    const { store, deadlines } = this.core;
    const before = this.core.current();
    switch (change.status) {
      case "connected":
        store.update({
          status: "connected",
          reason: null,
          phone_number: change.phoneNumber,
          display_name: change.displayName ?? this.core.current().display_name,
          last_seen_at: now,
          qr: null,
        });
        deadlines.clear("qr_rotate", "qr_timeout");
        this.checks.schedule(now);
        this.fanOut.wake(now);
        await deadlines.rearm();
        break;
      case "pending": {
        const config = readConfig(this.core.env);
        store.update({
          status: "pending",
          reason: null,
          qr: change.qr,
          phone_number: null,
          display_name: this.core.current().session_id,
        });
        deadlines.schedule("qr_rotate", "", now + config.QR_ROTATE_SECONDS * 1000);
        deadlines.schedule("qr_timeout", "", now + config.QR_TIMEOUT_SECONDS * 1000);
        await deadlines.rearm();
        break;
      }
      default:
        store.update({ status: change.status, reason: change.reason, qr: null });
        deadlines.clear("qr_rotate", "qr_timeout");
        // Campaign messages go on from the campaign's other sessions (src/delivery/failover.ts).
        if (change.status === "banned" || change.status === "failed") {
          await this.fanOut.handOver(
            { id: before.id, accountId: before.account_id },
            `session_${change.status}`,
          );
        }
        if (change.failPending) await this.fanOut.failPending("session_banned");
    }
    const after = this.core.current();
    const moved = after.status !== before.status || after.reason !== before.reason;
    await this.commit(moved ? "session.status_changed" : null, after.updated_at);
    if (change.status === "failed") await this.releaseGateway();
  }

  /**
   * Removes a failed session's session at the gateway (`ChatGateway.remove`, as a delete does),
   * keeping the session here: a failed session (a QR nobody scanned, a gateway that gave up)
   * holds nothing at the gateway, and a reconnect creates it there again (session-link.ts
   * `reconnect`). A gateway that cannot be reached is asked again by the `gateway_release`
   * deadline every `GATEWAY_CHECK_SECONDS`, while the session stays failed; one that refuses is
   * logged and not asked again. Nothing happens when the session is not failed (a reconnect
   * came first).
   */
  async releaseGateway(): Promise<void> {
    const state = this.core.state();
    if (state?.status !== "failed") return;
    const { deadlines } = this.core;
    try {
      await this.core.gateway().remove(state.session_id);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      if (!error.permanent) {
        const retryMs = readConfig(this.core.env).GATEWAY_CHECK_SECONDS * 1000;
        deadlines.schedule("gateway_release", "", Date.now() + retryMs);
        await deadlines.rearm();
        return;
      }
      log.warn(null, { session: state.id, release: error.message });
    }
    deadlines.cancel("gateway_release", "");
  }

  /**
   * Applies what the gateway told of the session's health (`reading`, at `now` epoch ms; see
   * lib/session-health.ts): a change of its timelock, cap or quality is committed with its
   * `session.health_changed` event, write through and live frame; a reading that changed nothing
   * records when it was made (`checked_at`) and is written through without an event. A session
   * the change newly limits (an active timelock, a cap `CAPPED`) hands its waiting campaign
   * messages over to the campaign's other sessions (reason `session_limited`), keeping those with
   * nowhere to go (the dispatcher holds them while the limit lasts); one the change frees sends
   * the campaign messages it held at once.
   * @returns the record after it. @throws Error when the object holds no session.
   */
  async applyHealth(reading: HealthReading, now = Date.now()): Promise<SessionRecord> {
    const { store } = this.core;
    const before = store.health() ?? UNKNOWN_HEALTH;
    const after = applyReading(before, reading, now);
    const changed = healthChanged(before, after);
    store.setHealth(after, changed);
    await this.commit(changed ? "session.health_changed" : null, now);
    // Newly limited: its waiting campaign messages go on from the campaign's other sessions
    // (src/delivery/failover.ts); with none to take them, they stay here.
    const state = this.core.current();
    const wasLimited = coldContactLimit(before, now) !== null;
    const isLimited = coldContactLimit(after, now) !== null;
    if (state.status === "connected" && !wasLimited && isLimited) {
      await this.fanOut.handOver({ id: state.id, accountId: state.account_id }, SESSION_LIMITED, true);
    } else if (wasLimited && !isLimited) {
      this.fanOut.limitLifted(now);
      await this.core.deadlines.rearm();
    }
    return store.record();
  }

  /**
   * Applies a `health` event: its reading (a send refused with 463: the timelock is active, its
   * end unknown), or with none, a fresh reading of the gateway ({@link GatewayChecks.readHealth}).
   */
  async healthEvent(event: HealthEvent): Promise<void> {
    if (event.reading) await this.applyHealth(event.reading, event.at);
    else await this.checks.readHealth();
  }

  /** Shows a new QR payload on a pending session, with its `session.qr_updated` event. */
  async showQr(qr: string): Promise<void> {
    if (qr === this.core.current().qr) return;
    this.core.store.setQr(qr);
    await this.commit("session.qr_updated", Date.now());
  }

  /** The QR a pending session shows and when the next rotation replaces it; null in other states. */
  shownQr(): ShownQr | null {
    const state = this.core.current();
    if (state.status !== "pending" || !state.qr) return null;
    return { payload: state.qr, expiresAt: this.core.deadlines.dueAt("qr_rotate", "") };
  }

  /**
   * Writes the session's current state to its D1 row (the read model), with the session's events
   * not yet in D1, in one batch, then publishes those events for webhook delivery. The write is
   * owed until D1 has it: a `sync` deadline is set before it and cleared after it, so a write D1
   * refuses (or one cut short by a stop) is made again from the alarm, with the state of that
   * time. A refused write is logged (`session_write_failed`), not thrown.
   */
  async writeThrough(): Promise<void> {
    const { store, deadlines } = this.core;
    const row = store.row();
    const events = store.pendingEvents();
    deadlines.schedule("sync", "session", Date.now() + SYNC_RETRY_MS);
    try {
      const db = await databaseFor(this.core.env, row.accountId);
      const results = await batchSql(db, [
        upsertSessionStatement(db, row),
        ...events.map(insertEventStatement),
      ]);
      store.clearEvents(events.map((event) => event.id));
      deadlines.cancel("sync", "session");
      await publishEvents(
        this.core.env,
        recordedIn(
          results,
          events.map((_, i) => i + 1),
        ),
      );
    } catch (error) {
      log.error("session_write_failed", { session: row.id, error: causeOf(error) });
      await deadlines.rearm();
    }
  }

  /**
   * The one place a change of the session is recorded, once the object's storage holds it:
   * keeps its event (`type`, at `at` epoch ms; none for a change that is not one, such as a new
   * phone name), writes the session and its events through to D1, then sends the change's live
   * frame to every watcher.
   */
  private async commit(type: SessionEventType | null, at: number): Promise<void> {
    if (type) this.core.store.recordEvent(type, at);
    await this.writeThrough();
    if (!type || !this.core.live.watched) return;
    await this.core.live.announce(type, this.core.store.record(), this.shownQr());
  }

  /** The gateway's current QR payload, or null when it cannot be reached now. */
  private async freshQr(sessionId: string): Promise<string | null> {
    try {
      return await this.core.gateway().currentQr(sessionId);
    } catch (error) {
      // The QR rotation (or the next event) fetches it again.
      if (!(error instanceof GatewayError)) throw error;
      return null;
    }
  }
}

/** The failover reason of campaign messages moved off a session the network limits. */
const SESSION_LIMITED = "session_limited";

/** The 409 answered when `command` is not allowed while the session is `status`. */
function refused(code: Failure["code"], status: SessionStatus, command: SessionCommand): Failure {
  return fail(code, `The session is ${status}; ${command} is not possible now.`);
}

/** A failed D1 write's own message (drizzle wraps it with the query and its parameters). */
function causeOf(error: unknown): string {
  return String(error instanceof Error && error.cause ? error.cause : error);
}
