import { insufficientBalance, requireBalance } from "../billing/balance";
import { charge } from "../billing/ledger";
import { priceOf } from "../billing/prices";
import type { GatewayKind } from "../config";
import { readConfig } from "../config";
import type { Db } from "../db/client";
import { insertOutgoingStatements, type NewMessages, outgoingRows } from "../db/queries/messages";
import { findSession } from "../db/queries/sessions";
import { findTemplate } from "../db/queries/templates";
import { ApiError } from "../errors";
import { type ContactCard, contactCardsLabel } from "../lib/contact-cards";
import { capabilitiesOf } from "../lib/gateway-kinds";
import type { Interactive } from "../lib/interactive";
import { type Location, locationLabel } from "../lib/location";
import { log } from "../lib/log";
import { type Poll, pollLabel } from "../lib/poll";
import { sendInBatches } from "../lib/queue";
import { isMediaType } from "../media/rules";
import { discardMedia, type StoredMedia, storeMedia } from "../media/store";
import { type DispatchRequest, dispatchRequestOf, LANE } from "./dispatch-request";
import { requireGatewaySends } from "./gateway-types";
import { type MessageMetadata, metadataText } from "./metadata";
import { gatewayRefusals, requireSupportedRecipients, templateRefusals } from "./recipient-kinds";
import { type QuoteTarget, quoteTarget } from "./reply";
import { requireServiceWindow } from "./service-window";
import { requireReachable } from "./session-limits";
import { type TemplateSend, templateNeeds, templateVariableErrors } from "./template";
import type { MessageRow, SendableType } from "./types";

export interface SendRequest {
  accountId: string;
  sessionId: string;
  /**
   * Recipient addresses, each once: E.164 numbers and user ids (a BSUID or a LID; docs/contacts.md,
   * Contacts), in the request's order.
   */
  recipients: string[];
  type: SendableType;
  content: string | null;
  /** The caller's `media_url` for a media type (it passed `mediaUrlProblem`), else null. */
  mediaUrl: string | null;
  delayBetween: number;
  /** Epoch ms, or null to send now. */
  scheduledAt: number | null;
  /**
   * Set for one-time codes: the message carries the OTP's id and goes ahead of bulk fan-out, and
   * `content` is what is stored and shown (the code masked) while `secretContent` (the code in
   * clear) travels only in the queue message to the session object, which drops it once the
   * gateway accepted the message.
   */
  otp?: { id: string; secretContent: string };
  /** For type `template`: the template named and its variables (checked by {@link templateMetadata}). */
  template?: TemplateSend;
  /** For type `location`: the point and place to send (lib/location.ts). */
  location?: Location;
  /** For type `interactive`: the reply buttons or list to send (lib/interactive.ts). */
  interactive?: Interactive;
  /** For type `contacts`: the contact cards to send (lib/contact-cards.ts). */
  contacts?: ContactCard[];
  /** For type `poll`: the question and options to send (lib/poll.ts). */
  poll?: Poll;
  /** Show "typing…" before each message (docs/messages.md, Typing before a send); false when absent. */
  simulateTyping?: boolean;
  /** Our id of the message to quote (docs/messages.md, Replies and reactions); one recipient only. */
  replyTo?: string | null;
  /**
   * For type `reaction`: our id of the message to react to and the emoji ("" takes it off). The
   * recipient is that message's chat; `recipients` may be empty, else it must name that chat.
   */
  reaction?: { messageId: string; emoji: string };
}

export interface SendResult {
  rows: MessageRow[];
  /** Minor units. */
  price: number;
  /** Balance after the send's charge (minor units). */
  balance: number;
}

