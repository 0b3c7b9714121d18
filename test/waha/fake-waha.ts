import { createHmac } from "node:crypto";
import { delay, HttpResponse, http } from "msw";
import { GATEWAY_TIMEOUT_MS, WAHA_API_KEY, WAHA_URL, WAHA_WEBHOOK_HMAC_KEY } from "../gateway-config";
import { call, createSession } from "../helpers";
import { network } from "../network";

type Status = "STOPPED" | "STARTING" | "SCAN_QR_CODE" | "WORKING" | "FAILED";

interface FakeSession {
  status: Status;
  /** The linked phone, as WAHA's `me` (`{ id: "<digits>@c.us", pushName }`), once a phone linked. */
  me: { id: string; pushName: string } | null;
  qrCount: number;
  webhooks: unknown;
  /**
   * WAHA's engine (NOWEB when unset): `GET /api/sessions/{session}/capping` is served by GOWS
   * alone, `POST /api/sendList` by NOWEB and GOWS.
   */
  engine?: "NOWEB" | "GOWS" | "WEBJS";
  /** `MeInfo.reachoutTimelock` (`ReachoutTimelockData`), null when no enforcement was seen. */
  reachoutTimelock?: {
    enforcementType: string;
    isActive: boolean;
    timeEnforcementEnds: number | null;
  } | null;
  /** `MeInfo.messageCapping` (`MessageCappingData`), null until fetched. */
  messageCapping?: WahaCapping | null;
}

/** WAHA's `MessageCappingData` (src/structures/sessions.dto.ts, devlikeapro/waha#2186). */
export interface WahaCapping {
  cappingStatus: string;
  totalQuota: number;
  usedQuota: number;
  cycleStart: number | null;
  cycleEnd: number | null;
  mvStatus: string | null;
  oteStatus: string | null;
}

/** A message the fake sent and stored; `message` is the `WAMessage` the chat messages list answers. */
export interface WahaSent {
  id: string;
  path: string;
  chatId: string;
  body: Record<string, unknown>;
  message: {
    id: string;
    timestamp: number;
    from: string;
    fromMe: true;
    to: string;
    body: string;
    hasMedia: boolean;
    /** `WALocation` of a location sent: its coordinates as strings, as WAHA gives them. */
    location?: { latitude: string; longitude: string; live: boolean; name?: string };
  };
}

/** What a GOWS session's capping endpoint answers before WhatsApp set any: no cap (`totalQuota` -1). */
const NO_CAP: WahaCapping = {
  cappingStatus: "NONE",
  totalQuota: -1,
  usedQuota: 0,
  cycleStart: null,
  cycleEnd: null,
  mvStatus: null,
  oteStatus: null,
};

/**
 * How the fake's send endpoints misbehave, until set back to null: `error` answers 500 and
 * stores nothing; `hang` answers (500) only after the gateway's timeout and stores nothing;
 * `lost` stores the message, then drops the connection; `garbage` stores it, then answers 201
 * with a body that is not JSON; `timelock` answers as WAHA does WhatsApp's error 463 (a 500 whose
 * `exception.message` is "2 UNKNOWN: server returned error 463", devlikeapro/waha#1992) and stores
 * nothing.
 */
export type SendFault = "error" | "hang" | "lost" | "garbage" | "timelock";

/** A fault chosen per send from the send's body (a mix of faults across messages); null: none. */
export type SendFaultPlan = (body: Record<string, unknown>) => SendFault | null;

/**
 * The fields of each send request and those it requires (WAHA's OpenAPI document, 2026.7.1:
 * `MessageTextRequest`, `MessageImageRequest`, … and `RemoteFile`). WAHA strips unknown fields
 * (or refuses them with `WAHA_HTTP_STRICT_MODE`); the fake refuses them (422), so a field WAHA
 * would drop fails a test.
 */
const SEND_FIELDS: Record<string, { allowed: string[]; required: string[] }> = {
  sendText: {
    allowed: ["chatId", "id", "reply_to", "text", "linkPreview", "linkPreviewHighQuality", "session"],
    required: ["chatId", "text", "session"],
  },
  sendImage: {
    allowed: ["chatId", "file", "reply_to", "caption", "session"],
    required: ["chatId", "file", "session"],
  },
  sendFile: {
    allowed: ["chatId", "file", "reply_to", "caption", "session"],
    required: ["chatId", "file", "session"],
  },
  sendVoice: {
    allowed: ["chatId", "file", "reply_to", "convert", "session"],
    required: ["chatId", "file", "convert", "session"],
  },
  sendVideo: {
    allowed: ["chatId", "file", "reply_to", "asNote", "convert", "caption", "session"],
    required: ["chatId", "file", "convert", "session"],
  },
  // `MessageLocationRequest`: `latitude` and `longitude` numbers, `title` a string (types checked in `send`).
  sendLocation: {
    allowed: ["chatId", "id", "latitude", "longitude", "title", "reply_to", "session"],
    required: ["chatId", "latitude", "longitude", "title", "session"],
  },
  // `MessageContactVcardRequest`: `contacts` items `VCardContact` or `Contact` (checked in `send`).
  sendContactVcard: {
    allowed: ["chatId", "id", "contacts", "reply_to", "session"],
    required: ["chatId", "contacts", "session"],
  },
  // `MessagePollRequest`: `poll` a `MessagePoll` (checked in `send`), `id` "Pre-generated message id".
  sendPoll: {
    allowed: ["chatId", "id", "reply_to", "poll", "session"],
    required: ["chatId", "poll", "session"],
  },
  // `SendListRequest`: `message` a `SendListMessage` (checked in `send`); no `id`.
  sendList: {
    allowed: ["chatId", "message", "reply_to", "session"],
    required: ["chatId", "message", "session"],
  },
};

