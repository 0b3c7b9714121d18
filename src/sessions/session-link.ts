import { type GatewayKind, readConfig } from "../config";
import { databaseFor, directoryOf } from "../db/databases";
import { insertCloudApiNumber } from "../db/queries/cloud-api";
import { addRoutes, claimRoute, releaseRoute } from "../db/queries/directory";
import { insertSessionWithinLimit, type LimitUsage } from "../db/queries/limits";
import type { NewIncoming } from "../db/queries/messages";
import { deleteSession } from "../db/queries/sessions";
import type { Dispatcher } from "../delivery/dispatcher";
import { receiptMoves } from "../delivery/receipts";
import { accountLimitReached } from "../errors";
import type { CloudApiNumber } from "../gateways/cloud-api/graph";
import { STANDARD_THROUGHPUT_MPS } from "../gateways/cloud-api/number";
import {
  type ChatGateway,
  type ChatMessageRef,
  GatewayError,
  type GatewayEvent,
  type GatewayName,
  isStatusEvent,
  type LinkState,
  MAX_NUMBER_CHECK,
  type ReadReceipt,
} from "../gateways/gateway";
import { capabilitiesOf, type GatewayCapabilities } from "../lib/gateway-kinds";
import { log } from "../lib/log";
import { receiveEdit, receiveRevoke } from "../messages/edits";
import { receivePollVote } from "../messages/poll-votes";
import { receiveReaction } from "../messages/reactions";
import { receiveMessage } from "../messages/receive";
import { applyMoves } from "../moves/apply";
import type { Deadline } from "./deadlines";
import { gatewayFailure, notSupported } from "./gateway-failure";
import type { GatewayHealthView } from "./gateway-health";
import { IncomingMediaKeeper } from "./incoming-media";
import { CLOSE_SESSION_DELETED, CLOSE_SESSION_DELETED_REASON, type LiveChange, type ShownQr } from "./live";
import { type Failure, fail, failWith, ok, type SessionResult } from "./result";
import { SessionContacts } from "./session-contacts";
import type { SessionCore } from "./session-core";
import type { SessionMoves } from "./session-moves";
import { gatewaySessionName, type SessionRecord } from "./session-record";
import { initial } from "./transitions";

/** Whether a number is on the chat network, as a session's gateway answered; null: it could not tell. */
export interface NumberAnswer {
  number: string;
  onChatapp: boolean | null;
}

/** What the link's end needs of the session's fan-out: deleting the session ends it. */
/**
 * What creating a session takes: its row id, account, gateway, the origin sandbox pairing URLs
 * point at, and for a `cloud_api` session its business number (token sealed under
 * `CREDENTIALS_KEY` bound to `id`), else null.
 */
export interface CreateInput {
  id: string;
  accountId: string;
  gateway: GatewayKind;
  origin: string;
  cloudApi: Pick<CloudApiNumber, "phoneNumberId" | "wabaId" | "accessTokenSealed"> | null;
}

export type LinkFanOut = Pick<Dispatcher, "handOver" | "failPending" | "flush" | "settlement">;

/**
 * The life of a session's link to its chat account: creation at the gateway and the QR shown
 * while pending (rotated and timed out by deadlines), pairing codes, disconnect and reconnect,
 * the gateway's events and checks, and deletion. Each command
 * checks the status first (`SessionMoves.guard`), calls the gateway, and moves the status
 * through {@link SessionMoves}; a gateway that fails answers `gateway_unavailable` (try again)
 * or `gateway_rejected` (it refused).
 *
 * These are the bodies of the `ChatSession` RPC methods of the same names, which run them in the
 * object's chain of changes (`SessionCore.exclusive`); see there for what each answers.
 */
export class SessionLink {
  private readonly media: IncomingMediaKeeper;
  private readonly contacts: SessionContacts;

  constructor(
    private readonly core: SessionCore,
    private readonly moves: SessionMoves,
    private readonly fanOut: LinkFanOut,
  ) {
    this.media = new IncomingMediaKeeper(core);
    this.contacts = new SessionContacts(core);
  }

