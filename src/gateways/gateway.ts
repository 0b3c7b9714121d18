import type { GatewayKind } from "../config";
import type { ContactIdentity } from "../lib/contact-identity";
import type { MessagePayload } from "../lib/message-payload";
import type { HealthReading } from "../lib/session-health";
import type { MessageType, QuotedMessage } from "../messages/types";
import type { MessagePricing } from "../moves/message";
/**
 * The boundary between a session's Durable Object and the chat network. One implementation per
 * gateway: the embedded sandbox (default, `sandbox.ts`), WAHA (`waha/`) and Evolution API
 * (`evolution/`), each of the two in a folder with one file per job (lifecycle, send, events).
 * The session object is the only caller, and it calls one session's methods one at a time, but
 * for {@link ChatGateway.checkNumbers} and {@link ChatGateway.typing}, which change nothing and
 * may run beside the others.
 *
 * Lifecycle methods throw {@link GatewayError} when the gateway cannot do what was asked; `send`
 * and `checkNumbers` never throw for a gateway failure: `send` answers a {@link SendOutcome}.
 */
export interface ChatGateway {
  /** Which gateway this is; shown in message metadata. */
  readonly name: GatewayName;
  /**
   * Creates the gateway's session `sessionId` (the `session_<id>` name), with its event webhook,
   * and starts it. Answers `pending` with the payload of the first QR code to scan, or
   * `connected` when the gateway already holds a link to a phone.
   */
  create(sessionId: string): Promise<LinkState>;
  /** Starts an existing session again (reconnect); answers as {@link create}. */
  start(sessionId: string): Promise<LinkState>;
  /** A fresh QR payload for a pending session (gateways rotate them every ~20 s). */
  currentQr(sessionId: string): Promise<string>;
  /**
   * Asks for a pairing code that links `phoneNumber` (E.164) without a QR scan: the phone enters
   * it under "Link with phone number". Answers the code as the phone shows it (e.g. `ABCD-EFGH`).
   */
  requestPairingCode(sessionId: string, phoneNumber: string): Promise<string>;
  /** Closes the connection but keeps the link, so a later `start` reconnects without a QR. */
  disconnect(sessionId: string): Promise<void>;
  /** Unlinks the phone and forgets the session. Idempotent: a session already gone is fine. */
  remove(sessionId: string): Promise<void>;
  /**
   * Hands one message to the chat network and says what came of it ({@link SendOutcome}):
   * `accepted` with the gateway's message id, `rejected` when it was definitely not sent, or
   * `unknown` when it may have been (a timeout, a 5xx, a dropped connection after the request was
   * written, an answer without a readable id). Never throws for a gateway failure. `message.
   * clientMessageId` is the same on every attempt for one message: a gateway that takes a
   * client-chosen id passes it on, so the network sees one message however often it is asked.
   */
  send(sessionId: string, message: OutboundMessage): Promise<SendOutcome>;
  /**
   * Settles a send whose outcome was `unknown` by asking the gateway whether it holds the message
   * ({@link LookupResult}; docs/exactly-once.md, "Exactly once"). Never throws for a gateway failure: a
   * question that could not be asked is `unreachable`.
   */
  lookup(sessionId: string, query: SentQuery): Promise<LookupResult>;
  /**
   * Whether each of `numbers` (E.164, distinct, at most {@link MAX_NUMBER_CHECK} of them) is on
   * the chat network, as the session's linked account sees it (docs/sessions.md, Number checks). Answers an
   * entry for every number: true or false as the gateway answered, or null when it could not tell
   * (its call failed or timed out, its answer did not name the number, or it has no way to ask:
   * the Cloud API). Never throws for a gateway failure.
   */
  checkNumbers(sessionId: string, numbers: string[]): Promise<Map<string, boolean | null>>;
  /**
   * The gateway's own view of the session, as the event it would have sent (`linked`, `qr`,
   * `dropped`, `failed`), or null when the gateway is between states (starting). A session the
   * gateway does not know is `dropped` with `loggedOut: true`.
   */
  check(sessionId: string): Promise<GatewayEvent | null>;
  /**
   * What the gateway can tell of the limits the network puts on the session's account (docs/sessions.md,
   * Session health; lib/session-health.ts `HealthReading`): a field it cannot tell is left
   * undefined. Absent on a gateway that tells nothing (Evolution API; the sandbox, whose health is
   * set through its route). @throws GatewayError for a failed call.
   */
  health?(sessionId: string): Promise<HealthReading>;
  /**
   * Who the network says user id `userId` is ({@link ContactIdentity}), for an incoming message that named
   * the user by it alone: at least `{ userId, phoneNumber }` (E.164) when the gateway knows the
   * number, or null when it does not, or `userId` is not a kind it maps (no call is made). WAHA
   * maps a LID by `GET /api/{session}/lids/{lid}` (waha/lids.ts). Absent on a gateway that cannot
   * tell. The session object calls it best effort, after the message is stored
   * (src/sessions/session-link.ts `gatewayEvents`). @throws GatewayError for a failed call.
   */
  resolveUserId?(sessionId: string, userId: string): Promise<ContactIdentity | null>;
  /**
   * Opens the download of an incoming message's media, `ref` as the gateway's `incoming` event
   * gave it (`media.ref`), within `signal`. Answers the media's response, status and length
   * checked (src/media/incoming.ts `checkMediaAnswer`), its body unread: the caller streams it
   * into R2. Absent on a gateway that cannot download media.
   * @throws IncomingMediaError when the media cannot be had (`permanent` when asking again cannot help).
   */
  openIncomingMedia?(sessionId: string, ref: string, signal: AbortSignal): Promise<Response>;
  /**
   * Shows (`start`) or ends (`stop`) "typing…" in the chat with E.164 `to`, before a message
   * sent with `simulate_typing` (docs/messages.md, Typing before a send). Best effort: never throws, and
   * answers whether the recipient was shown it ({@link TypingOutcome}). Not a send: never
   * charged, never settled. Each gateway's call:
   * - WAHA: `POST /api/startTyping` and `POST /api/stopTyping` with `{ session, chatId }` (WAHA's
   *   "Chatting" API; its docs stop typing before the send);
   * - Evolution API: `POST /chat/sendPresence/{instance}` with `{ number, delay, presence:
   *   "composing" }` (its `presenceSchema`): Evolution shows it for `delay` ms and then sends
   *   `paused` itself, answering only then, so `start` takes `ms` and `stop` makes no call;
   * - WhatsApp Cloud API: `POST /{Phone-Number-ID}/messages` with `{ messaging_product, status:
   *   "read", message_id, typing_indicator: { type: "text" } }` (Meta's example "Send typing
   *   indicator and read receipt"): it needs the id of a message the contact sent
   *   (`lastIncomingId`; none → not shown), marks it read, and Meta ends the indicator at the
   *   send (or after 25 s), so `stop` makes no call;
   * - the sandbox: shows it to no one and says it was shown.
   * The session object calls it outside its chain of changes, as it changes nothing of the session.
   */
  typing?(
    sessionId: string,
    to: string,
    state: "start" | "stop",
    options: TypingOptions,
  ): Promise<TypingOutcome>;
  /**
   * Marks the contact's message `read.providerMessageId` read (a read receipt, the blue ticks), in
   * the chat with `read.chat` (the message's sender: an E.164 number or a user id), and with it the
   * ones before it in that chat (docs/messages.md, Chat actions). Idempotent at the network: a second
   * receipt for the same message changes nothing. Each gateway's call:
   * - WhatsApp Cloud API: `POST /{Phone-Number-ID}/messages` `{ messaging_product, status: "read",
   *   message_id }` (Meta's "Mark messages as read"; answers `{ success: true }`): the message id
   *   names the chat, so `read.chat` is not sent;
   * - WAHA: `POST /api/sendSeen` `{ session, chatId, messageIds: [id] }` (`SendSeenRequest`);
   * - Evolution API: `POST /chat/markMessageAsRead/{instance}` `{ readMessages: [{ remoteJid,
   *   fromMe: false, id }] }` (its `readMessageSchema`);
   * - the sandbox: the contact's phone shows the message read (nothing to call).
   * @throws GatewayError when the gateway refused it (`permanent`) or could not be reached.
   */
  markRead(sessionId: string, read: ReadReceipt): Promise<void>;
  /**
   * Deletes for everyone the message `target.providerMessageId` the session sent to `target.chat`
   * (docs/messages.md, Chat actions): the recipient's phone shows "This message was deleted". Present where
   * lib/gateway-kinds.ts `deletesMessages` is true; the caller checks WhatsApp's time limit first.
   * Idempotent at the network: deleting a deleted message changes nothing.
   * @throws GatewayError when the gateway refused it (`permanent`) or could not be reached.
   */
  deleteMessage?(sessionId: string, target: ChatMessageRef): Promise<void>;
  /**
   * Replaces the text of the text message `target.providerMessageId` the session sent to
   * `target.chat` with `text` (docs/messages.md, Chat actions): the recipient's phone shows it "Edited".
   * Present where lib/gateway-kinds.ts `editsMessages` is true; the caller checks WhatsApp's edit
   * window first. The same edit twice leaves the message as one would.
   * @throws GatewayError when the gateway refused it (`permanent`) or could not be reached.
   */
  editMessage?(sessionId: string, target: ChatMessageRef, text: string): Promise<void>;
  /**
   * Messages per second the gateway takes from this session at most (the Cloud API number's
   * throughput, Meta's "Throughput" page: 80, or 1,000 at the higher tier), or undefined when the
   * gateway sets no rate: the dispatcher then paces by `delay_between` alone. With a rate, gateway
   * calls start at least `1000 / maxPerSecond` ms apart (src/delivery/dispatcher.ts).
   */
  readonly maxPerSecond?: number;
  /**
   * Receipts the gateway makes itself instead of reporting them as `ack` events: the sandbox,
   * which plays the recipient's phone. The session object schedules them as deadlines when a send
   * is accepted (src/delivery/dispatcher.ts) and applies them when due. Absent on a gateway whose
   * receipts come in its events.
   */
  readonly ownReceipts?: OwnReceipts;
  /**
   * The chat network and the phones on it, played by the gateway itself (the sandbox, whose
   * `/sandbox` routes drive it); absent on a gateway that reaches the real network. Present where
   * lib/gateway-kinds.ts `simulatesNetwork` is true.
   */
  readonly standIn?: NetworkStandIn;
}