/**
 * What is wrong with a `sendList` body's `message` (WAHA's OpenAPI document, 2026.7.1:
 * `SendListMessage` `{ title, description?, footer?, button, sections }` with `title`, `button`
 * and `sections` required; `sections` items `Section` `{ title, rows }`, both required; `rows`
 * items `Row` `{ title, description?, rowId }`, `title` and `rowId` required; every field a
 * string but the arrays), or null. Fields the schemas do not list are refused, as for the others.
 */
function listMessageProblem(message: unknown): string | null {
  const fieldsProblem = (
    value: unknown,
    name: string,
    allowed: string[],
    required: string[],
  ): string | null => {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      return `${name} must be an object`;
    const fields = value as Record<string, unknown>;
    const refused = Object.keys(fields).find((field) => !allowed.includes(field));
    if (refused) return `property ${name}.${refused} should not exist`;
    const missing = required.find((field) => fields[field] === undefined);
    if (missing) return `${name}.${missing} is required`;
    const mistyped = allowed.find(
      (field) =>
        field !== "sections" &&
        field !== "rows" &&
        fields[field] !== undefined &&
        typeof fields[field] !== "string",
    );
    return mistyped ? `${name}.${mistyped} must be a string` : null;
  };
  const top = fieldsProblem(
    message,
    "message",
    ["title", "description", "footer", "button", "sections"],
    ["title", "button", "sections"],
  );
  if (top) return top;
  const sections = (message as { sections: unknown }).sections;
  if (!Array.isArray(sections)) return "message.sections must be an array";
  for (const [s, section] of sections.entries()) {
    const problem = fieldsProblem(section, `message.sections.${s}`, ["title", "rows"], ["title", "rows"]);
    if (problem) return problem;
    const rows = (section as { rows: unknown }).rows;
    if (!Array.isArray(rows)) return `message.sections.${s}.rows must be an array`;
    for (const [r, row] of rows.entries()) {
      const rowProblem = fieldsProblem(
        row,
        `message.sections.${s}.rows.${r}`,
        ["title", "description", "rowId"],
        ["title", "rowId"],
      );
      if (rowProblem) return rowProblem;
    }
  }
  return null;
}

/**
 * What is wrong with a `sendPoll` body's `poll` (WAHA's OpenAPI document, 2026.7.1: `MessagePoll`
 * `{ name, options, multipleAnswers }`, all three required; `name` a string, `options` an array of
 * strings; `multipleAnswers` typed `object` with `default: false`, a boolean in the docs' example,
 * "Polls → Send poll", which is what the fake takes), or null. Fields it does not list are refused.
 */
function pollProblem(poll: unknown): string | null {
  if (typeof poll !== "object" || poll === null || Array.isArray(poll)) return "poll must be an object";
  const fields = poll as Record<string, unknown>;
  const refused = Object.keys(fields).find(
    (field) => !["name", "options", "multipleAnswers"].includes(field),
  );
  if (refused) return `property poll.${refused} should not exist`;
  if (typeof fields.name !== "string") return "poll.name must be a string";
  if (!Array.isArray(fields.options) || !fields.options.every((option) => typeof option === "string"))
    return "poll.options must be an array of strings";
  if (typeof fields.multipleAnswers !== "boolean") return "poll.multipleAnswers must be a boolean";
  return null;
}

/**
 * What is wrong with a `sendContactVcard` body's `contacts` (WAHA's OpenAPI document,
 * `MessageContactVcardRequest.contacts`: an array of `VCardContact` `{ vcard }` (required,
 * a string) or `Contact` `{ fullName, organization?, phoneNumber, whatsappId?, vcard }`), or null.
 * A `VCardContact`'s `vcard` must begin `BEGIN:VCARD` and end `END:VCARD`, as the document's example.
 */
function contactsProblem(contacts: unknown): string | null {
  if (!Array.isArray(contacts) || contacts.length === 0) return "contacts must be a non-empty array";
  for (const contact of contacts) {
    if (typeof contact !== "object" || contact === null) return "each contact must be an object";
    const { vcard, ...others } = contact as Record<string, unknown>;
    if (Object.keys(others).length > 0) return `VCardContact has no ${Object.keys(others)[0]}`;
    if (typeof vcard !== "string" || !/^BEGIN:VCARD\r?\n[\s\S]*\r?\nEND:VCARD$/.test(vcard))
      return "vcard must be a vCard";
  }
  return null;
}

/**
 * A chat id of one user WAHA sends to: a phone number's (`<digits>@c.us`, or the bare digits) or a
 * LID (`<digits>@lid`). WAHA's docs: "You can message anyone using either their LID or their PN"
 * ("Contacts → @lid and @c.us", devlikeapro/waha-docs content/docs/how-to/contacts/index.md); "The
 * `chatId` must be one of the following formats: `phone`, `phone@c.us`, `{number}@lid`" ("Send
 * messages", content/docs/how-to/send-messages/index.md). Anything else is refused (422).
 */
const USER_CHAT_ID = /^(?:\d{6,15}(?:@c\.us)?|\d{1,32}@lid)$/;

/**
 * A WAHA message id in its serialised form, `{fromMe}_{chatId}_{id}` (`MessageIdProperty`), in a
 * phone number's chat or a LID's (`false_4639135154355@lid_297A…`, as NOWEB's `message` webhook
 * shows it in devlikeapro/waha#1073).
 */
const SERIALIZED_ID = /^(true|false)_\d+@(?:c\.us|lid)_[A-Za-z0-9]+$/;

/** A reaction the fake set: the `PUT /api/reaction` body (`MessageReactionRequest`) and its message's id. */
export interface WahaReaction {
  session: string;
  messageId: string;
  reaction: string;
  /** The id of the reaction message NOWEB answered. */
  id: string;
}

/**
 * Why `file` is not a `RemoteFile` (WAHA's OpenAPI document: `url` and `mimetype` required,
 * `filename` optional, nothing else), or null when it is.
 */