/**
 * Sends a message to one or many recipients (`POST /v1/chatapp/messages` in openapi.json; docs/messages.md,
 * Sending messages): checks that the session is the account's and connected, that a Cloud API session's
 * recipients are all inside its customer service window (src/messages/service-window.ts), fetches and stores
 * the media once for every recipient (src/media/store.ts; docs/security.md, Media), charges the account and
 * creates the rows atomically, then puts one queue message per recipient on the outbound Queue for the
 * paced fan-out. A media send the balance cannot cover is refused before its media is fetched.
 * Media that cannot be sent stop the send before anything is charged or written;
 * a stored copy whose charge is refused is deleted again. The rows come back `queued` (or `scheduled`) and charged whatever the Queue answers:
 * when `sendBatch` throws, whether it took the messages is unknown, so none is failed or refunded
 * on a guess (see {@link enqueue}; docs/messages.md, Sending messages).
 *
 * A reply (`replyTo`) or a reaction quotes a message of the session's chat with its one
 * recipient (messages/reply.ts; docs/messages.md, Replies and reactions): the message's gateway id travels
 * in `metadata.quoted`, our id in `reply_to`. A reaction's content is its emoji.
 *
 * @throws ApiError `not_found` (404) for a session not the account's, `session_not_connected`
 *   (409), `reply_to_not_found`, `reply_to_other_chat`, `reaction_other_chat` (422),
 *   `reply_to_not_sent` (409), `session_limited` (409: a cold recipient on a session the network limits,
 *   src/messages/session-limits.ts), `outside_service_window` (422), `recipient_not_supported` (422: a user id
 *   the gateway or the template cannot reach, messages/recipient-kinds.ts), `type_not_supported_by_gateway`
 *   (422: a sticker, an interactive kind or a poll the gateway does not send), `media_unavailable` (422), `insufficient_balance` (402), `service_unavailable` (503,
 *   the media could not be stored).
 */
export async function sendMessages(env: Env, db: Db, request: SendRequest): Promise<SendResult> {
  const session = await findSession(db, request.accountId, request.sessionId);
  if (!session) throw new ApiError("not_found", "No such session.");
  if (session.status !== "connected") {
    throw new ApiError(
      "session_not_connected",
      `The session is ${session.status}; it must be connected to send.`,
    );
  }
  const config = readConfig(env);
  const gateway = session.gateway ?? config.CHATAPP_GATEWAY;
  // A user id of a kind the gateway cannot send to: a LID on the Cloud API, a BSUID on WAHA.
  requireSupportedRecipients(gatewayRefusals(gateway), request.recipients);
  requireGatewaySends(gateway, request);
  const quote = await quoteOf(db, request);
  if (quote) request = { ...request, recipients: [quote.chat] };
  const metadata = withQuote(await payloadMetadata(db, request, gateway), quote);
  await requireServiceWindow(
    db,
    {
      sessionId: session.id,
      gateway,
      type: request.type,
      recipients: request.recipients,
    },
    Date.now(),
  );
  await requireReachable(
    db,
    { sessionId: session.id, health: session.health, recipients: request.recipients },
    Date.now(),
  );
  const price = priceOf(config, request.type);
  let media: StoredMedia | null = null;
  if (isMediaType(request.type) && request.mediaUrl !== null) {
    // An account that cannot pay makes the service fetch nothing (the charge below still decides).
    await requireBalance(db, request.accountId, price * request.recipients.length, "This send");
    media = await storeMedia(env.MEDIA, request.mediaUrl, request.type, {
      allowLocalhost: config.MEDIA_ALLOW_HTTP_LOCALHOST,
    });
  }
  const toSend: NewMessages = {
    accountId: request.accountId,
    sessionId: request.sessionId,
    type: request.type,
    content: storedContent(request),
    metadata,
    replyTo: quote?.id ?? null,
    mediaUrl: request.mediaUrl,
    mediaKey: media?.key ?? null,
    mediaContentType: media?.contentType ?? null,
    delayBetween: request.delayBetween,
    scheduledAt: request.scheduledAt,
    price,
    otpId: request.otp?.id ?? null,
    recipients: idsInSendOrder(request.recipients),
    chargeId: crypto.randomUUID(),
    now: Date.now(),
    simulateTyping: request.simulateTyping ?? false,
  };
  const count = toSend.recipients.length;
  const charged = await charge(
    env,
    db,
    {
      id: toSend.chargeId,
      accountId: request.accountId,
      amount: price * count,
      messageCount: count,
      now: toSend.now,
      cause: { otpId: toSend.otpId },
    },
    (condition) => insertOutgoingStatements(toSend, condition),
  );
  if (!charged.ok) {
    if (media) await discardMedia(env.MEDIA, media.key);
    if (charged.reason === "no_account") throw new ApiError("not_found", "No such account.");
    throw insufficientBalance("This send", price * count, charged.balance);
  }
  const created = outgoingRows(toSend);
  const requests = created.map((row) =>
    request.otp
      ? dispatchRequestOf(row, LANE.otp, { content: request.otp.secretContent })
      : dispatchRequestOf(row, LANE.send),
  );
  await enqueue(env.OUTBOUND_QUEUE, requests, request.accountId);
  return { rows: created, price, balance: charged.balance };
}

