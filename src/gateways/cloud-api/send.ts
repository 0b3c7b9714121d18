import { z } from "zod";
import { contactCardsOf } from "../../lib/contact-cards";
import { userIdKind } from "../../lib/contact-identity";
import { interactiveOf } from "../../lib/interactive";
import { type Location, locationOf } from "../../lib/location";
import type { MediaLinkSigner } from "../../media/link";
import type { OutboundMessage, SendOutcome } from "../gateway";
import { type GatewayHttp, gatewayRequest, sendFailure } from "../http";
import { digitsOf } from "../jid";
import { fileNameOf, MEDIA_NOT_STORED, mediaLinkOf } from "../media";
import { graphErrorOf, NOT_SUPPORTED, TOKEN_INVALID, TOKEN_INVALID_CODE } from "./graph";
import { templateObject } from "./template-message";

/*
 * Sending through the Cloud API: `POST /{Version}/{Phone-Number-ID}/messages` (operation
 * `sendMessage`, request schema `Message`, response `messages[0].id`), and what Meta's error codes
 * come to (Meta, "Error codes" of the WhatsApp Cloud API).
 */

/**
 * The message types sent as a `MediaObject` by `link` (the document's image, video, audio, document
 * messages, and `StickerMessage`, whose `sticker` is `{ link }`).
 */
const MEDIA_TYPES: readonly OutboundMessage["type"][] = ["image", "video", "audio", "document", "sticker"];

/**
 * The message types whose send makes Meta fetch nothing (no media by link), so the ordinary
 * timeout serves: a text, a location, an interactive message (its header is text alone,
 * lib/interactive.ts) and contact cards.
 */
const FETCHLESS_TYPES: readonly OutboundMessage["type"][] = ["text", "location", "interactive", "contacts"];

/**
 * The reason of a message whose content does not read as its type's (a location that is not a
 * `Location`, an interactive message that is not an `Interactive`).
 */
export const CONTENT_UNREADABLE = "content_unreadable";

/** The send's answer: `{ messaging_product, contacts: [{ input, wa_id }], messages: [{ id }] }`. */
const SendResponse = z.looseObject({
  messages: z.array(z.looseObject({ id: z.string().min(1) })).min(1),
});

/**
 * Meta's error codes that refuse a send, with the reason the message keeps, whether a later
 * attempt may pass ("Error codes": throttling codes are retried with backoff, the others are
 * final), and for the throttling codes which limit was hit (SendOutcome `throttled`: the number's
 * throughput holds every send of the session; the pair limit only this recipient's message).
 */
export const SEND_ERRORS: Readonly<
  Record<number, { reason: string; retryable: boolean; throttled?: "session" | "recipient" }>
> = {
  /** Re-engagement message: more than 24 hours since the customer last wrote. */
  131047: { reason: "outside_service_window", retryable: false },
  /** Message undeliverable (not on WhatsApp, old app, or has not accepted the terms). */
  131026: { reason: "undeliverable", retryable: false },
  /** Rate limit hit: the number's throughput was exceeded. */
  130429: { reason: "throttled", retryable: true, throttled: "session" },
  /** (Business, consumer) pair rate limit hit: too many messages to one recipient. */
  131056: { reason: "pair_rate_limited", retryable: true, throttled: "recipient" },
  /** Per-user marketing message limit reached. */
  131049: { reason: "marketing_limit", retryable: false },
  /** The user stopped marketing messages from this business. */
  131050: { reason: "recipient_stopped_marketing", retryable: false },
  /**
   * "Business-scoped User ID recipients are not supported for this message": authentication
   * templates with one-tap, zero-tap or copy-code buttons still need a phone number (Meta,
   * "Business-scoped user IDs"; https://dualhook.com/docs/contacts-bsuid-api-changes, "Unsupported
   * Message Types"). Final: the same message to the same BSUID is refused again.
   */
  131062: { reason: "recipient_not_supported", retryable: false },
  /** Temporarily blocked for policy violations. */
  368: { reason: "policy_block", retryable: false },
  [TOKEN_INVALID_CODE]: { reason: TOKEN_INVALID, retryable: false },
};