/**
 * What a phone does when it links a session (see {@link NetworkStandIn.scan}): `phoneNumber`
 * (E.164) and `displayName`, and the QR `token` scanned or the `pairingCode` entered.
 */
export interface ScanRequest {
  phoneNumber?: string;
  displayName?: string;
  /** The token of the pairing URL scanned; absent for the script-facing scan endpoint. */
  token?: string;
  /** A code from `requestPairingCode`, entered on the phone instead of a scan. */
  pairingCode?: string;
}

/** What came of a {@link NetworkStandIn.scan}: the phone linked, or why not (an API error code). */
export type ScanOutcome =
  | { linked: true; phoneNumber: string; displayName: string }
  | { linked: false; code: "not_found" | "pairing_code_invalid"; detail: string };

/** A message as a stand-in recipient's phone received it; `received_at` is epoch ms. */
export type ReceivedMessage = {
  message_id: string;
  to_number: string;
  type: OutboundMessage["type"];
  content: string | null;
  media_url: string | null;
  received_at: number;
  /** Our id of the message it quotes, or that a reaction reacts to; null for neither. */
  reply_to: string | null;
};

/** See {@link ChatGateway.standIn}. */
export interface NetworkStandIn {
  /**
   * A phone scans the QR shown, or enters the pairing code last issued, and is linked; the
   * session then moves as for a `scan` (sessions/transitions.ts).
   */
  scan(request: ScanRequest): ScanOutcome;
  /** The link is removed on the phone's side (it logged out, or the network banned the account). */
  unlink(): void;
  /** What the phone of `toNumber` (E.164) received from the session, newest first. */
  receivedBy(toNumber: string): ReceivedMessage[];
  /** Whether the session's phone is online (kept across restarts). */
  phoneOnline(): boolean;
  /**
   * Takes the phone offline (`false`) or back online (`true`): back online, answers the messages
   * whose receipts were held meanwhile ({@link OwnReceipts.hold}), oldest first, to be acked anew.
   */
  setPhoneOnline(online: boolean): string[];
}

