import { z } from "zod";
import { type ContactCard, contactCardsOf } from "../../lib/contact-cards";
import { userIdKind } from "../../lib/contact-identity";
import { type Location, readLocation } from "../../lib/location";
import { type Poll, readPoll } from "../../lib/poll";
import { vcardOf } from "../../lib/vcard";
import type { MediaLinkSigner } from "../../media/link";
import type { OutboundMessage, SendOutcome } from "../gateway";
import { type GatewayHttp, gatewayRequest, notSent, sendFailure } from "../http";
import { digitsOf } from "../jid";
import { fileNameOf, MEDIA_NOT_STORED, mediaLinkOf } from "../media";
import { isReachoutTimelocked } from "./health";
import { listBody, notImplementedByEngine, readInteractive } from "./interactive";

/*
 * Sending through WAHA: the recipient lookup, the send call and what its answer or failure comes
 * to. Sections quoted are of WAHA's docs, https://waha.devlike.pro/docs/how-to/send-messages/ and
 * /contacts/. Schemas pick only the fields used here and let the rest through; a missing or
 * mistyped field makes the call a transient `gateway_bad_response`.
 */

/** `GET /api/contacts/check-exists` → `{ numberExists, chatId }` ("Contacts → Check phone number exists"). */
const NumberExists = z.looseObject({ numberExists: z.boolean(), chatId: z.string().min(1).nullish() });

/**
 * The id of a sent message, in the `{fromMe}_{chatId}_{id}` form that `message.ack` events carry
 * ("Events → message.ack"). `POST /api/send*` answers in the engine's own format
 * (devlikeapro/waha#407, devlikeapro/waha#760, devlikeapro/waha#1122): the documented `WAMessage`
 * and GOWS give `id` as that string; WEBJS gives
 * `id: { _serialized }`; NOWEB gives the Baileys key `{ remoteJid: "<digits>@s.whatsapp.net", fromMe,
 * id }`, which WAHA serialises for events with the chat id in `@c.us` form (`SerializeMessageKey`
 * after `toCusFormat` in WAHA's NOWEB engine), as done here.
 */
const SentMessageId = z.union([
  z.looseObject({ id: z.string().min(1) }).transform((sent) => sent.id),
  z
    .looseObject({ id: z.looseObject({ _serialized: z.string().min(1) }) })
    .transform((sent) => sent.id._serialized),
  z
    .looseObject({
      key: z.looseObject({
        id: z.string().min(1),
        remoteJid: z.string().min(1),
        fromMe: z.boolean().nullish(),
      }),
    })
    .transform(
      ({ key }) => `${key.fromMe === false ? "false" : "true"}_${cusChatId(key.remoteJid)}_${key.id}`,
    ),
]);

/**
 * Sends one message from session `sessionId` ("Send messages → Send Text / Image / Voice / Video /
 * File / Location / Contact (vcard)"; a location by {@link locationBody}, contact cards by
 * {@link contactsBody}, a list by `POST /api/sendList`, interactive.ts `listBody`, a poll by
 * `POST /api/sendPoll`, {@link pollBody}), to a number or
 * a LID ({@link chatIdOf}). WAHA accepts a message to a number that is not on the network (NOWEB answers it
 * `PENDING`; devlikeapro/waha#569), so the number is first looked up with `GET
 * /api/contacts/check-exists` — the lookup WAHA's maintainers point to, and the one the docs
 * require anyway for Brazilian numbers, whose chat id may differ from the digits ("Contacts →
 * Check phone number exists"); the message goes to the chat id it answers. Resolves with the
 * provider message id in the `message.ack` form ({@link SentMessageId}) once WAHA accepted it.
 * `numberExists: false` is `rejected` (`recipient_not_on_chatapp`); a failed lookup is `rejected`
 * and retryable (the send call was not made); the send call's 4xx are `rejected` with the
 * `GatewayError` reason, and its 5xx, timeouts, lost connections and unreadable answers `unknown`
 * (`sendFailure`), but WhatsApp's error 463, which is `rejected` `reachout_timelocked` with a
 * `health` event (see {@link timelocked}), and, for a list, WAHA's 501 for an engine that does not
 * implement it (interactive.ts `notImplementedByEngine`), which is `rejected`. Reply buttons are
 * `rejected` (`not_supported_by_gateway`) without a call (interactive.ts). Media go as a link to
 * our stored copy signed with `links` ({@link mediaLinkOf}); a media message without one is
 * `rejected` (`media_not_stored`) without a call. Never throws.
 */