/**
 * Sends one message from number `phoneNumberId`. The body carries `biz_opaque_callback_data` set
 * to our message id, which every status webhook of the message echoes: how a send whose answer was
 * lost is settled (there is no way to look a message up). Media go by `link`, a signed link to our
 * stored copy; a media message without one is `rejected` (`media_not_stored`) without a call, and
 * so is a message of a type {@link messageBody} has no body for ({@link NOT_SUPPORTED}) or
 * whose content does not read as its type's ({@link CONTENT_UNREADABLE}). Meta's refusals map
 * through {@link SEND_ERRORS} (others: `rejected` with Meta's message); a refused token (190) also
 * fails the session (`sessionEvent`: `failed`, reason `token_invalid`), as the periodic check
 * would; a timeout, 5xx or unreadable answer is `unknown`. Never throws.
 */
export async function sendMessage(
  http: GatewayHttp,
  phoneNumberId: string,
  message: OutboundMessage,
  links: MediaLinkSigner,
): Promise<SendOutcome> {
  const mediaUrl = await mediaLinkOf(links, message);
  const media = MEDIA_TYPES.includes(message.type);
  if (media && !mediaUrl) return { outcome: "rejected", reason: MEDIA_NOT_STORED, retryable: false };
  let body: Record<string, unknown> | null;
  try {
    body = messageBody(message, mediaUrl ?? "");
  } catch (error) {
    return { outcome: "rejected", reason: `${CONTENT_UNREADABLE}: ${String(error)}`, retryable: false };
  }
  if (!body) return { outcome: "rejected", reason: NOT_SUPPORTED, retryable: false };
  try {
    const answer = await gatewayRequest(http, {
      method: "POST",
      path: `/${encodeURIComponent(phoneNumberId)}/messages`,
      body,
      schema: SendResponse,
      timeoutMs: FETCHLESS_TYPES.includes(message.type) ? undefined : http.mediaTimeoutMs,
    });
    return { outcome: "accepted", providerMessageId: answer.messages[0]?.id ?? "" };
  } catch (error) {
    const graph = graphErrorOf(error);
    const known = graph ? SEND_ERRORS[graph.code] : undefined;
    if (known)
      return {
        outcome: "rejected",
        reason: known.reason,
        retryable: known.retryable,
        ...(known.throttled ? { throttled: known.throttled } : {}),
        ...(graph?.code === TOKEN_INVALID_CODE
          ? { sessionEvent: { type: "failed", reason: TOKEN_INVALID, at: Date.now() } }
          : {}),
      };
    return sendFailure(error);
  }
}

/**
 * The request body (schema `Message`): `BaseMessageProperties` (`messaging_product`,
 * `recipient_type: "individual"`, which the document requires, the recipient, `type`) with
 * `biz_opaque_callback_data`, and the type's object: `text: { body }`; a `MediaObject` by `link`
 * with a `caption` for image, video and document (Meta's media messages take none for audio or a
 * sticker) and
 * a document's `filename` (from the caller's URL); a location's {@link locationObject}; an
 * interactive message's `interactive` (`InteractiveMessage`: an `InteractiveObject` of type
 * `button`, reply buttons in `action.buttons`, or `list`, `action.button` and `action.sections`;
 * Meta's "Interactive reply buttons messages" and "Interactive list messages" pages), which is the
 * content as lib/interactive.ts `interactiveOf` reads it, unchanged: the stored shape is Meta's;
 * contact cards' `contacts` (`ContactsMessage`, an array of `ContactObject`), the cards as
 * lib/contact-cards.ts `contactCardsOf` reads them, unchanged too.
 * A reply adds `context: { message_id }` (the quoted wamid); a reaction is `reaction: {
 * message_id, emoji }` (`ReactionMessage`; an empty emoji takes the reaction off). Null for a type
 * with no body here (`interactive_reply`, a contact's tap, which is never sent).
 *
 * The recipient is `to` (digits) for a number, or `recipient` (the BSUID or parent BSUID as it
 * is) and no `to` when `message.to` is a BSUID (lib/contact-identity.ts `userIdKind`): Meta's
 * "Business-scoped user IDs", "Messages API requests add recipient"; with both, `to` would win
 * (https://dualhook.com/docs/contacts-bsuid-api-changes), so exactly one is sent.
 * @throws Error when a location's content is not the JSON of a `Location` (lib/location.ts
 *   `locationOf`), or an interactive message's not the JSON of an `Interactive` (`interactiveOf`),
 *   or a contacts message's not cards' (`contactCardsOf`).
 */