  /**
   * Creates the session's storage as `pending`, takes one of the account's `max_sessions` by
   * inserting its D1 row (docs/security.md, Account limits; 409 `account_limit_reached` at the
   * limit, `service_unavailable` when D1 refuses), then creates the session at the gateway. When
   * the limit or the gateway refuses, the object keeps nothing (see {@link undoCreate}).
   * @returns the record and the first QR payload.
   */
  async create(input: CreateInput): Promise<SessionResult<{ session: SessionRecord; qr: string }>> {
    const now = Date.now();
    const sessionId = gatewaySessionName(input.id);
    this.core.setUp();
    this.core.store.insert({
      id: input.id,
      accountId: input.accountId,
      sessionId,
      gateway: input.gateway,
      origin: input.origin,
      now,
    });
    if (input.cloudApi)
      this.core.store.setCloudApiNumber({ ...input.cloudApi, throughputMps: STANDARD_THROUGHPUT_MPS });
    // The slot first: nothing is made at the gateway for an account at its limit. The count and
    // the insert are one statement, so concurrent creates cannot both take the last slot.
    let refused: LimitUsage | null;
    try {
      // The directory first: a session the directory lacks could not be found by its id.
      await addRoutes(directoryOf(this.core.env), [
        { kind: "session", key: input.id, accountId: input.accountId, sessionId: input.id },
      ]);
      refused = await insertSessionWithinLimit(
        await databaseFor(this.core.env, input.accountId),
        this.core.store.row(),
      );
    } catch (error) {
      await this.core.forget();
      log.error("session_insert_failed", { error });
      return fail("service_unavailable", "The session could not be recorded; try again later.");
    }
    if (refused) {
      await this.core.forget();
      return failWith(accountLimitReached(refused, "a new session"));
    }
    let link: LinkState;
    try {
      link = await this.core.gateway().create(sessionId);
    } catch (error) {
      await this.undoCreate(input.id, sessionId);
      return gatewayFailure(error);
    }
    if (input.cloudApi && link.status === "connected") {
      const taken = await this.recordCloudApiNumber(input.id, input.accountId, link.throughputMps, now);
      if (taken) return taken;
    }
    const change = initial(link);
    await this.moves.apply(change, now);
    return ok({ session: this.core.store.record(), qr: change.status === "pending" ? change.qr : "" });
  }

  /**
   * Records a new Cloud API session's number in D1 (`cloud_api_numbers`, where Meta's webhooks find
   * their session) with the throughput Meta reported. @returns null when recorded, else the
   * failure the create answers once it undid itself: 409 `phone_number_in_use` when another session
   * holds the number, 503 `service_unavailable` when D1 refused.
   */
  private async recordCloudApiNumber(
    id: string,
    accountId: string,
    throughputMps: number | undefined,
    now: number,
  ): Promise<Failure | null> {
    const number = this.core.store.cloudApiNumber();
    if (!number) return null;
    const mps = throughputMps ?? number.throughputMps;
    this.core.store.setCloudApiNumber({ ...number, throughputMps: mps });
    let recorded: boolean;
    try {
      // Claimed in the directory first: it holds each number once across every database.
      recorded = await claimRoute(directoryOf(this.core.env), {
        kind: "phone_number_id",
        key: number.phoneNumberId,
        accountId,
        sessionId: id,
      });
      recorded &&= await insertCloudApiNumber(await databaseFor(this.core.env, accountId), {
        sessionId: id,
        accountId,
        phoneNumberId: number.phoneNumberId,
        wabaId: number.wabaId,
        accessTokenSealed: number.accessTokenSealed,
        throughputMps: mps,
        createdAt: now,
      });
    } catch (error) {
      log.error("cloud_api_number_insert_failed", { error });
      await this.undoCreate(id, this.core.current().session_id);
      return fail("service_unavailable", "The session could not be recorded; try again later.");
    }
    if (recorded) return null;
    await this.undoCreate(id, this.core.current().session_id);
    return fail("phone_number_in_use", "Another session is linked to this business number; delete it first.");
  }

