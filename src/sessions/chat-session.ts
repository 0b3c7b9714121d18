import { DurableObject } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { readConfig } from "../config";
import { batchSql, createDb } from "../db/client";
import { markAccepted } from "../db/queries/messages";
import { sessions } from "../db/schema";
import { Dispatcher, SYNC_RETRY_MS } from "../delivery/dispatcher";
import { failover } from "../delivery/failover";
import { type CampaignHold, Outbox } from "../delivery/outbox";
import { publishEvents } from "../events/publish";
import { insertEventStatement, recordedIn } from "../events/record";
import { createGateway } from "../gateways";
import { type ChatGateway, GatewayError, type GatewayEvent, type LinkState } from "../gateways/gateway";
import { SandboxGateway, type SandboxReceived } from "../gateways/sandbox";
import type { DispatchRequest } from "../messages/dispatch-request";
import { receiveMessage } from "../messages/receive";
import { applyMoves } from "../moves/apply";
import { failMoves, type MessageMove } from "../moves/message";
import { type Deadline, Deadlines } from "./deadlines";
import { GatewayChecks, GatewayHealth, type GatewayHealthView } from "./gateway-health";
import {
  AUDIENCE_HEADER,
  type Audience,
  answerClose,
  CLOSE_LINK_REVOKED,
  CLOSE_LINK_REVOKED_REASON,
  CLOSE_SESSION_DELETED,
  CLOSE_SESSION_DELETED_REASON,
  LiveWatchers,
  type ShownQr,
} from "./live";
import { type Failure, fail, ok, type SessionResult } from "./result";
import { networkBans, networkDrops, phoneScans, type ScanRequest, sandboxOf } from "./sandbox-phone";
import {
  gatewaySessionName,
  type SessionRecord,
  type SessionRow,
  type SessionStatus,
} from "./session-record";
import { SessionStore, type StoredSession } from "./session-store";
import {
  conflictOf,
  initial,
  next,
  type SessionChange,
  type SessionCommand,
  type SessionInput,
  type Transition,
} from "./transitions";

/**
 * One chat session: the single owner and writer of its status, its QR lifecycle, its gateway
 * connection and its outbound messages. State lives in the object's SQLite storage; every status
 * change is written through to the D1 `sessions` row that the list and show endpoints read.
 *
 * One alarm serves every deadline (QR rotation and timeout, pacing wake-ups, message expiry,
 * sandbox acks, gateway checks): see {@link Deadlines}. Sending is the {@link Dispatcher}'s job.
 *
 * The gateway's word on the session's link (its webhook events and its answers to checks) moves
 * the status; webhook status events older than the newest one applied are ignored. Every status
 * move is decided by transitions.ts `next` and applied in one place, {@link ChatSession.apply}.
 *
 * This class keeps the RPC surface; the session's own record is a {@link SessionStore}, the
 * sandbox's phone and network are in sandbox-phone.ts, gateway checks are {@link GatewayChecks}.
 *
 * Live watchers (`GET /v1/chatapp/sessions/{id}/live`) are hibernatable WebSockets accepted by
 * {@link ChatSession.fetch}; they get a frame for every change {@link ChatSession.commit}
 * records (see live.ts for the frames).
 */