function remoteFileProblem(file: unknown): string | null {
  if (typeof file !== "object" || file === null) return "file must be an object";
  const fields = file as Record<string, unknown>;
  const unknown = Object.keys(fields).find((field) => !["url", "mimetype", "filename"].includes(field));
  if (unknown) return `property file.${unknown} is refused`;
  if (typeof fields.url !== "string" || !URL.canParse(fields.url)) return "file.url must be a URL";
  if (typeof fields.mimetype !== "string" || !fields.mimetype) return "file.mimetype is required";
  if (fields.filename !== undefined && typeof fields.filename !== "string")
    return "file.filename must be a string";
  return null;
}

/** Query parameters of `GET /api/{session}/chats/{chatId}/messages` (OpenAPI document). */
const LIST_PARAMS = [
  "sortBy",
  "sortOrder",
  "downloadMedia",
  "merge",
  "limit",
  "offset",
  "filter.timestamp.lte",
  "filter.timestamp.gte",
  "filter.fromMe",
  "filter.ack",
];

/**
 * A stand-in for one WAHA server at its HTTP boundary (shapes from WAHA's documented API, as in
 * src/gateways/waha/): sessions with their status and linked account, QR and pairing codes,
 * the contacts lookup (numbers ending in 0000 are not on WhatsApp; each phone asked is kept in
 * `checked`), the send endpoints (bodies checked against {@link SEND_FIELDS}; a text or
 * location with an `id` is sent under it, as NOWEB and GOWS do, and a second send with that id stores
 * nothing more) and the chat messages list. `down` makes every call answer 503; `sendFault`
 * makes sends misbehave ({@link SendFault}), all alike or each as a {@link SendFaultPlan} says.
 * Every request is recorded as `METHOD path` in `calls`, with its JSON body in `bodies`; every
 * send that reached the network, as the id of its message in `relayed`. Sends' `reply_to` must be a
 * serialised message id; `PUT /api/reaction` sets reactions (kept in `reactions`).
 */
export class FakeWaha {
  readonly sessions = new Map<string, FakeSession>();
  readonly calls: string[] = [];
  readonly bodies: { call: string; body: unknown }[] = [];
  readonly sent: WahaSent[] = [];
  /** The `phone` of every `check-exists` call WAHA answered, in order. */
  readonly checked: string[] = [];
  /**
   * The id of every message a send relayed (stored, or already held under its id), a repeat
   * included: WAHA keeps one message per id, so an id listed twice is a message we sent twice.
   */
  readonly relayed: string[] = [];
  /** Every read receipt WAHA took (`POST /api/sendSeen`, `SendSeenRequest`), in order. */
  readonly seen: { session: string; chatId: string; messageIds: string[] }[] = [];
  /** Every message deleted for everyone (`DELETE …/messages/{messageId}`), by session, chat and id. */
  readonly deleted: { session: string; chatId: string; messageId: string }[] = [];
  /** Every edit (`PUT …/messages/{messageId}`, `EditMessageRequest`), with its text. */
  readonly edited: { session: string; chatId: string; messageId: string; text: string }[] = [];
  /** Every reaction set, in order, a repeat included (`PUT /api/reaction`). */
  readonly reactions: WahaReaction[] = [];
  /** Files of incoming media WAHA holds, by path ({@link receiveFile}). */
  readonly files = new Map<string, { bytes: Uint8Array; mimetype: string }>();
  /**
   * Every typing call WAHA took (`POST /api/startTyping` or `/api/stopTyping`), with the chat
   * and when it came (epoch ms, the fake's clock).
   */
  readonly typing: { state: "start" | "stop"; session: string; chatId: string; at: number }[] = [];
  /**
   * The LID → phone number mappings WAHA knows (`lid` `<digits>@lid` → `pn` `<digits>@c.us`, or
   * null: a LID WAHA holds without a number), as `GET /api/{session}/lids/{lid}` answers them
   * ({@link mapLid}). A LID not listed answers as one without a number.
   */
  readonly lids = new Map<string, string | null>();
  /** While true, typing calls answer 500 (an engine failure) and are not recorded in {@link typing}. */
  typingFault = false;
  down = false;
  sendFault: SendFault | SendFaultPlan | null = null;
  private counter = 0;