  /**
   * A create the gateway failed: removes what the gateway may hold of it (a create that timed
   * out may have made the session; one that cannot be reached is left), deletes the D1 row that
   * took the account's slot, and drops the object's storage. When D1 refuses the delete the
   * session is kept, `failed` with reason `gateway_create_failed` (its row written when D1
   * takes it), so that the slot it holds is shown and can be freed by deleting it.
   */
  private async undoCreate(id: string, sessionId: string): Promise<void> {
    await this.core
      .gateway()
      .remove(sessionId)
      .catch((error: unknown) => {
        if (!(error instanceof GatewayError)) throw error;
      });
    try {
      await deleteSession(await databaseFor(this.core.env, this.core.current().account_id), id);
      await this.releaseNumber(id);
    } catch (error) {
      log.error("session_undo_failed", { session: id, error });
      await this.moves.move({ type: "failed", reason: "gateway_create_failed" });
      return;
    }
    await this.core.forget();
  }

  /** Frees the Cloud API number session `id` holds in the directory, for another session to take. */
  private async releaseNumber(id: string): Promise<void> {
    const number = this.core.store.cloudApiNumber();
    if (number) await releaseRoute(directoryOf(this.core.env), "phone_number_id", number.phoneNumberId, id);
  }

  /** The QR payload shown; `session_not_pending` in any other state. */
  qrPayload(): SessionResult<string> {
    const state = this.core.state();
    if (!state) return fail("not_found", "No such session.");
    if (!capabilitiesOf(state.gateway).linksByQr) return notSupported();
    if (state.status !== "pending" || !state.qr) {
      return fail("session_not_pending", "The QR code is only served while the session is pending.");
    }
    return ok(state.qr);
  }

  /** The session now, with the QR shown while pending. */
  snapshot(): SessionResult<{ session: SessionRecord; qr: ShownQr | null }> {
    if (!this.core.state()) return fail("not_found", "No such session.");
    return ok({ session: this.core.store.record(), qr: this.moves.shownQr() });
  }

  /** A live watcher's first frame (`session.snapshot`), or null when the object holds no session. */
  snapshotFrame(): LiveChange | null {
    if (!this.core.state()) return null;
    return { type: "session.snapshot", session: this.core.store.record(), qr: this.moves.shownQr() };
  }

  /** connected → disconnected, after the gateway closed the connection; the link is kept. */
  async disconnect(): Promise<SessionResult<SessionRecord>> {
    const guard = this.moves.guard("disconnect");
    if (guard) return guard;
    try {
      await this.core.gateway().disconnect(this.core.current().session_id);
    } catch (error) {
      return gatewayFailure(error);
    }
    return this.moves.command({ type: "disconnect" });
  }

  /**
   * disconnected or failed → connected or pending, as the gateway answers starting the session.
   * A disconnected session is started again at the gateway; a failed one, whose session the
   * gateway no longer holds (`SessionMoves.releaseGateway`), is created there again (a gateway
   * that still holds it starts it). When the gateway fails, a failed session's session there is
   * removed again.
   */
  async reconnect(): Promise<SessionResult<{ session: SessionRecord; qr: string | null }>> {
    const guard = this.moves.guard("reconnect");
    if (guard) return guard;
    const { session_id, status } = this.core.current();
    let link: LinkState;
    try {
      const gateway = this.core.gateway();
      link = await (status === "failed" ? gateway.create(session_id) : gateway.start(session_id));
    } catch (error) {
      const failure = gatewayFailure(error);
      await this.moves.releaseGateway();
      return failure;
    }
    const moved = await this.moves.command({ type: "reconnect", link });
    if (!moved.ok) return moved;
    return ok({ session: moved.value, qr: link.status === "pending" ? link.qr : null });
  }

