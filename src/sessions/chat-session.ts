import { DurableObject } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { readConfig } from "../config";
import { createDb } from "../db/client";
import { applyAcks, applyGatewayAcks, failWaitingOfSession, insertIncoming } from "../db/queries/messages";
import { sessions } from "../db/schema";
import type { DispatchRequest } from "../delivery/dispatch-request";
import { Dispatcher } from "../delivery/dispatcher";
import { Outbox } from "../delivery/outbox";
import { createGateway } from "../gateways";
import {
  type ChatGateway,
  GatewayError,
  type GatewayEvent,
  type LinkState,
  type StatusEvent,
} from "../gateways/gateway";
import { SandboxGateway, sandboxPhoneNumber } from "../gateways/sandbox";
import { Deadlines } from "./deadlines";
import { GatewayHealth, type GatewayHealthView, UNREACHABLE_AFTER_FAILURES } from "./gateway-health";
import { type Failure, fail, ok, type SessionResult } from "./result";
import {
  gatewaySessionName,
  type SessionRecord,
  type SessionRow,
  type SessionStatus,
  toSessionRecord,
} from "./session-record";
import { conflictOf, type SessionCommand } from "./transitions";

type StoredSession = {
  id: string;
  account_id: string;
  session_id: string;
  phone_number: string | null;
  display_name: string;
  status: SessionStatus;
  reason: string | null;
  last_seen_at: number | null;
  created_at: number;
  updated_at: number;
  origin: string;
  qr: string | null;
};

/**
 * One chat session: the single owner and writer of its status, its QR lifecycle, its gateway
 * connection and its outbound messages. State lives in the object's SQLite storage; every status
 * change is written through to the D1 `sessions` row that the list and show endpoints read.
 *
 * One alarm serves every deadline (QR rotation and timeout, pacing wake-ups, message expiry,
 * sandbox acks, gateway checks): see {@link Deadlines}. Sending is the {@link Dispatcher}'s job.
 *
 * The gateway's word on the session's link (its webhook events and its answers to checks) moves
 * the status; webhook status events older than the newest one applied are ignored.
 */
