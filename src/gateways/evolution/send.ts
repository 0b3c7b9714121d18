import { z } from "zod";
import { type ContactCard, contactCardsOf } from "../../lib/contact-cards";
import { type Interactive, interactiveOf } from "../../lib/interactive";
import { type Location, locationOf } from "../../lib/location";
import { type Poll, pollOf } from "../../lib/poll";
import type { MediaLinkSigner } from "../../media/link";
import type { OutboundMessage, SendOutcome } from "../gateway";
import { type GatewayHttp, gatewayRequest, sendFailure } from "../http";
import { fileNameOf, MEDIA_NOT_STORED, mediaLinkOf } from "../media";
import { errorMessages, statusOf } from "./errors";
import { chatJidOf, numberOf } from "./recipient";

/*
 * Sending through Evolution API v2: the send call and what its answer or failure comes to.
 * Sources, by path in evolution-foundation/evolution-api (formerly EvolutionAPI/evolution-api):
 * src/api/routes/sendMessage.router.ts (routes), src/api/dto/sendMessage.dto.ts and
 * src/validate/message.schema.ts (bodies), the channel's `textMessage`, `mediaMessage`,
 * `audioWhatsapp`, `sendMessageWithTyping` and `sendMessage` in
 * src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts (client ids, answers and
 * errors), on the `develop` branch from 2.4.0-rc1 on (the client message id came with
 * https://github.com/evolution-foundation/evolution-api/pull/2361); locations, by the same paths
 * (`SendLocationDto`, `locationMessageSchema`, the channel's `locationMessage`); reply buttons and
 * lists, by the same paths (`SendButtonsDto`, `buttonsMessageSchema`, the channel's
 * `buttonMessage`; `SendListDto`, `listMessageSchema`, `listMessage`), as 2.4.0-rc1 made them
 * (commit 35a4bd44 "fix interactive rendering on WhatsApp Web/Desktop": `buttonMessage` lost its
 * `viewOnceMessage` wrapper and both gained the `<biz>` node WhatsApp needs to show them; up to
 * 2.3.7 buttons did not show on WhatsApp Web and lists went as product lists).
 */

/**
 * The reason of a message whose content does not read as its type's (a location that is not a
 * `Location`, an interactive message that is not an `Interactive`).
 */
const CONTENT_UNREADABLE = "content_unreadable";

/** `POST /message/send*` → the sent message (`prepareMessage`): `{ key: { remoteJid, fromMe, id }, … }`. */
const SentMessage = z.object({ key: z.object({ id: z.string().min(1) }) });

/**
 * Sends one message from instance `sessionId`. Text → `POST /message/sendText/{instance}`
 * `{ number, text, messageId }`; image, video, document → `POST /message/sendMedia/{instance}`
 * `{ number, mediatype, mimetype, media, caption?, fileName?, messageId }`; audio → `POST
 * /message/sendWhatsAppAudio/{instance}` `{ number, audio, messageId }` (a voice note); a sticker →
 * `POST /message/sendSticker/{instance}` `{ number, sticker, messageId }`. `number`
 * is the E.164 number's digits, or a LID recipient (`<digits>@lid`) as it is, which Evolution
 * sends to as that JID with no number lookup (recipient.ts `numberOf`). A location → `POST
 * /message/sendLocation/{instance}` ({@link locationCall}); reply buttons → `POST
 * /message/sendButtons/{instance}` ({@link buttonsCall}); a list → `POST /message/sendList/{instance}`
 * ({@link listCall}); contact cards → `POST /message/sendContact/{instance}` ({@link contactsCall});
 * a poll → `POST /message/sendPoll/{instance}` ({@link pollCall}).
 *
 * `messageId` is `message.clientMessageId`, a top-level field of every send body (`Metadata` in
 * sendMessage.dto.ts; the v2 bodies are flat, there is no `options` object): `textMessage` and
 * `mediaMessage` hand it to Baileys' `relayMessage` as the WhatsApp message id, so the answer's
 * `key.id` is that id and a lookup can find the message by it (lookup.ts). `audioWhatsapp` does
 * not pass it on (its `sendMessageWithTyping` options carry no `messageId`): a voice note gets an
 * id of Baileys' choosing, and lookup.ts finds it otherwise; so do a location, reply buttons and a
 * list (the options `locationMessage`, `buttonMessage` and `listMessage` hand on carry none
 * either). Evolution's JSON schemas list no `messageId`
 * but allow fields they do not list, so older servers ignore it.
 *
 * Media go as `media` (or `audio`): a link to our stored copy signed with `links`
 * ({@link mediaLinkOf}), never the caller's URL; `mimetype` is the stored copy's content type
 * (the Baileys channel's `prepareMediaMessage` takes it over a guess from the URL, which has no
 * extension), and a document's `fileName` comes from the caller's URL.
 *
 * A reply adds `quoted: { key: { id, remoteJid, fromMe } }` (`Metadata.quoted`, the `Quoted`
 * class; `quotedOptionsSchema`), the quoted message's Baileys key: Evolution reads the message
 * itself from its store by that key (`sendMessageWithTyping`: `getMessage(m.key, true)`), so it
 * quotes only messages it stored (`DATABASE_SAVE_DATA_NEW_MESSAGE`, as lookups need), and sends
 * the reply unquoted otherwise. A reaction → `POST /message/sendReaction/{instance}` `{ key,
 * reaction }` (`SendReactionDto`, `reactionMessageSchema`: the reacted message's key, the emoji,
 * "" to take it off); it takes no `messageId`, so its id is Baileys' choice.
 *
 * The answer's `key.id` is the provider message id that `messages.update` acks carry as `keyId`.
 * Media without a stored copy are rejected (`media_not_stored`) without a call, and so is a
 * location whose content is not the JSON of a lib/location.ts `Location`, or an `interactive`
 * message whose content is not the JSON of a lib/interactive.ts `Interactive`
 * (`content_unreadable`); the failures of the call are as {@link sendFailureOf}. Never throws.
 */
