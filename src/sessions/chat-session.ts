import { DurableObject } from "cloudflare:workers";
import type { NewIncoming } from "../db/queries/messages";
import { SYNC_RETRY_MS } from "../delivery/dispatcher";
import type { CampaignHold } from "../delivery/outbox";
import type { GatewayEvent, GatewayName } from "../gateways/gateway";
import type { SandboxReceived } from "../gateways/sandbox";
import { log } from "../lib/log";
import type { StoredHealth } from "../lib/session-health";
import type { DispatchRequest } from "../messages/dispatch-request";
import { type HoldResult, SessionDispatchHost } from "./dispatch-host";
import type { GatewayHealthView } from "./gateway-health";
import { answerClose, type ShownQr } from "./live";
import { CREDENTIAL_HEADER, credentialOfRequest, credentialTag, lapseClose } from "./live-credentials";
import type { SessionResult } from "./result";
import type { PhoneState, ScanRequest } from "./sandbox-phone";
import { SessionCore } from "./session-core";
import { type CreateInput, type NumberAnswer, SessionLink } from "./session-link";
import { SessionMoves } from "./session-moves";
import type { SessionRecord } from "./session-record";

/**
 * One chat session: the single owner and writer of its status, its QR lifecycle, its gateway
 * connection and its outbound messages. State lives in the object's SQLite storage; every status
 * change is written through to the D1 `sessions` row that the list and show endpoints read.
 *
 * This class is the RPC surface and the object's lifecycle (construction, alarm, WebSocket
 * handlers); the work is done by the parts it composes, each given the {@link SessionCore} they
 * share (storage, gateway, watchers, the chain of changes):
 *
 * - {@link SessionLink} (session-link.ts): the link's life: create, QR, pairing code,
 *   disconnect, reconnect, delete, gateway events and checks, the sandbox's phone and network;
 * - {@link SessionMoves} (session-moves.ts): the one place the status moves (transitions.ts
 *   `next`), with its event, its write through to D1 and its live frame;
 * - {@link SessionDispatchHost} (dispatch-host.ts): what the delivery Dispatcher calls back into,
 *   the messages the outbound Queue brings, campaign holds, and the due deadlines;
 * - `LiveWatchers` (live.ts): the hibernatable WebSockets of `GET /v1/chatapp/sessions/{id}/live`.
 *
 * Methods that change state run one at a time in the core's chain ({@link SessionCore.exclusive}):
 * a gateway call or a D1 write awaited by one cannot interleave with another. One alarm serves
 * every deadline (QR rotation and timeout, pacing wake-ups, message expiry, sandbox acks,
 * gateway checks, writes owed to D1, the expiry of live sockets' credentials): see deadlines.ts.
 */
