import { z } from "zod";
import { contactCardsLabel, readContactCard } from "../../lib/contact-cards";
import { BSUID_PATTERN, type ContactIdentity } from "../../lib/contact-identity";
import { hmacSha256Hex, timingSafeEqual } from "../../lib/crypto";
import type { InteractiveReply } from "../../lib/interactive";
import { type Location, LocationSchema, locationLabel, MAX_LOCATION_TEXT } from "../../lib/location";
import { toE164 } from "../../lib/phone";
import type { MessagePricing } from "../../moves/message";
import type { AckStatus, GatewayEvent, OutboundMessage } from "../gateway";
import { SEND_ERRORS } from "./send";

/*
 * Meta's webhooks for a WhatsApp Business Account: the signature check and the reading of the
 * body. Shapes are those of Meta's OpenAPI document (facebook/openapi,
 * business-messaging-api_v23.0.yaml: `WebhookPayload` > `Entry` > `Change`; `StatusMessageValue`
 * with `Statuses`, `Pricing`, `StatusError`; `IncomingMessageValueGeneral` with `IncomingMessage`
 * and `MediaMessageProperties`). `statuses[].biz_opaque_callback_data` is not in the document's
 * `Statuses`; Meta's "Webhooks → messages → status" reference lists it (the value the send set).
 * Every schema is loose: fields we do not read pass, so a field Meta adds breaks nothing.
 *
 * Business-scoped user ids (BSUIDs), which the document predates, are read as Meta's page
 * "Business-scoped user IDs" (https://developers.facebook.com/documentation/business-messaging/
 * whatsapp/business-scoped-user-ids/) and the BSPs' restatements of it
 * (https://dualhook.com/docs/contacts-bsuid-webhooks,
 * https://dualhook.com/docs/contacts-bsuid-parent-user-ids) give them: a `contacts[]` entry carries
 * `profile.name`, `profile.username` (users with a username), `wa_id` (only while Meta shares the
 * number), `user_id` (the BSUID, always) and `parent_user_id` (parent BSUIDs enabled); a message
 * carries `from` only with a number, and `from_user_id` / `from_parent_user_id`; a status carries
 * `recipient_user_id` / `recipient_parent_user_id` beside `recipient_id`, with a `contacts[]`
 * entry (none on `failed`). `user_id_update` is {@link userIdUpdateEvents}.
 */

/** The header Meta signs webhook posts with (Meta's "Webhooks" guide, "Validate payloads"). */
export const SIGNATURE_HEADER = "x-hub-signature-256";

/**
 * Whether `signature` (the `X-Hub-Signature-256` header) is `sha256=` followed by the hex
 * HMAC-SHA256 of the raw body under the app secret (Meta's "Webhooks" guide, "Validate
 * payloads"), compared in constant time. A missing or malformed header is false.
 */
export async function verifyCloudApiSignature(
  rawBody: string,
  signature: string | null | undefined,
  appSecret: string,
): Promise<boolean> {
  if (!signature?.startsWith("sha256=")) return false;
  const expected = await hmacSha256Hex(appSecret, rawBody);
  return timingSafeEqual(expected, signature.slice("sha256=".length).toLowerCase());
}

/** `Pricing`: all optional in the document. */
const Pricing = z.looseObject({
  billable: z.boolean().optional(),
  pricing_model: z.string().optional(),
  category: z.string().optional(),
});

/** `Statuses` (required: id, status, timestamp as epoch seconds in a string, recipient_id). */
const Status = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  timestamp: z.string(),
  recipient_id: z.string().optional(),
  /** The BSUID and parent BSUID of the recipient ("Business-scoped user IDs", status webhooks). */
  recipient_user_id: z.string().optional(),
  recipient_parent_user_id: z.string().optional(),
  biz_opaque_callback_data: z.string().optional(),
  pricing: Pricing.optional(),
  errors: z
    .array(z.looseObject({ code: z.number().int().optional(), title: z.string().optional() }))
    .optional(),
});

/** `MediaMessageProperties` with the caption Meta's image, video and document messages carry. */
const Media = z.looseObject({
  id: z.string().optional(),
  mime_type: z.string().optional(),
  caption: z.string().optional(),
});

