import { DurableObject } from "cloudflare:workers";
import type { NewIncoming } from "../db/queries/messages";
import { SYNC_RETRY_MS } from "../delivery/dispatcher";
import type { CampaignHold } from "../delivery/outbox";
import type {
  ChatMessageRef,
  GatewayEvent,
  GatewayName,
  ReadReceipt,
  ReceivedMessage,
} from "../gateways/gateway";
import { log } from "../lib/log";
import type { DispatchRequest } from "../messages/dispatch-request";
import { type HoldResult, SessionDispatchHost } from "./dispatch-host";
import type { GatewayHealthView } from "./gateway-health";
import { answerClose, type ShownQr } from "./live";
import { CREDENTIAL_HEADER, credentialOfRequest, credentialTag, lapseClose } from "./live-credentials";
import type { SessionResult } from "./result";
import { SessionCore } from "./session-core";
import { type CreateInput, type NumberAnswer, SessionLink } from "./session-link";
import { SessionMoves } from "./session-moves";
import type { SessionRecord } from "./session-record";
import { type PhoneState, SessionStandIn, type StandInEvent } from "./session-stand-in";

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
 *   disconnect, reconnect, delete, gateway events and checks;
 * - {@link SessionStandIn} (session-stand-in.ts): the network and phones a gateway plays itself
 *   (the sandbox's), driven by its routes;
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
  private readonly stand: SessionStandIn;

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
    this.stand = new SessionStandIn(this.core, moves);
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
   * as the session's linked account (docs/sessions.md, Number checks); only while connected (409
   * `session_not_connected`). Outside the chain of changes: it changes nothing, so it neither
   * waits for a send under way nor holds one up.
   */
  async checkNumbers(numbers: string[]): Promise<SessionResult<NumberAnswer[]>> {
    return this.link.checkNumbers(numbers);
  }

  /**
   * Sends the gateway a read receipt for a contact's message (docs/messages.md, Chat actions); only while
   * connected (409 `session_not_connected`). Outside the chain of changes, as it changes nothing
   * of the session.
   */
  async markRead(read: ReadReceipt): Promise<SessionResult<null>> {
    return this.link.markRead(read);
  }

  /**
   * Deletes for everyone a message the session sent (docs/messages.md, Chat actions); only while connected,
   * and 409 `not_supported_by_gateway` where the gateway cannot. Outside the chain of changes.
   */
  async deleteMessage(target: ChatMessageRef): Promise<SessionResult<null>> {
    return this.link.deleteMessage(target);
  }

  /** Edits a text the session sent (docs/messages.md, Chat actions); as {@link deleteMessage}. */
  async editMessage(target: ChatMessageRef, text: string): Promise<SessionResult<null>> {
    return this.link.editMessage(target, text);
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

  /**
   * Keeps the media of incoming message `messageId` (stored by a route, the sandbox's inbound
   * one, rather than by {@link gatewayEvents}), downloaded from `ref` by the alarm
   * (incoming-media.ts). False when this object holds no session.
   */
  async keepIncomingMedia(messageId: string, ref: string): Promise<boolean> {
    return this.core.exclusive(() => this.link.keepIncomingMedia(messageId, ref));
  }

  // ---- RPC: the network a gateway plays itself -----------------------------------------------

  /**
   * Only for a session whose gateway plays the network (lib/gateway-kinds.ts `simulatesNetwork`;
   * else `not_found`): a phone scans or enters its pairing code, the network drops the
   * connection, bans the account or sets the session's health (session-stand-in.ts
   * {@link StandInEvent}). @returns the session as it then is.
   */
  async standIn(event: StandInEvent): Promise<SessionResult<SessionRecord>> {
    return this.core.exclusive(() => this.stand.play(event));
  }

  /** As {@link standIn}: what the phone of `toNumber` received from this session, newest first. */
  async standInReceived(toNumber: string): Promise<SessionResult<ReceivedMessage[]>> {
    return this.stand.received(toNumber);
  }

  /**
   * As {@link standIn}: the phone goes offline (`online` false: acks are held, messages stay
   * `sent`) or back online (true: held acks follow), or `undefined` reads its state. See
   * session-stand-in.ts `SessionStandIn.phone`.
   */
  async standInPhone(online?: boolean): Promise<SessionResult<PhoneState>> {
    return this.core.exclusive(() => this.stand.phone(online));
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