  /**
   * Unlinks at the gateway, hands campaign messages over and fails the others still waiting,
   * writes every outcome to D1, fails the session's messages D1 still holds as waiting, removes
   * the D1 row, clears the object's storage and closes the live sockets (code
   * {@link CLOSE_SESSION_DELETED}). An unreachable gateway keeps the session; one that refuses
   * (it no longer knows the session) does not. `service_unavailable` when D1 refuses the outcomes.
   */
  async destroy(): Promise<SessionResult<null>> {
    const state = this.core.state();
    if (!state) return ok(null);
    try {
      await this.core.gateway().remove(state.session_id);
    } catch (error) {
      if (!(error instanceof GatewayError) || !error.permanent) return gatewayFailure(error);
      log.warn(null, { session: state.id, remove: error.message });
    }
    await this.fanOut.handOver({ id: state.id, accountId: state.account_id }, "session_deleted");
    await this.fanOut.failPending("session_deleted");
    // The storage goes next: every outcome it holds must be in D1 first.
    if (!(await this.fanOut.flush())) {
      return fail("service_unavailable", "The session's messages could not be recorded; try again later.");
    }
    const db = await databaseFor(this.core.env, state.account_id);
    // Also messages whose queue message has not reached this object yet.
    const now = Date.now();
    await applyMoves(this.core.env, state.account_id, [
      {
        kind: "fail",
        accountId: state.account_id,
        target: { sessionId: state.id },
        reason: "session_deleted",
        at: now,
      },
    ]);
    await deleteSession(db, state.id);
    await this.releaseNumber(state.id);
    await this.core.forget();
    this.core.live.closeAll(
      { type: "session.deleted", id: state.id },
      CLOSE_SESSION_DELETED,
      CLOSE_SESSION_DELETED_REASON,
    );
    return ok(null);
  }

  /**
   * A pairing code for `phoneNumber` (E.164) from the gateway, while pending; live watchers get
   * it as `session.pairing_code`.
   */
  async pairingCode(phoneNumber: string): Promise<SessionResult<string>> {
    const state = this.core.state();
    if (state && !capabilitiesOf(state.gateway).linksByPairingCode) return notSupported();
    const guard = this.moves.guard("scan");
    if (guard) return guard;
    let code: string;
    try {
      code = await this.core.gateway().requestPairingCode(this.core.current().session_id, phoneNumber);
    } catch (error) {
      return gatewayFailure(error);
    }
    await this.core.live.broadcast({
      type: "session.pairing_code",
      pairingCode: code,
      phoneNumber,
      at: Date.now(),
    });
    return ok(code);
  }

  /** Checks the gateway's view of the session now (which may move it), then the health record. */
  async gatewayHealth(): Promise<SessionResult<GatewayHealthView>> {
    if (!this.core.state()) return fail("not_found", "No such session.");
    await this.moves.checks.check();
    return ok(this.core.health.view(this.core.gateway().name));
  }

  /**
   * Asks the gateway whether each of `numbers` (E.164, distinct, at most {@link MAX_NUMBER_CHECK})
   * is on the network, as the session's linked account; only while connected
   * (`session_not_connected`). @returns an answer per number, in order (null: the gateway could
   * not tell).
   */
  async checkNumbers(numbers: string[]): Promise<SessionResult<NumberAnswer[]>> {
    const state = this.core.state();
    if (!state) return fail("not_found", "No such session.");
    if (state.status !== "connected") {
      return fail(
        "session_not_connected",
        `The session is ${state.status}; numbers are checked through a connected session.`,
      );
    }
    if (numbers.length > MAX_NUMBER_CHECK) {
      return fail("validation_failed", `At most ${MAX_NUMBER_CHECK} numbers are checked at a time.`);
    }
    const answers = await this.core.gateway().checkNumbers(state.session_id, numbers);
    return ok(numbers.map((number) => ({ number, onChatapp: answers.get(number) ?? null })));
  }

  /**
   * Sends the gateway a read receipt for the contact's message `read.providerMessageId` in the chat
   * with `read.chat` (src/gateways/gateway.ts `ChatGateway.markRead`; docs/messages.md, Chat actions); only
   * while connected (`session_not_connected`). Changes nothing of the session.
   */
  async markRead(read: ReadReceipt): Promise<SessionResult<null>> {
    return this.chatAction((gateway, sessionId) => gateway.markRead(sessionId, read));
  }

  /**
   * Deletes for everyone a message the session sent (src/gateways/gateway.ts
   * `ChatGateway.deleteMessage`; docs/messages.md, Chat actions); as {@link markRead}, and
   * `not_supported_by_gateway` where the gateway cannot.
   */
  async deleteMessage(target: ChatMessageRef): Promise<SessionResult<null>> {
    return this.chatAction((gateway, sessionId, can) =>
      can.deletesMessages && gateway.deleteMessage ? gateway.deleteMessage(sessionId, target) : null,
    );
  }

