import { z } from "zod";
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
 * https://github.com/evolution-foundation/evolution-api/pull/2361).
 */

/** `POST /message/send*` → the sent message (`prepareMessage`): `{ key: { remoteJid, fromMe, id }, … }`. */
const SentMessage = z.object({ key: z.object({ id: z.string().min(1) }) });

/**
 * Sends one message from instance `sessionId`. Text → `POST /message/sendText/{instance}`
 * `{ number, text, messageId }`; image, video, document → `POST /message/sendMedia/{instance}`
 * `{ number, mediatype, mimetype, media, caption?, fileName?, messageId }`; audio → `POST
 * /message/sendWhatsAppAudio/{instance}` `{ number, audio, messageId }` (a voice note). `number`
 * is the E.164 number's digits, or a LID recipient (`<digits>@lid`) as it is, which Evolution
 * sends to as that JID with no number lookup (recipient.ts `numberOf`).
 *
 * `messageId` is `message.clientMessageId`, a top-level field of every send body (`Metadata` in
 * sendMessage.dto.ts; the v2 bodies are flat, there is no `options` object): `textMessage` and
 * `mediaMessage` hand it to Baileys' `relayMessage` as the WhatsApp message id, so the answer's
 * `key.id` is that id and a lookup can find the message by it (lookup.ts). `audioWhatsapp` does
 * not pass it on (its `sendMessageWithTyping` options carry no `messageId`): a voice note gets an
 * id of Baileys' choosing, and lookup.ts finds it otherwise. Evolution's JSON schemas list no
 * `messageId` but allow fields they do not list, so older servers ignore it.
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
 * Media without a stored copy are rejected (`media_not_stored`) without a call; the failures of
 * the call are as {@link sendFailureOf}. Never throws.
 */
export async function sendMessage(
  http: GatewayHttp,
  sessionId: string,
  message: OutboundMessage,
  links: MediaLinkSigner,
): Promise<SendOutcome> {
  // Message templates are Meta's (Cloud API sessions only); the send path refuses them elsewhere.
  if (message.type === "template")
    return { outcome: "rejected", reason: "not_supported_by_gateway", retryable: false };
  const call = sendCall(sessionId, message, await mediaLinkOf(links, message));
  if (!call) {
    const reason = message.type === "reaction" ? "reaction_without_message" : MEDIA_NOT_STORED;
    return { outcome: "rejected", reason, retryable: false };
  }
  try {
    const sent = await gatewayRequest(http, {
      method: "POST",
      ...call,
      schema: SentMessage,
      timeoutMs: message.type === "text" ? undefined : http.mediaTimeoutMs,
    });
    return { outcome: "accepted", providerMessageId: sent.key.id };
  } catch (error) {
    return sendFailureOf(error);
  }
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
  // The quoted message's Baileys key (`Quoted.key` of `Metadata`: `{ id, remoteJid, fromMe }`).
  const key = message.replyTo && {
    id: message.replyTo.providerMessageId,
    remoteJid: chatJidOf(message.to),
    fromMe: message.replyTo.fromMe,
  };
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
