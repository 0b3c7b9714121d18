import { DurableObject } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { readConfig } from "../config";
import { createDb } from "../db/client";
import { applyAcks, failAndRefund, markDue, markSent, recordRetry } from "../db/queries/messages";
import { sessions } from "../db/schema";
import type { DispatchRequest } from "../delivery/dispatch-request";
import { Outbox, type OutboxItem } from "../delivery/outbox";
import { MAX_SEND_ATTEMPTS, retryDelayMs } from "../delivery/retry";
import type { AckKind, ChatGateway, GatewayEvent, LinkState, SendOutcome } from "../gateways/gateway";
import { SandboxGateway, sandboxPhoneNumber } from "../gateways/sandbox";
import { type Failure, fail, ok, type SessionResult } from "./result";
import {
  gatewaySessionName,
  type SessionRecord,
  type SessionRow,
  type SessionStatus,
  toSessionRecord,
} from "./session-record";
import { conflictOf, type SessionCommand } from "./transitions";

/**
 * Kinds of deadline the alarm runs: QR rotation and timeout, a wake-up for the dispatcher
 * (pacing gaps, scheduled sends, retry backoff), the expiry of waiting messages, and the sandbox's
 * delivery receipts (`ref` is the message id).
 */
type DeadlineKind = "qr_rotate" | "qr_timeout" | "dispatch" | "expire" | "ack_delivered" | "ack_read";

/** Longest pacing gap the dispatcher waits out in-line; longer gaps go through the alarm. */
const INLINE_WAIT_MS = 5_000;
/** How long one dispatcher run may last before it hands over to a fresh alarm. */
const DISPATCH_RUN_MS = 60_000;

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
 * One chat session: the single owner and writer of its status, its QR lifecycle and its gateway
 * connection. State lives in the object's SQLite storage and every change is written through to
 * the D1 `sessions` row that the list and show endpoints read.
 *
 * Deadlines (QR rotation, QR timeout) sit in a `deadlines` table; the one alarm runs whatever is
 * due and re-arms for the earliest remaining deadline (the cloudflare/agents pattern).
 */