  /** Edits a text the session sent (`ChatGateway.editMessage`); as {@link deleteMessage}. */
  async editMessage(target: ChatMessageRef, text: string): Promise<SessionResult<null>> {
    return this.chatAction((gateway, sessionId, can) =>
      can.editsMessages && gateway.editMessage ? gateway.editMessage(sessionId, target, text) : null,
    );
  }

  /**
   * Runs a chat action's gateway call while the session is connected (`session_not_connected`
   * otherwise); `call`, given the gateway, the session's name and its capabilities
   * (lib/gateway-kinds.ts), answers null when the gateway cannot (`not_supported_by_gateway`).
   * A GatewayError becomes `gateway_rejected` or `gateway_unavailable` (gateway-failure.ts).
   */
  private async chatAction(
    call: (gateway: ChatGateway, sessionId: string, can: GatewayCapabilities) => Promise<void> | null,
  ): Promise<SessionResult<null>> {
    const state = this.core.state();
    if (!state) return fail("not_found", "No such session.");
    if (state.status !== "connected") {
      return fail(
        "session_not_connected",
        `The session is ${state.status}; chat actions go through a connected session.`,
      );
    }
    try {
      const done = call(this.core.gateway(), state.session_id, capabilitiesOf(state.gateway));
      if (done === null)
        return notSupported(`The session's gateway (${state.gateway}) has no such chat action.`);
      await done;
    } catch (error) {
      return gatewayFailure(error);
    }
    return ok(null);
  }

  /**
   * Applies a gateway's events in order: acks as message receipts (once D1 holds the sent
   * outcomes), incoming messages stored once, contacts' reactions, poll votes, edits and deletes on
   * the messages they name, status events no older than the newest applied.
   * @returns the incoming messages among the events, as stored (or already stored by an earlier
   *   delivery: a replay lists them again, so what hangs off them above this floor, a reverse OTP's
   *   verification, can run again safely); null when the object holds no session, or its session
   *   is on another gateway than `source`, the one that sent the events (nothing is applied).
   * @throws Error when D1 refuses the sent outcomes (the gateway delivers the events again).
   */
  async gatewayEvents(source: GatewayName, events: GatewayEvent[]): Promise<NewIncoming[] | null> {
    const state = this.core.state();
    if (!state || state.gateway !== source) return null;
    // A receipt may settle an unknown outcome, or wait for its settlement (Settlement.takeReceipts).
    // The gateway's message id reaches D1 with the sent outcome: write pending ones first. When
    // D1 refuses, the call fails and the gateway delivers the events again.
    const acks = events.filter((event) => event.type === "ack");
    const applyNow = this.fanOut.settlement.takeReceipts(acks, Date.now());
    if (acks.length > 0 && !(await this.fanOut.flush())) {
      throw new Error("sent outcomes could not be written to D1; the receipts wait for a retry");
    }
    const session = { id: state.id, accountId: state.account_id };
    const receipts = applyNow.flatMap((receipt) => receiptMoves(session, receipt));
    const received: NewIncoming[] = [];
    let noted = false;
    for (const event of events) {
      if (event.type === "incoming") {
        const current = this.core.current();
        const incoming: NewIncoming = {
          accountId: current.account_id,
          sessionId: current.id,
          providerMessageId: event.providerMessageId,
          contact: event.from,
          toNumber: current.phone_number ?? current.session_id,
          type: event.messageType,
          content: event.content,
          mediaUrl: event.mediaUrl,
          media: event.media ? { mimetype: event.media.mimetype } : null,
          payload: event.payload,
          at: event.at,
        };
        const stored = await receiveMessage(this.core.env, incoming, { quotedIds: event.quotedIds });
        // Only a message stored now: a redelivered one's media is downloaded (or owed) already.
        if (stored && event.media?.ref) {
          this.media.note(stored.id, event.media.ref, event.media.mimetype);
          noted = true;
        }
        if (stored) await this.contacts.learnNumber(event.from);
        received.push(incoming);
      } else if (event.type === "reaction") {
        // Ordered by its own time against the contact's earlier reactions (messages/reactions.ts).
        const current = this.core.current();
        await receiveReaction(this.core.env, {
          ...event,
          accountId: current.account_id,
          sessionId: current.id,
        });
      } else if (event.type === "poll_vote") {
        // Kept on the poll, one vote state per contact, ordered by its own time (messages/poll-votes.ts).
        const current = this.core.current();
        await receivePollVote(this.core.env, {
          ...event,
          accountId: current.account_id,
          sessionId: current.id,
        });
      } else if (event.type === "edited" || event.type === "revoked") {
        // A contact's own edit or delete of a message they sent: applied to the stored message
        // once, their edits ordered by their own time (messages/edits.ts).
        const current = this.core.current();
        const change = { ...event, accountId: current.account_id, sessionId: current.id };
        await (change.type === "edited"
          ? receiveEdit(this.core.env, change)
          : receiveRevoke(this.core.env, change));
      } else if (event.type === "health") {
        // Not a status: not ordered against them.
        await this.moves.healthEvent(event);
      } else if (event.type === "contact") {
        await this.contacts.record(event.contact, event.ref, event.at);
      } else if (isStatusEvent(event) && event.at >= this.core.health.eventAt()) {
        // Webhook events are ordered by the gateway's own clock, against each other only: a
        // command or a check is not compared with them, so clock skew cannot hide an event. The
        // clock stops at our now: an event from the future cannot hide the ones after it.
        this.core.health.noteEvent(event.at, Date.now());
        await this.moves.move(event);
      }
    }
    await applyMoves(this.core.env, state.account_id, receipts);
    if (noted) await this.core.deadlines.rearm();
    return received;
  }