/**
 * `LocationMessage_1.location`: `latitude` and `longitude` as JSON numbers (decimal degrees;
 * a received location's are numbers, where a sent one's are strings, send.ts `locationObject`),
 * `name`, `address`, and `url` ("Usually only included for business locations"). The document
 * requires `name` and `address` too; they are read as optional, so a shared point without them is
 * kept rather than lost.
 */
const IncomingLocation = z.looseObject({
  latitude: z.number(),
  longitude: z.number(),
  name: z.string().optional(),
  address: z.string().optional(),
  url: z.string().optional(),
});

/**
 * `InteractiveMessageReply.interactive`: a contact's tap on a reply button (`type: "button_reply"`,
 * `button_reply: { id, title }`, `InteractiveButtonReplyContent`) or choice of a list row
 * (`type: "list_reply"`, `list_reply: { id, title, description }`, `InteractiveListReplyContent`),
 * the `id` and `title` those of the button or row as we sent them (Meta's "Interactive messages
 * webhook reference",
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/interactive/).
 * The document requires a list reply's `description`; it is read as optional, since the row it
 * echoes may have none (`SectionObject` rows: "Optional row description"). A reply of a type the
 * document does not list passes this schema and is skipped by {@link tapOf}.
 */
const InteractiveReplyObject = z.looseObject({
  type: z.string(),
  button_reply: z.looseObject({ id: z.string(), title: z.string() }).optional(),
  list_reply: z
    .looseObject({ id: z.string(), title: z.string(), description: z.string().optional() })
    .optional(),
});

/**
 * `ButtonMessage.button`: a contact's tap on a quick-reply button of a template message we sent
 * (Meta's "Button messages webhook reference",
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/button/):
 * `payload`, the payload the send gave the button (its label when it gave none), and `text`, the
 * button's label.
 */
const QuickReplyButton = z.looseObject({ payload: z.string(), text: z.string() });

/**
 * The message a contact's edit replaced (`edit.message`, Meta's "Edit messages webhook reference",
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/edit/):
 * the edited message as a message of its type, a `text` with its new `body` or an `image`, `video`
 * or `document` with its new `caption` ("A WhatsApp user edits a previously sent message (text,
 * media with caption)").
 */
const EditedMessage = z.looseObject({
  type: z.string(),
  text: z.looseObject({ body: z.string() }).optional(),
  image: Media.optional(),
  video: Media.optional(),
  document: Media.optional(),
});

/**
 * A `contacts[]` entry of a `messages` change (`ContactProfile`, with the BSUID fields of
 * "Business-scoped user IDs"): who wrote, or who a status is about.
 */
const Contact = z.looseObject({
  profile: z.looseObject({ name: z.string().optional(), username: z.string().optional() }).optional(),
  wa_id: z.string().optional(),
  user_id: z.string().optional(),
  parent_user_id: z.string().optional(),
});

/**
 * `IncomingMessage`: `from` (digits; absent when Meta withholds the number of a user with a
 * username, "Business-scoped user IDs"), `from_user_id` and `from_parent_user_id` (the sender's
 * BSUIDs, same page), `id` (wamid), `timestamp` (epoch seconds), `type` and its object.
 */