export async function sendMessage(
  http: GatewayHttp,
  sessionId: string,
  message: OutboundMessage,
  links: MediaLinkSigner,
): Promise<SendOutcome> {
  // Message templates are Meta's (Cloud API sessions only); the send path refuses them elsewhere.
  // WAHA's API has no sticker message (lib/gateway-kinds.ts `sendsStickers`): refused before the send.
  // Nor reply buttons that WhatsApp shows (interactive.ts); an `interactive_reply` is a contact's
  // tap, never sent.
  if (
    message.type === "template" ||
    message.type === "interactive_reply" ||
    message.type === "sticker" ||
    (message.type === "interactive" && readInteractive(message.content)?.type === "button")
  )
    return { outcome: "rejected", reason: "not_supported_by_gateway", retryable: false };
  if (message.type === "reaction") return sendReaction(http, sessionId, message);
  const fetchless = FETCHLESS_TYPES.includes(message.type);
  const mediaUrl = await mediaLinkOf(links, message);
  if (!fetchless && !mediaUrl) return { outcome: "rejected", reason: MEDIA_NOT_STORED, retryable: false };
  const structured = structuredBody(message);
  const body = structured === undefined ? sendBody(message, mediaUrl ?? "") : structured;
  if (!body) return { outcome: "rejected", reason: "content_unreadable", retryable: false };
  let chatId: string | null;
  try {
    chatId = await chatIdOf(http, sessionId, message.to);
  } catch (error) {
    // The send call was not made: nothing was sent, whatever the lookup's failure.
    return notSent(error);
  }
  if (!chatId) return { outcome: "rejected", reason: "recipient_not_on_chatapp", retryable: false };
  try {
    const providerMessageId = await gatewayRequest(http, {
      method: "POST",
      path: SEND_PATHS[message.type],
      body: { session: sessionId, chatId, ...body },
      schema: SentMessageId,
      timeoutMs: fetchless ? undefined : http.mediaTimeoutMs,
    });
    return { outcome: "accepted", providerMessageId };
  } catch (error) {
    if (isReachoutTimelocked(error)) return timelocked();
    if (message.type === "interactive" && notImplementedByEngine(error))
      return {
        outcome: "rejected",
        reason: error instanceof Error ? error.message : String(error),
        retryable: false,
      };
    return sendFailure(error);
  }
}

/**
 * A send WhatsApp refused with error 463, the reach-out timelock on new chats: not sent (the
 * server's nack), not to be tried again on this session while the timelock holds, and a signal
 * that it holds, whatever `me.reachoutTimelock` says (devlikeapro/waha#2219): the session's health
 * gets an active timelock of unknown end, which the next reading of WAHA may date.
 */
function timelocked(): SendOutcome {
  return {
    outcome: "rejected",
    reason: REACHOUT_TIMELOCKED,
    retryable: false,
    sessionEvent: { type: "health", reading: { timelock: { active: true, until: null } }, at: Date.now() },
  };
}

/** Reason of a message WhatsApp refused with error 463. */
export const REACHOUT_TIMELOCKED = "reachout_timelocked";

/**
 * The chat id of `to` that the send and lookup.ts go to: a LID (`<digits>@lid`,
 * src/lib/contact-identity.ts `userIdKind`) is a chat id as it is, without a lookup ("Contacts →
 * @lid and @c.us": "You can message anyone using either their LID or their PN"; the send
 * requests' `chatId` is any chat id, WAHA's OpenAPI document, `MessageTextRequest`); an E.164
 * number's by `GET /api/contacts/check-exists` ("Contacts → Check phone number exists"), or null
 * when the number is not on the network.
 * @throws GatewayError for a failed call.
 */
export async function chatIdOf(http: GatewayHttp, sessionId: string, to: string): Promise<string | null> {
  if (userIdKind(to) === "lid") return to;
  const digits = digitsOf(to);
  const lookup = await gatewayRequest(http, {
    method: "GET",
    path: `/api/contacts/check-exists?${new URLSearchParams({ phone: digits, session: sessionId })}`,
    schema: NumberExists,
  });
  if (!lookup.numberExists) return null;
  return lookup.chatId ?? `${digits}@c.us`;
}