export async function sendMessage(
  http: GatewayHttp,
  sessionId: string,
  message: OutboundMessage,
  links: MediaLinkSigner,
): Promise<SendOutcome> {
  // Message templates are Meta's (Cloud API sessions only); the send path refuses them elsewhere.
  // An `interactive_reply` is a contact's tap, never sent.
  if (message.type === "template" || message.type === "interactive_reply")
    return { outcome: "rejected", reason: "not_supported_by_gateway", retryable: false };
  let call: { path: string; body: object } | null;
  if (
    message.type === "location" ||
    message.type === "interactive" ||
    message.type === "contacts" ||
    message.type === "poll"
  ) {
    try {
      call =
        message.type === "location"
          ? locationCall(sessionId, message, locationOf(message.content))
          : message.type === "contacts"
            ? contactsCall(sessionId, message, contactCardsOf(message.content))
            : message.type === "poll"
              ? pollCall(sessionId, message, pollOf(message.content))
              : interactiveCall(sessionId, message, interactiveOf(message.content));
    } catch (error) {
      return { outcome: "rejected", reason: `${CONTENT_UNREADABLE}: ${String(error)}`, retryable: false };
    }
  } else {
    call = sendCall(sessionId, message, await mediaLinkOf(links, message));
  }
  if (!call) {
    const reason = message.type === "reaction" ? "reaction_without_message" : MEDIA_NOT_STORED;
    return { outcome: "rejected", reason, retryable: false };
  }
  try {
    const sent = await gatewayRequest(http, {
      method: "POST",
      ...call,
      schema: SentMessage,
      // A text, a location, buttons (we send no `thumbnailUrl`) or a list make Evolution fetch
      // nothing: the ordinary timeout.
      timeoutMs: FETCHES_NOTHING.has(message.type) ? undefined : http.mediaTimeoutMs,
    });
    return { outcome: "accepted", providerMessageId: sent.key.id };
  } catch (error) {
    return sendFailureOf(error);
  }
}

/** The message types whose send makes Evolution fetch no media. */
const FETCHES_NOTHING: ReadonlySet<OutboundMessage["type"]> = new Set([
  "text",
  "location",
  "interactive",
  "contacts",
  "poll",
]);

/**
 * The path and body that send `poll` to `message.to`: `POST /message/sendPoll/{instance}`
 * (sendMessage.router.ts) with `{ number, name, selectableCount, values, messageId, quoted? }`,
 * fields of `SendPollDto` (a `Metadata`) and `pollMessageSchema` (src/validate/message.schema.ts:
 * `number`, `name`, `selectableCount` and `values` required; `selectableCount` an integer 0–10;
 * `values` 2–10 unique strings, lib/gateway-kinds.ts `maxPollOptions`): the question as `name`,
 * the options as `values`, and `selectableCount` 1 for one choice, 0 for several: the channel's
 * `pollMessage` hands these to Baileys as `poll: { name, selectableCount, values }`, where 0 lets a
 * contact pick any number of options and 1 sends a single-choice poll (`pollCreationMessageV3`;
 * src/Utils/messages.ts `generateWAMessageContent` of https://github.com/WhiskeySockets/Baileys).
 * `pollMessage` passes on `quoted` (so a reply quotes) but no `messageId`: the poll gets an id of
 * Baileys' choosing, found by lookup.ts by the chat, the time, the question and the options.
 */