/**
 * Each recipient with a fresh message id (a random UUID), the ids ascending in the recipients'
 * order: the ledger lists a send's messages in send order by their ids (src/db/queries/ledger.ts
 * `buildLedgerQuery`), reading them in the order of `messages_account_created`.
 */
function idsInSendOrder(recipients: string[]): { id: string; to: string }[] {
  const ids = recipients.map(() => crypto.randomUUID()).sort();
  return recipients.map((to, i) => ({ id: ids[i] ?? crypto.randomUUID(), to }));
}

/**
 * What a send's rows store as `content`: a template's name, a reaction's emoji, a location's name
 * or address (lib/location.ts `locationLabel`), an interactive message's body text, contact
 * cards' names (lib/contact-cards.ts `contactCardsLabel`), a poll's question (lib/poll.ts
 * `pollLabel`), else the request's text or caption.
 */
function storedContent(request: SendRequest): string | null {
  if (request.type === "template") return request.template?.name ?? null;
  if (request.type === "reaction") return request.reaction?.emoji ?? "";
  if (request.type === "location") return request.location ? locationLabel(request.location) : null;
  if (request.type === "interactive") return request.interactive?.body.text ?? null;
  if (request.type === "contacts") return request.contacts ? contactCardsLabel(request.contacts) : null;
  if (request.type === "poll") return request.poll ? pollLabel(request.poll) : null;
  return request.content;
}

/**
 * The `metadata` a send's type writes before the send (docs/messages.md, Sending messages): a template's
 * (checked by {@link templateMetadata}), `{ location }` for a location, `{ contacts }` for contact
 * cards, `{ interactive }` for an interactive message and `{ poll }` for a poll (each checked
 * against the gateway by messages/gateway-types.ts `requireGatewaySends`), else undefined.
 * @throws ApiError as {@link templateMetadata}.
 */
async function payloadMetadata(
  db: Db,
  request: SendRequest,
  gateway: GatewayKind,
): Promise<MessageMetadata | undefined> {
  if (request.type === "template") return templateMetadata(db, request, gateway);
  if (request.type === "location" && request.location) return { location: request.location };
  if (request.type === "contacts" && request.contacts) return { contacts: request.contacts };
  if (request.type === "interactive" && request.interactive) return { interactive: request.interactive };
  if (request.type === "poll" && request.poll) return { poll: request.poll };
  return undefined;
}

/**
 * Checks a template send before anything is charged (docs/gateways.md, Message templates): only a
 * `cloud_api` session sends templates; the template must be in the session's cache (as
 * `GET /v1/chatapp/sessions/{id}/templates` last read it) by name and language, and `APPROVED`;
 * its variables must fit it (messages/template.ts `templateVariableErrors`).
 * @returns the messages' `metadata`: `{ template: { name, language, variables } }`.
 * @throws ApiError `validation_failed` (422) naming `type` for another gateway's session or the
 *   variables that do not fit, `template_not_found` (422), `recipient_not_supported` (422) for an
 *   authentication template with a code button to a business-scoped user id.
 */
