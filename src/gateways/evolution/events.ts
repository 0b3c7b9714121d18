import { z } from "zod";
import { hmacSha256Hex, timingSafeEqual } from "../../lib/crypto";
import type { AckStatus, GatewayEvent, GatewayEventBatch, OutboundMessage } from "../gateway";
import { phoneOfJid } from "../jid";

/*
 * Evolution API's webhook bodies: authenticating them by the instance token and normalising them
 * into our GatewayEvents. Sources, by path in EvolutionAPI/evolution-api:
 * src/api/integrations/event/webhook/webhook.controller.ts (`emit`), fed by
 * `ChannelStartupService.sendDataWebhook` (src/api/services/channel.service.ts) with the event
 * names of src/api/types/wa.types.ts (`Events`); the data shapes of the Baileys channel
 * (src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts). The subscription itself is
 * made with the instance (link.ts).
 */

/**
 * The token we give instance `instance` at create (link.ts): lower-case hex HMAC-SHA256 of the instance
 * name keyed with the global API key. Evolution stores a given `token` as is (`createInstance`)
 * and puts it in every webhook body's `apikey`, so the events route can recompute it.
 */
export async function evolutionInstanceToken(apiKey: string, instance: string): Promise<string> {
  return hmacSha256Hex(apiKey, instance);
}

/**
 * True when `body` is an object whose string `apikey` is the token of its string `instance`
 * ({@link evolutionInstanceToken}), compared in constant time. Evolution sends the instance's
 * token there (`sendDataWebhook`: `apiKey: expose ? this.token : null`) only when the server runs
 * with `AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES=true`; otherwise `apikey` is null and no body
 * verifies.
 */
export async function verifyEvolutionEvent(body: unknown, apiKey: string): Promise<boolean> {
  if (typeof body !== "object" || body === null) return false;
  const { instance, apikey } = body as { instance?: unknown; apikey?: unknown };
  if (typeof instance !== "string" || typeof apikey !== "string") return false;
  return timingSafeEqual(apikey, await evolutionInstanceToken(apiKey, instance));
}

/** A webhook body (`WebhookController.emit`); `event` is the `Events` value, e.g. `connection.update`. */
const Envelope = z.object({
  event: z.string(),
  instance: z.string().min(1),
  data: z.unknown(),
  /** ISO 8601; Evolution writes the server's local time with a `Z` suffix (UTC on a UTC host). */
  date_time: z.string().nullish(),
  /** The instance's own JID (`wuid`) once linked. */
  sender: z.string().nullish(),
});

/**
 * Normalises one webhook body into events for session `instance`, or null when it is not an
 * Evolution webhook envelope. Event names are accepted as sent (`connection.update`) or in the
 * config spelling (`CONNECTION_UPDATE`). `sentAt` is `date_time` in epoch ms (null when absent or
 * unreadable); `at` is the same (now when absent), an incoming message's its `messageTimestamp`
 * (seconds). Events of other names, and data of a shape not described here, yield no events.
 *
 * - `connection.update` (`connectionUpdate` in the Baileys channel) `{ state, statusReason, wuid,
 *   profileName }`: `open` → `linked` (phone of `wuid`, else `sender`); `close` with Baileys
 *   `DisconnectReason` 401 (loggedOut) → `dropped` `logged_out` (logged out), 403 (forbidden) →
 *   `banned` `account_banned`, other codes → `dropped` `connection_closed`; `refused` (QR limit
 *   reached) → `failed` `qr_limit_reached`; `connecting` → nothing.
 * - `qrcode.updated` `{ qrcode: { code } }` → `qr`.
 * - `messages.update` `{ keyId, fromMe, status }` (one object per update; arrays accepted):
 *   `SERVER_ACK` → sent, `DELIVERY_ACK` → delivered, `READ`/`PLAYED` → read, `ERROR` → failed;
 *   `PENDING`, `DELETED` and updates of messages not sent by us → nothing.
 * - `messages.upsert` (`prepareMessage`) `{ key: { id, remoteJid, fromMe }, messageType, message,
 *   messageTimestamp }` not from us, from a phone number (not a group, broadcast or newsletter) →
 *   `incoming`: `conversation`/`extendedTextMessage` → text; image, video, audio and document
 *   messages → that type with the caption and `message.mediaUrl` (set when Evolution stores media
 *   in S3), and `media: { mimetype: null, ref: <key.id> }` to download it by; a reply's
 *   `contextInfo.stanzaId` (the quoted message's id) in `quotedIds`. `messageType: "reactionMessage"`
 *   → `reaction` on `message.reactionMessage.key.id` with its `text` ("" when taken off), at its
 *   `senderTimestampMs` (else `messageTimestamp`). Other message types → nothing.
 */