function pollCall(sessionId: string, message: OutboundMessage, poll: Poll): { path: string; body: object } {
  const key = quotedKeyOf(message);
  return {
    path: `/message/sendPoll/${sessionId}`,
    body: {
      number: numberOf(message.to),
      name: poll.question,
      selectableCount: poll.multiple_answers ? 0 : 1,
      values: poll.options,
      messageId: message.clientMessageId,
      ...(key ? { quoted: { key } } : {}),
    },
  };
}

/**
 * The path and body that send contact cards to `message.to`: `POST /message/sendContact/{instance}`
 * `{ number, contact: [{ fullName, phoneNumber, wuid?, organization?, email?, url? }], messageId }`
 * (`SendContactDto`, `contactMessageSchema`: `fullName` and `phoneNumber` required, `phoneNumber`
 * of 10 characters at least, `wuid` digits of 10 at least). The channel's `contactMessage` writes
 * each card's vCard itself from these fields, so a card travels with its formatted name, its
 * first phone (`wuid` its `wa_id`, else the phone's digits when there are 10 or more; without
 * one Evolution makes one of the phone), its company, and its first email and URL: the rest of a
 * card (more phones, emails and URLs, name parts, department, title) does not reach the contact
 * on Evolution (docs/messages.md, Sending messages → Contact cards). `contactMessage` hands on no options
 * (`sendMessageWithTyping(number, message, {})`), so neither `messageId` nor `quoted` is honoured:
 * the message gets an id of Baileys' choosing, found by lookup.ts by the chat, the time and the
 * names, and a reply goes without its quote. `messageId` is still sent, as every send's.
 */
function contactsCall(
  sessionId: string,
  message: OutboundMessage,
  cards: ContactCard[],
): { path: string; body: object } {
  return {
    path: `/message/sendContact/${sessionId}`,
    body: {
      number: numberOf(message.to),
      contact: cards.map(contactFields),
      messageId: message.clientMessageId,
    },
  };
}

/** One card's `contactMessageSchema` item, as {@link contactsCall} describes. */
function contactFields(card: ContactCard): Record<string, string> {
  const [phone] = card.phones;
  const digits = (phone?.phone ?? "").replace(/\D/g, "");
  const wuid = phone?.wa_id ?? (digits.length >= 10 ? digits : undefined);
  const fields: Record<string, string | undefined> = {
    fullName: card.name.formatted_name,
    phoneNumber: phone?.phone ?? "",
    wuid,
    organization: card.org?.company,
    email: card.emails?.[0]?.email,
    url: card.urls?.[0]?.url,
  };
  return Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => !!entry[1]));
}

/**
 * The quoted message's Baileys key of a reply (`Quoted.key` of `Metadata`: `{ id, remoteJid,
 * fromMe }`), the chat's JID as recipient.ts `chatJidOf` forms it; null for a message that replies
 * to none.
 */
function quotedKeyOf(message: OutboundMessage): { id: string; remoteJid: string; fromMe: boolean } | null {
  return message.replyTo
    ? {
        id: message.replyTo.providerMessageId,
        remoteJid: chatJidOf(message.to),
        fromMe: message.replyTo.fromMe,
      }
    : null;
}

/**
 * The path and body that send `location` to `message.to`: `POST /message/sendLocation/{instance}`
 * (sendMessage.router.ts) with `{ number, latitude, longitude, name, address, messageId, quoted? }`,
 * fields of `SendLocationDto` (a `Metadata`: `number`, `messageId`, `quoted`).
 * `latitude` and `longitude` are JSON numbers in decimal degrees (`locationMessageSchema`: `type:
 * "number"`), which the channel's `locationMessage` puts as they are in Baileys'
 * `locationMessage` (`degreesLatitude`, `degreesLongitude`). `locationMessageSchema` requires
 * `name` and `address` (where the DTO marks them optional) as strings of any length, so a location
 * without one sends "" for it (the one value that says "none" and passes): the channel copies it
 * into the message as an empty `name` or `address`, which events.ts reads back as absent. `messageId` is
 * sent as every send does (a `Metadata` field), though `locationMessage` does not pass it on (its
 * options are `delay`, `presence`, `quoted`, `mentionsEveryOne`, `mentioned`): the message gets an
 * id of Baileys' choosing, and lookup.ts finds it by the chat, the time and the point. A reply adds
 * `quoted: { key }` ({@link quotedKeyOf}), which `locationMessage` honours.
 */