  /** Registers the fake's handlers on the test network. */
  install(): this {
    const route = (
      method: "get" | "post" | "put" | "delete",
      path: string,
      answer: (
        params: Record<string, string>,
        body: Record<string, unknown>,
        url: URL,
      ) => Response | Promise<Response>,
    ) =>
      http[method](`${WAHA_URL}${path}`, async ({ request, params }) => {
        const url = new URL(request.url);
        const label = `${request.method} ${url.pathname}`;
        this.calls.push(label);
        const text = request.method === "GET" || request.method === "DELETE" ? "" : await request.text();
        const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        this.bodies.push({ call: label, body });
        if (this.down) return HttpResponse.json({ error: "unavailable" }, { status: 503 });
        return answer(params as Record<string, string>, body, url);
      });
    network.use(
      route("post", "/api/sessions", (_p, body) => {
        const name = String(body.name);
        const config = body.config as { webhooks?: unknown } | undefined;
        this.sessions.set(name, {
          status: "SCAN_QR_CODE",
          me: null,
          qrCount: 0,
          webhooks: config?.webhooks,
          engine: "NOWEB",
          reachoutTimelock: null,
          messageCapping: null,
        });
        return HttpResponse.json({ name, status: "STARTING" }, { status: 201 });
      }),
      route("get", "/api/sessions/:name", ({ name = "" }) => {
        const found = this.sessions.get(name);
        if (!found) return HttpResponse.json({ message: "Session not found" }, { status: 404 });
        // `MeInfo` with WAHA's limit fields (null until seen or fetched).
        const me = found.me && {
          ...found.me,
          reachoutTimelock: found.reachoutTimelock ?? null,
          messageCapping: found.messageCapping ?? null,
        };
        return HttpResponse.json({
          name,
          status: found.status,
          me,
          engine: { engine: found.engine ?? "NOWEB" },
        });
      }),
      // GOWS only (devlikeapro/waha#2186); other engines answer 501 as WAHA's "not implemented".
      route("get", "/api/sessions/:name/capping", ({ name = "" }) =>
        this.withSession(name, (s) => {
          if (s.engine !== "GOWS")
            return HttpResponse.json({ message: "Not implemented in this engine" }, { status: 501 });
          if (s.status !== "WORKING")
            return HttpResponse.json({ message: "Session is not WORKING" }, { status: 422 });
          return HttpResponse.json(s.messageCapping ?? NO_CAP);
        }),
      ),
      route("post", "/api/sessions/:name/start", ({ name = "" }) =>
        this.withSession(name, (s) => {
          s.status = s.me ? "WORKING" : "SCAN_QR_CODE";
          return HttpResponse.json({ name, status: "STARTING" }, { status: 201 });
        }),
      ),
      route("post", "/api/sessions/:name/stop", ({ name = "" }) =>
        this.withSession(name, (s) => {
          s.status = "STOPPED";
          return HttpResponse.json({ name, status: "STOPPED" }, { status: 201 });
        }),
      ),
      route("post", "/api/sessions/:name/logout", ({ name = "" }) =>
        this.withSession(name, (s) => {
          s.me = null;
          return HttpResponse.json({ name, status: s.status }, { status: 201 });
        }),
      ),
      route("delete", "/api/sessions/:name", ({ name = "" }) =>
        this.withSession(name, () => {
          this.sessions.delete(name);
          return new HttpResponse(null, { status: 200 });
        }),
      ),
      route("get", "/api/:name/auth/qr", ({ name = "" }) =>
        this.withSession(name, (s) => {
          if (s.status !== "SCAN_QR_CODE") {
            return HttpResponse.json(
              { message: "Can get QR code only in SCAN_QR_CODE status" },
              { status: 422 },
            );
          }
          s.qrCount += 1;
          return HttpResponse.json({ value: this.qrOf(name, s.qrCount) });
        }),
      ),
      route("post", "/api/:name/auth/request-code", ({ name = "" }) =>
        this.withSession(name, () => HttpResponse.json({ code: "WAHA-C0DE" }, { status: 201 })),
      ),
      // "Contacts → API - Lids → Get Phone Number by LID" (devlikeapro/waha-docs
      // content/docs/how-to/contacts/index.md; OpenAPI static/swagger/openapi.json, WAHA 2026.7.1:
      // `GET /api/{session}/lids/{lid}`, `LidToPhoneNumber` `{ lid, pn }`). "Remember to escape `@`
      // in `lid` with `%40` (`123123%40lid`) or use just a number (`123123`)"; "Response (Not
      // Found)" is `{ lid, pn: null }`. A value that is neither form is refused (400).
      route("get", "/api/:name/lids/:lid", ({ name = "", lid = "" }) => {
        const value = decodeURIComponent(lid);
        if (!/^\d{1,32}(?:@lid)?$/.test(value))
          return HttpResponse.json({ message: `bad lid: ${value}` }, { status: 400 });
        const full = value.endsWith("@lid") ? value : `${value}@lid`;
        return this.withSession(name, (session) => {
          if (session.status !== "WORKING")
            return HttpResponse.json(
              { message: `Session status is not as expected: ${session.status}` },
              { status: 422 },
            );
          return HttpResponse.json({ lid: full, pn: this.lids.get(full) ?? null });
        });
      }),
      // "Check phone number is registered in WhatsApp" (OpenAPI: `phone` and `session` required;
      // `WANumberExistResult` without `chatId` when the number does not exist). A number ending in
      // 0000 is not on WhatsApp.
      route("get", "/api/contacts/check-exists", (_p, _b, url) => {
        const phone = url.searchParams.get("phone") ?? "";
        const name = url.searchParams.get("session") ?? "";
        const unknown = [...url.searchParams.keys()].find((key) => key !== "phone" && key !== "session");
        if (unknown || !/^\d{6,15}$/.test(phone))
          return HttpResponse.json({ message: `bad query: ${unknown ?? "phone"}` }, { status: 400 });
        return this.withSession(name, (session) => {
          if (session.status !== "WORKING") {
            return HttpResponse.json(
              { message: `Session status is not as expected: ${session.status}` },
              { status: 422 },
            );
          }
          this.checked.push(phone);
          if (phone.endsWith("0000")) return HttpResponse.json({ numberExists: false });
          return HttpResponse.json({ numberExists: true, chatId: `${phone}@c.us` });
        });
      }),
      // "Chatting → Start typing / Stop typing": `ChatRequest` `{ session, chatId }`, both required
      // (devlikeapro/waha's src/structures/chatting.dto.ts); WAHA answers `{ result: true }` once the
      // session works.
      ...(["start", "stop"] as const).map((state) =>
        route("post", `/api/${state}Typing`, (_p, body) => {
          const refused =
            Object.keys(body).find((field) => field !== "session" && field !== "chatId") ??
            ["session", "chatId"].find((field) => typeof body[field] !== "string" || !body[field]);
          if (refused)
            return HttpResponse.json(
              { message: `property ${refused} is refused or missing` },
              { status: 422 },
            );
          if (!/^(?:\d{6,15}@c\.us|\d{1,32}@lid)$/.test(String(body.chatId)))
            return HttpResponse.json(
              { message: "chatId must be <digits>@c.us or <digits>@lid" },
              { status: 422 },
            );
          return this.withSession(String(body.session), (session) => {
            if (session.status !== "WORKING")
              return HttpResponse.json(
                { message: `Session status is not as expected: ${session.status}` },
                { status: 422 },
              );
            if (this.typingFault) return HttpResponse.text("engine crashed", { status: 500 });
            this.typing.push({
              state,
              session: String(body.session),
              chatId: String(body.chatId),
              at: Date.now(),
            });
            return HttpResponse.json({ result: true }, { status: 201 });
          });
        }),
      ),
      ...Object.keys(SEND_FIELDS).map((endpoint) =>
        route("post", `/api/${endpoint}`, (_p, body) => this.send(endpoint, body)),
      ),
      // "Send messages → Send seen": `SendSeenRequest` (WAHA's OpenAPI document, 2026.7.1): `chatId`
      // and `session` required; `messageIds` (strings: the serialised ids), `messageId` (deprecated)
      // and `participant` ("NOWEB engine only", groups) optional; nothing else. Answers 201 `{}`.
      route("post", "/api/sendSeen", (_p, body) => this.sendSeen(body)),
      // "Chats → Delete / Edit message": `/api/{session}/chats/{chatId}/messages/{messageId}`, the
      // message id in `{fromMe}_{chat}_{message_id}` form; an edit's body is `EditMessageRequest`
      // (`text` required; `linkPreview`, `linkPreviewHighQuality`). Only a message the fake sent.
      ...(["delete", "put"] as const).map((method) =>
        route(
          method,
          "/api/:name/chats/:chatId/messages/:messageId",
          ({ name = "", chatId = "", messageId = "" }, body) => {
            const chat = decodeURIComponent(chatId);
            const id = decodeURIComponent(messageId);
            if (method === "put") {
              const refused =
                Object.keys(body).find(
                  (field) => !["text", "linkPreview", "linkPreviewHighQuality"].includes(field),
                ) ?? (typeof body.text === "string" ? undefined : "text");
              if (refused)
                return HttpResponse.json(
                  { message: `property ${refused} is refused or missing` },
                  { status: 422 },
                );
            }
            return this.withSession(name, () => {
              const sent = this.sent.find((s) => s.id === id && s.chatId === chat);
              if (!sent) return HttpResponse.json({ message: "Message not found" }, { status: 404 });
              if (method === "delete") this.deleted.push({ session: name, chatId: chat, messageId: id });
              else this.edited.push({ session: name, chatId: chat, messageId: id, text: String(body.text) });
              return HttpResponse.json({}, { status: 200 });
            });
          },
        ),
      ),
      // "Chatting → React to a message with an emoji" (`MessageReactionRequest`: `session`,
      // `messageId`, `reaction`, all required; "" removes the reaction). NOWEB answers the
      // reaction message Baileys sent (`sock.sendMessage`): its `key`.
      route("put", "/api/reaction", (_p, body) => this.react(body)),
      // "Chats → Get messages in chat": our stored messages of the chat, newest first.
      route("get", "/api/:name/chats/:chatId/messages", ({ name = "", chatId = "" }, _b, url) => {
        const unknown = [...url.searchParams.keys()].find((key) => !LIST_PARAMS.includes(key));
        const limit = Number(url.searchParams.get("limit"));
        if (unknown || !Number.isInteger(limit) || limit < 1) {
          return HttpResponse.json({ message: `bad query: ${unknown ?? "limit"}` }, { status: 400 });
        }
        if (!this.sessions.has(name))
          return HttpResponse.json({ message: "Session not found" }, { status: 404 });
        const gte = Number(url.searchParams.get("filter.timestamp.gte") ?? 0);
        const offset = Number(url.searchParams.get("offset") ?? 0);
        const messages = this.sent
          .filter((s) => s.chatId === decodeURIComponent(chatId) && s.message.timestamp >= gte)
          .map((s) => s.message)
          .reverse();
        return HttpResponse.json(messages.slice(offset, offset + limit));
      }),
      // "Receive messages → Media Files": the files WAHA downloaded, at `media.url`
      // (`<WAHA_BASE_URL>/api/files/<session>/<file>`), behind the API key like every endpoint.
      http.get(`${WAHA_URL}/api/files/*`, ({ request }) => {
        const url = new URL(request.url);
        this.calls.push(`GET ${url.pathname}`);
        if (request.headers.get("X-Api-Key") !== WAHA_API_KEY)
          return HttpResponse.json({ message: "Unauthorized", statusCode: 401 }, { status: 401 });
        if (this.down) return HttpResponse.json({ error: "unavailable" }, { status: 503 });
        const file = this.files.get(url.pathname);
        if (!file) return HttpResponse.json({ message: "Not Found", statusCode: 404 }, { status: 404 });
        return HttpResponse.arrayBuffer(file.bytes.slice().buffer, {
          headers: { "Content-Type": file.mimetype },
        });
      }),
    );
    return this;
  }