/**
 * Sets (or, with an empty emoji, takes off) the session's reaction on `message.replyTo`: `PUT
 * /api/reaction` `{ session, messageId, reaction }` (WAHA's `MessageReactionRequest`, "Send
 * messages → Reaction"; `messageId` in the serialised `{fromMe}_{chatId}_{id}` form every WAHA
 * message id has, so no number lookup precedes it). NOWEB and GOWS answer the reaction message
 * sent (its key, read as {@link SentMessageId}); other engines answer no message, and the
 * reaction's id is then `reaction_<client message id>`, ours. A reaction without a message is
 * refused (`reaction_without_message`) without a call. Failures as {@link sendFailure}.
 */
async function sendReaction(
  http: GatewayHttp,
  sessionId: string,
  message: OutboundMessage,
): Promise<SendOutcome> {
  if (!message.replyTo) return { outcome: "rejected", reason: "reaction_without_message", retryable: false };
  try {
    const sent = await gatewayRequest(http, {
      method: "PUT",
      path: "/api/reaction",
      body: {
        session: sessionId,
        messageId: message.replyTo.providerMessageId,
        reaction: message.content ?? "",
      },
      schema: SentMessageId.nullable().catch(null),
    });
    return { outcome: "accepted", providerMessageId: sent ?? `reaction_${message.clientMessageId}` };
  } catch (error) {
    return sendFailure(error);
  }
}

const SEND_PATHS: Record<
  Exclude<OutboundMessage["type"], "template" | "reaction" | "interactive_reply" | "sticker">,
  string
> = {
  text: "/api/sendText",
  image: "/api/sendImage",
  video: "/api/sendVideo",
  audio: "/api/sendVoice",
  document: "/api/sendFile",
  location: "/api/sendLocation",
  contacts: "/api/sendContactVcard",
  interactive: "/api/sendList",
  poll: "/api/sendPoll",
};

/** The types whose send makes WAHA fetch no media: the ordinary timeout serves. */
const FETCHLESS_TYPES: readonly OutboundMessage["type"][] = [
  "text",
  "location",
  "contacts",
  "interactive",
  "poll",
];

/**
 * The type-specific body of a location ({@link locationBody}), contact cards ({@link
 * contactsBody}), a list (interactive.ts `listBody`) or a poll ({@link pollBody}), read from the
 * message's content; null when the content does not read as its type's (sent nowhere:
 * `content_unreadable`); undefined for other types, which {@link sendBody} builds.
 */
function structuredBody(message: OutboundMessage): Record<string, unknown> | null | undefined {
  if (message.type === "poll") {
    const poll = readPoll(message.content);
    return poll ? pollBody(message, poll) : null;
  }
  if (message.type === "interactive") {
    const interactive = readInteractive(message.content);
    return interactive?.type === "list" ? listBody(message, interactive) : null;
  }
  if (message.type === "location") {
    const location = readLocation(message.content);
    return location ? locationBody(message, location) : null;
  }
  if (message.type !== "contacts") return undefined;
  try {
    return contactsBody(message, contactCardsOf(message.content));
  } catch {
    return null;
  }
}

/**
 * The body of `POST /api/sendContactVcard` beside `session` and `chatId` (WAHA's OpenAPI document,
 * `MessageContactVcardRequest`: `contacts` items `VCardContact { vcard }` or `Contact`, `id`
 * "Pre-generated message id", `reply_to`; "Send messages → Send contact (vcard)"): each card as a
 * `VCardContact`, its vCard written by lib/vcard.ts `vcardOf`, so every phone, email and URL of it
 * travels (the structured `Contact` takes one phone). `id` is our client message id, as for a text.
 */
function contactsBody(message: OutboundMessage, cards: ContactCard[]): Record<string, unknown> {
  return {
    contacts: cards.map((card) => ({ vcard: vcardOf(card) })),
    id: message.clientMessageId,
    ...(message.replyTo ? { reply_to: message.replyTo.providerMessageId } : {}),
  };
}