const Incoming = z.looseObject({
  from: z.string().optional(),
  from_user_id: z.string().optional(),
  from_parent_user_id: z.string().optional(),
  id: z.string().min(1),
  timestamp: z.string(),
  type: z.string(),
  text: z.looseObject({ body: z.string() }).optional(),
  image: Media.optional(),
  video: Media.optional(),
  audio: Media.optional(),
  document: Media.optional(),
  /** `StickerMessage_1.sticker`: a media object (`id`, `mime_type`, …) with `animated`. */
  sticker: Media.optional(),
  location: IncomingLocation.optional(),
  /** `ReactionMessage_1.reaction`: the wamid reacted to and the emoji (absent or "" when taken off). */
  reaction: z.looseObject({ message_id: z.string().min(1), emoji: z.string().optional() }).optional(),
  interactive: InteractiveReplyObject.optional(),
  button: QuickReplyButton.optional(),
  /**
   * A contact's edit of a message they sent (`type: "edit"`): the wamid of the message edited and
   * the message as it now reads ({@link EditedMessage}). Meta sends it only to numbers onboarded
   * from the WhatsApp Business app ("Coexistence"), as the revoke below.
   */
  edit: z.looseObject({ original_message_id: z.string().min(1), message: EditedMessage }).optional(),
  /**
   * A contact's deletion for everyone of a message they sent (`type: "revoke"`, Meta's "Revoke
   * messages webhook reference", …/webhooks/reference/messages/revoke/): the wamid of the message.
   */
  revoke: z.looseObject({ original_message_id: z.string().min(1) }).optional(),
  /** `ContactSharingMessage.contacts`: the cards shared (`ContactObject_1`), read by lib/contact-cards.ts `readContactCard`. */
  contacts: z.array(z.unknown()).optional(),
  /**
   * A reply's `context` (`ContextObject`): `id` is the quoted message's wamid; for a tap
   * (`interactive`, `button`), the wamid of the message whose button or row was tapped.
   */
  context: z.looseObject({ id: z.string().min(1).optional() }).optional(),
});

const Change = z.looseObject({
  field: z.string(),
  value: z.looseObject({
    metadata: z.looseObject({ phone_number_id: z.string() }).optional(),
    contacts: z.array(z.unknown()).optional(),
    statuses: z.array(z.unknown()).optional(),
    messages: z.array(z.unknown()).optional(),
  }),
});

/**
 * `WebhookPayload`: `object` and `entry[]` of `{ id: WABA id, changes[] }`, and the entry's `time`
 * (Unix seconds), which the document's `Entry` leaves out and Meta's webhook references give
 * ("message_template_status_update webhook reference": `time`, the webhook's trigger time).
 */
const WebhookPayload = z.looseObject({
  object: z.string(),
  entry: z.array(
    z.looseObject({ id: z.string(), time: z.unknown().optional(), changes: z.array(z.unknown()) }),
  ),
});

/** One change of a webhook body, by its `field`: the WABA it came from and its raw `value`. */
export interface WebhookChange {
  /** `entry[].changes[].field`, e.g. `messages`, `message_template_status_update`. */
  field: string;
  /** `entry[].id`: the WhatsApp Business Account. */
  wabaId: string;
  /** `entry[].time`: when Meta triggered the webhook, Unix seconds; null when absent or not a whole number. */
  time: number | null;
  value: unknown;
}

/**
 * The changes of a webhook body, in order, or null when the body is not a `WebhookPayload`. A
 * change that is not an object with a `field` is skipped.
 */
export function webhookChanges(body: unknown): WebhookChange[] | null {
  const parsed = WebhookPayload.safeParse(body);
  if (!parsed.success) return null;
  return parsed.data.entry.flatMap((entry) =>
    entry.changes.flatMap((change) => {
      const c = z.looseObject({ field: z.string(), value: z.unknown() }).safeParse(change);
      const time = typeof entry.time === "number" && Number.isSafeInteger(entry.time) ? entry.time : null;
      return c.success ? [{ field: c.data.field, wabaId: entry.id, time, value: c.data.value }] : [];
    }),
  );
}

/** The events of a `messages` change for the business number `phoneNumberId`. */
export interface NumberEvents {
  phoneNumberId: string;
  events: GatewayEvent[];
}

