import { z } from "zod";
import { hmacSha256Hex, timingSafeEqual } from "../../lib/crypto";
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

/** `IncomingMessage`: `from` (digits), `id` (wamid), `timestamp` (epoch seconds), `type` and its object. */
const Incoming = z.looseObject({
  from: z.string(),
  id: z.string().min(1),
  timestamp: z.string(),
  type: z.string(),
  text: z.looseObject({ body: z.string() }).optional(),
  image: Media.optional(),
  video: Media.optional(),
  audio: Media.optional(),
  document: Media.optional(),
  /** `ReactionMessage_1.reaction`: the wamid reacted to and the emoji (absent or "" when taken off). */
  reaction: z.looseObject({ message_id: z.string().min(1), emoji: z.string().optional() }).optional(),
  /** A reply's `context` (`ContextObject`): `id` is the quoted message's wamid. */
  context: z.looseObject({ id: z.string().min(1).optional() }).optional(),
});

const Change = z.looseObject({
  field: z.string(),
  value: z.looseObject({
    metadata: z.looseObject({ phone_number_id: z.string() }).optional(),
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
 *   statuses (and malformed entries) are skipped.
 * - `messages[]` → `incoming` events from `+<from>`: `text` with its body; `image`, `video`,
 *   `audio`, `document` with the caption as content and `media: { mimetype, ref }`, `ref` the
 *   media `id` the session object downloads it by (index.ts `openIncomingMedia`): no `mediaUrl`;
 *   a reply's `context.id` (the quoted wamid) in `quotedIds`. `reaction` → a `reaction` event on
 *   `reaction.message_id` with its `emoji` ("" or absent when taken off). Other types (stickers,
 *   locations, system messages …) and senders that are not valid numbers are skipped.
 */
export function messagesChangeEvents(value: unknown): NumberEvents | null {
  const parsed = Change.shape.value.safeParse(value);
  const phoneNumberId = parsed.success ? parsed.data.metadata?.phone_number_id : undefined;
  if (!parsed.success || !phoneNumberId) return null;
  const events: GatewayEvent[] = [];
  for (const raw of parsed.data.statuses ?? []) {
    const status = Status.safeParse(raw);
    if (status.success) events.push(...ackOf(status.data));
  }
  for (const raw of parsed.data.messages ?? []) {
    const message = Incoming.safeParse(raw);
    if (message.success) events.push(...incomingOf(message.data));
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

const MEDIA_TYPES = ["image", "video", "audio", "document"] as const;

function incomingOf(message: z.infer<typeof Incoming>): GatewayEvent[] {
  const from = toE164(message.from);
  const at = secondsToMs(message.timestamp);
  if (!from || at === null) return [];
  if (message.type === "reaction" && message.reaction) {
    const { message_id, emoji } = message.reaction;
    return [{ type: "reaction", providerMessageId: message_id, from, emoji: emoji ?? "", at }];
  }
  const base = {
    type: "incoming" as const,
    providerMessageId: message.id,
    from: { phoneNumber: from },
    mediaUrl: null,
    ...(message.context?.id ? { quotedIds: [message.context.id] } : {}),
    at,
  };
  if (message.type === "text" && message.text) {
    return [{ ...base, messageType: "text", content: message.text.body }];
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
