import { z } from "zod";
import type { GatewaySettings } from "../config";
import { hmacHex, timingSafeEqual } from "../lib/crypto";
import {
  type ChatGateway,
  GatewayError,
  type GatewayEvent,
  type GatewayEventBatch,
  type LinkState,
  type OutboundMessage,
  type SendOutcome,
} from "./gateway";
import { type GatewayHttp, gatewayRequest, sendFailure } from "./http";
import { digitsOf, phoneOfJid } from "./jid";

/*
 * WAHA (devlikeapro/waha) HTTP API, as documented at https://waha.devlike.pro/docs/how-to/ (source:
 * github.com/devlikeapro/waha-docs, content/docs/how-to/*). Schemas pick only the fields used here and
 * let the rest through, so a change elsewhere in a response does not break us; a missing or
 * mistyped field makes the call a transient `gateway_bad_response`.
 */

/** Session status values ("Sessions → Session Status"). */
const SessionStatus = z.enum(["STOPPED", "STARTING", "SCAN_QR_CODE", "WORKING", "FAILED"]);
type SessionStatus = z.output<typeof SessionStatus>;

/** The linked account, `{ id: "<digits>@c.us", pushName }` ("Sessions → Get me"); null until WORKING. */
const Me = z.looseObject({ id: z.string(), pushName: z.string().nullish() });
type Me = z.output<typeof Me>;

/** `GET /api/sessions/{session}` ("Sessions → Get Session"). */
const SessionInfo = z.looseObject({ status: SessionStatus, me: Me.nullish() });

/** `GET /api/{session}/auth/qr?format=raw` → `{ value }` ("Sessions → Get QR → Raw"). */
const QrValue = z.looseObject({ value: z.string().min(1) });

/** `POST /api/{session}/auth/request-code` → `{ code: "ABCD-ABCD" }` ("Sessions → Get pairing code"). */
const PairingCode = z.looseObject({ code: z.string().min(1) });

/** `GET /api/contacts/check-exists` → `{ numberExists, chatId }` ("Contacts → Check phone number exists"). */
const NumberExists = z.looseObject({ numberExists: z.boolean(), chatId: z.string().min(1).nullish() });

/**
 * The id of a sent message, in the `{fromMe}_{chatId}_{id}` form that `message.ack` events carry
 * ("Events → message.ack"). `POST /api/send*` answers in the engine's own format (WAHA issues #407,
 * #760, #1122): the documented `WAMessage` and GOWS give `id` as that string; WEBJS gives
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

/** Webhook envelope ("Events → Event Payload → Structure"): `timestamp` is in epoch milliseconds. */
const Envelope = z.looseObject({
  timestamp: z.number(),
  session: z.string().min(1),
  event: z.string().min(1),
  payload: z.unknown(),
  me: Me.nullish(),
});

/** `session.status` payload: `{ status, statuses }` ("Events → session.status"). */
const StatusPayload = z.looseObject({ status: SessionStatus });

/** `message.ack` payload: `{ id, ack, ackName, … }` ("Events → message.ack"). */
const AckPayload = z.looseObject({ id: z.string().min(1), ack: z.number().int() });

/** `message` payload ("Events → message", "Receive messages → Media Files"). */
const MessagePayload = z.looseObject({
  id: z.string().min(1),
  from: z.string(),
  fromMe: z.boolean(),
  body: z.string().nullish(),
  hasMedia: z.boolean().nullish(),
  media: z.looseObject({ url: z.string().nullish(), mimetype: z.string().nullish() }).nullish(),
});

/** Events the session's webhook subscribes to. */
const WEBHOOK_EVENTS = ["session.status", "message", "message.ack"];

/** How long create/start wait for a session to leave STARTING: `polls` reads, `intervalMs` apart. */
interface StartWait {
  intervalMs: number;
  polls: number;
}

/** About 6 s: a session usually leaves STARTING within a second or two. */
const DEFAULT_START_WAIT: StartWait = { intervalMs: 400, polls: 15 };