export class ChatSession extends DurableObject<Env> {
  // Parts are fields, not methods: every method of this class is RPC API, fields are not.
  private readonly core: SessionCore;
  private readonly link: SessionLink;
  private readonly dispatch: SessionDispatchHost;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.core = new SessionCore(ctx, env);
    // Answered by the runtime without waking the object: a watcher's keep-alive costs nothing.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    // The deadline loop and the sends reach the link and the moves through closures: the parts
    // only call each other once all exist.
    this.dispatch = new SessionDispatchHost(this.core, {
      runDeadline: (deadline) => this.link.runDeadline(deadline),
      reported: async (event) => {
        if (event.type === "health") await moves.healthEvent(event);
        else await moves.move(event);
      },
    });
    const moves = new SessionMoves(this.core, this.dispatch.dispatcher);
    this.link = new SessionLink(this.core, moves, this.dispatch.dispatcher);
    if (this.core.stored) {
      // The schema at its version on every wake (storage-schema.ts: nothing to do when current).
      // Synchronous, as SQLite storage is: the constructor ends before the runtime delivers any
      // call or alarm, so no blockConcurrencyWhile is needed (it is for awaited work, as below).
      this.core.setUp();
      // Work left by a stop (an entry cut off mid-send, entries to send, outcomes not yet in D1,
      // a write owed to D1) resumes.
      this.core.outbox.recover();
      this.dispatch.resume();
      const { deadlines } = this.core;
      if (deadlines.stale()) void ctx.blockConcurrencyWhile(() => deadlines.rearm());
    }
  }

  // ---- RPC: lifecycle commands -------------------------------------------------------------

  /**
   * Creates the session as `pending` and creates it at `gateway` (one the deployment enables,
   * checked by the caller). `origin` is where sandbox pairing URLs point. Returns the record and the first QR payload; when the gateway fails, the
   * object keeps nothing and answers `gateway_unavailable` or `gateway_rejected`.
   */
  async create(input: CreateInput): Promise<SessionResult<{ session: SessionRecord; qr: string }>> {
    return this.core.exclusive(() => this.link.create(input));
  }

  /** The QR payload to show; only while pending (409 `session_not_pending`). */
  async qrPayload(): Promise<SessionResult<string>> {
    return this.link.qrPayload();
  }

  /**
   * The session as the object holds it now, with the QR shown while pending (its payload and
   * when the next one replaces it, epoch ms): what a live watcher's first frame and the link
   * page show. `not_found` when the object holds no session.
   */
  async snapshot(): Promise<SessionResult<{ session: SessionRecord; qr: ShownQr | null }>> {
    return this.link.snapshot();
  }

  /**
   * Accepts a live watcher: a WebSocket upgrade forwarded by the Worker's `/live` route (RPC
   * cannot return a WebSocket, so this is the object's `fetch`). The route has authenticated the
   * caller and checked the session is theirs; {@link CREDENTIAL_HEADER} names the API key or link
   * token that opened it, with its expiry, which becomes a `socket_expiry` deadline. Answers 101
   * with the socket, whose first frame is `session.snapshot`; 426 without `Upgrade: websocket`;
   * 400 without a credential; 404 when the object holds no session (deleted since the route
   * checked).
   */
  async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return new Response("Expected a WebSocket upgrade.", { status: 426 });
    }
    const credential = credentialOfRequest(request);
    if (!credential) return new Response(`Expected ${CREDENTIAL_HEADER}.`, { status: 400 });
    // In the chain of changes, so that no frame of a change under way can precede the snapshot.
    return this.core.exclusive(async () => {
      const response = this.core.live.open(credential, this.link.snapshotFrame());
      if (response.status === 101 && credential.expiresAt !== null) {
        this.core.deadlines.schedule("socket_expiry", credentialTag(credential), credential.expiresAt);
        await this.core.deadlines.rearm();
      }
      return response;
    });
  }

  /**
   * The session's link tokens were revoked: closes the live sockets opened with one (code 4403,
   * `link revoked`); those opened with an API key stay.
   */
  async closeLinkWatchers(): Promise<void> {
    const { code, reason } = lapseClose("link", "revoked");
    this.core.live.close("link", code, reason);
  }

  /**
   * API keys `keyIds` were revoked, and with them link tokens `linkTokenIds` (those the keys
   * minted): closes the live sockets opened with one of them (code 4401 `key revoked`, 4403
   * `link revoked`); others stay. Called for each session of the account by
   * live-revocation.ts `closeKeySockets`. @returns how many sockets were closed.
   */
  async closeSockets(input: { keyIds: string[]; linkTokenIds?: string[] }): Promise<number> {
    let closed = 0;
    for (const id of input.keyIds)
      closed += this.core.live.closeLapsed(credentialTag({ kind: "key", id }), "revoked");
    for (const id of input.linkTokenIds ?? [])
      closed += this.core.live.closeLapsed(credentialTag({ kind: "link", id }), "revoked");
    return closed;
  }

  /** Watchers have nothing to say: `ping` is answered by the auto-response, anything else is ignored. */
  async webSocketMessage(): Promise<void> {}

  /** A watcher closed its socket: complete the close handshake (see live.ts `answerClose`). */
  async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    answerClose(ws, code, reason);
  }

  /**
   * connected → disconnected, keeping the link (`PATCH /v1/chatapp/sessions/{id}/disconnect` in
   * openapi.json).
   */
  async disconnect(): Promise<SessionResult<SessionRecord>> {
    return this.core.exclusive(() => this.link.disconnect());
  }

  /**
   * disconnected or failed → connected when the gateway still holds the link, otherwise pending
   * with a fresh QR (returned as `qr`).
   */
  async reconnect(): Promise<SessionResult<{ session: SessionRecord; qr: string | null }>> {
    return this.core.exclusive(() => this.link.reconnect());
  }

  /**
   * Unlinks at the gateway, fails and refunds the messages still waiting, removes the D1 row and
   * clears this object's storage. A gateway that cannot be reached keeps the session
   * (`gateway_unavailable`, retry later); one that refuses (it no longer knows the session) does not.
   */
  async destroy(): Promise<SessionResult<null>> {
    return this.core.exclusive(() => this.link.destroy());
  }

  /**
   * Asks the gateway for a code that links `phoneNumber` (E.164) without a QR scan; only while
   * pending (409 `session_not_pending`).
   */
  async pairingCode(phoneNumber: string): Promise<SessionResult<string>> {
    return this.core.exclusive(() => this.link.pairingCode(phoneNumber));
  }

  /**
   * Checks the gateway's view of the session now (correcting the status if it differs) and
   * returns the health record.
   */
  async gatewayHealth(): Promise<SessionResult<GatewayHealthView>> {
    return this.core.exclusive(() => this.link.gatewayHealth());
  }

  /**
   * Asks the gateway whether each of `numbers` (E.164, distinct, at most 100) is on the network,
   * as the session's linked account (README, Number checks); only while connected (409
   * `session_not_connected`). Outside the chain of changes: it changes nothing, so it neither
   * waits for a send under way nor holds one up.
   */
  async checkNumbers(numbers: string[]): Promise<SessionResult<NumberAnswer[]>> {
    return this.link.checkNumbers(numbers);
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
    return this.core.exclusive(() => this.dispatch.enqueue(requests));
  }

  /**
   * Holds campaign `campaignId`'s messages here: `paused`, they wait (a message being handed to
   * the gateway now finishes first: this runs between two sends); `cancelled`, those waiting fail
   * with reason `campaign_cancelled` and are refunded, and so do any that arrive later. Holding
   * again is harmless. @returns `held`, `no_session`, or `unsynced` when D1 refused the outcomes
   * (the hold stands; ask again).
   */
  async holdCampaign(campaignId: string, hold: CampaignHold): Promise<HoldResult> {
    return this.core.exclusive(() => this.dispatch.holdCampaign(campaignId, hold));
  }

  /** Lifts a pause of campaign `campaignId` (see {@link holdCampaign}) and wakes the dispatcher. */
  async releaseCampaign(campaignId: string): Promise<boolean> {
    return this.core.exclusive(() => this.dispatch.releaseCampaign(campaignId));
  }

  // ---- RPC: gateway events ----------------------------------------------------------------

  /**
   * Applies events the gateway `source` reported for this session (its webhook), in order. Status
   * events older than the newest applied are ignored; acks never move a message backwards; an
   * incoming message is stored once. Applying the same events twice changes nothing the second time.
   * @returns the incoming messages among the events (stored now or by an earlier delivery), for
   *   the caller to verify reverse OTPs by (src/otp/reverse.ts, a floor above this one); null when
   *   this object holds no session, or its session is on another gateway than `source` (the events
   *   are then ignored).
   */
  async gatewayEvents(source: GatewayName, events: GatewayEvent[]): Promise<NewIncoming[] | null> {
    return this.core.exclusive(() => this.link.gatewayEvents(source, events));
  }

  // ---- RPC: sandbox phone ------------------------------------------------------------------

  /**
   * Sandbox only: a phone scans the current QR. With `token`, it must be the token of the QR
   * currently shown (the pairing page); without one, the script-facing scan endpoint links
   * whatever QR is shown. See sandbox-phone.ts `phoneScans`.
   */
  async sandboxScan(input: ScanRequest): Promise<SessionResult<SessionRecord>> {
    return this.core.exclusive(() => this.link.sandboxScan(input));
  }

  /**
   * Sandbox only: keeps the media of inbound message `messageId` (stored by the sandbox's inbound
   * route), downloaded from `mediaUrl` by the alarm (incoming-media.ts). False without a sandbox session.
   */
  async sandboxInboundMedia(messageId: string, mediaUrl: string): Promise<boolean> {
    return this.core.exclusive(() => this.link.sandboxInboundMedia(messageId, mediaUrl));
  }

  /** Sandbox only: the network drops the connection; `loggedOut` also removes the link. */
  async sandboxDrop(input: { reason: string; loggedOut: boolean }): Promise<SessionResult<SessionRecord>> {
    return this.core.exclusive(() => this.link.sandboxDrop(input));
  }

  /** Sandbox only: the network bans the linked account. */
  async sandboxBan(input: { reason: string }): Promise<SessionResult<SessionRecord>> {
    return this.core.exclusive(() => this.link.sandboxBan(input));
  }

  /** Sandbox only: sets the session's health (see SessionLink `sandboxHealth`). */
  async sandboxHealth(health: StoredHealth): Promise<SessionResult<SessionRecord>> {
    return this.core.exclusive(() => this.link.sandboxHealth(health));
  }

  /** Sandbox only: what the phone of `toNumber` received from this session, newest first. */
  async sandboxReceived(toNumber: string): Promise<SessionResult<SandboxReceived[]>> {
    return this.link.sandboxReceived(toNumber);
  }

  /**
   * Sandbox only: the phone goes offline (`online` false: acks are held, messages stay `sent`) or
   * back online (true: held acks follow), or `undefined` reads its state. See sandbox-phone.ts
   * `phoneSetsOnline`.
   */
  async sandboxPhone(online?: boolean): Promise<SessionResult<PhoneState>> {
    return this.core.exclusive(() => this.link.sandboxPhone(online));
  }

  // ---- alarm -------------------------------------------------------------------------------

  /**
   * The object's one alarm: runs the due deadlines (SessionDispatchHost.runDueDeadlines), then
   * the dispatcher, then re-arms for the earliest deadline left. Before anything that can throw
   * it arms a fallback {@link SYNC_RETRY_MS} ahead, so an alarm that fails (D1 refusing a write,
   * the object stopping) is never the last one: the platform retries a failed alarm only a few
   * times. An error is logged and the run tried again from a `dispatch` deadline. A deleted session's alarm does nothing (its deadlines went with its storage).
   */
  async alarm(): Promise<void> {
    if (!this.core.stored) return;
    await this.core.deadlines.armFallback(Date.now() + SYNC_RETRY_MS);
    try {
      const horizon = await this.dispatch.runDueDeadlines();
      if (horizon !== null) await this.dispatch.dispatcher.run(horizon);
    } catch (error) {
      // Tried again from a deadline of its own, which the re-arm below keeps.
      log.error("alarm_failed", { error });
      if (this.core.stored) this.core.deadlines.schedule("dispatch", "", Date.now() + SYNC_RETRY_MS);
    } finally {
      // In the chain: a delete under way finishes first, and its session's alarm stays cleared.
      await this.core.exclusive(async () => {
        if (this.core.stored) await this.core.deadlines.rearm();
      });
    }
  }
}