  /**
   * WAHA downloads an incoming message's media: the file is served at `/api/files/<session>/<name>`
   * (with the API key). @returns its `media.url` as WAHA's `message` event carries it.
   */
  receiveFile(session: string, name: string, bytes: Uint8Array, mimetype: string): string {
    const path = `/api/files/${session}/${name}`;
    this.files.set(path, { bytes, mimetype });
    return `${WAHA_URL}${path}`;
  }

  /**
   * `POST /api/sendSeen`: checked against `SendSeenRequest` (its fields, their types, the required
   * ones; `chatId` a user's chat), then recorded in {@link seen} once the session works. Each id in
   * `messageIds` (or `messageId`) must be a serialised message id of `chatId`, as in the docs'
   * example ("Send messages → Send seen"): WAHA does not refuse another chat's id, but NOWEB reads
   * the chat from each id, so such a request would mark a message of another chat; the fake fails it.
   */
  private sendSeen(body: Record<string, unknown>): Response {
    const refuse = (message: string) => HttpResponse.json({ message }, { status: 422 });
    const unknown = Object.keys(body).find(
      (field) => !["session", "chatId", "messageIds", "messageId", "participant"].includes(field),
    );
    if (unknown) return refuse(`property ${unknown} should not exist`);
    const missing = ["session", "chatId"].find((field) => typeof body[field] !== "string" || !body[field]);
    if (missing) return refuse(`${missing} must be a string`);
    const chatId = String(body.chatId);
    if (!USER_CHAT_ID.test(chatId)) return refuse("chatId is not a user's chat id");
    if (body.participant !== undefined && typeof body.participant !== "string")
      return refuse("participant must be a string");
    const ids = body.messageIds;
    if (ids !== undefined && !(Array.isArray(ids) && ids.every((id) => typeof id === "string")))
      return refuse("each value in messageIds must be a string");
    if (body.messageId !== undefined && typeof body.messageId !== "string")
      return refuse("messageId must be a string");
    const named = [
      ...(Array.isArray(ids) ? ids.map(String) : []),
      ...(body.messageId ? [String(body.messageId)] : []),
    ];
    const stranger = named.find((id) => !SERIALIZED_ID.test(id) || id.split("_")[1] !== chatId);
    if (stranger) return refuse(`${stranger} is not a message id of chat ${chatId}`);
    return this.withSession(String(body.session), (session) => {
      if (session.status !== "WORKING") return refuse(`Session status is not as expected: ${session.status}`);
      this.seen.push({ session: String(body.session), chatId, messageIds: named });
      return HttpResponse.json({}, { status: 201 });
    });
  }