/** See {@link ChatGateway.ownReceipts}. */
export interface OwnReceipts {
  /** When a message the gateway took at `at` (epoch ms) is acked `delivered` and `read` (epoch ms). */
  timesFor(at: number): { delivered: number; read: number };
  /**
   * Receipts of messages `messageIds` fell due at `at` (epoch ms): true when the gateway holds
   * them instead (the recipient's phone is offline; it gives them again later, through the
   * session's stand-in, {@link NetworkStandIn}), false when they are to be applied now.
   */
  hold(messageIds: string[], at: number): boolean;
}

/**
 * A message of a chat that a chat action names ({@link ChatGateway.markRead}, `deleteMessage`,
 * `editMessage`): the chat, as the contact's address (`chat`: E.164 or a user id, as the message's
 * sender or recipient is stored), and the gateway's id of the message.
 */
export interface ChatMessageRef {
  chat: string;
  providerMessageId: string;
}

/** A read receipt to send ({@link ChatGateway.markRead}): the contact's message to mark read. */
export type ReadReceipt = ChatMessageRef;

/**
 * What a {@link ChatGateway.typing} call needs beside the chat: `ms`, how long the indicator is to
 * show (milliseconds, 1,000–8,000), and `lastIncomingId`, which finds the gateway's id of the
 * latest message the contact sent the session (null when none is stored); only a gateway that
 * needs it (the Cloud API) calls it.
 */