/**
 * Reads a `messages` change (`StatusMessageValue` or `IncomingMessageValueGeneral`): the number it
 * concerns (`metadata.phone_number_id`) and its events, or null when the value names no number.
 *
 * - `statuses[]` → `ack` events, by `id` (the wamid) with `at` = `timestamp` (seconds → ms):
 *   `sent`, `delivered`, `read`, and `failed` with the reason of `errors[0].code` through send.ts
 *   `SEND_ERRORS` (else `meta_error_<code>`, or `gateway_ack_error` with no code); `messageId` =
 *   `biz_opaque_callback_data` (our message id, set on every send); `pricing` = `pricing`. Other
 *   statuses (and malformed entries) are skipped. A status that names the recipient by number
 *   (`recipient_id`, or the `contacts[]` entry's `wa_id`) and by BSUID (`recipient_user_id`, or
 *   the entry's `user_id`) also yields a `contact` event linking them, ref `<wamid>:<status>`.
 * - `messages[]` → `incoming` events from the sender's {@link ContactIdentity}: `phoneNumber`
 *   (`from` or the entry's `wa_id`, E.164, or null), `userId` and `parentUserId` (`from_user_id`
 *   or the entry's `user_id`, …, when they are BSUIDs), `username` and `name` (the entry's
 *   `profile`); the entry is the one whose `user_id` or `wa_id` names the sender, else the only
 *   one. A message with neither a number nor a BSUID is skipped. `text` with its body; `image`, `video`,
 *   `audio`, `document` with the caption as content and `media: { mimetype, ref }`, `ref` the
 *   media `id` the session object downloads it by (index.ts `openIncomingMedia`): no `mediaUrl`;
 *   a reply's `context.id` (the quoted wamid) in `quotedIds`. `location` ({@link receivedLocation})
 *   with `payload: { location }`, its name, else its address, as content (lib/location.ts
 *   `locationLabel`) and no media. `contacts` (`ContactSharingMessage`) with `payload: { contacts }`
 *   (each card read by lib/contact-cards.ts `readContactCard`, unreadable ones left out), their
 *   names as content, and no media. A tap: `interactive` (`InteractiveMessageReply`, a reply button's
 *   `button_reply` or a list row's `list_reply`) or `button` (`ButtonMessage`, a template's quick
 *   reply) → `interactive_reply` with `payload: { interactive_reply }` ({@link tapOf}), the
 *   button's or row's title as content, no media, and `context.id`, the message tapped, in
 *   `quotedIds`. `reaction` → a `reaction` event on `reaction.message_id` with
 *   its `emoji` ("" or absent when taken off). `edit` → an `edited` event on
 *   `edit.original_message_id` with the edited message's text body or caption as content (an edit
 *   with neither is skipped); `revoke` → a `revoked` event on `revoke.original_message_id`; both
 *   from the sender, at `timestamp`. A `sticker` (`StickerMessage_1`) is a media message as an
 *   image is, without a caption. Other types (system messages, orders …) and
 *   locations off the map are skipped; so is a reaction from a user known only by BSUID (the
 *   `reaction` event names its contact by number; such a reaction is lost, not misfiled).
 */
export function messagesChangeEvents(value: unknown): NumberEvents | null {
  const parsed = Change.shape.value.safeParse(value);
  const phoneNumberId = parsed.success ? parsed.data.metadata?.phone_number_id : undefined;
  if (!parsed.success || !phoneNumberId) return null;
  const events: GatewayEvent[] = [];
  const contacts = (parsed.data.contacts ?? []).flatMap((raw) => {
    const contact = Contact.safeParse(raw);
    return contact.success ? [contact.data] : [];
  });
  for (const raw of parsed.data.statuses ?? []) {
    const status = Status.safeParse(raw);
    if (status.success) events.push(...ackOf(status.data), ...statusContactOf(status.data, contacts));
  }
  for (const raw of parsed.data.messages ?? []) {
    const message = Incoming.safeParse(raw);
    if (message.success) events.push(...incomingOf(message.data, contacts));
  }
  return { phoneNumberId, events };
}

const ACK_STATUSES: readonly string[] = ["sent", "delivered", "read", "failed"] satisfies AckStatus[];

function ackOf(status: z.infer<typeof Status>): GatewayEvent[] {
  if (!ACK_STATUSES.includes(status.status)) return [];
  const at = secondsToMs(status.timestamp);
  if (at === null) return [];
  return [
    {
      type: "ack",
      providerMessageId: status.id,
      status: status.status as AckStatus,
      reason: status.status === "failed" ? failureReason(status.errors?.[0]?.code) : null,
      at,
      messageId: status.biz_opaque_callback_data ?? null,
      pricing: status.pricing ? pricingOf(status.pricing) : null,
    },
  ];
}