/**
 * The WAHA gateway. The WAHA session name is our session id (`session_<uuid>`); every call sends the
 * API key as `X-Api-Key` ("Security → API Key") and times out after `settings.timeoutMs`.
 */
export class WahaGateway implements ChatGateway {
  readonly name = "waha";
  private readonly http: GatewayHttp;

  constructor(
    private readonly settings: Extract<GatewaySettings, { kind: "waha" }>,
    /** How create and start poll for the session to leave STARTING; tests shorten it. */
    private readonly startWait: StartWait = DEFAULT_START_WAIT,
  ) {
    this.http = {
      baseUrl: settings.url,
      headers: { "X-Api-Key": settings.apiKey },
      timeoutMs: settings.timeoutMs,
    };
  }

  /**
   * `POST /api/sessions` with `start: true` and a webhook to `<publicUrl>/gateway/waha/events`
   * signed with the HMAC key ("Sessions → Create Session", "Events → HMAC authentication") and
   * retried with exponential backoff from 2 s for up to 8 attempts, the last about 4 minutes after
   * the first ("Events → Retries"), so a short outage of ours loses no ack or status change. A 422
   * means the session already exists (an earlier create whose answer we lost; WAHA's
   * `SessionsController.create`), so it is started instead.
   * @throws GatewayError as {@link waitForLink}, or for a failed call.
   */
  async create(sessionId: string): Promise<LinkState> {
    const webhook = {
      url: `${this.settings.publicUrl}/gateway/waha/events`,
      events: WEBHOOK_EVENTS,
      hmac: { key: this.settings.hmacKey },
      retries: { policy: "exponential", delaySeconds: 2, attempts: 8 },
    };
    try {
      await gatewayRequest(this.http, {
        method: "POST",
        path: "/api/sessions",
        body: { name: sessionId, start: true, config: { webhooks: [webhook] } },
      });
    } catch (error) {
      if (!(error instanceof GatewayError && error.status === 422)) throw error;
      await this.startSession(sessionId);
    }
    return this.waitForLink(sessionId);
  }

  /**
   * `POST /api/sessions/{session}/start`, idempotent: a running session is left as it is ("Sessions
   * → Start Session"). Then waits as {@link create}.
   */
  async start(sessionId: string): Promise<LinkState> {
    await this.startSession(sessionId);
    return this.waitForLink(sessionId);
  }

  /** The raw QR payload; WAHA answers 422 unless the session is SCAN_QR_CODE ("Sessions → Get QR"). */
  async currentQr(sessionId: string): Promise<string> {
    const qr = await gatewayRequest(this.http, {
      method: "GET",
      path: `/api/${session(sessionId)}/auth/qr?format=raw`,
      schema: QrValue,
    });
    return qr.value;
  }

  /** `POST /api/{session}/auth/request-code` with the number's digits ("Sessions → Get pairing code"). */
  async requestPairingCode(sessionId: string, phoneNumber: string): Promise<string> {
    const answer = await gatewayRequest(this.http, {
      method: "POST",
      path: `/api/${session(sessionId)}/auth/request-code`,
      body: { phoneNumber: digitsOf(phoneNumber) },
      schema: PairingCode,
    });
    return answer.code;
  }

  /**
   * `POST /api/sessions/{session}/stop`: closes the connection and keeps the link ("Sessions → Stop
   * Session"). A session WAHA does not know (404) has nothing to close.
   */
  async disconnect(sessionId: string): Promise<void> {
    await unlessMissing(
      gatewayRequest(this.http, { method: "POST", path: `/api/sessions/${session(sessionId)}/stop` }),
    );
  }

  /**
   * `POST /api/sessions/{session}/logout` (removes the linked device from the phone when WORKING),
   * then `DELETE /api/sessions/{session}` ("Sessions → Logout Session", "Delete Session"). A 404 from
   * either means the session is already gone.
   */
  async remove(sessionId: string): Promise<void> {
    const name = session(sessionId);
    await unlessMissing(gatewayRequest(this.http, { method: "POST", path: `/api/sessions/${name}/logout` }));
    await unlessMissing(gatewayRequest(this.http, { method: "DELETE", path: `/api/sessions/${name}` }));
  }

