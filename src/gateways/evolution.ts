import { z } from "zod";
import type { GatewaySettings } from "../config";
import { hmacSha256Hex, timingSafeEqual } from "../lib/crypto";
import {
  type AckStatus,
  type ChatGateway,
  GatewayError,
  type GatewayEvent,
  type GatewayEventBatch,
  type LinkState,
  type OutboundMessage,
  type SendOutcome,
} from "./gateway";
import { type GatewayCall, type GatewayHttp, gatewayRequest, sendFailure } from "./http";
import { digitsOf, phoneOfJid } from "./jid";

/*
 * Evolution API v2 (EvolutionAPI/evolution-api, https://doc.evolution-api.com/v2) with the
 * WhatsApp Web (Baileys) channel. Sources, by path in that repository:
 * - routes: src/api/routes/instance.router.ts, sendMessage.router.ts; every call carries the
 *   global key in the `apikey` header (src/api/guards/auth.guard.ts);
 * - bodies: src/api/dto/instance.dto.ts, sendMessage.dto.ts, src/validate/message.schema.ts;
 * - answers: src/api/controllers/instance.controller.ts (create, connect, connectionState,
 *   logout, delete), src/api/services/monitor.service.ts (`instanceInfo`: fetchInstances answers
 *   the Prisma `Instance` rows), the channel's `sendMessageWithTyping` (answers the sent message,
 *   `prepareMessage`) in src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts;
 * - errors: src/main.ts renders `{ status, error, response: { message } }`; the instance guard
 *   answers 404 for an instance it does not know (src/api/guards/instance.guard.ts);
 * - webhooks: src/api/integrations/event/webhook/webhook.controller.ts (`emit`), fed by
 *   `ChannelStartupService.sendDataWebhook` (src/api/services/channel.service.ts) with the event
 *   names of src/api/types/wa.types.ts (`Events`).
 */

type EvolutionSettings = Extract<GatewaySettings, { kind: "evolution" }>;

/** Events the instance webhook subscribes to, by their webhook-config names (wa.types.ts). */
const WEBHOOK_EVENTS = ["CONNECTION_UPDATE", "QRCODE_UPDATED", "MESSAGES_UPSERT", "MESSAGES_UPDATE"];

/** `POST /instance/create` → `{ instance, hash, webhook, settings, qrcode }`; `qrcode` is `wa.QrCode`. */
const CreatedInstance = z.object({
  instance: z.object({ instanceName: z.string() }),
  qrcode: z.object({ code: z.string().nullish() }).nullish(),
});
/** `GET /instance/connect/{instance}` → `wa.QrCode` `{ pairingCode, code, base64, count }`, or the state when open. */
const ConnectAnswer = z.object({ code: z.string().nullish(), pairingCode: z.string().nullish() });
/** `GET /instance/connectionState/{instance}` → `{ instance: { instanceName, state } }`. */
const ConnectionState = z.object({ instance: z.object({ state: z.string().nullish() }) });
/** `GET /instance/fetchInstances?instanceName=` → Prisma `Instance` rows. */
const InstanceRows = z
  .array(z.object({ ownerJid: z.string().nullish(), profileName: z.string().nullish() }))
  .min(1);
/** `POST /message/send*` → the sent message (`prepareMessage`): `{ key: { remoteJid, fromMe, id }, … }`. */
const SentMessage = z.object({ key: z.object({ id: z.string().min(1) }) });
/** Evolution's error body (src/main.ts): `{ status, error, response: { message: [...] } }`. */
const ErrorBody = z.object({ response: z.object({ message: z.array(z.unknown()) }) });

/**
 * The Evolution API gateway. The Evolution instance is named after our session (`session_<uuid>`)
 * and its token is {@link evolutionInstanceToken}, so the events route can authenticate webhook
 * bodies without storage ({@link verifyEvolutionEvent}). Lifecycle methods throw
 * {@link GatewayError}; `send` answers a {@link SendOutcome}.
 */
export class EvolutionGateway implements ChatGateway {
  readonly name = "evolution";
  private readonly http: GatewayHttp;

  constructor(private readonly settings: EvolutionSettings) {
    this.http = {
      baseUrl: settings.url,
      headers: { apikey: settings.apiKey },
      timeoutMs: settings.timeoutMs,
    };
  }