export function parseEvolutionEvent(body: unknown): GatewayEventBatch | null {
  const envelope = Envelope.safeParse(body);
  if (!envelope.success) return null;
  const { event, instance, data, date_time, sender } = envelope.data;
  const stamped = date_time ? Date.parse(date_time) : Number.NaN;
  const sentAt = Number.isNaN(stamped) ? null : stamped;
  const at = sentAt ?? Date.now();
  const batch = (events: GatewayEvent[]) => ({ sessionId: instance, events, sentAt });
  switch (event.toLowerCase().replaceAll("_", ".")) {
    case "connection.update":
      return batch(connectionEvents(data, at, sender ?? null));
    case "qrcode.updated":
      return batch(qrEvents(data, at));
    case "messages.update":
      return batch(ackEvents(data, at));
    case "messages.upsert":
      return batch(incomingEvents(data, at));
    default:
      return batch([]);
  }
}

const ConnectionData = z.object({
  state: z.string(),
  statusReason: z.number().nullish(),
  wuid: z.string().nullish(),
  profileName: z.string().nullish(),
});

function connectionEvents(data: unknown, at: number, sender: string | null): GatewayEvent[] {
  const parsed = ConnectionData.safeParse(data);
  if (!parsed.success) return [];
  const { state, statusReason, wuid, profileName } = parsed.data;
  switch (state) {
    case "open": {
      const phoneNumber = phoneOfJid(wuid ?? sender ?? "");
      return phoneNumber ? [{ type: "linked", phoneNumber, displayName: profileName ?? null, at }] : [];
    }
    case "close":
      if (statusReason === 401) return [{ type: "dropped", reason: "logged_out", loggedOut: true, at }];
      if (statusReason === 403) return [{ type: "banned", reason: "account_banned", at }];
      return [{ type: "dropped", reason: "connection_closed", loggedOut: false, at }];
    case "refused":
      return [{ type: "failed", reason: "qr_limit_reached", at }];
    default:
      return [];
  }
}

const QrData = z.object({ qrcode: z.object({ code: z.string().min(1) }) });

function qrEvents(data: unknown, at: number): GatewayEvent[] {
  const parsed = QrData.safeParse(data);
  return parsed.success ? [{ type: "qr", qr: parsed.data.qrcode.code, at }] : [];
}

/** Evolution's message status (`wa.StatusMessage`) → our ack status; absent ones yield no ack. */
const ACK_STATUS = new Map<string, AckStatus>([
  ["SERVER_ACK", "sent"],
  ["DELIVERY_ACK", "delivered"],
  ["READ", "read"],
  ["PLAYED", "read"],
  ["ERROR", "failed"],
]);

const MessageUpdate = z.object({
  keyId: z.string().min(1).optional(),
  key: z.object({ id: z.string().min(1), fromMe: z.boolean().optional() }).optional(),
  fromMe: z.boolean().optional(),
  status: z.string(),
});

function ackEvents(data: unknown, at: number): GatewayEvent[] {
  const events: GatewayEvent[] = [];
  for (const item of Array.isArray(data) ? data : [data]) {
    const parsed = MessageUpdate.safeParse(item);
    if (!parsed.success) continue;
    const { keyId, key, fromMe, status } = parsed.data;
    const providerMessageId = keyId ?? key?.id;
    const ack = ACK_STATUS.get(status);
    if (!providerMessageId || !ack || (fromMe ?? key?.fromMe) === false) continue;
    events.push({
      type: "ack",
      providerMessageId,
      status: ack,
      reason: ack === "failed" ? "gateway_ack_error" : null,
      at,
    });
  }
  return events;
}