  /**
   * Sends one message ("Send messages → Send Text / Image / Voice / Video / File"). WAHA accepts a
   * message to a number that is not on the network (NOWEB answers it `PENDING`; WAHA issue #569), so
   * the number is first looked up with `GET /api/contacts/check-exists` — the lookup WAHA's
   * maintainers point to, and the one the docs require anyway for Brazilian numbers, whose chat id
   * may differ from the digits ("Contacts → Check phone number exists"); the message goes to the
   * chat id it answers. `numberExists: false` is the permanent `recipient_not_on_chatapp`; other
   * 4xx are permanent with the {@link GatewayError} reason; 5xx, timeouts, unreachable and
   * unexpected shapes are transient.
   */
  async send(sessionId: string, message: OutboundMessage): Promise<SendOutcome> {
    try {
      const digits = digitsOf(message.to);
      const lookup = await gatewayRequest(this.http, {
        method: "GET",
        path: `/api/contacts/check-exists?${new URLSearchParams({ phone: digits, session: sessionId })}`,
        schema: NumberExists,
      });
      if (!lookup.numberExists) return { ok: false, permanent: true, reason: "recipient_not_on_chatapp" };
      const chatId = lookup.chatId ?? `${digits}@c.us`;
      const providerMessageId = await gatewayRequest(this.http, {
        method: "POST",
        path: SEND_PATHS[message.type],
        body: { session: sessionId, chatId, ...sendBody(message) },
        schema: SentMessageId,
      });
      return { ok: true, providerMessageId };
    } catch (error) {
      return sendFailure(error);
    }
  }

  /**
   * `GET /api/sessions/{session}` mapped as its `session.status` event would be (see
   * {@link parseWahaEvent}), `at` now; STARTING (or WORKING without an account yet) is null. A
   * session WAHA does not know (404, "Session not found") is dropped and logged out.
   * @throws GatewayError for any other failure.
   */
  async check(sessionId: string): Promise<GatewayEvent | null> {
    const at = Date.now();
    try {
      const info = await this.sessionInfo(sessionId);
      return statusEvent(info.status, info.me, at);
    } catch (error) {
      if (error instanceof GatewayError && error.status === 404) {
        return { type: "dropped", reason: "gateway_session_missing", loggedOut: true, at };
      }
      throw error;
    }
  }

  private async startSession(sessionId: string): Promise<void> {
    await gatewayRequest(this.http, { method: "POST", path: `/api/sessions/${session(sessionId)}/start` });
  }

  private sessionInfo(sessionId: string): Promise<z.output<typeof SessionInfo>> {
    return gatewayRequest(this.http, {
      method: "GET",
      path: `/api/sessions/${session(sessionId)}`,
      schema: SessionInfo,
    });
  }