  /** `PUT /api/reaction`: checked, recorded, then answered as `sendFault` says (`lost`: after recording). */
  private async react(body: Record<string, unknown>): Promise<Response> {
    const refused =
      Object.keys(body).find((field) => !["session", "messageId", "reaction"].includes(field)) ??
      ["session", "messageId", "reaction"].find((field) => typeof body[field] !== "string");
    if (refused)
      return HttpResponse.json({ message: `property ${refused} is refused or missing` }, { status: 422 });
    const messageId = String(body.messageId);
    const match = messageId.match(/^(?:true|false)_(\d+@(?:c\.us|lid))_/);
    if (!SERIALIZED_ID.test(messageId) || !match)
      return HttpResponse.json({ message: "messageId is not a serialised message id" }, { status: 422 });
    const fault = typeof this.sendFault === "function" ? this.sendFault(body) : this.sendFault;
    if (fault === "error") return HttpResponse.text("engine crashed", { status: 500 });
    this.counter += 1;
    const keyId = `3EB0${String(this.counter).padStart(16, "0")}`;
    const chat = match[1] ?? "";
    this.reactions.push({
      session: String(body.session),
      messageId,
      reaction: String(body.reaction),
      id: `true_${chat}_${keyId}`,
    });
    if (fault === "lost") return HttpResponse.error();
    return HttpResponse.json(
      {
        key: { remoteJid: chat.replace("@c.us", "@s.whatsapp.net"), fromMe: true, id: keyId },
        message: { reactionMessage: { text: body.reaction } },
        messageTimestamp: Math.floor(Date.now() / 1000),
        status: "PENDING",
      },
      { status: 200 },
    );
  }

  /** A send: checked, stored under the text's `id` or a fake one, then answered as `sendFault` says. */
  private async send(endpoint: string, body: Record<string, unknown>): Promise<Response> {
    const fields = SEND_FIELDS[endpoint] ?? { allowed: [], required: [] };
    const refused =
      Object.keys(body).find((field) => !fields.allowed.includes(field)) ??
      fields.required.find((field) => body[field] === undefined);
    if (refused)
      return HttpResponse.json({ message: `property ${refused} is refused or missing` }, { status: 422 });
    if (typeof body.chatId !== "string" || !USER_CHAT_ID.test(body.chatId))
      return HttpResponse.json({ message: "chatId is not a user's chat id" }, { status: 422 });
    const fileProblem = body.file === undefined ? null : remoteFileProblem(body.file);
    if (fileProblem) return HttpResponse.json({ message: fileProblem }, { status: 422 });
    // `MessageLocationRequest`: `latitude` and `longitude` "type": "number", `title` a string; and
    // `id` ("Pre-generated message id", on it and `MessageTextRequest`) a string.
    if (
      endpoint === "sendLocation" &&
      (typeof body.latitude !== "number" ||
        typeof body.longitude !== "number" ||
        typeof body.title !== "string")
    )
      return HttpResponse.json(
        { message: "latitude and longitude must be numbers, title a string" },
        { status: 422 },
      );
    if (body.id !== undefined && typeof body.id !== "string")
      return HttpResponse.json({ message: "id must be a string" }, { status: 422 });
    const cardsProblem = endpoint === "sendContactVcard" ? contactsProblem(body.contacts) : null;
    if (cardsProblem) return HttpResponse.json({ message: cardsProblem }, { status: 422 });
    const listProblem = endpoint === "sendList" ? listMessageProblem(body.message) : null;
    if (listProblem) return HttpResponse.json({ message: listProblem }, { status: 422 });
    const pollBodyProblem = endpoint === "sendPoll" ? pollProblem(body.poll) : null;
    if (pollBodyProblem) return HttpResponse.json({ message: pollBodyProblem }, { status: 422 });
    // "`POST /api/sendList`": NOWEB and GOWS alone (the engines' table, "Send messages"); another
    // engine answers WAHA's 501 "Not Implemented" (as devlikeapro/waha#2069 shows it).
    const engine = this.sessions.get(String(body.session))?.engine ?? "NOWEB";
    if (endpoint === "sendList" && engine !== "NOWEB" && engine !== "GOWS")
      return HttpResponse.json(
        {
          message: `The method is not implemented by '${engine}' engine. Check the docs and try another engine: https://waha.devlike.pro/`,
          error: "Not Implemented",
          statusCode: 501,
        },
        { status: 501 },
      );
    // `reply_to`: "The ID of the message to reply to - false_11111111111@c.us_AAAAAAAAAAAAAAAAAAAA".
    if (
      body.reply_to !== undefined &&
      !(typeof body.reply_to === "string" && SERIALIZED_ID.test(body.reply_to))
    )
      return HttpResponse.json({ message: "reply_to is not a serialised message id" }, { status: 422 });
    const fault = typeof this.sendFault === "function" ? this.sendFault(body) : this.sendFault;
    if (fault === "error") return HttpResponse.text("engine crashed", { status: 500 });
    if (fault === "timelock")
      return HttpResponse.json(
        { statusCode: 500, exception: { message: "2 UNKNOWN: server returned error 463", code: 2 } },
        { status: 500 },
      );
    if (fault === "hang") {
      await delay(GATEWAY_TIMEOUT_MS + 300);
      return HttpResponse.text("too late", { status: 500 });
    }
    const chatId = String(body.chatId);
    const given = typeof body.id === "string" ? `true_${chatId}_${body.id}` : null;
    const known = given ? this.sent.find((s) => s.id === given) : undefined;
    let sent = known;
    if (!sent) {
      this.counter += 1;
      const id = given ?? `true_${chatId}_3EB0${String(this.counter).padStart(16, "0")}`;
      const file = body.file as { url?: string } | undefined;
      sent = {
        id,
        path: `/api/${endpoint}`,
        chatId,
        body,
        message: {
          id,
          timestamp: Math.floor(Date.now() / 1000),
          from: chatId,
          fromMe: true,
          to: chatId,
          // A list's `body` is "": WAHA's document does not say what a list's `WAMessage` holds.
          body: String(body.text ?? body.caption ?? ""),
          hasMedia: file !== undefined,
          ...(endpoint === "sendLocation"
            ? {
                location: {
                  latitude: String(body.latitude),
                  longitude: String(body.longitude),
                  live: false,
                  ...(body.title ? { name: String(body.title) } : {}),
                },
              }
            : {}),
          ...(endpoint === "sendContactVcard"
            ? { vCards: (body.contacts as { vcard: string }[]).map((c) => c.vcard) }
            : {}),
        },
      };
      this.sent.push(sent);
    }
    this.relayed.push(sent.id);
    if (fault === "lost") return HttpResponse.error();
    if (fault === "garbage") return HttpResponse.text("<html>502</html>", { status: 201 });
    // `sendList` answers an untyped `object`, the engine's own: NOWEB's is the message Baileys
    // sent, with its `key` (as for a reaction); the fake's other answers are the `WAMessage`.
    if (endpoint === "sendList" && engine === "NOWEB")
      return HttpResponse.json(
        {
          key: {
            remoteJid: chatId.replace("@c.us", "@s.whatsapp.net"),
            fromMe: true,
            id: sent.id.split("_")[2],
          },
          messageTimestamp: sent.message.timestamp,
          status: "PENDING",
        },
        { status: 201 },
      );
    return HttpResponse.json(sent.message, { status: 201 });
  }

