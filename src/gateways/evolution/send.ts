import { z } from "zod";
import { type Location, locationOf } from "../../lib/location";
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
 * (`SendLocationDto`, `locationMessageSchema`, the channel's `locationMessage`).
 */

/** The reason of a message whose content does not read as its type's (a location that is not a `Location`). */
const CONTENT_UNREADABLE = "content_unreadable";

/** `POST /message/send*` → the sent message (`prepareMessage`): `{ key: { remoteJid, fromMe, id }, … }`. */
const SentMessage = z.object({ key: z.object({ id: z.string().min(1) }) });

/**
 * Sends one message from instance `sessionId`. Text → `POST /message/sendText/{instance}`
 * `{ number, text, messageId }`; image, video, document → `POST /message/sendMedia/{instance}`
 * `{ number, mediatype, mimetype, media, caption?, fileName?, messageId }`; audio → `POST
 * /message/sendWhatsAppAudio/{instance}` `{ number, audio, messageId }` (a voice note). `number`
 * is the E.164 number's digits, or a LID recipient (`<digits>@lid`) as it is, which Evolution
 * sends to as that JID with no number lookup (recipient.ts `numberOf`). A location → `POST
 * /message/sendLocation/{instance}` ({@link locationCall}).
 *
 * `messageId` is `message.clientMessageId`, a top-level field of every send body (`Metadata` in
 * sendMessage.dto.ts; the v2 bodies are flat, there is no `options` object): `textMessage` and
 * `mediaMessage` hand it to Baileys' `relayMessage` as the WhatsApp message id, so the answer's
 * `key.id` is that id and a lookup can find the message by it (lookup.ts). `audioWhatsapp` does
 * not pass it on (its `sendMessageWithTyping` options carry no `messageId`): a voice note gets an
 * id of Baileys' choosing, and lookup.ts finds it otherwise; so does a location
 * (`locationMessage`'s options carry none either). Evolution's JSON schemas list no `messageId`
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
 * location whose content is not the JSON of a lib/location.ts `Location` (`content_unreadable`),
 * and an `interactive` message (`not_supported_by_gateway`: Evolution's Baileys channel sends no
 * buttons or lists our capabilities promise, src/lib/gateway-kinds.ts `sendsInteractive`); the
 * failures of the call are as {@link sendFailureOf}. Never throws.
 */
export async function sendMessage(
  http: GatewayHttp,
  sessionId: string,
  message: OutboundMessage,
  links: MediaLinkSigner,
): Promise<SendOutcome> {
  // Message templates are Meta's (Cloud API sessions only); the send path refuses them elsewhere.
  if (message.type === "template" || message.type === "interactive" || message.type === "interactive_reply")
    return { outcome: "rejected", reason: "not_supported_by_gateway", retryable: false };
  let location: Location | null = null;
  if (message.type === "location") {
    try {
      location = locationOf(message.content);
    } catch (error) {
      return { outcome: "rejected", reason: `${CONTENT_UNREADABLE}: ${String(error)}`, retryable: false };
    }
  }
  const call = location
    ? locationCall(sessionId, message, location)
    : sendCall(sessionId, message, await mediaLinkOf(links, message));
  if (!call) {
    const reason = message.type === "reaction" ? "reaction_without_message" : MEDIA_NOT_STORED;
    return { outcome: "rejected", reason, retryable: false };
  }
  try {
    const sent = await gatewayRequest(http, {
      method: "POST",
      ...call,
      schema: SentMessage,
      // A text or a location makes Evolution fetch nothing: the ordinary timeout.
      timeoutMs: message.type === "text" || message.type === "location" ? undefined : http.mediaTimeoutMs,
    });
    return { outcome: "accepted", providerMessageId: sent.key.id };
  } catch (error) {
    return sendFailureOf(error);
  }
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