  /**
   * Reads the session until it leaves STARTING: SCAN_QR_CODE → pending with the current QR;
   * WORKING with its account (`me`) → connected.
   * @throws GatewayError transient `gateway_failed` when the session is FAILED, `gateway_timeout`
   *   when it is still starting after the last read.
   */
  private async waitForLink(sessionId: string): Promise<LinkState> {
    for (let read = 1; ; read++) {
      const info = await this.sessionInfo(sessionId);
      if (info.status === "SCAN_QR_CODE") return { status: "pending", qr: await this.currentQr(sessionId) };
      if (info.status === "FAILED") {
        throw new GatewayError("gateway_failed", false, null, `session ${sessionId}`);
      }
      const account = info.status === "WORKING" ? accountOf(info.me) : null;
      if (account) return { status: "connected", ...account };
      if (read >= this.startWait.polls) {
        throw new GatewayError(
          "gateway_timeout",
          false,
          null,
          `session ${sessionId} is still ${info.status}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, this.startWait.intervalMs));
    }
  }
}

/**
 * True when `signature` (the `X-Webhook-Hmac` header, sent with `X-Webhook-Hmac-Algorithm: sha512`)
 * is the hex HMAC-SHA512 of the raw request body under `key` ("Events → HMAC authentication"), in
 * any letter case. Compared in constant time; a missing or malformed signature is false.
 */
export async function verifyWahaSignature(
  rawBody: string,
  signature: string | null | undefined,
  key: string,
): Promise<boolean> {
  if (!signature) return false;
  return timingSafeEqual(await hmacHex("SHA-512", key, rawBody), signature.toLowerCase());
}

/**
 * Normalises one WAHA webhook call ("Events"). The envelope is `{ id, timestamp (epoch ms), event,
 * session, me?, payload, … }`; `sessionId` is its `session` and every event's `at` its `timestamp`.
 *
 * - `session.status`: SCAN_QR_CODE → `qr` (no payload: fetch it with `currentQr`); WORKING →
 *   `linked` with the envelope's `me` (none without a phone number there); FAILED → `failed`
 *   `gateway_failed`; STOPPED → `dropped` `gateway_stopped`, not logged out; STARTING → none.
 * - `message.ack`: ack -1 ERROR → `failed` (`gateway_ack_error`), 1 SERVER → `sent`, 2 DEVICE →
 *   `delivered`, 3 READ and 4 PLAYED → `read`; 0 PENDING → none. The id is the `{fromMe}_{chatId}_{id}`
 *   form that `send` answers.
 * - `message` not `fromMe` from a phone number (`@c.us`; groups, `@lid`, broadcasts are skipped) →
 *   `incoming`: text unless `hasMedia`, then by `media.mimetype` image/video/audio, else document;
 *   the body (caption for media) and `media.url` when WAHA downloaded it.
 * - Any other event: a batch without events.
 *
 * Answers null for a body that is not a WAHA envelope, or a known event whose payload lacks the
 * fields above.
 */
export function parseWahaEvent(body: unknown): GatewayEventBatch | null {
  const envelope = Envelope.safeParse(body);
  if (!envelope.success) return null;
  const { session: sessionId, event, payload, me, timestamp: at } = envelope.data;
  const events = eventsOf(event, payload, me, at);
  return events && { sessionId, events };
}

function eventsOf(
  event: string,
  payload: unknown,
  me: Me | null | undefined,
  at: number,
): GatewayEvent[] | null {
  switch (event) {
    case "session.status": {
      const parsed = StatusPayload.safeParse(payload);
      return parsed.success ? present(statusEvent(parsed.data.status, me, at)) : null;
    }
    case "message.ack": {
      const parsed = AckPayload.safeParse(payload);
      if (!parsed.success) return null;
      const status = ACK_STATUS.get(parsed.data.ack);
      if (!status) return [];
      const reason = status === "failed" ? "gateway_ack_error" : null;
      return [{ type: "ack", providerMessageId: parsed.data.id, status, reason, at }];
    }
    case "message": {
      const parsed = MessagePayload.safeParse(payload);
      if (!parsed.success) return null;
      const message = parsed.data;
      const from = phoneOfJid(message.from);
      if (message.fromMe || !from) return [];
      return [
        {
          type: "incoming",
          providerMessageId: message.id,
          from,
          messageType: message.hasMedia ? mediaType(message.media?.mimetype) : "text",
          content: message.body || null,
          mediaUrl: message.media?.url ?? null,
          at,
        },
      ];
    }
    default:
      return [];
  }
}

/** A session status as the event it means; null for STARTING and for WORKING without a phone. */
function statusEvent(status: SessionStatus, me: Me | null | undefined, at: number): GatewayEvent | null {
  switch (status) {
    case "SCAN_QR_CODE":
      return { type: "qr", qr: null, at };
    case "WORKING": {
      const account = accountOf(me);
      return account && { type: "linked", ...account, at };
    }
    case "FAILED":
      return { type: "failed", reason: "gateway_failed", at };
    case "STOPPED":
      return { type: "dropped", reason: "gateway_stopped", loggedOut: false, at };
    case "STARTING":
      return null;
  }
}

/** `message.ack` `ack` values ("Events → message.ack"); 0 PENDING has no status. */
const ACK_STATUS = new Map<number, "sent" | "delivered" | "read" | "failed">([
  [-1, "failed"],
  [1, "sent"],
  [2, "delivered"],
  [3, "read"],
  [4, "read"],
]);

const SEND_PATHS: Record<OutboundMessage["type"], string> = {
  text: "/api/sendText",
  image: "/api/sendImage",
  video: "/api/sendVideo",
  audio: "/api/sendVoice",
  document: "/api/sendFile",
};

/**
 * The type-specific part of a send body. Media go by URL as `file: { url, mimetype, filename? }`
 * with the content as caption; the mimetype (which WAHA's `RemoteFile` requires) comes from the
 * URL's extension, else the type's usual one. Voice notes must be OGG/Opus and videos H.264 MP4
 * ("Send messages → Voice File Format / Video File Format"); a URL's extension cannot promise
 * either codec, so voice notes are always sent with `convert: true`, and videos unless `.mp4`.
 */
function sendBody(message: OutboundMessage): Record<string, unknown> {
  if (message.type === "text") return { text: message.content ?? "" };
  const url = message.mediaUrl ?? "";
  const extension = extensionOf(url);
  const file: Record<string, string> = {
    url,
    mimetype: (extension && MIME_TYPES[extension]) || DEFAULT_MIME_TYPES[message.type],
  };
  if (message.type === "document") file.filename = fileNameOf(url);
  const body: Record<string, unknown> = { file, caption: message.content ?? undefined };
  if (message.type === "audio") body.convert = true;
  if (message.type === "video") body.convert = extension !== "mp4";
  return body;
}

const MIME_TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif",
  mp4: "video/mp4",
  "3gp": "video/3gpp",
  mov: "video/quicktime",
  ogg: "audio/ogg",
  opus: "audio/ogg; codecs=opus",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  aac: "audio/aac",
  wav: "audio/wav",
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  zip: "application/zip",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.ms-powerpoint",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

const DEFAULT_MIME_TYPES: Record<Exclude<OutboundMessage["type"], "text">, string> = {
  image: "image/jpeg",
  video: "video/mp4",
  audio: "audio/ogg; codecs=opus",
  document: "application/octet-stream",
};

/** The last path segment of a URL, decoded (`report.pdf`), or `document` when there is none. */
function fileNameOf(url: string): string {
  try {
    const segment = new URL(url).pathname.split("/").pop() ?? "";
    return decodeURIComponent(segment) || "document";
  } catch {
    return "document";
  }
}

/** The lower-case extension of a URL's path (`pdf`), or null. */
function extensionOf(url: string): string | null {
  const match = fileNameOf(url).match(/\.([a-z0-9]+)$/i);
  return match?.[1]?.toLowerCase() ?? null;
}

/** The message type of incoming media by its mimetype; anything else is a document. */
function mediaType(mimetype: string | null | undefined): OutboundMessage["type"] {
  const kind = mimetype?.split("/")[0];
  return kind === "image" || kind === "video" || kind === "audio" ? kind : "document";
}

/** The linked phone (E.164) and display name of a session's `me`, or null without a phone number. */
function accountOf(me: Me | null | undefined): { phoneNumber: string; displayName: string | null } | null {
  const phoneNumber = me ? phoneOfJid(me.id) : null;
  return me && phoneNumber ? { phoneNumber, displayName: me.pushName ?? null } : null;
}

/** `<digits>@s.whatsapp.net` (Baileys) → `<digits>@c.us`, WAHA's form for chat ids; others as they are. */
function cusChatId(jid: string): string {
  return jid.replace(/@s\.whatsapp\.net$/, "@c.us");
}

/** The session name as a path segment. */
function session(sessionId: string): string {
  return encodeURIComponent(sessionId);
}

function present(event: GatewayEvent | null): GatewayEvent[] {
  return event ? [event] : [];
}

/** Awaits a call; a 404 (the session is unknown to WAHA) counts as done. */
async function unlessMissing(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof GatewayError && error.status === 404)) throw error;
  }
}