export class ChatSession extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly store: SessionStore;
  private readonly outbox: Outbox;
  private readonly deadlines: Deadlines;
  private readonly dispatcher: Dispatcher;
  private readonly health: GatewayHealth;
  private readonly checks: GatewayChecks;
  private readonly live: LiveWatchers;
  /** Tail of the chain that runs state changes one at a time (gateway calls and D1 writes await). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.store = new SessionStore(this.sql);
    this.outbox = new Outbox(this.sql);
    this.deadlines = new Deadlines(this.sql, ctx.storage);
    this.health = new GatewayHealth(this.sql);
    this.live = new LiveWatchers(ctx);
    // Answered by the runtime without waking the object: a watcher's keep-alive costs nothing.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    this.checks = new GatewayChecks(
      {
        health: this.health,
        deadlines: this.deadlines,
        state: () => this.state(),
        gateway: () => this.gateway(),
        move: (input) => this.move(input),
      },
      env,
    );
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
    // Idempotent schema set-up on every wake of a stored session (new tables of a newer version).
    if (this.stored) {
      this.setUpStorage();
      // Work left by a stop (entries to send, outcomes not yet in D1, a write owed to D1) resumes.
      if (this.outbox.nextDueAt() !== null || this.outbox.unsyncedCount() > 0) {
        this.deadlines.schedule("dispatch", "", Date.now());
      }
      if (this.deadlines.stale()) void ctx.blockConcurrencyWhile(() => this.deadlines.rearm());
    }
  }

  /**
   * Whether this object holds a session. Its tables are created with the session and dropped with
   * it, so the object of a deleted (or never created) session keeps no storage however it is
   * called, and every path checks this before touching storage.
   */
  private get stored(): boolean {
    return this.store.held;
  }

  private setUpStorage(): void {
    this.store.setUp();
    this.outbox.setUp();
    this.deadlines.setUp();
    this.health.setUp();
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
      this.store.insert({ id: input.id, accountId: input.accountId, sessionId, origin: input.origin, now });
      let link: LinkState;
      try {
        link = await this.gateway().create(sessionId);
      } catch (error) {
        await this.forget();
        return gatewayFailure(error);
      }
      const change = initial(link);
      await this.apply(change, now);
      return ok({ session: this.store.record(), qr: change.status === "pending" ? change.qr : "" });
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

  /**
   * The session as the object holds it now, with the QR shown while pending (its payload and
   * when the next one replaces it, epoch ms): what a live watcher's first frame and the link
   * page show. `not_found` when the object holds no session.
   */
  async snapshot(): Promise<SessionResult<{ session: SessionRecord; qr: ShownQr | null }>> {
    if (!this.state()) return fail("not_found", "No such session.");
    return ok({ session: this.store.record(), qr: this.shownQr() });
  }

  /**
   * Accepts a live watcher: a WebSocket upgrade forwarded by the Worker's `/live` route (RPC
   * cannot return a WebSocket, so this is the object's `fetch`). The route has authenticated the
   * caller and checked the session is theirs; {@link AUDIENCE_HEADER} says whether an API key
   * (`account`) or a link token (`link`) opened it. Answers 101 with the socket, whose first
   * frame is `session.snapshot`; 426 without `Upgrade: websocket`; 404 when the object holds no
   * session (deleted since the route checked).
   */
  async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return new Response("Expected a WebSocket upgrade.", { status: 426 });
    }
    const audience: Audience = request.headers.get(AUDIENCE_HEADER) === "link" ? "link" : "account";
    // In the chain of changes, so that no frame of a change under way can precede the snapshot.
    return this.exclusive(async () => {
      if (!this.state()) return new Response("No such session.", { status: 404 });
      const client = this.live.watch(audience, {
        type: "session.snapshot",
        session: this.store.record(),
        qr: this.shownQr(),
      });
      return new Response(null, { status: 101, webSocket: client });
    });
  }

  /**
   * The session's link tokens were revoked: closes the live sockets opened with one (code 4403,
   * `link revoked`); those opened with an API key stay.
   */
  async closeLinkWatchers(): Promise<void> {
    this.live.close("link", CLOSE_LINK_REVOKED, CLOSE_LINK_REVOKED_REASON);
  }

  /** Watchers have nothing to say: `ping` is answered by the auto-response, anything else is ignored. */
  async webSocketMessage(): Promise<void> {}

  /** A watcher closed its socket: complete the close handshake (see live.ts `answerClose`). */
  async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    answerClose(ws, code, reason);
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
      return this.command({ type: "disconnect" });
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
      const moved = await this.command({ type: "reconnect", link });
      if (!moved.ok) return moved;
      return ok({ session: moved.value, qr: link.status === "pending" ? link.qr : null });
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
      await this.dispatcher.handOver({ id: state.id, accountId: state.account_id }, "session_deleted");
      await this.dispatcher.failPending("session_deleted");
      // The storage goes next: every outcome it holds must be in D1 first.
      if (!(await this.dispatcher.flush())) {
        return fail("service_unavailable", "The session's messages could not be recorded; try again later.");
      }
      const db = createDb(this.env.DB);
      // Also messages whose queue message has not reached this object yet.
      const now = Date.now();
      await applyMoves(this.env, [
        {
          kind: "fail",
          accountId: state.account_id,
          target: { sessionId: state.id },
          reason: "session_deleted",
          at: now,
        },
      ]);
      await db.delete(sessions).where(eq(sessions.id, state.id));
      await this.forget();
      this.live.closeAll(
        { type: "session.deleted", id: state.id },
        CLOSE_SESSION_DELETED,
        CLOSE_SESSION_DELETED_REASON,
      );
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
      let code: string;
      try {
        code = await this.gateway().requestPairingCode(this.current().session_id, phoneNumber);
      } catch (error) {
        return gatewayFailure(error);
      }
      this.live.broadcast({ type: "session.pairing_code", pairingCode: code, phoneNumber, at: Date.now() });
      return ok(code);
    });
  }

  /**
   * Checks the gateway's view of the session now (correcting the status if it differs) and
   * returns the health record.
   */
  async gatewayHealth(): Promise<SessionResult<GatewayHealthView>> {
    return this.exclusive(async () => {
      if (!this.state()) return fail("not_found", "No such session.");
      await this.checks.check();
      return ok(this.health.view(this.gateway().name));
    });
  }

  // ---- RPC: message fan-out ----------------------------------------------------------------

  /**
   * Takes messages from the outbound Queue into the outbox, records in D1 that they were accepted
   * (so the reconciliation sweep leaves them alone) and wakes the dispatcher. Messages already
   * known (a redelivered queue message) are ignored, whatever became of them. A banned session
   * fails the new ones at once, with a refund; a deleted one fails those that never left.
   * @returns how many were new.
   */
  async enqueue(requests: DispatchRequest[]): Promise<number> {
    return this.exclusive(async () => {
      const state = this.state();
      const db = createDb(this.env.DB);
      const now = Date.now();
      if (!state) {
        // Deleted: D1 got every outcome before the storage went, so only a message that never
        // reached this object can still be waiting. A campaign's move to its other sessions.
        const moved = new Set(await this.strandedFailover(requests));
        const waiting = requests
          .filter((r) => !moved.has(r.id))
          .map((r) => ({ id: r.id, accountId: r.accountId }));
        await applyMoves(this.env, failMoves(waiting, "session_deleted", now));
        return 0;
      }
      const added = this.dispatcher.accept(requests, now);
      await markAccepted(
        db,
        requests.map((r) => r.id),
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
      if (added > 0) await this.deadlines.rearm();
      return added;
    });
  }

  /**
   * Holds campaign `campaignId`'s messages here: `paused`, they wait (a message being handed to
   * the gateway now finishes first: this runs between two sends); `cancelled`, those waiting fail
   * with reason `campaign_cancelled` and are refunded, and so do any that arrive later. Holding
   * again is harmless. @returns false when this object holds no session.
   */
  async holdCampaign(campaignId: string, hold: CampaignHold): Promise<boolean> {
    return this.exclusive(async () => {
      if (!this.stored) return false;
      this.outbox.hold(campaignId, hold);
      await this.dispatcher.failCancelled();
      return true;
    });
  }

  /** Lifts a pause of campaign `campaignId` (see {@link holdCampaign}) and wakes the dispatcher. */
  async releaseCampaign(campaignId: string): Promise<boolean> {
    return this.exclusive(async () => {
      if (!this.stored) return false;
      this.outbox.release(campaignId);
      this.dispatcher.wake(Date.now());
      await this.deadlines.rearm();
      return true;
    });
  }

  /** Campaign messages that reached this object after its session was deleted: moved if they can be. */
  private async strandedFailover(requests: DispatchRequest[]): Promise<string[]> {
    const stranded = requests.filter((r) => r.campaignId);
    const first = stranded[0];
    if (!first) return [];
    const from = { id: first.sessionId, accountId: first.accountId };
    return failover(
      this.env,
      from,
      stranded.map((r) => ({ id: r.id, campaign_id: r.campaignId })),
      "session_deleted",
    );
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
      // The gateway's message id reaches D1 with the sent outcome: write pending ones first. When
      // D1 refuses, the call fails and the gateway delivers the events again.
      if (events.some((event) => event.type === "ack") && !(await this.dispatcher.flush())) {
        throw new Error("sent outcomes could not be written to D1; the receipts wait for a retry");
      }
      const receipts: MessageMove[] = [];
      for (const event of events) {
        if (event.type === "ack") {
          receipts.push(...receiptMoves(state, event));
        } else if (event.type === "incoming") {
          const current = this.current();
          await receiveMessage(this.env, {
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
          await this.move(event);
        }
      }
      await applyMoves(this.env, receipts);
      return true;
    });
  }

  // ---- RPC: sandbox phone ------------------------------------------------------------------

  /**
   * Sandbox only: a phone scans the current QR. With `token`, it must be the token of the QR
   * currently shown (the pairing page); without one, the script-facing scan endpoint links
   * whatever QR is shown. See sandbox-phone.ts `phoneScans`.
   */
  async sandboxScan(input: ScanRequest): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(async () => {
      const sandbox = this.sandbox();
      if (!sandbox) return fail("not_found", "No such session.");
      const guard = this.guard("scan");
      if (guard) return guard;
      const scan = phoneScans(sandbox, this.current().id, input);
      return scan.ok ? this.command(scan.value) : scan;
    });
  }

  /** Sandbox only: the network drops the connection; `loggedOut` also removes the link. */
  async sandboxDrop(input: { reason: string; loggedOut: boolean }): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(async () => {
      const sandbox = this.sandbox();
      if (!sandbox) return fail("not_found", "No such session.");
      const guard = this.guard("drop");
      if (guard) return guard;
      return this.command(networkDrops(sandbox, input));
    });
  }

  /** Sandbox only: the network bans the linked account. */
  async sandboxBan(input: { reason: string }): Promise<SessionResult<SessionRecord>> {
    return this.exclusive(async () => {
      const sandbox = this.sandbox();
      if (!sandbox) return fail("not_found", "No such session.");
      const guard = this.guard("ban");
      if (guard) return guard;
      return this.command(networkBans(sandbox, input));
    });
  }

  /** Sandbox only: what the phone of `toNumber` received from this session, newest first. */
  async sandboxReceived(toNumber: string): Promise<SessionResult<SandboxReceived[]>> {
    const sandbox = this.sandbox();
    if (!sandbox) return fail("not_found", "No such session.");
    return ok(sandbox.receivedBy(toNumber));
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
      const acks: Deadline[] = [];
      for (const deadline of due) {
        if (deadline.kind === "ack_delivered" || deadline.kind === "ack_read") {
          acks.push(deadline);
        } else if (deadline.kind === "sync") {
          // Outcomes are flushed below; the session row is written here.
          if (deadline.ref === "session") await this.writeThrough();
        } else if (deadline.kind === "expire") {
          await this.dispatcher.expire(horizon);
        } else if (deadline.kind === "qr_rotate" || deadline.kind === "qr_timeout") {
          await this.runQrDeadline(deadline.kind, deadline.dueAt);
        } else if (deadline.kind === "gateway_check") {
          await this.checks.run();
        }
      }
      // Acks only move messages D1 already knows as sent.
      await this.applySandboxAcks(acks);
      this.outbox.purge(Date.now());
      return horizon;
    });
  }

  /**
   * The sandbox's receipts, once D1 holds every sent outcome; while D1 refuses writes they wait
   * for the next `sync` retry.
   */
  private async applySandboxAcks(acks: Deadline[]): Promise<void> {
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
      await applyMoves(this.env, moves);
    } catch (error) {
      console.error(JSON.stringify({ level: "error", event: "receipts_deferred", error: String(error) }));
      for (const ack of acks) this.deadlines.schedule(ack.kind, ack.ref, Date.now() + SYNC_RETRY_MS);
    }
  }

  private async runQrDeadline(kind: "qr_rotate" | "qr_timeout", dueAt: number): Promise<void> {
    const state = this.state();
    if (state?.status !== "pending") return;
    if (kind === "qr_rotate") {
      // Scheduled first: the new QR's `expires_at` in its live frame is this next rotation.
      this.deadlines.schedule("qr_rotate", "", dueAt + readConfig(this.env).QR_ROTATE_SECONDS * 1000);
      try {
        await this.showQr(await this.gateway().currentQr(state.session_id));
      } catch (error) {
        // The QR shown stays until the next rotation reaches the gateway.
        if (!(error instanceof GatewayError)) throw error;
      }
    } else if ((await this.move({ type: "qr_timeout" })).type === "move") {
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
    this.store.forget();
  }

  /** Runs state changes one at a time: each waits for the previous one to settle. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  // ---- status: the one place it moves ----------------------------------------------------

  /**
   * Moves the session as `input` says: asks transitions.ts `next`, fetches the QR a `qr` event
   * came without (a gateway that cannot be reached leaves the QR shown as it is), and applies the
   * answer. A conflict changes nothing; `now` (epoch ms) is the time of a link.
   * @returns the transition applied.
   */
  private async move(input: SessionInput, now = Date.now()): Promise<Transition> {
    const state = this.current();
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
  private async command(
    input: SessionInput & { type: SessionCommand },
  ): Promise<SessionResult<SessionRecord>> {
    const { status } = this.current();
    const transition = await this.move(input);
    if (transition.type === "conflict") return refused(transition.code, status, input.type);
    return ok(this.store.record());
  }

  /**
   * Applies a move decided by transitions.ts: stores the new status and reason with what goes
   * with them, clears what only a pending session has (the QR and its deadlines) or starts it
   * again, starts gateway checks and waiting messages on a link, fails the waiting messages on a
   * ban, and commits: `session.status_changed` when the status or reason changed (see
   * {@link commit}). `now` is the link's time (epoch ms), `last_seen_at` of a connected session.
   */
  private async apply(change: SessionChange, now: number): Promise<void> {
    const before = this.current();
    switch (change.status) {
      case "connected":
        this.store.update({
          status: "connected",
          reason: null,
          phone_number: change.phoneNumber,
          display_name: change.displayName ?? this.current().display_name,
          last_seen_at: now,
          qr: null,
        });
        this.deadlines.clear("qr_rotate", "qr_timeout");
        this.checks.schedule(now);
        this.dispatcher.wake(now);
        await this.deadlines.rearm();
        break;
      case "pending": {
        const config = readConfig(this.env);
        this.store.update({
          status: "pending",
          reason: null,
          qr: change.qr,
          phone_number: null,
          display_name: this.current().session_id,
        });
        this.deadlines.schedule("qr_rotate", "", now + config.QR_ROTATE_SECONDS * 1000);
        this.deadlines.schedule("qr_timeout", "", now + config.QR_TIMEOUT_SECONDS * 1000);
        await this.deadlines.rearm();
        break;
      }
      default:
        this.store.update({ status: change.status, reason: change.reason, qr: null });
        this.deadlines.clear("qr_rotate", "qr_timeout");
        // Campaign messages go on from the campaign's other sessions (src/campaigns/failover.ts).
        if (change.status === "banned" || change.status === "failed") {
          await this.dispatcher.handOver(
            { id: before.id, accountId: before.account_id },
            `session_${change.status}`,
          );
        }
        if (change.failPending) await this.dispatcher.failPending("session_banned");
    }
    const after = this.current();
    const moved = after.status !== before.status || after.reason !== before.reason;
    await this.commit(moved ? "session.status_changed" : null, after.updated_at);
  }

  /** Shows a new QR on a pending session, with its `session.qr_updated` event. */
  private async showQr(qr: string): Promise<void> {
    if (qr === this.current().qr) return;
    this.store.setQr(qr);
    await this.commit("session.qr_updated", Date.now());
  }

  /**
   * The one place a change of the session is recorded, once the object's storage holds it:
   * keeps its event (`type`, at `at` epoch ms; none for a change that is not one, such as a new
   * phone name), writes the session and its events through to D1, then sends the change's live
   * frame to every watcher. Events and frames hang off here, and nowhere else.
   */
  private async commit(
    type: "session.status_changed" | "session.qr_updated" | null,
    at: number,
  ): Promise<void> {
    if (type) this.store.recordEvent(type, at);
    await this.writeThrough();
    if (!type || !this.live.watched) return;
    const session = this.store.record();
    const qr = this.shownQr();
    if (type === "session.status_changed") this.live.broadcast({ type, session, qr });
    else if (qr) this.live.broadcast({ type, session, qr });
  }

  /** The QR a pending session shows and when the next rotation replaces it; null in other states. */
  private shownQr(): ShownQr | null {
    const state = this.current();
    if (state.status !== "pending" || !state.qr) return null;
    return { payload: state.qr, expiresAt: this.deadlines.dueAt("qr_rotate", "") };
  }

  /** The gateway's current QR payload, or null when it cannot be reached now. */
  private async freshQr(sessionId: string): Promise<string | null> {
    try {
      return await this.gateway().currentQr(sessionId);
    } catch (error) {
      // The QR rotation (or the next event) fetches it again.
      if (!(error instanceof GatewayError)) throw error;
      return null;
    }
  }

  /** The 409 of `command` when the status does not allow it, checked before its gateway call. */
  private guard(command: SessionCommand): Failure | null {
    const state = this.state();
    if (!state) return fail("not_found", "No such session.");
    const conflict = conflictOf(command, state.status);
    return conflict ? refused(conflict, state.status, command) : null;
  }

  /** The sandbox gateway, or null when this object holds no session or another gateway is configured. */
  private sandbox(): SandboxGateway | null {
    return sandboxOf(this.sql, readConfig(this.env).gateway, this.state());
  }

  // ---- storage -------------------------------------------------------------------------------

  /** Shorthands for the {@link SessionStore} (the message paths read the session through them). */
  private state(): StoredSession | null {
    return this.store.state();
  }

  private current(): StoredSession {
    return this.store.current();
  }

  private row(): SessionRow {
    return this.store.row();
  }

  /**
   * Writes the session's current state to its D1 row (the read model), with the session's events
   * not yet in D1, in one batch. The write is owed until
   * D1 has it: a `sync` deadline is set before it and cleared after it, so a write D1 refuses (or
   * one cut short by a stop) is made again from the alarm, with the state of that time.
   */
  private async writeThrough(): Promise<void> {
    const row = this.row();
    const events = this.store.pendingEvents();
    this.deadlines.schedule("sync", "session", Date.now() + SYNC_RETRY_MS);
    try {
      const db = createDb(this.env.DB);
      const results = await batchSql(db, [
        db.insert(sessions).values(row).onConflictDoUpdate({ target: sessions.id, set: row }).getSQL(),
        ...events.map(insertEventStatement),
      ]);
      this.store.clearEvents(events.map((event) => event.id));
      this.deadlines.cancel("sync", "session");
      await publishEvents(
        this.env,
        recordedIn(
          results,
          events.map((_, i) => i + 1),
        ),
      );
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          event: "session_write_failed",
          session: row.id,
          error: causeOf(error),
        }),
      );
      await this.deadlines.rearm();
    }
  }
}