export interface TypingOptions {
  ms: number;
  lastIncomingId: () => Promise<string | null>;
}

/**
 * What came of a {@link ChatGateway.typing} call: `shown`, or not with a `reason`
 * (`no_incoming_message`, the gateway's error as `GatewayError.message`, `not_supported_by_gateway`).
 */
export type TypingOutcome = { shown: true } | { shown: false; reason: string };

/** Most numbers one {@link ChatGateway.checkNumbers} call takes (the route's and a campaign batch's size). */
export const MAX_NUMBER_CHECK = 100;

/** The answers of a number check whose gateway could not tell any: null for each of `numbers`. */
export function unknownNumbers(numbers: string[]): Map<string, boolean | null> {
  return new Map(numbers.map((number) => [number, null]));
}

/** The gateways `CHATAPP_GATEWAY` and `CHATAPP_GATEWAYS` can name (config.ts). */
export type GatewayName = GatewayKind;

/**
 * A message as the gateway needs it. `to` is E.164; `clientMessageId` is stable across every
 * attempt to send this message (derived from our message id). `mediaUrl` is the caller's URL,
 * which no gateway fetches (a document's file name comes from it); `media` is the service's stored
 * copy, which the HTTP gateways hand out as a signed link of ours (docs/security.md, Media).
 */
export interface OutboundMessage {
  id: string;
  clientMessageId: string;
  /**
   * The recipient as the network addresses them: an E.164 number, or a user id
   * (src/lib/contact-identity.ts `userIdKind`: a BSUID, which the Cloud API takes as `recipient`;
   * a LID, a WAHA or Evolution API chat id as it is), of a kind the gateway declares in
   * `sendsToUserIds` (src/lib/gateway-kinds.ts).
   */
  to: string;
  type: MessageType;
  /**
   * The text or caption; for a `template` (Cloud API only), the JSON of a messages/template.ts
   * `TemplateSend`; for a `reaction`, the emoji ("" takes the reaction off); for a `location`, the
   * JSON of a lib/location.ts `Location` (read it with `locationOf`); for an `interactive`, the
   * JSON of a lib/interactive.ts `Interactive` (read it with `interactiveOf`).
   */
  content: string | null;
  mediaUrl: string | null;
  media: MediaRef | null;
  /**
   * The message quoted (a reply), or for a `reaction` the message reacted to, as the gateway
   * knows it ({@link QuotedMessage}); absent or null for neither.
   */
  replyTo?: QuotedMessage | null;
}