export class ChatSession extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private outbox: Outbox;
  /** True while a dispatcher run is in progress (one at a time per object). */
  private dispatching = false;
  /** Set by destroy(): the storage (tables included) is gone, so this instance must not touch it. */
  private deleted = false;
  /** Tail of the chain that runs state changes one at a time (gateway calls and D1 writes await). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.outbox = this.setUpStorage();
  }

  /** Idempotent schema set-up, on every wake and again after destroy() wiped the storage. */
  private setUpStorage(): Outbox {
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS session (
        id TEXT PRIMARY KEY, account_id TEXT NOT NULL, session_id TEXT NOT NULL, phone_number TEXT,
        display_name TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, last_seen_at INTEGER,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, origin TEXT NOT NULL, qr TEXT);
      CREATE TABLE IF NOT EXISTS deadlines (
        kind TEXT NOT NULL, ref TEXT NOT NULL, due_at INTEGER NOT NULL, PRIMARY KEY (kind, ref));
      CREATE TABLE IF NOT EXISTS alarm_state (id INTEGER PRIMARY KEY CHECK (id = 1), armed_for INTEGER);
    `);
    return new Outbox(this.sql);
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
      const link = await this.gateway().start(sessionId);
      const qr = await this.applyLink(link, now);
      await this.writeThrough(true);
      return { session: this.record(), qr: qr ?? "" };
    });
  }

  /** The QR payload to show; only while pending (409 `session_not_pending`). */
  async qrPayload(): Promise<SessionResult<string>> {
    const state = this.state();
    if (!state) return fail("not_found", "No such session.");
    if (state.status !== "pending" || !state.qr)
      return fail("session_not_pending", "The QR code is only served while the session is pending.");
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
      const link = await this.gateway().start(this.current().session_id);
      const qr = await this.applyLink(link, Date.now());
      await this.writeThrough();
      return ok({ session: this.record(), qr });
    });
  }

  /** Unlinks at the gateway, removes the D1 row and clears this object's storage. */
  async destroy(): Promise<void> {
    return this.exclusive(async () => {
      const state = this.state();
      if (!state) return;
      await this.failPending("session_deleted");
      await this.gateway().remove(state.session_id);
      await createDb(this.env.DB).delete(sessions).where(eq(sessions.id, state.id));
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      // Work already under way in this instance (a dispatcher run, an alarm) still finds empty
      // tables and stops for want of a session, instead of failing on missing ones.
      this.outbox = this.setUpStorage();
      this.deleted = true;
    });
  }

  /** Applies an event reported by the chat network (real gateways' webhooks, the sandbox). */
  async applyEvent(event: GatewayEvent): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(() => this.handleEvent(event));
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
      const now = Date.now();
      if (!state || state.status === "banned") {
        const reason = state ? "session_banned" : "session_deleted";
        await this.refundGrouped(
          requests.map((r) => ({ id: r.id, account_id: r.accountId })),
          reason,
          now,
        );
        // A deleted session's object keeps nothing (its storage was cleared on delete).
        if (!state && !this.deleted) await this.ctx.storage.deleteAll();
        return 0;
      }
      const added = this.outbox.add(requests, readConfig(this.env).MESSAGE_TTL_SECONDS * 1000);
      if (added > 0) {
        this.schedule("dispatch", "", now);
        this.scheduleExpiry();
        await this.rearm();
      }
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

  /**
   * Runs every deadline due by the time the alarm was armed for, then the dispatcher, then
   * re-arms for the earliest remaining deadline. Using the armed-for time (not only the clock)
   * makes an alarm that runs early, as `runDurableObjectAlarm` does in tests, behave as if it ran
   * on time; pacing gaps are still measured on the real clock.
   */
  async alarm(): Promise<void> {
    if (this.deleted) return;
    const horizon = await this.exclusive(async () => {
      const armed = this.sql
        .exec<{ armed_for: number | null }>("SELECT armed_for FROM alarm_state WHERE id = 1")
        .toArray()[0];
      const horizon = Math.max(Date.now(), armed?.armed_for ?? 0);
      const due = this.sql
        .exec<{ kind: DeadlineKind; ref: string; due_at: number }>(
          "SELECT kind, ref, due_at FROM deadlines WHERE due_at <= ? ORDER BY due_at",
          horizon,
        )
        .toArray();
      const acks: { messageId: string; kind: AckKind; at: number }[] = [];
      for (const deadline of due) {
        this.sql.exec("DELETE FROM deadlines WHERE kind = ? AND ref = ?", deadline.kind, deadline.ref);
        if (deadline.kind === "ack_delivered" || deadline.kind === "ack_read") {
          acks.push({
            messageId: deadline.ref,
            kind: deadline.kind === "ack_read" ? "read" : "delivered",
            at: Date.now(),
          });
        } else if (deadline.kind === "expire") {
          await this.expireWaiting(horizon);
        } else if (deadline.kind !== "dispatch") {
          await this.runQrDeadline(deadline.kind, deadline.due_at);
        }
      }
      await applyAcks(createDb(this.env.DB), acks);
      this.outbox.purge(Date.now());
      return horizon;
    });
    await this.dispatch(horizon);
    await this.exclusive(async () => {
      if (!this.deleted) await this.rearm();
    });
  }

  private async runQrDeadline(kind: "qr_rotate" | "qr_timeout", dueAt: number): Promise<void> {
    const state = this.state();
    if (state?.status !== "pending") return;
    const config = readConfig(this.env);
    if (kind === "qr_rotate") {
      const qr = await this.gateway().currentQr(state.session_id);
      this.sql.exec("UPDATE session SET qr = ?", qr);
      this.schedule("qr_rotate", "", dueAt + config.QR_ROTATE_SECONDS * 1000);
    } else {
      this.update({ status: "failed", reason: "qr_timeout", qr: null });
      this.clearQrDeadlines();
      await this.writeThrough();
    }
  }

  // ---- dispatcher --------------------------------------------------------------------------

  /**
   * Sends due outbox entries one by one while the session is connected, pacing the gateway calls:
   * each call starts at least the message's `delay_between` after the previous call finished
   * (issue 3, "Fan-out and pacing"). Short gaps are waited out here, long ones via the alarm.
   * `horizon` is the logical now for scheduled times and retry backoff (see {@link alarm}).
   */
  private async dispatch(horizon: number): Promise<void> {
    if (this.dispatching) return;
    this.dispatching = true;
    const startedAt = Date.now();
    try {
      for (;;) {
        if (this.deleted || this.state()?.status !== "connected") return;
        const now = Math.max(Date.now(), horizon);
        const due = this.outbox.takeDueScheduled(now);
        if (due.length > 0) await markDue(createDb(this.env.DB), due, Date.now());
        const item = this.outbox.next(now);
        if (!item) {
          const wake = this.outbox.nextDueAt();
          if (wake !== null) this.schedule("dispatch", "", wake);
          return;
        }
        const readyAt = this.outbox.lastCallAt() + item.delay_between;
        const wait = readyAt - Date.now();
        if (wait > 0) {
          if (wait > INLINE_WAIT_MS || Date.now() - startedAt > DISPATCH_RUN_MS) {
            this.schedule("dispatch", "", readyAt);
            return;
          }
          await scheduler.wait(wait);
          continue;
        }
        await this.exclusive(() => this.sendOne(item.id));
        if (Date.now() - startedAt > DISPATCH_RUN_MS) {
          this.schedule("dispatch", "", Date.now());
          return;
        }
      }
    } finally {
      this.dispatching = false;
    }
  }

  /** One gateway call for one outbox entry, and its outcome written to the outbox and to D1. */
  private async sendOne(id: string): Promise<void> {
    const state = this.state();
    const item = this.outbox.get(id);
    if (state?.status !== "connected" || item?.state !== "pending") return;
    this.outbox.markSending(id);
    const attempts = item.attempts + 1;
    const gateway = this.gateway();
    let outcome: SendOutcome;
    try {
      outcome = await gateway.send(state.session_id, {
        id,
        to: item.to_number,
        type: item.type,
        content: item.content,
        mediaUrl: item.media_url,
      });
    } catch (error) {
      outcome = {
        ok: false,
        permanent: false,
        reason: error instanceof Error ? error.message : String(error),
      };
    }
    const at = Date.now();
    this.outbox.recordCall(at);
    const db = createDb(this.env.DB);
    if (outcome.ok) {
      this.outbox.markDone([id], "sent", at);
      await markSent(db, id, {
        at,
        providerMessageId: outcome.providerMessageId,
        fromNumber: state.phone_number,
        attempts,
        gateway: gateway.name,
      });
      if (gateway.name === "sandbox") {
        const config = readConfig(this.env);
        this.schedule("ack_delivered", id, at + config.SANDBOX_DELIVERED_MS);
        this.schedule("ack_read", id, at + config.SANDBOX_READ_MS);
      }
    } else if (outcome.permanent || attempts >= MAX_SEND_ATTEMPTS) {
      this.outbox.markDone([id], "failed", at);
      await recordRetry(db, id, { attempts, error: outcome.reason, nextAttemptAt: null, at });
      await failAndRefund(
        db,
        item.account_id,
        [id],
        outcome.permanent ? outcome.reason : "retries_exhausted",
        at,
      );
    } else {
      const nextAttemptAt = at + retryDelayMs(attempts);
      this.outbox.markRetry(id, nextAttemptAt);
      await recordRetry(db, id, { attempts, error: outcome.reason, nextAttemptAt, at });
    }
  }

  /** Fails waiting messages whose time to live ran out while the session was unavailable. */
  private async expireWaiting(now: number): Promise<void> {
    const expired = this.outbox.expired(now);
    this.outbox.markDone(
      expired.map((e) => e.id),
      "failed",
      Date.now(),
    );
    await this.refundGrouped(expired, "message_expired", Date.now());
    this.scheduleExpiry();
  }

  /** Fails every message still waiting in the outbox (session banned or deleted), with refunds. */
  private async failPending(reason: string): Promise<void> {
    const pending = this.outbox.pending();
    this.outbox.markDone(
      pending.map((p) => p.id),
      "failed",
      Date.now(),
    );
    await this.refundGrouped(pending, reason, Date.now());
  }

  private async refundGrouped(
    items: Pick<OutboxItem, "id" | "account_id">[],
    reason: string,
    now: number,
  ): Promise<void> {
    const byAccount = new Map<string, string[]>();
    for (const item of items)
      byAccount.set(item.account_id, [...(byAccount.get(item.account_id) ?? []), item.id]);
    const db = createDb(this.env.DB);
    for (const [accountId, ids] of byAccount) await failAndRefund(db, accountId, ids, reason, now);
  }

  private scheduleExpiry(): void {
    const at = this.outbox.nextExpiryAt();
    if (at === null) this.sql.exec("DELETE FROM deadlines WHERE kind = 'expire'");
    else this.schedule("expire", "", at);
  }

  // ---- internals ---------------------------------------------------------------------------

  private async handleEvent(event: GatewayEvent): Promise<SessionResult<SessionRecord>> {
    const now = Date.now();
    switch (event.type) {
      case "linked": {
        const guard = this.guard("scan");
        if (guard) return guard;
        await this.applyLink(
          { status: "connected", phoneNumber: event.phoneNumber, displayName: event.displayName },
          now,
        );
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
        await this.failPending("session_banned");
        break;
      }
    }
    await this.writeThrough();
    return ok(this.record());
  }

  /** Moves to what the gateway reports: connected, or pending with a QR and fresh deadlines. */
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
      this.clearQrDeadlines();
      // Messages that waited while the session was away can go now.
      if (this.outbox.nextDueAt() !== null) this.schedule("dispatch", "", now);
      await this.rearm();
      return null;
    }
    const config = readConfig(this.env);
    this.update({ status: "pending", reason: null, qr: link.qr });
    this.schedule("qr_rotate", "", now + config.QR_ROTATE_SECONDS * 1000);
    this.schedule("qr_timeout", "", now + config.QR_TIMEOUT_SECONDS * 1000);
    await this.rearm();
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

  private gateway(): ChatGateway {
    const gateway = this.sandbox();
    if (!gateway) throw new Error("session object has no session");
    return gateway;
  }

  private sandbox(): SandboxGateway | null {
    const state = this.state();
    if (!state || readConfig(this.env).CHATAPP_GATEWAY !== "sandbox") return null;
    return new SandboxGateway(this.sql, state.origin, state.id);
  }

  private state(): StoredSession | null {
    if (this.deleted) return null;
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

  private schedule(kind: DeadlineKind, ref: string, dueAt: number): void {
    this.sql.exec(
      "INSERT INTO deadlines (kind, ref, due_at) VALUES (?, ?, ?) ON CONFLICT (kind, ref) DO UPDATE SET due_at = excluded.due_at",
      kind,
      ref,
      dueAt,
    );
  }

  private clearQrDeadlines(): void {
    this.sql.exec("DELETE FROM deadlines WHERE kind IN ('qr_rotate', 'qr_timeout')");
  }

  private async rearm(): Promise<void> {
    const next =
      this.sql.exec<{ due: number | null }>("SELECT MIN(due_at) AS due FROM deadlines").toArray()[0]?.due ??
      null;
    this.sql.exec("INSERT OR REPLACE INTO alarm_state (id, armed_for) VALUES (1, ?)", next);
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