  /**
   * WAHA learns (or, with `phone` null, holds without a number) LID `lid` (`<digits>@lid`): its
   * lids endpoint answers `pn` `<digits of phone>@c.us`, or null.
   */
  mapLid(lid: string, phone: string | null): void {
    this.lids.set(lid, phone === null ? null : `${phone.replace("+", "")}@c.us`);
  }

  /** The QR payload the fake shows the `n`th time session `name` is asked for one. */
  qrOf(name: string, n: number): string {
    return `2@fake-qr-${name}-${n}`;
  }

  /** A phone links session `name` (the state changes; WAHA's webhook is sent separately). */
  link(name: string, phone: string, pushName = "Fake Phone"): void {
    const found = this.sessions.get(name);
    if (!found) throw new Error(`fake WAHA has no session ${name}`);
    found.status = "WORKING";
    found.me = { id: `${phone.replace("+", "")}@c.us`, pushName };
  }

  private withSession(name: string, answer: (session: FakeSession) => Response): Response {
    const found = this.sessions.get(name);
    return found ? answer(found) : HttpResponse.json({ message: "Session not found" }, { status: 404 });
  }
}

/**
 * Lower-case hex HMAC-SHA512 of `body` under `key`, as WAHA signs webhook calls; computed with
 * node:crypto, independently of the service's own code.
 */
export function wahaSignature(body: string, key = WAHA_WEBHOOK_HMAC_KEY): string {
  return createHmac("sha512", key).update(body).digest("hex");
}

let eventCounter = 0;

/**
 * Posts a WAHA webhook event (the documented envelope) for `session` to our events endpoint,
 * signed unless `signature` is given (null sends none).
 */
export async function postWahaEvent(
  session: string,
  event: string,
  payload: unknown,
  options: { timestamp?: number; me?: unknown; signature?: string | null } = {},
) {
  eventCounter += 1;
  const body = JSON.stringify({
    id: `evt_${String(eventCounter).padStart(26, "0")}`,
    timestamp: options.timestamp ?? Date.now(),
    session,
    metadata: {},
    engine: "NOWEB",
    event,
    payload,
    me: options.me ?? null,
    environment: { tier: "PLUS", version: "2026.11.1", engine: "NOWEB", browser: null },
  });
  const signature = options.signature === undefined ? wahaSignature(body) : options.signature;
  const headers: Record<string, string> = { "X-Webhook-Request-Id": `req_${eventCounter}` };
  if (signature !== null) {
    headers["X-Webhook-Hmac"] = signature;
    headers["X-Webhook-Hmac-Algorithm"] = "sha512";
  }
  return call<{ success: boolean; ignored: boolean }>("POST", "/gateway/waha/events", { body, headers });
}

/** The phone the tests' WAHA sessions link, and WAHA's `me` for it. */
export const WAHA_PHONE = "+14155552671";
export const WAHA_ME = { id: "14155552671@c.us", pushName: "Ada" };

/**
 * A session of the account of `key` on WAHA, linked: `waha` links the phone {@link WAHA_PHONE},
 * and WAHA posts `session.status` `WORKING` with {@link WAHA_ME}. Its uuid and WAHA session name.
 */