async function templateMetadata(
  db: Db,
  request: SendRequest,
  gateway: GatewayKind,
): Promise<MessageMetadata> {
  const template = request.template;
  if (!capabilitiesOf(gateway).sendsTemplates || !template) {
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: {
        [template ? "type" : "template"]: [
          template ? "template messages need a session on the cloud_api gateway" : "required for template",
        ],
      },
    });
  }
  const row = await findTemplate(db, request.accountId, request.sessionId, template.name, template.language);
  if (row?.status !== "APPROVED") {
    throw new ApiError(
      "template_not_found",
      row
        ? `Template ${template.name} (${template.language}) is ${row.status}; only APPROVED templates can be sent.`
        : `The session has no template ${template.name} (${template.language}); list its templates to refresh them.`,
    );
  }
  requireSupportedRecipients(templateRefusals(row), request.recipients);
  const errors = templateVariableErrors(templateNeeds(row.components), template.variables);
  if (errors)
    throw new ApiError("validation_failed", "The template's variables do not fit it.", { fields: errors });
  return { template };
}

/**
 * The message a send quotes (`replyTo`) or reacts to (`reaction`), checked against the send's
 * session and recipient (messages/reply.ts `quoteTarget`), or null for neither. A reply has one
 * recipient (the route refuses more); a reaction's recipient, when given, must be the message's chat.
 * @throws ApiError as `quoteTarget`.
 */
async function quoteOf(db: Db, request: SendRequest): Promise<QuoteTarget | null> {
  const reacted = request.type === "reaction" ? request.reaction : undefined;
  const messageId = reacted?.messageId ?? request.replyTo ?? null;
  if (messageId === null) return null;
  return quoteTarget(db, {
    accountId: request.accountId,
    sessionId: request.sessionId,
    messageId,
    to: request.recipients[0] ?? null,
    field: reacted ? "reaction" : "reply_to",
  });
}

/**
 * The messages' `metadata` JSON text: `metadata` with the quoted message as the gateway knows it,
 * `quoted: { provider_message_id, from_me }` (the queue message and the outbox carry it to the
 * gateway, dispatch-request.ts, so nothing is read back at send time); undefined for neither.
 */
function withQuote(metadata: MessageMetadata | undefined, quote: QuoteTarget | null): string | undefined {
  if (!quote) return metadata && metadataText(metadata);
  const quoted = { provider_message_id: quote.quoted.providerMessageId, from_me: quote.quoted.fromMe };
  return metadataText({ ...metadata, quoted });
}

/**
 * Puts a send's queue messages on the outbound Queue, trying once more, at once, from the first
 * `sendBatch` call that threw. A throw does not say the Queue did not take the batch (the call may
 * have succeeded and its answer been lost), so nothing is failed or refunded on it: the messages
 * stay `queued` with `accepted_at` null, and the session object keeps whichever copy reaches it
 * first (it ignores message ids it holds, src/delivery/outbox.ts). A message that never got on the
 * Queue is put back by the hourly reconciliation sweep (src/delivery/reconcile.ts) once it has
 * waited 15 minutes unaccepted (a scheduled one, 15 minutes past its time); a one-time code is
 * failed there with reason `dispatch_failed` and refunded instead, since only its queue message
 * held the code. Logged as `enqueue_failed`, with how many messages are left to the sweep.
 */
async function enqueue(queue: Queue, requests: DispatchRequest[], accountId: string): Promise<void> {
  const first = await sendInBatches(queue, requests);
  if (!first.error) return;
  const retry = await sendInBatches(queue, requests.slice(first.sent));
  log.write(
    retry.error ? "error" : "warn",
    "enqueue_failed",
    {
      account_id: accountId,
      messages: requests.length,
      retried: requests.length - first.sent,
      // Messages whose queue message may be missing: the sweep's to settle.
      left_to_sweep: retry.error ? requests.length - first.sent - retry.sent : 0,
      error: first.error,
      retry_error: retry.error === undefined ? null : String(retry.error),
    },
    "error",
  );
}