  /**
   * `POST /instance/create` with our token and the webhook (nested `webhook` of `InstanceDto`;
   * `EventManager.setInstance` enables it). The answer's `qrcode.code` is the first QR, read after
   * a 5 s wait on the server; without it the QR comes from `connect`. An instance already of that
   * name (403 from the instance guard, e.g. a retried create) is started instead.
   */
  async create(sessionId: string): Promise<LinkState> {
    let created: z.output<typeof CreatedInstance>;
    try {
      created = await this.request({
        method: "POST",
        path: "/instance/create",
        body: {
          instanceName: sessionId,
          token: await evolutionInstanceToken(this.settings.apiKey, sessionId),
          qrcode: true,
          integration: "WHATSAPP-BAILEYS",
          webhook: {
            url: `${this.settings.publicUrl}/gateway/evolution/events`,
            byEvents: false,
            base64: false,
            events: WEBHOOK_EVENTS,
          },
        },
        schema: CreatedInstance,
      });
    } catch (error) {
      if (statusOf(error) === 403) return this.start(sessionId);
      throw error;
    }
    const qr = created.qrcode?.code;
    return { status: "pending", qr: qr ? qr : await this.currentQr(sessionId) };
  }

  /** `connectionState`: `open` → connected (owner from `fetchInstances`); otherwise the QR of `connect`. */
  async start(sessionId: string): Promise<LinkState> {
    if ((await this.state(sessionId)) === "open")
      return { status: "connected", ...(await this.owner(sessionId)) };
    return { status: "pending", qr: await this.currentQr(sessionId) };
  }

  /**
   * `GET /instance/connect/{instance}` → `code`, the QR payload. Connecting a `close` instance
   * starts it; a `connecting` one answers its current QR.
   * @throws GatewayError transient `gateway_qr_unavailable` when the answer has no QR yet (or the
   *   instance is already open).
   */
  async currentQr(sessionId: string): Promise<string> {
    const answer = await this.request({
      method: "GET",
      path: `/instance/connect/${sessionId}`,
      schema: ConnectAnswer,
    });
    if (!answer.code) throw new GatewayError("gateway_qr_unavailable", false, null, sessionId);
    return answer.code;
  }

  /**
   * `GET /instance/connect/{instance}?number=<digits>` → `pairingCode`. Evolution asks Baileys for
   * the code only when this call starts a `close` instance with the number (the client keeps the
   * number and requests a code with each QR); a `connecting` instance started without it answers
   * its QR with `pairingCode: null`. Baileys answers the code as 8 characters; the phone shows it
   * as two groups of four, so that is how it is returned (`ABCD-EFGH`).
   * @throws GatewayError permanent `gateway_pairing_code_unavailable` when the answer has no code
   *   (asking again cannot help while the instance waits for a QR scan).
   */
  async requestPairingCode(sessionId: string, phoneNumber: string): Promise<string> {
    const answer = await this.request({
      method: "GET",
      path: `/instance/connect/${sessionId}?number=${digitsOf(phoneNumber)}`,
      schema: ConnectAnswer,
    });
    const code = answer.pairingCode;
    if (!code) throw new GatewayError("gateway_pairing_code_unavailable", true, null, sessionId);
    return /^[A-Z0-9]{8}$/i.test(code) ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
  }

  /**
   * `DELETE /instance/logout/{instance}`. Evolution has no close-but-keep-the-link call, so this
   * unlinks the phone: a later `start` needs a new QR. An instance already closed (400 "is not
   * connected") or gone (404) counts as disconnected.
   */
  async disconnect(sessionId: string): Promise<void> {
    try {
      await this.request({ method: "DELETE", path: `/instance/logout/${sessionId}` });
    } catch (error) {
      if (statusOf(error) === 404) return;
      const messages = statusOf(error) === 400 ? errorMessages(error) : [];
      if (messages.some((item) => typeof item === "string" && /not connected/i.test(item))) return;
      throw error;
    }
  }