export type { QuotedMessage };

/** A stored media file: its key in the `MEDIA` R2 bucket and its content type (e.g. `image/png`). */
export interface MediaRef {
  key: string;
  contentType: string;
}

/**
 * What a send attempt came to, decided in the gateway layer:
 * - `accepted`: the gateway answered with its message id;
 * - `rejected`: definitely not sent. `retryable` when asking again may help (the call failed
 *   before the send request was made, e.g. the recipient lookup that precedes it); otherwise the
 *   gateway refused the message (a documented 4xx, an unknown recipient, a bad payload);
 * - `unknown`: it may or may not have been sent (timeout, connection lost, 5xx, a 2xx without a
 *   readable id). Never resent blindly nor refunded by itself: the session settles it by
 *   {@link ChatGateway.lookup} first.
 */
export type SendOutcome =
  | { outcome: "accepted"; providerMessageId: string }
  | {
      outcome: "rejected";
      reason: string;
      retryable: boolean;
      /**
       * The gateway turned the call away for going too fast: `session`, the session's own rate
       * (a number's throughput): the session makes no gateway call until the throttle backoff
       * passed; `recipient`, too many to this contact: only this message waits. Either retries
       * after the throttle backoff (src/delivery/retry.ts `throttleDelayMs`), longer than the
       * ordinary one. Absent for other refusals.
       */
      throttled?: "session" | "recipient";
      /**
       * What the refusal says of the session itself, as the status event a check would have
       * answered (the gateway refused the session's credentials → `failed`): the session moves
       * as for that event, after the message's own outcome is recorded.
       */
      sessionEvent?: StatusEvent | HealthEvent;
    }
  | { outcome: "unknown"; reason: string };

/**
 * A send to settle: the message as it was sent, when the first attempt of it began (`since`,
 * epoch ms), and the time of the question (`asOf`, epoch ms: the session's logical now, never
 * before the real clock, as a driven alarm runs at the time it was armed for; absent: the real
 * clock).
 */
export interface SentQuery extends OutboundMessage {
  since: number;
  asOf?: number;
}

/**
 * What asking the gateway about a send found: `found` with its message id; `absent` when the
 * gateway answered and does not hold it (so it was not sent); `unreachable` when the question
 * itself failed or cannot be answered yet (ask again later: at `askAt`, epoch ms, when the gateway
 * says when it can answer, else with the settlement's backoff).
 */
export type LookupResult =
  | { result: "found"; providerMessageId: string }
  | { result: "absent" }
  | { result: "unreachable"; reason: string; askAt?: number };

/** The link as the gateway reports it after a create or start. */
export type LinkState =
  | { status: "pending"; qr: string }
  | {
      status: "connected";
      phoneNumber: string;
      displayName: string | null;
      /** Messages per second the number may send, when the gateway says (the Cloud API's throughput). */
      throughputMps?: number;
    };