/** A failed status's reason: send.ts `SEND_ERRORS` for a known code, else `meta_error_<code>`. */
export function failureReason(code: number | undefined): string {
  if (code === undefined) return "gateway_ack_error";
  return SEND_ERRORS[code]?.reason ?? `meta_error_${code}`;
}

function pricingOf(pricing: z.infer<typeof Pricing>): MessagePricing {
  return {
    category: pricing.category ?? null,
    billable: pricing.billable ?? null,
    ...(pricing.pricing_model === undefined ? {} : { pricing_model: pricing.pricing_model }),
  };
}

const MEDIA_TYPES = ["image", "video", "audio", "document", "sticker"] as const;

type ContactEntry = z.infer<typeof Contact>;

/** A BSUID or parent BSUID as Meta writes it (lib/contact-identity.ts `BSUID_PATTERN`), else null. */
function bsuidOf(value: string | undefined): string | null {
  return value !== undefined && BSUID_PATTERN.test(value) ? value : null;
}

/** The `contacts[]` entry naming `userId` or `waId`, else the only entry, else none. */
function entryFor(contacts: ContactEntry[], userId: string | null, waId: string | null) {
  const named = contacts.find(
    (c) => (userId !== null && c.user_id === userId) || (waId !== null && c.wa_id === waId),
  );
  return named ?? (contacts.length === 1 ? contacts[0] : undefined);
}

/** Who sent `message`: its own fields first, then its `contacts[]` entry's. */
function senderOf(message: z.infer<typeof Incoming>, contacts: ContactEntry[]): ContactIdentity {
  const entry = entryFor(contacts, message.from_user_id ?? null, message.from ?? null);
  const number = message.from ?? entry?.wa_id;
  return {
    phoneNumber: number === undefined ? null : toE164(number),
    userId: bsuidOf(message.from_user_id ?? entry?.user_id),
    parentUserId: bsuidOf(message.from_parent_user_id ?? entry?.parent_user_id),
    username: entry?.profile?.username ?? null,
    name: entry?.profile?.name ?? null,
  };
}

/**
 * The `contact` event of a status that names its recipient both by number and by BSUID (see
 * {@link messagesChangeEvents}); none otherwise, or for a status we do not read.
 */
function statusContactOf(status: z.infer<typeof Status>, contacts: ContactEntry[]): GatewayEvent[] {
  const at = secondsToMs(status.timestamp);
  const recipientUserId = status.recipient_user_id ?? bsuidOf(status.recipient_id) ?? null;
  const recipientNumber = status.recipient_id && !bsuidOf(status.recipient_id) ? status.recipient_id : null;
  const entry = entryFor(contacts, recipientUserId, recipientNumber);
  const number = recipientNumber ?? entry?.wa_id;
  const phoneNumber = number === undefined ? null : toE164(number);
  const userId = bsuidOf(recipientUserId ?? entry?.user_id);
  if (at === null || !ACK_STATUSES.includes(status.status) || !phoneNumber || !userId) return [];
  const contact: ContactIdentity = {
    phoneNumber,
    userId,
    parentUserId: bsuidOf(status.recipient_parent_user_id ?? entry?.parent_user_id),
    username: entry?.profile?.username ?? null,
  };
  return [{ type: "contact", contact, ref: `${status.id}:${status.status}`, at }];
}