const Caption = z.object({ caption: z.string().nullish() }).nullish();
const UpsertedMessage = z.object({
  key: z.object({
    id: z.string().min(1),
    remoteJid: z.string(),
    /** The phone JID when `remoteJid` is a `@lid` privacy id (newer Baileys). */
    remoteJidAlt: z.string().nullish(),
    fromMe: z.boolean(),
  }),
  messageType: z.string(),
  message: z
    .object({
      conversation: z.string().nullish(),
      extendedTextMessage: z.object({ text: z.string().nullish() }).nullish(),
      imageMessage: Caption,
      videoMessage: Caption,
      documentMessage: Caption,
      documentWithCaptionMessage: z
        .object({ message: z.object({ documentMessage: Caption }).nullish() })
        .nullish(),
      mediaUrl: z.string().nullish(),
      /** Baileys' `ReactionMessage`: the reacted message's key, the emoji ("" when taken off). */
      reactionMessage: z
        .object({
          key: z.object({ id: z.string().min(1) }),
          text: z.string().nullish(),
          senderTimestampMs: z.union([z.number(), z.string()]).nullish(),
        })
        .nullish(),
    })
    .nullish(),
  /** The content's `ContextInfo` (`prepareMessage`); a reply's `stanzaId` is the quoted message's id. */
  contextInfo: z.object({ stanzaId: z.string().nullish() }).nullish(),
  messageTimestamp: z.union([z.number(), z.string()]).nullish(),
});
type Upserted = z.output<typeof UpsertedMessage>;

/** The `message` of a stored message, as {@link contentOf} reads it. */
export const StoredMessageBody = UpsertedMessage.shape.message;

function incomingEvents(data: unknown, at: number): GatewayEvent[] {
  const parsed = UpsertedMessage.safeParse(data);
  if (!parsed.success || parsed.data.key.fromMe) return [];
  const { key, messageTimestamp, message, contextInfo } = parsed.data;
  const from = phoneOfJid(key.remoteJid) ?? (key.remoteJidAlt ? phoneOfJid(key.remoteJidAlt) : null);
  const seconds = Number(messageTimestamp ?? Number.NaN);
  const reaction = parsed.data.messageType === "reactionMessage" ? message?.reactionMessage : null;
  if (from && reaction) {
    // Baileys stamps a reaction in milliseconds; the message's own stamp is in seconds.
    const ms = Number(reaction.senderTimestampMs ?? Number.NaN);
    return [
      {
        type: "reaction",
        providerMessageId: reaction.key.id,
        from,
        emoji: reaction.text ?? "",
        at:
          Number.isFinite(ms) && ms > 0 ? ms : Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : at,
      },
    ];
  }
  const content = contentOf(parsed.data);
  if (!from || !content) return [];
  return [
    {
      type: "incoming",
      providerMessageId: key.id,
      from: { phoneNumber: from },
      ...content,
      mediaUrl: content.messageType === "text" ? null : (message?.mediaUrl ?? null),
      // Media is downloaded by the message's id (index.ts `openIncomingMedia`).
      ...(content.messageType === "text" ? {} : { media: { mimetype: null, ref: key.id } }),
      ...(contextInfo?.stanzaId ? { quotedIds: [contextInfo.stanzaId] } : {}),
      at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : at,
    },
  ];
}

/**
 * The message's type and text (or caption), or null for types we do not receive. Takes the
 * `messageType` and `message` of a stored message too (`prepareMessage`, which both the webhook
 * and `POST /chat/findMessages` answer), so lookup.ts matches sent messages by it.
 */
export function contentOf({ messageType, message }: Pick<Upserted, "messageType" | "message">): {
  messageType: OutboundMessage["type"];
  content: string | null;
} | null {
  switch (messageType) {
    case "conversation":
    case "extendedTextMessage":
      return {
        messageType: "text",
        content: message?.conversation ?? message?.extendedTextMessage?.text ?? null,
      };
    case "imageMessage":
      return { messageType: "image", content: message?.imageMessage?.caption ?? null };
    case "videoMessage":
      return { messageType: "video", content: message?.videoMessage?.caption ?? null };
    case "audioMessage":
      return { messageType: "audio", content: null };
    case "documentMessage":
    case "documentWithCaptionMessage":
      return {
        messageType: "document",
        content:
          message?.documentMessage?.caption ??
          message?.documentWithCaptionMessage?.message?.documentMessage?.caption ??
          null,
      };
    default:
      return null;
  }
}