/**
 * Something the chat network tells a session, normalised from each gateway's webhook (or produced
 * by the sandbox itself). `at` is when the gateway says it happened, in epoch milliseconds by the
 * gateway's clock: webhook status events older than the last one applied are ignored, so
 * out-of-order delivery cannot move a session back.
 *
 * - `qr`: the session waits for a scan of this QR payload, or of one to fetch with `currentQr`
 *   when the event carries none (WAHA's `SCAN_QR_CODE`) (→ pending);
 * - `linked`: a phone is linked and the connection works (→ connected);
 * - `dropped`: the connection closed; `loggedOut` when the phone removed the link (→ disconnected);
 * - `failed`: the gateway gave up on the session (→ failed);
 * - `banned`: the network banned the linked account (→ banned);
 * - `ack`: a receipt for a message we sent, by the gateway's message id (never moves backwards);
 * - `incoming`: a contact wrote to the session's phone (stored once per gateway message id);
 * - `reaction`: a contact set (or, with an empty emoji, took off) a reaction on a message of the
 *   chat, by the gateway's id of that message (recorded once per change, messages/reactions.ts);
 * - `edited`: a contact edited the text (or caption) of a message they sent the session, by the
 *   gateway's id of that message, to `content`; `revoked`: a contact deleted such a message for
 *   everyone. Applied to the stored incoming message as the session's own edits and deletes are
 *   (docs/messages.md, Chat actions; messages/edits.ts `receiveEdit`, `receiveRevoke`): once per change, a
 *   contact's edits ordered by `at` (an older edit arriving after a newer one changes nothing).
 *   One naming a message the session has not stored from that contact is dropped: an edit that
 *   arrives before the message itself is lost, and the message keeps the text it was sent with.
 * - `poll_vote`: a contact voted on a poll the session sent, by the gateway's id of the poll, with
 *   every option they now pick (a vote on several options names them all; `options` [] when they
 *   took their vote back). Kept on the poll message, one vote state per contact, a contact's votes
 *   ordered by `at` (an older vote arriving after a newer one changes nothing), each change
 *   recorded once (docs/messages.md, Sending messages → Polls; messages/poll-votes.ts `receivePollVote`).
 *   A gateway that cannot tell which options a vote picked (a vote it could not decrypt) sends none.
 * - `health`: the network limits the session's account as `reading` says (a send refused with
 *   463), or, with `reading` null, its health changed and is to be read from the gateway again
 *   (the Cloud API's `phone_number_quality_update` webhook). Never moves the status.
 * - `contact`: the network tells who a user is without a message (the Cloud API's `user_id_update`,
 *   a status naming both `wa_id` and `user_id`, WAHA's LID lookup): the identifiers are linked to
 *   the session's contact (src/contacts/learn.ts). Never moves the status.
 */
export type GatewayEvent =
  | { type: "qr"; qr: string | null; at: number }
  | { type: "linked"; phoneNumber: string; displayName: string | null; at: number }
  | { type: "dropped"; reason: string; loggedOut: boolean; at: number }
  | { type: "failed"; reason: string; at: number }
  | { type: "banned"; reason: string; at: number }
  | {
      type: "ack";
      providerMessageId: string;
      status: AckStatus;
      reason: string | null;
      at: number;
      /**
       * Our message id when the gateway echoes it with the receipt (the Cloud API's
       * `biz_opaque_callback_data`): settles a send whose outcome is unknown (delivery/settlement.ts).
       */
      messageId?: string | null;
      /** What the network charges for the message, when the receipt says (the Cloud API's `pricing`). */
      pricing?: MessagePricing | null;
    }
  | {
      type: "incoming";
      providerMessageId: string;
      /** Who wrote: their number (E.164) and the ids the network gave (docs/contacts.md, Contacts). */
      from: ContactIdentity;
      messageType: MessageType;
      /** The text or caption; a `location`'s name or address (lib/location.ts `locationLabel`). */
      content: string | null;
      /** Where callers may fetch the media; null when there is none or it is not to be shown. */
      mediaUrl: string | null;
      /** A structured message's own object (a `location`'s point), kept in its `metadata`. */
      payload?: MessagePayload;
      /**
       * Media the message carried that is not passed on by URL (the gateway's own copy, on its
       * own host), noted with its MIME type when the gateway gave one, and `ref`, what
       * {@link ChatGateway.openIncomingMedia} downloads it by (never shown to callers).
       */
      media?: { mimetype: string | null; ref?: string };
      /**
       * The gateway's ids the message this one quotes (a reply) may have, when it quotes one: one
       * id, or, when the gateway gives a short form several stored ids could stand for (WAHA's
       * `replyTo.id`, the bare id), each of them. Resolved to ours by messages/reactions.ts.
       */
      quotedIds?: string[];
      at: number;
    }
  | {
      type: "reaction";
      /** The gateway's id of the message reacted to. */
      providerMessageId: string;
      /** E.164 number of the contact who reacted. */
      from: string;
      /** The emoji; "" when the contact took their reaction off. */
      emoji: string;
      at: number;
    }
  | {
      type: "edited";
      /** The gateway's id of the message edited (as its `incoming` event gave it). */
      providerMessageId: string;
      /** Who edited it: their number (E.164) and the ids the network gave; the message's sender. */
      from: ContactIdentity;
      /** The new text, or caption. */
      content: string;
      at: number;
    }
  | {
      type: "revoked";
      /** The gateway's id of the message deleted for everyone (as its `incoming` event gave it). */
      providerMessageId: string;
      /** Who deleted it, as for `edited`. */
      from: ContactIdentity;
      at: number;
    }
  | {
      type: "poll_vote";
      /** The gateway's id of the poll voted on (as its send answered it). */
      providerMessageId: string;
      /**
       * The voter: their E.164 number, or, when the network names them by a user id alone (a
       * `<digits>@lid`), that id. One vote state is kept per voter.
       */
      from: string;
      /** The options' texts they now pick, as the poll was sent with them; [] takes the vote back. */
      options: string[];
      at: number;
    }
  | { type: "health"; reading: HealthReading | null; at: number }
  | {
      type: "contact";
      /** Who the network says a user is: identifiers to link (docs/contacts.md, Contacts). */
      contact: ContactIdentity;
      /** What told it (a webhook's own id, or the change it names): a replay records no second `contact.updated`. */
      ref: string;
      at: number;
    };