/**
 * The body of `POST /api/sendPoll` beside `session` and `chatId` (WAHA's OpenAPI document,
 * `MessagePollRequest`: `poll` a `MessagePoll` `{ name, options, multipleAnswers }`, all three
 * required, `id` "Pre-generated message id", `reply_to`; "Polls → Send poll",
 * https://waha.devlike.pro/docs/how-to/polls/): the question as `name`, the options as they are,
 * `multiple_answers` as `multipleAnswers`, a boolean as the docs' example sends it (the document
 * types it `object` with `default: false`). `id` is our client message id, as for a text, so a
 * lookup finds the poll by it where the engine honours it (lookup.ts).
 */
function pollBody(message: OutboundMessage, poll: Poll): Record<string, unknown> {
  return {
    poll: { name: poll.question, options: poll.options, multipleAnswers: poll.multiple_answers },
    id: message.clientMessageId,
    ...(message.replyTo ? { reply_to: message.replyTo.providerMessageId } : {}),
  };
}

/**
 * The body of `POST /api/sendLocation` beside `session` and `chatId` (WAHA's OpenAPI document,
 * `MessageLocationRequest`: `latitude` and `longitude` numbers, `title` required, `id` "Pre-generated
 * message id", `reply_to`): `title` is the place's name, else its address, else "" (the document
 * sets no minimum length); WAHA has no field for an address beside it. `id` is our client message
 * id, as for a text.
 */
function locationBody(message: OutboundMessage, location: Location): Record<string, unknown> {
  return {
    latitude: location.latitude,
    longitude: location.longitude,
    title: location.name ?? location.address ?? "",
    id: message.clientMessageId,
    ...(message.replyTo ? { reply_to: message.replyTo.providerMessageId } : {}),
  };
}

/**
 * The type-specific part of a send body. Text carries our client message id as `id`
 * (`MessageTextRequest.id`, "Pre-generated message id", honoured by the NOWEB and GOWS engines
 * from WAHA 2026.4.3 on: changelog "Provide message ID in send request", devlikeapro/waha#2054);
 * other engines and older servers ignore it. The media requests have no such field. Media go by
 * URL as `file: { url, mimetype, filename? }` with the content as caption: `url` is `mediaUrl`,
 * the signed link to our stored copy; the mimetype (which WAHA's `RemoteFile` requires) is the
 * stored copy's content type; a document's file name comes from the caller's URL. Voice notes
 * must be OGG/Opus and videos H.264 MP4 ("Send messages → Voice File Format / Video File
 * Format"); a content type cannot promise either codec, so voice notes are always sent with
 * `convert: true`, and videos unless `video/mp4`. A reply carries the quoted message's WAHA id as
 * `reply_to` ("The ID of the message to reply to - false_11111111111@c.us_AAAAAAAAAAAAAAAAAAAA",
 * on `MessageTextRequest` and every file request).
 */
function sendBody(message: OutboundMessage, mediaUrl: string): Record<string, unknown> {
  // A reply quotes by WAHA's serialised message id (`reply_to` of every send request).
  const reply = message.replyTo ? { reply_to: message.replyTo.providerMessageId } : {};
  return { ...typeBody(message, mediaUrl), ...reply };
}

/** {@link sendBody} without the reply. */
function typeBody(message: OutboundMessage, mediaUrl: string): Record<string, unknown> {
  if (message.type === "text") return { text: message.content ?? "", id: message.clientMessageId };
  const contentType = message.media?.contentType ?? "application/octet-stream";
  const file: Record<string, string> = { url: mediaUrl, mimetype: contentType };
  if (message.type === "document") file.filename = fileNameOf(message.mediaUrl ?? "");
  // `MessageVoiceRequest` has no caption (WAHA's OpenAPI document): voice notes go without one.
  const body: Record<string, unknown> = {
    file,
    caption: message.type === "audio" ? undefined : (message.content ?? undefined),
  };
  if (message.type === "audio") body.convert = true;
  if (message.type === "video") body.convert = contentType !== "video/mp4";
  return body;
}

/** `<digits>@s.whatsapp.net` (Baileys) → `<digits>@c.us`, WAHA's form for chat ids; others as they are. */
function cusChatId(jid: string): string {
  return jid.replace(/@s\.whatsapp\.net$/, "@c.us");
}