function incomingOf(message: z.infer<typeof Incoming>, contacts: ContactEntry[]): GatewayEvent[] {
  const from = senderOf(message, contacts);
  const at = secondsToMs(message.timestamp);
  if ((!from.phoneNumber && !from.userId) || at === null) return [];
  if (message.type === "reaction" && message.reaction) {
    // The reaction event names its contact by number: one from a BSUID alone is skipped.
    if (!from.phoneNumber) return [];
    const { message_id, emoji } = message.reaction;
    return [
      { type: "reaction", providerMessageId: message_id, from: from.phoneNumber, emoji: emoji ?? "", at },
    ];
  }
  if (message.type === "edit" && message.edit) {
    const content = editedText(message.edit.message);
    if (content === null) return [];
    return [{ type: "edited", providerMessageId: message.edit.original_message_id, from, content, at }];
  }
  if (message.type === "revoke" && message.revoke) {
    return [{ type: "revoked", providerMessageId: message.revoke.original_message_id, from, at }];
  }
  const base = {
    type: "incoming" as const,
    providerMessageId: message.id,
    from,
    mediaUrl: null,
    ...(message.context?.id ? { quotedIds: [message.context.id] } : {}),
    at,
  };
  if (message.type === "text" && message.text) {
    return [{ ...base, messageType: "text", content: message.text.body }];
  }
  if (message.type === "location") {
    const location = message.location && receivedLocation(message.location);
    if (!location) return [];
    return [{ ...base, messageType: "location", content: locationLabel(location), payload: { location } }];
  }
  if (message.type === "contacts") {
    const cards = (message.contacts ?? []).flatMap((card) => readContactCard(card) ?? []);
    if (cards.length === 0) return [];
    return [
      { ...base, messageType: "contacts", content: contactCardsLabel(cards), payload: { contacts: cards } },
    ];
  }
  if (message.type === "interactive" || message.type === "button") {
    const tap = tapOf(message);
    if (!tap) return [];
    return [
      { ...base, messageType: "interactive_reply", content: tap.title, payload: { interactive_reply: tap } },
    ];
  }
  const kind = MEDIA_TYPES.find((t) => t === message.type);
  const media = kind && message[kind];
  if (!kind || !media) return [];
  const messageType: OutboundMessage["type"] = kind;
  return [
    {
      ...base,
      messageType,
      content: media.caption ?? null,
      media: { mimetype: media.mime_type ?? null, ...(media.id ? { ref: media.id } : {}) },
    },
  ];
}

/** An edited message's new text: a text's `body`, a media message's `caption`; null for neither. */
function editedText(message: z.infer<typeof EditedMessage>): string | null {
  if (message.type === "text") return message.text?.body ?? null;
  const kind = (["image", "video", "document"] as const).find((t) => t === message.type);
  return (kind && message[kind]?.caption) ?? null;
}

/**
 * The tap an `interactive` or `button` message reports, as lib/interactive.ts `InteractiveReply`:
 * a `button_reply` `{ id, title }` or a `list_reply` `{ id, title, description? }` as Meta gives
 * it (`description` kept when non-empty); a template's quick-reply `button` as a `button_reply`
 * whose `id` is its `payload` and `title` its `text`, since it too is a tap on a button of a
 * message we sent (the tapped template is `context.id`, as the tapped interactive message is).
 * Null for any other interactive type or a reply without its object.
 */
function tapOf(message: z.infer<typeof Incoming>): InteractiveReply | null {
  if (message.type === "button")
    return message.button
      ? { type: "button_reply", id: message.button.payload, title: message.button.text }
      : null;
  const interactive = message.interactive;
  if (interactive?.type === "button_reply" && interactive.button_reply) {
    const { id, title } = interactive.button_reply;
    return { type: "button_reply", id, title };
  }
  if (interactive?.type === "list_reply" && interactive.list_reply) {
    const { id, title, description } = interactive.list_reply;
    return { type: "list_reply", id, title, ...(description ? { description } : {}) };
  }
  return null;
}

/**
 * A received location as lib/location.ts `Location`: the point, and `name`, `address` and `url`
 * when Meta gave them non-empty (`name` and `address` cut to {@link MAX_LOCATION_TEXT} UTF-16
 * units, the most a stored location holds, without splitting a character). Null for a point off
 * the map (latitude beyond ±90°, longitude beyond ±180°).
 */
function receivedLocation(location: z.infer<typeof IncomingLocation>): Location | null {
  const text = (value: string | undefined) =>
    value ? value.slice(0, MAX_LOCATION_TEXT).replace(/[\uD800-\uDBFF]$/, "") : "";
  const name = text(location.name);
  const address = text(location.address);
  const parsed = LocationSchema.safeParse({
    latitude: location.latitude,
    longitude: location.longitude,
    ...(name ? { name } : {}),
    ...(address ? { address } : {}),
    ...(location.url ? { url: location.url } : {}),
  });
  return parsed.success ? parsed.data : null;
}