/**
 * The events that do not speak of the session's link: a chat's (receipts, messages, reactions,
 * contacts' edits and deletes, poll votes), the account's health and who a contact is.
 */
const NOT_STATUS_EVENTS = [
  "ack",
  "incoming",
  "reaction",
  "edited",
  "revoked",
  "poll_vote",
  "health",
  "contact",
] as const;

/** The events that speak of the session's link: all but {@link NOT_STATUS_EVENTS}. */
export type StatusEvent = Exclude<GatewayEvent, { type: (typeof NOT_STATUS_EVENTS)[number] }>;

/** Whether `event` speaks of the session's link (a {@link StatusEvent}), the kind that moves its status. */
export function isStatusEvent(event: GatewayEvent): event is StatusEvent {
  return !(NOT_STATUS_EVENTS as readonly string[]).includes(event.type);
}

/** A `health` event (see {@link GatewayEvent}). */
export type HealthEvent = Extract<GatewayEvent, { type: "health" }>;

/** The status an `ack` event reports for a sent message. */
export type AckStatus = "sent" | "delivered" | "read" | "failed";

/** Events of one webhook call, for the session the gateway names (`session_<id>`). */
export interface GatewayEventBatch {
  sessionId: string;
  events: GatewayEvent[];
  /**
   * When the gateway sent the call, in epoch ms by its clock (WAHA's `timestamp`, Evolution API's
   * `date_time`), or null when the body does not say: the events route applies only calls within
   * freshness.ts's window of the service's clock.
   */
  sentAt: number | null;
}

/**
 * A gateway call that did not do what was asked. `permanent` when repeating it cannot help (the
 * gateway refused the request with a 4xx); otherwise the gateway was unreachable, timed out,
 * answered 5xx or answered a shape we do not understand. `status` is the HTTP status, if any;
 * `body` the error response's body, parsed when it was JSON (else its text), for adapters that
 * classify failures by it; the message quotes only its start.
 */
export class GatewayError extends Error {
  constructor(
    /** Short machine-readable cause, e.g. `gateway_timeout`, `gateway_http_503`. */
    readonly reason: string,
    readonly permanent: boolean,
    readonly status: number | null = null,
    detail?: string,
    readonly body: unknown = null,
    /**
     * The create request's field the refusal is about, as a problem's `errors` names it (e.g.
     * `cloud_api.waba_id`); null when it is about none in particular.
     */
    readonly field: string | null = null,
  ) {
    super(detail ? `${reason}: ${detail}` : reason);
    this.name = "GatewayError";
  }
}