  /**
   * `DELETE /instance/delete/{instance}`; 404 means already gone. Evolution refuses to delete an
   * `open` instance (400 "needs to be disconnected"), so a 400 logs out first and deletes again.
   */
  async remove(sessionId: string): Promise<void> {
    const path = `/instance/delete/${sessionId}`;
    try {
      await this.request({ method: "DELETE", path });
    } catch (error) {
      if (statusOf(error) === 404) return;
      if (statusOf(error) !== 400) throw error;
      await this.disconnect(sessionId);
      await this.request({ method: "DELETE", path }).catch((again: unknown) => {
        if (statusOf(again) !== 404) throw again;
      });
    }
  }

  /**
   * Text → `POST /message/sendText/{instance}` `{ number, text }`; image, video, document →
   * `POST /message/sendMedia/{instance}` `{ number, mediatype, media, caption?, fileName? }`;
   * audio → `POST /message/sendWhatsAppAudio/{instance}` `{ number, audio }` (a voice note).
   * `number` is the E.164 number's digits. The answer's `key.id` is the provider message id that
   * `messages.update` acks carry as `keyId`. Evolution answers 400 with
   * `response.message: [{ exists: false, jid, number }]` for a number not on WhatsApp
   * (`sendMessageWithTyping`) → permanent `recipient_not_on_chatapp`.
   */
  async send(sessionId: string, message: OutboundMessage): Promise<SendOutcome> {
    const call = sendCall(sessionId, message);
    if (!call) return { ok: false, permanent: true, reason: "media_url_missing" };
    try {
      const sent = await this.request({ method: "POST", ...call, schema: SentMessage });
      return { ok: true, providerMessageId: sent.key.id };
    } catch (error) {
      return sendFailureOf(error);
    }
  }

  /**
   * `connectionState`: `open` → `linked` (owner from `fetchInstances`); `close` → `dropped`
   * (`gateway_closed`); `refused` (QR limit reached) → `failed` (`qr_limit_reached`); an unknown
   * instance (404) → `dropped` (`gateway_session_missing`, logged out). `connecting` is null:
   * Baileys is then either showing a QR or re-connecting a linked phone, which this call cannot
   * tell apart, and the `qrcode.updated` / `connection.update` webhooks say which.
   */
  async check(sessionId: string): Promise<GatewayEvent | null> {
    let state: string | null;
    try {
      state = await this.state(sessionId);
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
      return { type: "dropped", reason: "gateway_session_missing", loggedOut: true, at: Date.now() };
    }
    switch (state) {
      case "open":
        return { type: "linked", ...(await this.owner(sessionId)), at: Date.now() };
      case "close":
        return { type: "dropped", reason: "gateway_closed", loggedOut: false, at: Date.now() };
      case "refused":
        return { type: "failed", reason: "qr_limit_reached", at: Date.now() };
      default:
        return null;
    }
  }

  private async state(sessionId: string): Promise<string | null> {
    const answer = await this.request({
      method: "GET",
      path: `/instance/connectionState/${sessionId}`,
      schema: ConnectionState,
    });
    return answer.instance.state ?? null;
  }

  /** The linked phone: `ownerJid` and `profileName` of the instance row. */
  private async owner(sessionId: string): Promise<{ phoneNumber: string; displayName: string | null }> {
    const [row] = await this.request({
      method: "GET",
      path: `/instance/fetchInstances?instanceName=${sessionId}`,
      schema: InstanceRows,
    });
    const phoneNumber = row?.ownerJid ? phoneOfJid(row.ownerJid) : null;
    if (!phoneNumber)
      throw new GatewayError("gateway_bad_response", false, null, "instance has no owner number");
    return { phoneNumber, displayName: row?.profileName ?? null };
  }

  private request<S extends z.ZodType | undefined = undefined>(call: GatewayCall<S>) {
    return gatewayRequest(this.http, call);
  }
}

/**
 * The token we give instance `instance` at create: lower-case hex HMAC-SHA256 of the instance
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
 * config spelling (`CONNECTION_UPDATE`). `at` is `date_time` in epoch ms (now when absent); an
 * incoming message's is its `messageTimestamp` (seconds). Events of other names, and data of a
 * shape not described here, yield no events.
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
 *   in S3); other message types → nothing.
 */