export function messageBody(message: OutboundMessage, mediaUrl: string): Record<string, unknown> | null {
  const base = {
    messaging_product: "whatsapp",
    recipient_type: "individual",
    ...(userIdKind(message.to) === "bsuid" ? { recipient: message.to } : { to: digitsOf(message.to) }),
    type: message.type,
    biz_opaque_callback_data: message.id,
    // A reply names the quoted message (`MessageContext.message_id`); a reaction names it in `reaction`.
    ...(message.replyTo && message.type !== "reaction"
      ? { context: { message_id: message.replyTo.providerMessageId } }
      : {}),
  };
  if (message.type === "reaction")
    return {
      ...base,
      reaction: { message_id: message.replyTo?.providerMessageId ?? "", emoji: message.content ?? "" },
    };
  if (message.type === "text") return { ...base, text: { body: message.content ?? "" } };
  if (message.type === "template") return { ...base, template: templateObject(message.content) };
  if (message.type === "location") return { ...base, location: locationObject(locationOf(message.content)) };
  if (message.type === "interactive") return { ...base, interactive: interactiveOf(message.content) };
  if (message.type === "contacts") return { ...base, contacts: contactCardsOf(message.content) };
  if (!MEDIA_TYPES.includes(message.type)) return null;
  const media: Record<string, string> = { link: mediaUrl };
  // Meta's audio and sticker messages take no caption (`StickerMessage`: `link` alone).
  if (message.type !== "audio" && message.type !== "sticker" && message.content)
    media.caption = message.content;
  if (message.type === "document") media.filename = fileNameOf(message.mediaUrl ?? "");
  return { ...base, [message.type]: media };
}

/**
 * A `LocationMessage.location` (Meta's OpenAPI document, business-messaging-api_v23.0.yaml):
 * `latitude` and `longitude` as decimal-degree *strings*, which is how the document types them
 * (`type: string`, though its own examples write numbers) and how Meta's "Location messages" page
 * gives them ("String. Required. Location latitude in decimal degrees.",
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/location-messages/),
 * written out without an exponent ({@link decimalDegrees}); `name` and `address` when the
 * location has them. A `url` (a received location's) is never sent: the schema has none.
 */
export function locationObject(location: Location): Record<string, string> {
  return {
    latitude: decimalDegrees(location.latitude),
    longitude: decimalDegrees(location.longitude),
    ...(location.name === undefined ? {} : { name: location.name }),
    ...(location.address === undefined ? {} : { address: location.address }),
  };
}

/**
 * `degrees` as a plain decimal string: `String(degrees)` (the shortest text that reads back as the
 * same number, e.g. "38.7223", "-9.1393"), except below 10⁻⁶ in size, where JavaScript writes an
 * exponent ("1e-7"), not decimal degrees: those are written with 20 decimals, trailing zeros cut
 * ("0.0000001").
 */
export function decimalDegrees(degrees: number): string {
  const text = String(degrees);
  if (!/e/i.test(text)) return text;
  const fixed = degrees.toFixed(20).replace(/0+$/, "").replace(/\.$/, "");
  return fixed === "-0" ? "0" : fixed;
}