function locationCall(
  sessionId: string,
  message: OutboundMessage,
  location: Location,
): { path: string; body: object } {
  const key = quotedKeyOf(message);
  return {
    path: `/message/sendLocation/${sessionId}`,
    body: {
      number: numberOf(message.to),
      latitude: location.latitude,
      longitude: location.longitude,
      name: location.name ?? "",
      address: location.address ?? "",
      messageId: message.clientMessageId,
      ...(key ? { quoted: { key } } : {}),
    },
  };
}

/**
 * The path and body that send `interactive` to `message.to`: reply buttons by `POST
 * /message/sendButtons/{instance}` with {@link buttonsFields}, a list by `POST
 * /message/sendList/{instance}` with {@link listFields} (sendMessage.router.ts), each with `number`
 * and the `Metadata` fields every send carries: `messageId` (which neither `buttonMessage` nor
 * `listMessage` passes on, their options being `delay`, `presence`, `quoted`, `mentionsEveryOne`
 * and `mentioned`: the message gets an id of Baileys' choosing, and lookup.ts finds it by the
 * chat, the time and the choices), and for a reply `quoted: { key }` ({@link quotedKeyOf}), which
 * both honour (the channel's `sendMessage` hands `quoted` to Baileys' `generateWAMessageFromContent`,
 * which sets the content's `contextInfo` before the relay). No `delay` is sent: typing before a
 * send is the session's own step (index.ts `typing`).
 */
function interactiveCall(
  sessionId: string,
  message: OutboundMessage,
  interactive: Interactive,
): { path: string; body: object } {
  const key = quotedKeyOf(message);
  const fields = interactive.type === "button" ? buttonsFields(interactive) : listFields(interactive);
  return {
    path: `/message/${interactive.type === "button" ? "sendButtons" : "sendList"}/${sessionId}`,
    body: {
      number: numberOf(message.to),
      ...fields,
      messageId: message.clientMessageId,
      ...(key ? { quoted: { key } } : {}),
    },
  };
}

/**
 * The `SendButtonsDto` fields of reply buttons (`buttonsMessageSchema`: `title`, `description` and
 * `footer` strings, `buttons` items with `type` of its enum, `displayText` and `id` strings):
 * `{ title, description?, footer?, buttons: [{ type: "reply", displayText, id }] }`, each button's
 * `reply.title` as `displayText` and `reply.id` as `id`. `buttonMessage` takes one to three
 * `reply` buttons, not mixed with other types (its 400s "Maximum of 3 reply buttons allowed",
 * "Reply buttons cannot be mixed with CTA or PIX buttons"), which lib/interactive.ts already
 * holds to.
 *
 * The channel shows no text header: it writes the message's text as `*<title>*`, then
 * `\n\n<description>` when there is one (a `nativeFlowMessage` of `quick_reply` buttons whose
 * `body.text` that is; `header` is only for `thumbnailUrl`'s image). So a text header becomes
 * `title` (shown bold above the body) and the body `description`; without a header the body is
 * the `title` (the whole text shown bold), as a `title` is always written. `footer` is the
 * footer's text, left out when there is none (`buttonMessage` then sets no footer).
 */
export function buttonsFields(interactive: Extract<Interactive, { type: "button" }>): {
  title: string;
  description?: string;
  footer?: string;
  buttons: { type: "reply"; displayText: string; id: string }[];
} {
  return {
    ...(interactive.header
      ? { title: interactive.header.text, description: interactive.body.text }
      : { title: interactive.body.text }),
    ...(interactive.footer ? { footer: interactive.footer.text } : {}),
    buttons: interactive.action.buttons.map(({ reply }) => ({
      type: "reply",
      displayText: reply.title,
      id: reply.id,
    })),
  };
}

/**
 * The `SendListDto` fields of a list (`listMessageSchema`, which requires `title`, `footerText`,
 * `buttonText` and `sections` as strings and an array): `{ title, description, buttonText,
 * footerText, sections: [{ title, rows: [{ title, description?, rowId }] }] }`: the header's text
 * as `title` ("" without one), the body as `description`, `action.button` as `buttonText`, the
 * footer's text as `footerText` ("" without one), and each section with its rows, a row's `id` as
 * `rowId`. The schema requires a section's `title` too, and its `isNotEmpty("title")` does not
 * bite there (its `if` holds only for an object whose every property is `title`, and a section
 * has `rows`), so an untitled section (Meta allows one in a list of one section) sends "", as
 * `listMessage` itself writes a missing one (`section.title || ''`). A row's `description` is left
 * out when there is none: the row's `isNotEmpty("title", "description", "rowId")` does bite (all
 * its properties are among those), so "" would be refused. `listMessage` sends the legacy
 * `listMessage` (`listType: SINGLE_SELECT`), which WhatsApp Web, iOS and Android show.
 */
