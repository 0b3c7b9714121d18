import { DurableObject } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { readConfig } from "../config";
import { createDb } from "../db/client";
import { applyAcks, failWaitingOfSession } from "../db/queries/messages";
import { sessions } from "../db/schema";
import type { DispatchRequest } from "../delivery/dispatch-request";
import { Dispatcher } from "../delivery/dispatcher";
import { Outbox } from "../delivery/outbox";
import type { ChatGateway, GatewayEvent, LinkState } from "../gateways/gateway";
import { SandboxGateway, sandboxPhoneNumber } from "../gateways/sandbox";
import { Deadlines } from "./deadlines";
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
 * sandbox acks): see {@link Deadlines}. Sending is the {@link Dispatcher}'s job.
 */
export class ChatSession extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly outbox: Outbox;
  private readonly deadlines: Deadlines;
  private readonly dispatcher: Dispatcher;
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
    this.stored = true;
  }

  // ---- RPC: lifecycle commands -------------------------------------------------------------

  /**
   * Creates the session as `pending` and starts linking. `origin` is where sandbox pairing URLs
   * point. Returns the record and the first QR payload.
   */
  async create(input: {
    id: string;
    accountId: string;
    origin: string;
  }): Promise<{ session: SessionRecord; qr: string }> {
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
      const qr = await this.applyLink(await this.gateway().start(sessionId), now);
      await this.writeThrough(true);
      return { session: this.record(), qr: qr ?? "" };
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
      await this.gateway().disconnect(this.current().session_id);
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
      const qr = await this.applyLink(await this.gateway().start(this.current().session_id), Date.now());
      await this.writeThrough();
      return ok({ session: this.record(), qr });
    });
  }

  /**
   * Fails and refunds the messages still waiting, unlinks at the gateway, removes the D1 row and
   * clears this object's storage.
   */
  async destroy(): Promise<void> {
    return this.exclusive(async () => {
      const state = this.state();
      if (!state) return;
      await this.dispatcher.flush();
      await this.dispatcher.failPending("session_deleted");
      await this.gateway().remove(state.session_id);
      const db = createDb(this.env.DB);
      // Also messages whose queue message has not reached this object yet.
      await failWaitingOfSession(db, state.account_id, state.id, "session_deleted", Date.now());
      await db.delete(sessions).where(eq(sessions.id, state.id));
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      // The tables are gone too: work still under way in this instance (a dispatcher run, an
      // alarm) sees no session from now on and stops before touching storage.
      this.stored = false;
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
  }): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(async () => {
      const sandbox = this.sandbox();
      if (!sandbox) return fail("not_found", "No such session.");
      const guard = this.guard("scan");
      if (guard) return guard;
      if (input.token !== undefined && !sandbox.acceptsToken(input.token)) {
        return fail("not_found", "This QR code has expired; scan the current one.");
      }
      const phoneNumber = input.phoneNumber ?? sandboxPhoneNumber(this.current().id);
      const displayName = input.displayName ?? `Sandbox ${phoneNumber}`;
      sandbox.link(phoneNumber, displayName);
      return this.handleEvent({ type: "linked", phoneNumber, displayName });
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
      return this.handleEvent({ type: "dropped", reason: input.reason, loggedOut: input.loggedOut });
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
      return this.handleEvent({ type: "banned", reason: input.reason });
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
      const qr = await this.gateway().currentQr(state.session_id);
      this.sql.exec("UPDATE session SET qr = ?", qr);
      this.deadlines.schedule("qr_rotate", "", dueAt + readConfig(this.env).QR_ROTATE_SECONDS * 1000);
    } else {
      this.update({ status: "failed", reason: "qr_timeout", qr: null });
      this.deadlines.clear("qr_rotate", "qr_timeout");
      await this.writeThrough();
    }
  }

  // ---- for the dispatcher (DispatchHost) -----------------------------------------------------

  /** The session's status and numbers, or null once it is gone. */
  private session(): { status: SessionStatus; sessionId: string; phoneNumber: string | null } | null {
    const state = this.state();
    return state && { status: state.status, sessionId: state.session_id, phoneNumber: state.phone_number };
  }

  private gateway(): ChatGateway {
    const gateway = this.sandbox();
    if (!gateway) throw new Error("session object has no session");
    return gateway;
  }

  /** Runs state changes one at a time: each waits for the previous one to settle. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  // ---- internals ---------------------------------------------------------------------------

  private async handleEvent(event: GatewayEvent): Promise<SessionResult<SessionRecord>> {
    switch (event.type) {
      case "linked": {
        const guard = this.guard("scan");
        if (guard) return guard;
        const link = {
          status: "connected" as const,
          phoneNumber: event.phoneNumber,
          displayName: event.displayName,
        };
        await this.applyLink(link, Date.now());
        break;
      }
      case "dropped": {
        const guard = this.guard("drop");
        if (guard) return guard;
        this.update({ status: "disconnected", reason: event.reason });
        break;
      }
      case "banned": {
        const guard = this.guard("ban");
        if (guard) return guard;
        this.update({ status: "banned", reason: event.reason });
        await this.dispatcher.failPending("session_banned");
        break;
      }
    }
    await this.writeThrough();
    return ok(this.record());
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
    if (!state || readConfig(this.env).CHATAPP_GATEWAY !== "sandbox") return null;
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