  /**
   * The media of incoming message `messageId`, stored by a route that is not this object's
   * events (the sandbox's inbound route), is to be kept: downloaded from `ref` as the gateway's
   * `openIncomingMedia` takes it (incoming-media.ts).
   * @returns false when this object holds no session (nothing is owed).
   */
  async keepIncomingMedia(messageId: string, ref: string): Promise<boolean> {
    if (!this.core.state()) return false;
    this.media.note(messageId, ref, null);
    await this.core.deadlines.rearm();
    return true;
  }

  /**
   * Runs one of the link's deadlines, in the chain of changes: `sync`/`session` writes the
   * session row D1 was owed, `qr_rotate` and `qr_timeout` rotate or time out a pending QR,
   * `gateway_check` checks a real gateway, `gateway_release` asks the gateway again to remove a
   * failed session, `media_fetch` tries an incoming message's media download (incoming-media.ts).
   * Other kinds are not the link's and are left alone.
   */
  async runDeadline(deadline: Deadline): Promise<void> {
    switch (deadline.kind) {
      case "sync":
        // The outbox's outcomes (`ref` empty) are the dispatcher's flush.
        if (deadline.ref === "session") await this.moves.writeThrough();
        return;
      case "qr_rotate":
      case "qr_timeout":
        return this.runQrDeadline(deadline.kind, deadline.dueAt);
      case "gateway_check":
        return this.moves.checks.run();
      case "gateway_release":
        return this.moves.releaseGateway();
      case "media_fetch":
        return this.media.run(deadline.ref);
    }
  }

  private async runQrDeadline(kind: "qr_rotate" | "qr_timeout", dueAt: number): Promise<void> {
    const state = this.core.state();
    if (state?.status !== "pending") return;
    if (kind === "qr_rotate") {
      // Scheduled first: the new QR's `expires_at` in its live frame is this next rotation.
      const rotateMs = readConfig(this.core.env).QR_ROTATE_SECONDS * 1000;
      this.core.deadlines.schedule("qr_rotate", "", dueAt + rotateMs);
      try {
        await this.moves.showQr(await this.core.gateway().currentQr(state.session_id));
      } catch (error) {
        // The QR shown stays until the next rotation reaches the gateway.
        if (!(error instanceof GatewayError)) throw error;
      }
    } else {
      // Nobody scanned: the session fails, and its move removes it at the gateway.
      await this.moves.move({ type: "qr_timeout" });
    }
  }
}