export class ChatSession extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly outbox: Outbox;
  private readonly deadlines: Deadlines;
  private readonly dispatcher: Dispatcher;
  private readonly health: GatewayHealth;
  /**
   * Whether this object holds a session. Its tables are created with the session and dropped with
   * it, so the object of a deleted (or never created) session keeps no storage however it is
   * called, and every path checks this before touching storage.
   */
  private stored: boolean;
  /** Tail of the chain that runs state changes one at a time (gateway calls and D1 writes await). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.outbox = new Outbox(this.sql);
    this.deadlines = new Deadlines(this.sql, ctx.storage);
    this.health = new GatewayHealth(this.sql);
    // The dispatcher gets closures, not `this`: every public method of this class is RPC API.
    this.dispatcher = new Dispatcher(
      {
        outbox: this.outbox,
        deadlines: this.deadlines,
        session: () => this.session(),
        gateway: () => this.gateway(),
        exclusive: (fn) => this.exclusive(fn),
        runDueDeadlines: () => this.runDueDeadlines(),
      },
      env,
    );
    this.stored =
      this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session'").toArray()
        .length > 0;
    // Idempotent schema set-up on every wake of a stored session (new tables of a newer version).
    if (this.stored) {
      this.setUpStorage();
      // Work left by a stop (entries to send, outcomes not yet in D1) resumes at once.
      if (this.outbox.nextDueAt() !== null || this.outbox.unsyncedCount() > 0) {
        this.deadlines.schedule("dispatch", "", Date.now());
        void ctx.blockConcurrencyWhile(() => this.deadlines.rearm());
      }
    }
  }

  private setUpStorage(): void {
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS session (
        id TEXT PRIMARY KEY, account_id TEXT NOT NULL, session_id TEXT NOT NULL, phone_number TEXT,
        display_name TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, last_seen_at INTEGER,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, origin TEXT NOT NULL, qr TEXT);
    `);
    this.outbox.setUp();
    this.deadlines.setUp();
    this.health.setUp();
    this.stored = true;
  }

  // ---- RPC: lifecycle commands -------------------------------------------------------------

  /**
   * Creates the session as `pending` and creates it at the gateway. `origin` is where sandbox
   * pairing URLs point. Returns the record and the first QR payload; when the gateway fails, the
   * object keeps nothing and answers `gateway_unavailable` or `gateway_rejected`.
   */
  async create(input: {
    id: string;
    accountId: string;
    origin: string;
  }): Promise<SessionResult<{ session: SessionRecord; qr: string }>> {
    return this.exclusive(async () => {
      const now = Date.now();
      const sessionId = gatewaySessionName(input.id);
      this.setUpStorage();
      this.sql.exec(
        `INSERT INTO session (id, account_id, session_id, phone_number, display_name, status, reason,
           last_seen_at, created_at, updated_at, origin, qr)
         VALUES (?, ?, ?, NULL, ?, 'pending', NULL, ?, ?, ?, ?, NULL)`,
        input.id,
        input.accountId,
        sessionId,
        sessionId,
        now,
        now,
        now,
        input.origin,
      );
      let link: LinkState;
      try {
        link = await this.gateway().create(sessionId);
      } catch (error) {
        await this.forget();
        return gatewayFailure(error);
      }
      const qr = await this.applyLink(link, now);
      await this.writeThrough(true);
      return ok({ session: this.record(), qr: qr ?? "" });
    });
  }

  /** The QR payload to show; only while pending (409 `session_not_pending`). */
  async qrPayload(): Promise<SessionResult<string>> {
    const state = this.state();
    if (!state) return fail("not_found", "No such session.");
    if (state.status !== "pending" || !state.qr) {
      return fail("session_not_pending", "The QR code is only served while the session is pending.");
    }
    return ok(state.qr);
  }

  /** connected → disconnected, keeping the link (interface document §4.1). */
  async disconnect(): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(async () => {
      const guard = this.guard("disconnect");
      if (guard) return guard;
      try {
        await this.gateway().disconnect(this.current().session_id);
      } catch (error) {
        return gatewayFailure(error);
      }
      this.update({ status: "disconnected", reason: "disconnected_by_user" });
      await this.writeThrough();
      return ok(this.record());
    });
  }

  /**
   * disconnected or failed → connected when the gateway still holds the link, otherwise pending
   * with a fresh QR (returned as `qr`).
   */
  async reconnect(): Promise<SessionResult<{ session: SessionRecord; qr: string | null }>> {
    return this.exclusive(async () => {
      const guard = this.guard("reconnect");
      if (guard) return guard;
      let link: LinkState;
      try {
        link = await this.gateway().start(this.current().session_id);
      } catch (error) {
        return gatewayFailure(error);
      }
      const qr = await this.applyLink(link, Date.now());
      await this.writeThrough();
      return ok({ session: this.record(), qr });
    });
  }

  /**
   * Unlinks at the gateway, fails and refunds the messages still waiting, removes the D1 row and
   * clears this object's storage. A gateway that cannot be reached keeps the session
   * (`gateway_unavailable`, retry later); one that refuses (it no longer knows the session) does not.
   */
  async destroy(): Promise<SessionResult<null>> {
    return this.exclusive(async () => {
      const state = this.state();
      if (!state) return ok(null);
      try {
        await this.gateway().remove(state.session_id);
      } catch (error) {
        if (!(error instanceof GatewayError) || !error.permanent) return gatewayFailure(error);
        console.warn(JSON.stringify({ level: "warn", session: state.id, remove: error.message }));
      }
      await this.dispatcher.flush();
      await this.dispatcher.failPending("session_deleted");
      const db = createDb(this.env.DB);
      // Also messages whose queue message has not reached this object yet.
      await failWaitingOfSession(db, state.account_id, state.id, "session_deleted", Date.now());
      await db.delete(sessions).where(eq(sessions.id, state.id));
      await this.forget();
      return ok(null);
    });
  }

  /**
   * Asks the gateway for a code that links `phoneNumber` (E.164) without a QR scan; only while
   * pending (409 `session_not_pending`).
   */
  async pairingCode(phoneNumber: string): Promise<SessionResult<string>> {
    return this.exclusive(async () => {
      const guard = this.guard("scan");
      if (guard) return guard;
      try {
        return ok(await this.gateway().requestPairingCode(this.current().session_id, phoneNumber));
      } catch (error) {
        return gatewayFailure(error);
      }
    });
  }

  /**
   * Checks the gateway's view of the session now (correcting the status if it differs) and
   * returns the health record.
   */
  async gatewayHealth(): Promise<SessionResult<GatewayHealthView>> {
    return this.exclusive(async () => {
      if (!this.state()) return fail("not_found", "No such session.");
      await this.checkGateway();
      return ok(this.health.view(this.gateway().name));
    });
  }

  // ---- RPC: message fan-out ----------------------------------------------------------------

  /**
   * Takes messages from the outbound Queue into the outbox and wakes the dispatcher. Messages
   * already known (a redelivered queue message) are ignored. A deleted or banned session fails
   * them at once, with a refund.
   * @returns how many were new.
   */
  async enqueue(requests: DispatchRequest[]): Promise<number> {
    return this.exclusive(async () => {
      const state = this.state();
      if (!state || state.status === "banned") {
        const items = requests.map((r) => ({ id: r.id, account_id: r.accountId }));
        await this.dispatcher.refund(items, state ? "session_banned" : "session_deleted");
        return 0;
      }
      const added = this.dispatcher.accept(requests, Date.now());
      if (added > 0) await this.deadlines.rearm();
      return added;
    });
  }

  // ---- RPC: gateway events ----------------------------------------------------------------

  /**
   * Applies events a gateway reported for this session (its webhook), in order. Status events
   * older than the newest applied are ignored; acks never move a message backwards; an incoming
   * message is stored once. Applying the same events twice changes nothing the second time.
   * @returns false when this object holds no session (the event is then ignored).
   */
  async gatewayEvents(events: GatewayEvent[]): Promise<boolean> {
    return this.exclusive(async () => {
      const state = this.state();
      if (!state) return false;
      const db = createDb(this.env.DB);
      // The gateway's message id reaches D1 with the sent outcome: write pending ones first.
      if (events.some((event) => event.type === "ack")) await this.dispatcher.flush();
      for (const event of events) {
        if (event.type === "ack") {
          await applyGatewayAcks(db, { id: state.id, accountId: state.account_id }, [event]);
        } else if (event.type === "incoming") {
          const current = this.current();
          await insertIncoming(db, {
            accountId: current.account_id,
            sessionId: current.id,
            providerMessageId: event.providerMessageId,
            fromNumber: event.from,
            toNumber: current.phone_number ?? current.session_id,
            type: event.messageType,
            content: event.content,
            mediaUrl: event.mediaUrl,
            at: event.at,
          });
        } else if (event.at >= this.health.eventAt()) {
          // Webhook events are ordered by the gateway's own clock, against each other only: a
          // command or a check is not compared with them, so clock skew cannot hide an event.
          this.health.noteEvent(event.at);
          await this.applyStatusEvent(event);
        }
      }
      return true;
    });
  }

  // ---- RPC: sandbox phone ------------------------------------------------------------------

  /**
   * Sandbox only: a phone scans the current QR. With `token`, it must be the token of the QR
   * currently shown (the pairing page); without one, the script-facing scan endpoint links
   * whatever QR is shown.
   */
  async sandboxScan(input: {
    phoneNumber?: string;
    displayName?: string;
    token?: string;
    pairingCode?: string;
  }): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(async () => {
      const sandbox = this.sandbox();
      if (!sandbox) return fail("not_found", "No such session.");
      const guard = this.guard("scan");
      if (guard) return guard;
      if (input.token !== undefined && !sandbox.acceptsToken(input.token)) {
        return fail("not_found", "This QR code has expired; scan the current one.");
      }
      let phoneNumber = input.phoneNumber ?? sandboxPhoneNumber(this.current().id);
      if (input.pairingCode !== undefined) {
        const paired = sandbox.phoneOfPairingCode(input.pairingCode);
        if (!paired) return fail("pairing_code_invalid", "This is not the pairing code last issued.");
        phoneNumber = paired;
      }
      const displayName = input.displayName ?? `Sandbox ${phoneNumber}`;
      sandbox.link(phoneNumber, displayName);
      return this.handleEvent({ type: "linked", phoneNumber, displayName, at: Date.now() });
    });
  }

  /** Sandbox only: the network drops the connection; `loggedOut` also removes the link. */
  async sandboxDrop(input: { reason: string; loggedOut: boolean }): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(async () => {
      const sandbox = this.sandbox();
      if (!sandbox) return fail("not_found", "No such session.");
      const guard = this.guard("drop");
      if (guard) return guard;
      if (input.loggedOut) sandbox.unlink();
      return this.handleEvent({
        type: "dropped",
        reason: input.reason,
        loggedOut: input.loggedOut,
        at: Date.now(),
      });
    });
  }

  /** Sandbox only: the network bans the linked account. */
  async sandboxBan(input: { reason: string }): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(async () => {
      const sandbox = this.sandbox();
      if (!sandbox) return fail("not_found", "No such session.");
      const guard = this.guard("ban");
      if (guard) return guard;
      sandbox.unlink();
      return this.handleEvent({ type: "banned", reason: input.reason, at: Date.now() });
    });
  }

  // ---- alarm -------------------------------------------------------------------------------

  /** Runs the due deadlines, then the dispatcher, then re-arms for the earliest deadline left. */
  async alarm(): Promise<void> {
    const horizon = await this.runDueDeadlines();
    if (horizon === null) return;
    await this.dispatcher.run(horizon);
    await this.exclusive(async () => {
      if (this.stored) await this.deadlines.rearm();
    });
  }

  /**
   * Runs the deadlines due by now, or by the time the alarm was armed for (see Deadlines): for
   * the alarm, and for the dispatcher in its pacing gaps, so acks and QR deadlines need not wait
   * for a long fan-out run to end. @returns that horizon, or null when there is no session.
   */
  private runDueDeadlines(): Promise<number | null> {
    return this.exclusive(async () => {
      if (!this.stored) return null;
      const { horizon, due } = this.deadlines.takeDue();
      const acks = [];
      for (const deadline of due) {
        if (deadline.kind === "ack_delivered" || deadline.kind === "ack_read") {
          const kind = deadline.kind === "ack_read" ? ("read" as const) : ("delivered" as const);
          acks.push({ messageId: deadline.ref, kind, at: Date.now() });
        } else if (deadline.kind === "expire") {
          await this.dispatcher.expire(horizon);
        } else if (deadline.kind === "qr_rotate" || deadline.kind === "qr_timeout") {
          await this.runQrDeadline(deadline.kind, deadline.dueAt);
        } else if (deadline.kind === "gateway_check") {
          await this.runGatewayCheck();
        }
      }
      // Acks only move messages D1 already knows as sent.
      await this.dispatcher.flush();
      await applyAcks(createDb(this.env.DB), acks);
      this.outbox.purge(Date.now());
      return horizon;
    });
  }

  private async runQrDeadline(kind: "qr_rotate" | "qr_timeout", dueAt: number): Promise<void> {
    const state = this.state();
    if (state?.status !== "pending") return;
    if (kind === "qr_rotate") {
      try {
        this.sql.exec("UPDATE session SET qr = ?", await this.gateway().currentQr(state.session_id));
      } catch (error) {
        // The QR shown stays until the next rotation reaches the gateway.
        if (!(error instanceof GatewayError)) throw error;
      }
      this.deadlines.schedule("qr_rotate", "", dueAt + readConfig(this.env).QR_ROTATE_SECONDS * 1000);
    } else {
      this.leavePending();
      this.update({ status: "failed", reason: "qr_timeout" });
      await this.writeThrough();
      // Nobody scanned: the gateway need not keep its session waiting for one.
      await this.gateway()
        .disconnect(state.session_id)
        .catch((error: unknown) => {
          if (!(error instanceof GatewayError)) throw error;
        });
    }
  }

  // ---- for the dispatcher (DispatchHost) -----------------------------------------------------

  /** The session's status and numbers, or null once it is gone. */
  private session(): { status: SessionStatus; sessionId: string; phoneNumber: string | null } | null {
    const state = this.state();
    return state && { status: state.status, sessionId: state.session_id, phoneNumber: state.phone_number };
  }

  /** The configured gateway (config.ts `CHATAPP_GATEWAY`); the sandbox one lives in this object. */
  private gateway(): ChatGateway {
    return createGateway(readConfig(this.env).gateway, () => {
      const state = this.current();
      return new SandboxGateway(this.sql, state.origin, state.id);
    });
  }

  /** Drops everything this object stores (its tables too) and its alarm. */
  private async forget(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // Work still under way in this instance (a dispatcher run, an alarm) sees no session from now
    // on and stops before touching storage.
    this.stored = false;
  }

  /** Runs state changes one at a time: each waits for the previous one to settle. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  // ---- internals ---------------------------------------------------------------------------

  /** A sandbox phone's action, already checked against the status: applied, then the record. */
  private async handleEvent(event: StatusEvent): Promise<SessionResult<SessionRecord>> {
    await this.applyStatusEvent(event);
    return ok(this.record());
  }

  /**
   * Moves the session to what a gateway status event says, unless the session is banned or
   * already there (so a repeated event changes nothing). A `qr` event while pending only replaces
   * the QR.
   */
  private async applyStatusEvent(event: StatusEvent): Promise<void> {
    const state = this.current();
    if (state.status === "banned") return;
    const now = Date.now();
    switch (event.type) {
      case "linked":
        if (state.status === "connected" && state.phone_number === event.phoneNumber) return;
        await this.applyLink(
          { status: "connected", phoneNumber: event.phoneNumber, displayName: event.displayName },
          now,
        );
        break;
      case "qr": {
        let qr = event.qr;
        if (qr === null) {
          try {
            qr = await this.gateway().currentQr(state.session_id);
          } catch (error) {
            if (!(error instanceof GatewayError)) throw error;
            // The QR rotation (or the next event) fetches it again.
            qr = state.qr;
          }
        }
        if (state.status === "pending") {
          if (qr !== null && qr !== state.qr) this.sql.exec("UPDATE session SET qr = ?", qr);
          return;
        }
        if (qr === null) return;
        await this.applyLink({ status: "pending", qr }, now);
        break;
      }
      case "dropped":
        // A session the user disconnected keeps that reason; one the service disconnected for
        // want of an answer takes the gateway's, now that it answers.
        if (
          state.status === "disconnected"
            ? state.reason !== "gateway_unreachable"
            : state.status !== "connected" && state.status !== "pending"
        )
          return;
        this.leavePending();
        this.update({ status: "disconnected", reason: event.reason });
        break;
      case "failed":
        if (state.status === "failed") return;
        this.leavePending();
        this.update({ status: "failed", reason: event.reason });
        break;
      case "banned":
        this.leavePending();
        this.update({ status: "banned", reason: event.reason });
        await this.dispatcher.failPending("session_banned");
        break;
    }
    await this.writeThrough();
  }

  /** Clears what only a pending session has: its QR and QR deadlines. */
  private leavePending(): void {
    this.sql.exec("UPDATE session SET qr = NULL");
    this.deadlines.clear("qr_rotate", "qr_timeout");
  }

  /**
   * Asks the gateway for its view of the session and applies it as an event. A gateway that
   * cannot be reached is recorded; after {@link UNREACHABLE_AFTER_FAILURES} checks in a row a
   * connected session becomes `disconnected` with reason `gateway_unreachable`, and comes back
   * when a check reaches the gateway again.
   */
  private async checkGateway(): Promise<void> {
    const state = this.current();
    const now = Date.now();
    let event: GatewayEvent | null;
    try {
      event = await this.gateway().check(state.session_id);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const failures = this.health.recordFailure(error.message, now);
      if (failures >= UNREACHABLE_AFTER_FAILURES && state.status === "connected") {
        this.update({ status: "disconnected", reason: "gateway_unreachable" });
        await this.writeThrough();
      }
      return;
    }
    this.health.recordCheck(event?.type ?? "starting", now);
    if (event && event.type !== "ack" && event.type !== "incoming") await this.applyStatusEvent(event);
  }

  /** The scheduled check: only while connected, or disconnected because the gateway was unreachable. */
  private async runGatewayCheck(): Promise<void> {
    const watched = () => {
      const state = this.state();
      return (
        state?.status === "connected" ||
        (state?.status === "disconnected" && state.reason === "gateway_unreachable")
      );
    };
    if (!watched()) return;
    await this.checkGateway();
    if (watched()) this.scheduleGatewayCheck(Date.now());
  }

  /** Real gateways only: the sandbox is its own truth. */
  private scheduleGatewayCheck(now: number): void {
    const config = readConfig(this.env);
    if (config.gateway.kind === "sandbox") return;
    this.deadlines.schedule("gateway_check", "", now + config.GATEWAY_CHECK_SECONDS * 1000);
  }

  /**
   * Moves to what the gateway reports: connected (waiting messages go), or pending with a QR,
   * fresh QR deadlines and no phone until one links.
   */
  private async applyLink(link: LinkState, now: number): Promise<string | null> {
    if (link.status === "connected") {
      this.update({
        status: "connected",
        reason: null,
        phone_number: link.phoneNumber,
        display_name: link.displayName ?? this.current().display_name,
        last_seen_at: now,
        qr: null,
      });
      this.deadlines.clear("qr_rotate", "qr_timeout");
      this.scheduleGatewayCheck(now);
      this.dispatcher.wake(now);
      await this.deadlines.rearm();
      return null;
    }
    const config = readConfig(this.env);
    const state = this.current();
    this.update({
      status: "pending",
      reason: null,
      qr: link.qr,
      phone_number: null,
      display_name: state.session_id,
    });
    this.deadlines.schedule("qr_rotate", "", now + config.QR_ROTATE_SECONDS * 1000);
    this.deadlines.schedule("qr_timeout", "", now + config.QR_TIMEOUT_SECONDS * 1000);
    await this.deadlines.rearm();
    return link.qr;
  }

  private guard(command: SessionCommand): Failure | null {
    const state = this.state();
    if (!state) return fail("not_found", "No such session.");
    const conflict = conflictOf(command, state.status);
    return conflict
      ? fail(conflict, `The session is ${state.status}; ${command} is not possible now.`)
      : null;
  }

  private sandbox(): SandboxGateway | null {
    const state = this.state();
    if (!state || readConfig(this.env).gateway.kind !== "sandbox") return null;
    return new SandboxGateway(this.sql, state.origin, state.id);
  }

  private state(): StoredSession | null {
    if (!this.stored) return null;
    return this.sql.exec<StoredSession>("SELECT * FROM session LIMIT 1").toArray()[0] ?? null;
  }

  private current(): StoredSession {
    const state = this.state();
    if (!state) throw new Error("session object has no session");
    return state;
  }

  private update(
    changes: Partial<Omit<StoredSession, "id" | "account_id" | "session_id" | "created_at">>,
  ): void {
    const entries = Object.entries({ ...changes, updated_at: Date.now() });
    this.sql.exec(
      `UPDATE session SET ${entries.map(([column]) => `${column} = ?`).join(", ")}`,
      ...entries.map(([, v]) => v),
    );
  }

  private record(): SessionRecord {
    return toSessionRecord(this.row());
  }

  private row(): SessionRow {
    const s = this.current();
    return {
      id: s.id,
      accountId: s.account_id,
      sessionId: s.session_id,
      phoneNumber: s.phone_number,
      displayName: s.display_name,
      status: s.status,
      reason: s.reason,
      lastSeenAt: s.last_seen_at,
      createdAt: s.created_at,
      updatedAt: s.updated_at,
    };
  }

  /** Writes the session's current state to its D1 row (the read model). */
  private async writeThrough(insert = false): Promise<void> {
    const row = this.row();
    const db = createDb(this.env.DB);
    if (insert) await db.insert(sessions).values(row);
    else await db.update(sessions).set(row).where(eq(sessions.id, row.id));
  }
}

/** A failed gateway call as the failure an RPC answers; anything but a GatewayError is rethrown. */
function gatewayFailure(error: unknown): Failure {
  if (!(error instanceof GatewayError)) throw error;
  return error.permanent
    ? fail("gateway_rejected", `The gateway refused the request (${error.message}).`)
    : fail("gateway_unavailable", `The gateway could not be reached (${error.message}). Try again later.`);
}