/** Epoch ms of Meta's epoch-seconds string, or null when it is not one. */
function secondsToMs(seconds: string): number | null {
  if (!/^\d{1,12}$/.test(seconds)) return null;
  return Number(seconds) * 1000;
}

/**
 * A `phone_number_quality_update` change (Meta's webhook reference of that name):
 * `{ display_phone_number, event, current_limit?, old_limit?, max_daily_conversations_per_business? }`.
 * It tells that the number's rating or messaging limit changed, without the rating itself: the
 * number's `quality_rating` is read again (a `health` event without a reading). Returns the
 * number (E.164) and the event, or null for a value that is not one.
 */
export function qualityUpdateOf(
  value: unknown,
  at: number,
): { phoneNumber: string; event: GatewayEvent } | null {
  const parsed = z
    .looseObject({ display_phone_number: z.string().min(1), event: z.string().optional() })
    .safeParse(value);
  if (!parsed.success) return null;
  const digits = parsed.data.display_phone_number.replace(/[^0-9]/g, "");
  if (!digits) return null;
  return { phoneNumber: toE164(digits) ?? `+${digits}`, event: { type: "health", reading: null, at } };
}

/** `{ previous, current }` of an identifier a `user_id_update` entry reports as changed. */
const IdChange = z.looseObject({ previous: z.string().optional(), current: z.string().optional() });

/** One entry of a `user_id_update` change's `user_id_update[]` (see {@link userIdUpdateEvents}). */
const UserIdUpdate = z.looseObject({
  wa_id: z.string().optional(),
  user_id: IdChange,
  parent_user_id: IdChange.optional(),
  timestamp: z.union([z.string(), z.number()]).optional(),
});

/**
 * Reads a `user_id_update` change: Meta tells that a user's BSUID changed (a BSUID is tied to the
 * user's number, so a new number gives a new BSUID; "Business-scoped user IDs", and
 * https://dualhook.com/docs/contacts-bsuid-webhooks, which lists `user_id_update` among the BSUID
 * webhooks). The value is read as a `messages` value is, `metadata.phone_number_id` naming the
 * business number, with `user_id_update[]` entries `{ wa_id?, user_id: { previous, current },
 * parent_user_id?: { previous, current }, timestamp? }`; this entry shape is how we read Meta's
 * `user_id_update` reference, and no page we could open quotes it whole, so every field but the
 * two BSUIDs is optional and an entry we cannot read is skipped. Each entry → a `contact` event:
 * `userId` the current BSUID, `previousUserId` the previous one, `phoneNumber` the `wa_id` (E.164)
 * when given, `parentUserId` the current parent BSUID; ref `user_id_update:<previous>:<current>`,
 * so a redelivery records nothing twice. `at`: the entry's `timestamp` (epoch seconds), else
 * `time` (the entry's, Unix seconds), else `now`. Null when the value names no number.
 */
export function userIdUpdateEvents(value: unknown, time: number | null, now: number): NumberEvents | null {
  const parsed = z
    .looseObject({
      metadata: z.looseObject({ phone_number_id: z.string().min(1) }),
      user_id_update: z.array(z.unknown()).optional(),
    })
    .safeParse(value);
  if (!parsed.success) return null;
  const events: GatewayEvent[] = [];
  for (const raw of parsed.data.user_id_update ?? []) {
    const entry = UserIdUpdate.safeParse(raw);
    if (!entry.success) continue;
    const current = bsuidOf(entry.data.user_id.current);
    const previous = bsuidOf(entry.data.user_id.previous);
    if (!current || !previous) continue;
    const stamp = entry.data.timestamp === undefined ? null : secondsToMs(String(entry.data.timestamp));
    const contact: ContactIdentity = {
      phoneNumber: entry.data.wa_id === undefined ? null : toE164(entry.data.wa_id),
      userId: current,
      previousUserId: previous,
      parentUserId: bsuidOf(entry.data.parent_user_id?.current),
    };
    const at = stamp ?? (time === null ? now : time * 1000);
    events.push({ type: "contact", contact, ref: `user_id_update:${previous}:${current}`, at });
  }
  return { phoneNumberId: parsed.data.metadata.phone_number_id, events };
}