/** The 409 answered when `command` is not allowed while the session is `status`. */
function refused(code: Failure["code"], status: SessionStatus, command: SessionCommand): Failure {
  return fail(code, `The session is ${status}; ${command} is not possible now.`);
}

/** A failed gateway call as the failure an RPC answers; anything but a GatewayError is rethrown. */
function gatewayFailure(error: unknown): Failure {
  if (!(error instanceof GatewayError)) throw error;
  return error.permanent
    ? fail("gateway_rejected", `The gateway refused the request (${error.message}).`)
    : fail("gateway_unavailable", `The gateway could not be reached (${error.message}). Try again later.`);
}

/**
 * A gateway's receipt for a message this session sent, as message moves (by the gateway's message
 * id): `delivered` and `read` as such, `failed` fails and refunds a sent message, `sent` changes
 * nothing (a message is sent once the gateway accepted it).
 */
function receiptMoves(
  session: { id: string; account_id: string },
  ack: Extract<GatewayEvent, { type: "ack" }>,
): MessageMove[] {
  const target = { sessionId: session.id, providerMessageId: ack.providerMessageId };
  const at = Date.now();
  switch (ack.status) {
    case "delivered":
    case "read":
      return [{ kind: ack.status, target, at, gatewayAt: ack.at }];
    case "failed":
      return [
        {
          kind: "gateway_failed",
          accountId: session.account_id,
          target,
          reason: ack.reason ?? "gateway_ack_error",
          at,
          gatewayAt: ack.at,
        },
      ];
    case "sent":
      return [];
  }
}

/** A failed D1 write's own message (drizzle wraps it with the query and its parameters). */
function causeOf(error: unknown): string {
  return String(error instanceof Error && error.cause ? error.cause : error);
}