export async function connectedWahaSession(
  waha: FakeWaha,
  key: string,
): Promise<{ id: string; name: string }> {
  const { session } = await createSession(key);
  const name = session.session_id;
  waha.link(name, WAHA_PHONE, WAHA_ME.pushName);
  await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: WAHA_ME });
  return { id: session.id, name };
}

/**
 * A `message` event's payload (`WAMessage`) from `from` (digits) replying to the message whose own
 * id is `quotedId` (`replyTo: ReplyToMessage`, `id` without chat or sender), as NOWEB sends it.
 */
export function wahaReplyPayload(from: string, body: string, quotedId: string, id = "AAAR1") {
  return {
    id: `false_${from}@c.us_${id}`,
    timestamp: Math.floor(Date.now() / 1000),
    from: `${from}@c.us`,
    fromMe: false,
    body,
    hasMedia: false,
    replyTo: { id: quotedId, participant: `${from}@c.us`, body: "the quoted text" },
  };
}

/**
 * A `message.reaction` event's payload (`WAMessageReaction`): `from` (digits) set `text` ("" to
 * remove) on the message with serialised id `messageId`.
 */
export function wahaReactionPayload(from: string, messageId: string, text: string, id = "AAAX1") {
  return {
    id: `false_${from}@c.us_${id}`,
    timestamp: Math.floor(Date.now() / 1000),
    from: `${from}@c.us`,
    fromMe: false,
    participant: null,
    reaction: { text, messageId },
  };
}

/**
 * A `message` event's payload (`WAMessage`) from a LID chat, `lid` (`<digits>@lid`), as NOWEB sends
 * it: `from` and the id's chat are the LID, and nothing in it gives the phone number (WAHA's
 * `WAMessage` has no such field: OpenAPI document, devlikeapro/waha-docs static/swagger/openapi.json;
 * adding one is devlikeapro/waha#993); `_data` is NOWEB's raw message, `{ key: { remoteJid, fromMe,
 * id }, messageTimestamp, pushName, broadcast, message }` (content/docs/engines/noweb/index.md
 * there, "Get messages"; the webhook of devlikeapro/waha#1073), with `pushName` when `pushName` is
 * given. The number, when WAHA knows it, comes from the lids endpoint ({@link FakeWaha.mapLid}).
 */
export function wahaLidMessagePayload(
  lid: string,
  body: string,
  options: { id?: string; pushName?: string } = {},
) {
  const id = options.id ?? "297A4A9CC7BD7B111D49B72C8832D6D3";
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    id: `false_${lid}_${id}`,
    timestamp,
    from: lid,
    fromMe: false,
    source: "app",
    body,
    hasMedia: false,
    media: null,
    ack: 2,
    ackName: "DEVICE",
    replyTo: null,
    _data: {
      key: { remoteJid: lid, fromMe: false, id },
      messageTimestamp: timestamp,
      ...(options.pushName ? { pushName: options.pushName } : {}),
      broadcast: false,
      message: { conversation: body },
    },
  };
}

/**
 * A `message` event's payload (`WAMessage`): a text `body` from the contact `chat` (`<digits>@c.us`,
 * or a LID `<digits>@lid`) whose own id is `id`, as NOWEB sends it (`id` serialised
 * `false_<chat>_<id>`).
 */
export function wahaTextPayload(chat: string, body: string, id: string) {
  return {
    id: `false_${chat}_${id}`,
    timestamp: Math.floor(Date.now() / 1000),
    from: chat,
    fromMe: false,
    source: "app",
    to: WAHA_ME.id,
    body,
    hasMedia: false,
    media: null,
    ack: 2,
    ackName: "DEVICE",
    replyTo: null,
  };
}

/**
 * A `message.edited` event's payload (`WAMessageEditedBody`, WAHA's OpenAPI document,
 * devlikeapro/waha-docs static/swagger/openapi.json; "Events → message.edited" there): the edit
 * itself as a `WAMessage` from the contact `chat`, its own id `false_<chat>_<editId>` ("It's not
 * the edited message"), `body` the new text, and `editedMessageId` the edited message's own id
 * "in format `{messageId}`, without `chatId`". `fromMe` true: an edit the session's phone made.
 */
export function wahaEditedPayload(
  chat: string,
  editedMessageId: string,
  body: string,
  options: { editId?: string; fromMe?: boolean } = {},
) {
  const fromMe = options.fromMe ?? false;
  return {
    id: `${fromMe}_${chat}_${options.editId ?? "AAAE1"}`,
    timestamp: Math.floor(Date.now() / 1000),
    from: chat,
    fromMe,
    source: "app",
    to: WAHA_ME.id,
    body,
    hasMedia: false,
    mediaUrl: null,
    ack: 2,
    ackName: "DEVICE",
    editedMessageId,
    _data: {},
  };
}

/**
 * A `message.revoked` event's payload (`WAMessageRevokedBody`; "Events → message.revoked"): `after`,
 * the revoke itself as a `WAMessage` from the contact `chat` (its own id, "not the revoked
 * message"), `revokedMessageId` the deleted message's own id without chat, and `before` null ("is
 * `null` in most cases"). `fromMe` true: a delete the session's phone made.
 */
export function wahaRevokedPayload(
  chat: string,
  revokedMessageId: string,
  options: { revokeId?: string; fromMe?: boolean } = {},
) {
  const fromMe = options.fromMe ?? false;
  return {
    after: {
      id: `${fromMe}_${chat}_${options.revokeId ?? "AAAV1"}`,
      timestamp: Math.floor(Date.now() / 1000),
      from: chat,
      fromMe,
      source: "app",
      to: WAHA_ME.id,
      body: "",
      hasMedia: false,
      mediaUrl: null,
      ack: 2,
      ackName: "DEVICE",
      _data: {},
    },
    revokedMessageId,
    before: null,
    _data: {},
  };
}