export function listFields(interactive: Extract<Interactive, { type: "list" }>): {
  title: string;
  description: string;
  buttonText: string;
  footerText: string;
  sections: { title: string; rows: { title: string; description?: string; rowId: string }[] }[];
} {
  return {
    title: interactive.header?.text ?? "",
    description: interactive.body.text,
    buttonText: interactive.action.button,
    footerText: interactive.footer?.text ?? "",
    sections: interactive.action.sections.map((section) => ({
      title: section.title ?? "",
      rows: section.rows.map((row) => ({
        title: row.title,
        ...(row.description ? { description: row.description } : {}),
        rowId: row.id,
      })),
    })),
  };
}

/**
 * The path and body that send `message` (sendMessage.router.ts), its media at `mediaUrl`; null
 * for media without a stored copy.
 */
function sendCall(
  sessionId: string,
  message: OutboundMessage,
  mediaUrl: string | null,
): { path: string; body: object } | null {
  const number = numberOf(message.to);
  const key = quotedKeyOf(message);
  if (message.type === "reaction") {
    // `SendReactionDto` / `reactionMessageSchema`: `key` (all three required) and `reaction`.
    if (!key) return null;
    return { path: `/message/sendReaction/${sessionId}`, body: { key, reaction: message.content ?? "" } };
  }
  const quoted = key ? { quoted: { key } } : {};
  if (message.type === "text") {
    return {
      path: `/message/sendText/${sessionId}`,
      body: { number, text: message.content ?? "", messageId: message.clientMessageId, ...quoted },
    };
  }
  if (!mediaUrl || !message.media) return null;
  if (message.type === "audio") {
    return {
      path: `/message/sendWhatsAppAudio/${sessionId}`,
      body: { number, audio: mediaUrl, messageId: message.clientMessageId, ...quoted },
    };
  }
  // `SendStickerDto` / `stickerMessageSchema`: `number` and `sticker` (a URL or base64). The
  // channel's `mediaSticker` fetches the URL, re-encodes it as WebP (`sharp`, animated kept) and
  // hands on no `messageId` (its options are `delay`, `presence`, `quoted` and mentions): the
  // sticker gets an id of Baileys' choosing, found by lookup.ts by the chat and the time.
  if (message.type === "sticker") {
    return {
      path: `/message/sendSticker/${sessionId}`,
      body: { number, sticker: mediaUrl, messageId: message.clientMessageId, ...quoted },
    };
  }
  return {
    path: `/message/sendMedia/${sessionId}`,
    body: {
      number,
      mediatype: message.type,
      mimetype: message.media.contentType,
      media: mediaUrl,
      ...(message.content ? { caption: message.content } : {}),
      // Without a fileName Evolution derives one from the URL with a regex that fails on
      // extension-less paths (`prepareMediaMessage`), so documents always get one.
      ...(message.type === "document" ? { fileName: fileNameOf(message.mediaUrl ?? "") } : {}),
      messageId: message.clientMessageId,
      ...quoted,
    },
  };
}

/**
 * A failed send: Evolution's 400 with `response.message: [{ exists: false, jid, number }]` for a
 * number not on WhatsApp (`sendMessageWithTyping`) is `rejected` (`recipient_not_on_chatapp`); its
 * 400 for a Baileys socket that closed mid-send ("Connection Closed", the channel wraps every send
 * error in a 400) is `unknown`, since the message may have left first; the rest as {@link sendFailure}.
 */
function sendFailureOf(error: unknown): SendOutcome {
  const messages = statusOf(error) === 400 ? errorMessages(error) : [];
  if (messages.some((item) => z.object({ exists: z.literal(false) }).safeParse(item).success)) {
    return { outcome: "rejected", reason: "recipient_not_on_chatapp", retryable: false };
  }
  // The socket closed mid-send: the message may have left before it did.
  if (messages.some((item) => typeof item === "string" && /connection closed/i.test(item))) {
    return { outcome: "unknown", reason: "gateway_connection_closed" };
  }
  return sendFailure(error);
}