export function parseEvolutionEvent(body: unknown): GatewayEventBatch | null {
  const envelope = Envelope.safeParse(body);
  if (!envelope.success) return null;
  const { event, instance, data, date_time, sender } = envelope.data;
  const stamped = date_time ? Date.parse(date_time) : Number.NaN;
  const at = Number.isNaN(stamped) ? Date.now() : stamped;
  switch (event.toLowerCase().replaceAll("_", ".")) {
    case "connection.update":
      return { sessionId: instance, events: connectionEvents(data, at, sender ?? null) };
    case "qrcode.updated":
      return { sessionId: instance, events: qrEvents(data, at) };
    case "messages.update":
      return { sessionId: instance, events: ackEvents(data, at) };
    case "messages.upsert":
      return { sessionId: instance, events: incomingEvents(data, at) };
    default:
      return { sessionId: instance, events: [] };
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
    })
    .nullish(),
  messageTimestamp: z.union([z.number(), z.string()]).nullish(),
});
type Upserted = z.output<typeof UpsertedMessage>;

function incomingEvents(data: unknown, at: number): GatewayEvent[] {
  const parsed = UpsertedMessage.safeParse(data);
  if (!parsed.success || parsed.data.key.fromMe) return [];
  const { key, messageTimestamp, message } = parsed.data;
  const from = phoneOfJid(key.remoteJid) ?? (key.remoteJidAlt ? phoneOfJid(key.remoteJidAlt) : null);
  const content = contentOf(parsed.data);
  if (!from || !content) return [];
  const seconds = Number(messageTimestamp ?? Number.NaN);
  return [
    {
      type: "incoming",
      providerMessageId: key.id,
      from,
      ...content,
      mediaUrl: content.messageType === "text" ? null : (message?.mediaUrl ?? null),
      at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : at,
    },
  ];
}

/** The message's type and text (or caption), or null for types we do not receive. */
function contentOf({ messageType, message }: Upserted): {
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

/** The path and body that send `message` (sendMessage.router.ts), or null for media without a URL. */
function sendCall(sessionId: string, message: OutboundMessage): { path: string; body: object } | null {
  const number = digitsOf(message.to);
  if (message.type === "text") {
    return { path: `/message/sendText/${sessionId}`, body: { number, text: message.content ?? "" } };
  }
  if (!message.mediaUrl) return null;
  if (message.type === "audio") {
    return { path: `/message/sendWhatsAppAudio/${sessionId}`, body: { number, audio: message.mediaUrl } };
  }
  return {
    path: `/message/sendMedia/${sessionId}`,
    body: {
      number,
      mediatype: message.type,
      media: message.mediaUrl,
      ...(message.content ? { caption: message.content } : {}),
      // Without a fileName Evolution derives one from the URL with a regex that fails on
      // extension-less paths (`prepareMediaMessage`), so documents always get one.
      ...(message.type === "document" ? { fileName: fileNameOf(message.mediaUrl) } : {}),
    },
  };
}

/** The last path segment of `url`, decoded, or `document` when there is none. */
function fileNameOf(url: string): string {
  try {
    const segment = new URL(url).pathname.split("/").pop() ?? "";
    return decodeURIComponent(segment) || "document";
  } catch {
    return "document";
  }
}

/**
 * A failed send: Evolution's 400 for a number not on WhatsApp is permanent
 * `recipient_not_on_chatapp`; its 400 for a Baileys socket that closed mid-send ("Connection
 * Closed", the channel wraps every send error in a 400) is transient; the rest as {@link sendFailure}.
 */
function sendFailureOf(error: unknown): SendOutcome {
  const messages = statusOf(error) === 400 ? errorMessages(error) : [];
  if (messages.some((item) => z.object({ exists: z.literal(false) }).safeParse(item).success)) {
    return { ok: false, permanent: true, reason: "recipient_not_on_chatapp" };
  }
  if (messages.some((item) => typeof item === "string" && /connection closed/i.test(item))) {
    return { ok: false, permanent: false, reason: "gateway_connection_closed" };
  }
  return sendFailure(error);
}

/** `response.message` of the error body a GatewayError carries, or none. */
function errorMessages(error: unknown): unknown[] {
  if (!(error instanceof GatewayError)) return [];
  const parsed = ErrorBody.safeParse(error.body);
  return parsed.success ? parsed.data.response.message : [];
}

function statusOf(error: unknown): number | null {
  return error instanceof GatewayError ? error.status : null;
}
