import { delay, HttpResponse, http } from "msw";
import { evolutionInstanceToken } from "../../src/gateways/evolution/events";
import { EVOLUTION_API_KEY, EVOLUTION_URL, GATEWAY_TIMEOUT_MS, PUBLIC_URL } from "../gateway-config";
import { call } from "../helpers";
import { network } from "../network";

type State = "open" | "connecting" | "close";

interface FakeInstance {
  id: string;
  state: State;
  /** The token given at create (`POST /instance/create` `token`). */
  token: string;
  /** The linked phone's JID (`<digits>@s.whatsapp.net`) and WhatsApp name, once a phone linked. */
  ownerJid: string | null;
  profileName: string | null;
  qrCount: number;
  /** The number a `connect` of a `close` instance was started with: its QRs carry a pairing code. */
  pairingNumber: string | null;
  webhook: unknown;
}

/**
 * A message the fake sent and stored through a send endpoint; `id` is its `key.id` (the body's
 * `messageId` when given). `record` is the row `POST /chat/findMessages` answers.
 */
export interface SentMessage {
  id: string;
  instance: string;
  path: string;
  remoteJid: string;
  body: Record<string, unknown>;
  record: StoredRecord;
}

/** A stored message as `fetchMessages` selects it (whatsapp.baileys.service.ts). */
export interface StoredRecord {
  id: string;
  /** `deleted` true once deleted for everyone (`deleteMessage`'s logical delete). */
  key: { remoteJid: string; fromMe: boolean; id: string; deleted?: true };
  pushName: string;
  messageType: string;
  message: Record<string, unknown>;
  messageTimestamp: number;
  instanceId: string;
  source: string;
  contextInfo: null;
  MessageUpdate: { status: string }[];
}

/**
 * How the fake's send endpoints misbehave, until set back to null: `error` answers 500 and
 * stores nothing; `hang` answers (500) only after the gateway's timeout and stores nothing;
 * `lost` stores the message, then drops the connection; `garbage` stores it, then answers 201
 * with a body that is not JSON.
 */
export type SendFault = "error" | "hang" | "lost" | "garbage";

/**
 * The media file of an incoming message Evolution holds: its `bytes`, or `length` bytes of "A"
 * made as they are read (a file too large for a test to hold).
 */
export type FakeMediaFile = { mimetype: string; mediaType: string } & (
  | { bytes: Uint8Array }
  | { length: number }
);

/** A fault chosen per send from the send's body (a mix of faults across messages); null: none. */
export type SendFaultPlan = (body: Record<string, unknown>) => SendFault | null;

/**
 * The fields each send body may carry (EvolutionAPI/evolution-api: src/api/dto/sendMessage.dto.ts,
 * `Metadata` and the endpoint's DTO), and those it must (src/validate/message.schema.ts): `required`
 * as non-empty strings, `typed` of the JSON type given (a string there may be ""). Evolution's JSON
 * schemas let unknown fields through and the service ignores them; the fake refuses them (400), so
 * a field Evolution would silently drop, such as v1's `options` object, fails a test instead.
 * `relaysMessageId` false: the channel's send does not hand `messageId` on to Baileys
 * (`locationMessage`, `buttonMessage` and `listMessage` of the Baileys channel), so the message
 * goes under an id of Baileys' choosing. `check` holds what a flat list cannot: nested fields
 * (`buttonsMessageSchema`'s buttons, `listMessageSchema`'s sections) and the channel's own rules.
 */
const METADATA = [
  "number",
  "delay",
  "quoted",
  "linkPreview",
  "mentionsEveryOne",
  "mentioned",
  "encoding",
  "notConvertSticker",
  "messageId",
];
interface SendFields {
  allowed: string[];
  required: string[];
  typed?: Record<string, "string" | "number">;
  relaysMessageId?: false;
  /** Why the rest of the body is refused (nested fields, the channel's own rules), or undefined. */
  check?: (body: Record<string, unknown>) => string | undefined;
}
const SEND_FIELDS: Record<string, SendFields> = {
  sendText: { allowed: [...METADATA, "text"], required: ["number", "text"] },
  sendMedia: {
    allowed: [
      ...METADATA,
      "mediatype",
      "mimetype",
      "caption",
      "fileName",
      "media",
      "gifPlayback",
      "gifAttribution",
    ],
    required: ["number", "mediatype", "media"],
  },
  sendWhatsAppAudio: { allowed: [...METADATA, "audio"], required: ["number", "audio"] },
  // `SendStickerDto` / `stickerMessageSchema`: `number` required, `sticker` a string (a URL or
  // base64); `mediaSticker` hands on no `messageId`.
  sendSticker: { allowed: [...METADATA, "sticker"], required: ["number", "sticker"], relaysMessageId: false },
  // `SendLocationDto` / `locationMessageSchema`: `latitude` and `longitude` numbers, `name` and
  // `address` strings (no `minLength`), all required with `number`.
  sendLocation: {
    allowed: [...METADATA, "latitude", "longitude", "name", "address"],
    required: ["number"],
    typed: { latitude: "number", longitude: "number", name: "string", address: "string" },
    relaysMessageId: false,
  },
  // `SendButtonsDto` / `buttonsMessageSchema`: only `number` required; `thumbnailUrl`, `title`,
  // `description` and `footer` strings; `buttons` checked by `buttonsRefused`.
  sendButtons: {
    allowed: [...METADATA, "thumbnailUrl", "title", "description", "footer", "buttons"],
    required: ["number"],
    check: (body) =>
      ["thumbnailUrl", "title", "description", "footer"].find(
        (field) => body[field] !== undefined && typeof body[field] !== "string",
      ) ?? buttonsRefused(body),
    relaysMessageId: false,
  },
  // `SendListDto` / `listMessageSchema`: `number`, `title`, `footerText`, `buttonText` and
  // `sections` required, the strings of any length (no `minLength`); `sections` checked by
  // `sectionsRefused`.
  sendList: {
    allowed: [...METADATA, "title", "description", "footerText", "buttonText", "sections"],
    required: ["number"],
    typed: { title: "string", footerText: "string", buttonText: "string" },
    check: (body) =>
      (body.description !== undefined && typeof body.description !== "string" ? "description" : undefined) ??
      sectionsRefused(body.sections),
    relaysMessageId: false,
  },
  // `SendContactDto` / `contactMessageSchema`: `number` and `contact` required; `contact` checked
  // by `contactRefused`. `contactMessage` hands on no options: no `messageId` is honoured.
  sendContact: {
    allowed: [...METADATA, "contact"],
    // `required` holds the strings; `contact`, also required, is checked by `contactRefused`.
    required: ["number"],
    check: (body) => contactRefused(body.contact),
    relaysMessageId: false,
  },
  // `SendPollDto` / `pollMessageSchema`: `number`, `name`, `selectableCount` and `values` required;
  // `name` a string, `selectableCount` an integer 0–10, `values` 2–10 unique strings (checked by
  // `pollRefused`). `pollMessage` hands on `quoted` but no `messageId`.
  sendPoll: {
    allowed: [...METADATA, "name", "selectableCount", "values"],
    required: ["number"],
    typed: { name: "string" },
    check: (body) => pollRefused(body),
    relaysMessageId: false,
  },
};

/**
 * Why a `sendPoll` body's `selectableCount` and `values` are refused by `pollMessageSchema`
 * (Evolution API's message.schema.ts: `selectableCount` `{ type: integer, minimum: 0, maximum: 10 }`,
 * `values` `{ type: array, minItems: 2, maxItems: 10, uniqueItems: true, items: { type: string } }`),
 * or by Baileys' `generateWAMessageContent` ("poll.selectableCount in poll should be >= 0 and <=
 * values.length", https://github.com/WhiskeySockets/Baileys src/Utils/messages.ts), or undefined.
 */
function pollRefused(body: Record<string, unknown>): string | undefined {
  const count = body.selectableCount;
  if (!Number.isInteger(count) || (count as number) < 0 || (count as number) > 10) return "selectableCount";
  const values = body.values;
  if (!Array.isArray(values) || values.length < 2 || values.length > 10) return "values";
  if (!values.every((value) => typeof value === "string")) return "values.items";
  if (new Set(values).size !== values.length) return "values (uniqueItems)";
  return (count as number) > values.length ? "selectableCount (> values)" : undefined;
}

/**
 * Why `contact` is refused by `contactMessageSchema` (Evolution API's message.schema.ts), or
 * undefined: an array of at least one unique item, each an object of `fullName` (required, not
 * empty), `phoneNumber` (required, 10 characters at least), `wuid` (digits, 10 at least),
 * `organization`, `email`, `url` strings. The schema does not forbid other properties; the fake
 * does, so a field Evolution would drop fails a test.
 */
function contactRefused(contact: unknown): string | undefined {
  if (!Array.isArray(contact) || contact.length === 0) return "contact";
  if (new Set(contact.map((c) => JSON.stringify(c))).size !== contact.length) return "contact (uniqueItems)";
  const allowed = ["fullName", "wuid", "phoneNumber", "organization", "email", "url"];
  for (const [i, item] of contact.entries()) {
    if (typeof item !== "object" || item === null) return `contact.${i}`;
    const fields = item as Record<string, unknown>;
    const other = Object.keys(fields).find((field) => !allowed.includes(field));
    if (other) return `contact.${i}.${other}`;
    const wrong = allowed.find((field) => fields[field] !== undefined && typeof fields[field] !== "string");
    if (wrong) return `contact.${i}.${wrong}`;
    if (!fields.fullName) return `contact.${i}.fullName`;
    if (String(fields.phoneNumber ?? "").length < 10) return `contact.${i}.phoneNumber`;
    if (fields.wuid !== undefined && !/^\d{10,}$/.test(String(fields.wuid))) return `contact.${i}.wuid`;
  }
  return undefined;
}

/**
 * The vCard the channel's `contactMessage` writes of one `contact` item, line for line
 * (whatsapp.baileys.service.ts): `N` and `FN` the full name, `ORG`, `EMAIL` and `URL` when given,
 * and `item1.TEL;waid=<wuid>` with the number.
 */
function evolutionVcard(contact: Record<string, string>): string {
  let result = `BEGIN:VCARD\nVERSION:3.0\nN:${contact.fullName}\nFN:${contact.fullName}\n`;
  if (contact.organization) result += `ORG:${contact.organization};\n`;
  if (contact.email) result += `EMAIL:${contact.email}\n`;
  if (contact.url) result += `URL:${contact.url}\n`;
  const wuid = contact.wuid ?? `${contact.phoneNumber?.replace(/\D/g, "")}@s.whatsapp.net`;
  return `${result}item1.TEL;waid=${wuid}:${contact.phoneNumber}\nitem1.X-ABLabel:Celular\nEND:VCARD`;
}

/** The fields of `Button` (sendMessage.dto.ts), which the fake allows in a `buttons` item. */
const BUTTON_FIELDS = [
  "type",
  "displayText",
  "id",
  "url",
  "copyCode",
  "phoneNumber",
  "currency",
  "name",
  "keyType",
  "key",
];

/**
 * Why `body.buttons` is refused, or undefined: by `buttonsMessageSchema` (an array of objects
 * with `type` one of reply, copy, url, call, pix; `displayText`, `id`, `url`, `phoneNumber`,
 * `currency`, `name`, `key` strings; `keyType` of its enum; its `isNotEmpty("id", "url",
 * "phoneNumber")` never applies, as its `if` holds only for an item without `type`, which is
 * required), then by `buttonMessage` of the Baileys channel (at least one button; reply buttons
 * at most 3 and not mixed with CTA or PIX ones; CTA at most 2; one PIX alone). The fake's own
 * rule: a `Button` field the DTO does not have is refused.
 */
function buttonsRefused(body: Record<string, unknown>): string | undefined {
  const buttons = body.buttons;
  if (buttons !== undefined && !Array.isArray(buttons)) return "buttons";
  const list: unknown[] = buttons ?? [];
  for (const [i, button] of list.entries()) {
    const refused = unknownFields(button, BUTTON_FIELDS);
    if (refused) return `buttons[${i}].${refused}`;
    const fields = button as Record<string, unknown>;
    if (typeof fields.type !== "string" || !["reply", "copy", "url", "call", "pix"].includes(fields.type))
      return `buttons[${i}].type`;
    const notString = ["displayText", "id", "url", "phoneNumber", "currency", "name", "key"].find(
      (field) => fields[field] !== undefined && typeof fields[field] !== "string",
    );
    if (notString) return `buttons[${i}].${notString}`;
    if (
      fields.keyType !== undefined &&
      !["phone", "email", "cpf", "cnpj", "random"].includes(String(fields.keyType))
    )
      return `buttons[${i}].keyType`;
  }
  const types = list.map((button) => (button as { type: string }).type);
  if (types.length === 0) return "At least one button is required";
  const cta = types.filter((type) => type === "url" || type === "call" || type === "copy").length;
  if (types.includes("reply")) {
    if (types.length > 3) return "Maximum of 3 reply buttons allowed";
    if (types.length !== types.filter((type) => type === "reply").length)
      return "Reply buttons cannot be mixed with CTA or PIX buttons";
  }
  if (types.includes("pix") && types.length > 1) return "Only one PIX button is allowed";
  if (cta > 2) return "Maximum of 2 CTA buttons allowed";
  return undefined;
}

/**
 * Why `sections` is refused by `listMessageSchema`, or undefined: an array of at least one
 * section, no two alike (`uniqueItems`); each with `title` (a string, which may be "": the
 * section's `isNotEmpty("title")` holds only for an object with no other property, and `rows` is
 * required) and `rows`, an array of at least one row, no two alike; each row with `title` and
 * `rowId` strings and `description` a string when given, all three non-empty (the row's
 * `isNotEmpty("title", "description", "rowId")` applies, as the fake allows a row no other field).
 */
function sectionsRefused(sections: unknown): string | undefined {
  const distinct = (items: unknown[]) =>
    new Set(items.map((item) => JSON.stringify(item))).size === items.length;
  if (!Array.isArray(sections) || sections.length === 0 || !distinct(sections)) return "sections";
  for (const [s, section] of sections.entries()) {
    const refused = unknownFields(section, ["title", "rows"]);
    if (refused) return `sections[${s}].${refused}`;
    const { title, rows } = section as Record<string, unknown>;
    if (typeof title !== "string") return `sections[${s}].title`;
    if (!Array.isArray(rows) || rows.length === 0 || !distinct(rows)) return `sections[${s}].rows`;
    for (const [r, row] of rows.entries()) {
      const rowRefused = unknownFields(row, ["title", "description", "rowId"]);
      if (rowRefused) return `sections[${s}].rows[${r}].${rowRefused}`;
      const fields = row as Record<string, unknown>;
      const bad = ["title", "rowId", "description"].find(
        (field) =>
          (field !== "description" || fields[field] !== undefined) &&
          (typeof fields[field] !== "string" || fields[field] === ""),
      );
      if (bad) return `sections[${s}].rows[${r}].${bad}`;
    }
  }
  return undefined;
}

/**
 * A stand-in for one Evolution API v2 server at its HTTP boundary (shapes from its documented
 * controllers, as in src/gateways/evolution/): instances with their connection state
 * (`open`/`connecting`/`close`), owner and QR codes, pairing codes, logout and delete, and the
 * send endpoints. Every call must carry the global key in `apikey` (401 otherwise); an instance
 * it does not know answers 404, as Evolution's instance guard does. Send bodies are checked
 * against Evolution's DTOs ({@link SEND_FIELDS}); a send stores the message under its
 * `messageId` (a second send with the same id stores nothing more and answers the stored
 * message), `POST /chat/findMessages` searches the stored messages, and `POST
 * /chat/whatsappNumbers` answers whether numbers are on WhatsApp (those ending in 0000 are not;
 * each call's numbers are kept in `checked`). `down` makes every call
 * answer 503; `sendFault` makes sends misbehave ({@link SendFault}), all alike or each as a
 * {@link SendFaultPlan} says. Every request is recorded as `METHOD path?query` in `calls`, with
 * its JSON body in `bodies`; every send that reached the network, as its `key.id` in `relayed`.
 * A send's `quoted` is checked against `quotedOptionsSchema`; `sendReaction` relays reactions
 * (kept in `reactions`); `sendLocation` stores a `locationMessage` under an id of its own (it
 * ignores `messageId`, as Evolution's `locationMessage` does), and so do `sendButtons` (a
 * native-flow `interactiveMessage` of `quick_reply` buttons, as `buttonMessage` makes it from
 * 2.4.0-rc1) and `sendList` (a legacy `listMessage`, as `listMessage` makes it);
 * {@link FakeEvolution.incomingTap} makes the webhook of a tap on them. `POST /chat/markMessageAsRead`
 * checks its body against `readMessageSchema` and keeps the keys it was given in `reads`.
 * `DELETE /chat/deleteMessageForEveryone` and `POST /chat/updateMessage` check their bodies
 * against `deleteMessageSchema` and `updateMessageSchema` and keep what they relayed in
 * `deletions` and `edits`; an edit changes the stored message's text, a delete marks it deleted.
 */
export class FakeEvolution {
  readonly instances = new Map<string, FakeInstance>();
  /** Media of incoming messages Evolution holds, by message id ({@link incomingImage}). */
  readonly media = new Map<string, FakeMediaFile>();
  /**
   * How `getBase64FromMediaMessage` sends its JSON: whole, with its `Content-Length`, as
   * Express's `res.json` does (`chunkChars` null, the default); or streamed in pieces of
   * `chunkChars` characters without `Content-Length` (chunked transfer, as a proxy in front of
   * Evolution may send it; a file given by `length` is always streamed, 64 KiB a piece by
   * default). `pulled` counts the bytes a reader took of streamed answers. `fault` (streamed too)
   * spoils the answer of a file given by its bytes: `garbled`, a group of its base64 turned to
   * `!!!!`; `broken`, the connection lost halfway.
   */
  readonly mediaAnswer: {
    chunkChars: number | null;
    pulled: number;
    fault: "garbled" | "broken" | null;
  } = { chunkChars: null, pulled: 0, fault: null };
  readonly calls: string[] = [];
  readonly bodies: { call: string; body: unknown }[] = [];
  readonly sent: SentMessage[] = [];
  /** The `numbers` of every `whatsappNumbers` call Evolution answered, one list per call. */
  readonly checked: string[][] = [];
  /**
   * The `key.id` of every message a send relayed, a repeat under a known id included: the fake
   * keeps one message per id, so an id listed twice is a message we sent twice.
   */
  readonly relayed: string[] = [];
  /**
   * Every presence Evolution showed (`POST /chat/sendPresence/{instance}`): the number, the
   * presence, its `delay` (ms), and when it began and ended (epoch ms, the fake's clock).
   */
  readonly presences: {
    instance: string;
    number: string;
    presence: string;
    delay: number;
    from: number;
    to: number;
  }[] = [];
  /** While true, `sendPresence` answers 400 as the Baileys channel does a failure (nothing shown). */
  presenceFault = false;
  /**
   * Every `markMessageAsRead` Evolution answered, in order, a repeat included: the instance and the
   * `readMessages` keys it handed to Baileys' `readMessages`.
   */
  readonly reads: { instance: string; keys: { remoteJid: string; fromMe: boolean; id: string }[] }[] = [];
  /**
   * Every delete for everyone Evolution relayed (`DELETE /chat/deleteMessageForEveryone/{instance}`),
   * in order, a repeat included: the instance and the key handed to Baileys as `{ delete: key }`.
   */
  readonly deletions: { instance: string; key: Record<string, unknown> }[] = [];
  /**
   * Every edit Evolution relayed (`POST /chat/updateMessage/{instance}`), in order, a repeat
   * included: the instance, the chat's JID (`createJid` of `number`), the text and the key handed
   * to Baileys as `{ text, edit: key }`.
   */
  readonly edits: { instance: string; jid: string; text: string; key: Record<string, unknown> }[] = [];
  /** Every `sendReaction` relayed, in order, a repeat included: the body and the reaction's `key.id`. */
  readonly reactions: { instance: string; body: { key: unknown; reaction: string }; id: string }[] = [];
  down = false;
  sendFault: SendFault | SendFaultPlan | null = null;
  /**
   * While `lost`, a delete for everyone or an edit is relayed (and kept in `deletions` or
   * `edits`), then the connection drops before the answer.
   */
  chatActionFault: "lost" | null = null;
  private counter = 0;

  /** Registers the fake's handlers on the test network. */
  install(): this {
    const route = (
      method: "get" | "post" | "delete",
      path: string,
      answer: (
        params: Record<string, string>,
        body: Record<string, unknown>,
        url: URL,
      ) => Response | Promise<Response>,
    ) =>
      http[method](`${EVOLUTION_URL}${path}`, async ({ request, params }) => {
        const url = new URL(request.url);
        const label = `${request.method} ${url.pathname}${url.search}`;
        this.calls.push(label);
        // Express's `json()` parser reads a DELETE's body as it does a POST's
        // (`deleteMessageForEveryone` takes its key in one).
        const text = request.method === "POST" || request.method === "DELETE" ? await request.text() : "";
        const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        this.bodies.push({ call: label, body });
        if (this.down) return HttpResponse.json({ error: "unavailable" }, { status: 503 });
        if (request.headers.get("apikey") !== EVOLUTION_API_KEY) {
          return problem(401, "Unauthorized", "Unauthorized");
        }
        return answer(params as Record<string, string>, body, url);
      });
    network.use(
      route("post", "/instance/create", (_p, body) => {
        const name = String(body.instanceName);
        if (this.instances.has(name))
          return problem(403, "Forbidden", [`This name "${name}" is already in use.`]);
        const instance: FakeInstance = {
          id: crypto.randomUUID(),
          state: "connecting",
          token: String(body.token),
          ownerJid: null,
          profileName: null,
          qrCount: 1,
          pairingNumber: null,
          webhook: body.webhook,
        };
        this.instances.set(name, instance);
        return HttpResponse.json(
          {
            instance: {
              instanceName: name,
              instanceId: instance.id,
              integration: "WHATSAPP-BAILEYS",
              webhookWaBusiness: null,
              accessTokenWaBusiness: "",
              status: "created",
            },
            hash: instance.token,
            webhook: { webhookUrl: (body.webhook as { url?: string } | undefined)?.url ?? null },
            websocket: {},
            rabbitmq: {},
            sqs: {},
            settings: { rejectCall: false, msgCall: "", groupsIgnore: false, alwaysOnline: false },
            qrcode: this.qrCode(name, instance),
          },
          { status: 201 },
        );
      }),
      // `connectToWhatsapp`: open → the state; connecting → the current QR; close → starts
      // (with the number for a pairing code) and answers the new QR.
      route("get", "/instance/connect/:name", ({ name = "" }, _b, url) =>
        this.withInstance(name, (instance) => {
          if (instance.state === "open") {
            return HttpResponse.json({ instance: { instanceName: name, state: "open" } });
          }
          if (instance.state === "close") {
            instance.state = "connecting";
            instance.qrCount += 1;
            instance.pairingNumber = url.searchParams.get("number");
          }
          return HttpResponse.json(this.qrCode(name, instance));
        }),
      ),
      route("get", "/instance/connectionState/:name", ({ name = "" }) =>
        this.withInstance(name, (instance) =>
          HttpResponse.json({ instance: { instanceName: name, state: instance.state } }),
        ),
      ),
      route("get", "/instance/fetchInstances", (_p, _b, url) => {
        const name = url.searchParams.get("instanceName") ?? "";
        return this.withInstance(name, (instance) =>
          HttpResponse.json([
            {
              id: instance.id,
              name,
              connectionStatus: instance.state,
              ownerJid: instance.ownerJid,
              profileName: instance.profileName,
              profilePicUrl: null,
              integration: "WHATSAPP-BAILEYS",
              number: null,
              token: instance.token,
              clientName: "evolution_exchange",
              disconnectionReasonCode: null,
              _count: { Message: 0, Contact: 0, Chat: 0 },
            },
          ]),
        );
      }),
      route("delete", "/instance/logout/:name", ({ name = "" }) =>
        this.withInstance(name, (instance) => {
          if (instance.state === "close") {
            return problem(400, "Bad Request", [`The "${name}" instance is not connected`]);
          }
          this.unlink(instance);
          return HttpResponse.json({
            status: "SUCCESS",
            error: false,
            response: { message: "Instance logged out" },
          });
        }),
      ),
      route("delete", "/instance/delete/:name", ({ name = "" }) =>
        this.withInstance(name, (instance) => {
          if (instance.state === "open") {
            return problem(400, "Bad Request", [`The "${name}" instance needs to be disconnected`]);
          }
          this.instances.delete(name);
          return HttpResponse.json({
            status: "SUCCESS",
            error: false,
            response: { message: "Instance deleted" },
          });
        }),
      ),
      ...Object.keys(SEND_FIELDS).map((endpoint) =>
        route("post", `/message/${endpoint}/:name`, ({ name = "" }, body) =>
          this.withInstance(name, (instance) => this.send(name, instance, endpoint, body)),
        ),
      ),
      // `sendReaction` (sendMessage.router.ts; `SendReactionDto`, `reactionMessageSchema`: `key`
      // with `id`, `remoteJid` (non-empty) and `fromMe` required, `reaction` required), relayed
      // by `sendMessageWithTyping` to `key.remoteJid`; answered 201 with the sent message.
      route("post", "/message/sendReaction/:name", ({ name = "" }, body) =>
        this.withInstance(name, (instance) => this.react(name, instance, body)),
      ),
      // `whatsappNumber` (Baileys channel): `{ numbers }` as `whatsappNumberSchema` takes it (an
      // array of at least one string, no repeats; the fake refuses other fields), an
      // `OnWhatsAppDto` per number in the order asked. A closed connection fails Baileys'
      // `onWhatsApp`, which the router answers 400. A number ending in 0000 is not on WhatsApp.
      route("post", "/chat/whatsappNumbers/:name", ({ name = "" }, body) =>
        this.withInstance(name, (instance) => {
          const numbers = body.numbers;
          const refused =
            unknownFields(body, ["numbers"]) ??
            (!Array.isArray(numbers) ||
            numbers.length === 0 ||
            numbers.some((n) => typeof n !== "string") ||
            new Set(numbers).size !== numbers.length
              ? "numbers"
              : undefined);
          if (refused)
            return problem(400, "Bad Request", [`"${refused}" must be an array of numeric strings`]);
          if (instance.state !== "open") return problem(400, "Bad Request", ["Error: Connection Closed"]);
          const asked = numbers as string[];
          this.checked.push(asked);
          return HttpResponse.json(
            asked.map((number) => ({
              jid: `${number}@s.whatsapp.net`,
              exists: !number.endsWith("0000"),
              number,
              name: undefined,
              lid: undefined,
            })),
          );
        }),
      ),
      // `sendPresence` (EvolutionAPI/evolution-api: src/api/routes/chat.router.ts; body per
      // `presenceSchema` in src/validate/chat.schema.ts: `number` a string, `delay` a number,
      // `presence` one of its enum, all three required; the fake refuses other fields). The Baileys
      // channel checks the number is on WhatsApp (400 otherwise), sends the presence, waits `delay`
      // ms, sends `paused`, and only then answers 201 `{ presence }`: the fake waits `delay` ms too.
      route("post", "/chat/sendPresence/:name", ({ name = "" }, body) =>
        this.withInstance(name, async (instance) => {
          const presences = ["unavailable", "available", "composing", "recording", "paused"];
          const refused =
            unknownFields(body, ["number", "delay", "presence"]) ??
            (typeof body.number !== "string" ? "number" : undefined) ??
            (typeof body.delay !== "number" ? "delay" : undefined) ??
            (typeof body.presence !== "string" || !presences.includes(body.presence)
              ? "presence"
              : undefined);
          if (refused) return problem(400, "Bad Request", [`"${refused}" is invalid or missing`]);
          if (instance.state !== "open") return problem(400, "Bad Request", ["Error: Connection Closed"]);
          const number = String(body.number);
          if (number.endsWith("0000") || this.presenceFault)
            return problem(400, "Bad Request", [`Error: ${JSON.stringify({ exists: false, number })}`]);
          const from = Date.now();
          await delay(Number(body.delay));
          this.presences.push({
            instance: name,
            number,
            presence: String(body.presence),
            delay: Number(body.delay),
            from,
            to: Date.now(),
          });
          return HttpResponse.json({ presence: body.presence }, { status: 201 });
        }),
      ),
      // `markMessageAsRead` (evolution-foundation/evolution-api: src/api/routes/chat.router.ts; body
      // per `readMessageSchema` in src/validate/chat.schema.ts: `readMessages` an array of at least
      // one key, no repeats, each with `id` and `remoteJid` non-empty strings and `fromMe` a
      // boolean, all required; the fake refuses other fields). The Baileys channel hands the keys
      // to `readMessages` and answers 201 `{ message: "Read messages", read: "success" }`; Baileys
      // fails on a closed connection, which it answers 500 "Read messages fail".
      route("post", "/chat/markMessageAsRead/:name", ({ name = "" }, body) =>
        this.withInstance(name, (instance) => {
          const keys = body.readMessages;
          const refused =
            unknownFields(body, ["readMessages"]) ??
            (!Array.isArray(keys) ||
            keys.length === 0 ||
            new Set(keys.map((k) => JSON.stringify(k))).size !== keys.length
              ? "readMessages"
              : undefined) ??
            (keys as unknown[]).map((key) => readKeyRefused(key)).find((field) => field !== undefined);
          if (refused) return problem(400, "Bad Request", [`"${refused}" is invalid or missing`]);
          if (instance.state !== "open")
            return problem(500, "Internal Server Error", ["Read messages fail", "Error: Connection Closed"]);
          this.reads.push({
            instance: name,
            keys: (keys as { remoteJid: string; fromMe: boolean; id: string }[]).map(
              ({ remoteJid, fromMe, id }) => ({
                remoteJid,
                fromMe,
                id,
              }),
            ),
          });
          return HttpResponse.json({ message: "Read messages", read: "success" }, { status: 201 });
        }),
      ),
      // `deleteMessageForEveryone` (EvolutionAPI/evolution-api: src/api/routes/chat.router.ts, a
      // DELETE with a JSON body; `deleteMessageSchema` of src/validate/chat.schema.ts, see
      // `deleteBodyRefused`), answered 201 by the Baileys channel's `deleteMessage`.
      route("delete", "/chat/deleteMessageForEveryone/:name", ({ name = "" }, body) =>
        this.withInstance(name, (instance) => this.deleteForEveryone(name, instance, body)),
      ),
      // `updateMessage` (chat.router.ts; `updateMessageSchema`, see `updateBodyRefused`),
      // answered 200 by the Baileys channel's `updateMessage`.
      route("post", "/chat/updateMessage/:name", ({ name = "" }, body) =>
        this.withInstance(name, (instance) => this.updateMessage(name, instance, body)),
      ),
      // `getBase64FromMediaMessage` (EvolutionAPI/evolution-api: src/api/routes/chat.router.ts,
      // `getBase64FromMediaMessageDto` `{ message, convertToMp4? }`): the media of a message
      // Evolution stored, found by `message.key.id`, answered 201 as the Baileys channel returns it;
      // an unknown one is 400.
      route("post", "/chat/getBase64FromMediaMessage/:name", ({ name = "" }, body) =>
        this.withInstance(name, () => {
          const refused = unknownFields(body, ["message", "convertToMp4"]);
          if (refused) return problem(400, "Bad Request", [refused]);
          const id = (body.message as { key?: { id?: string } } | undefined)?.key?.id ?? "";
          const media = this.media.get(id);
          if (!media) return problem(400, "Bad Request", ["Message not found"]);
          if ("length" in media || this.mediaAnswer.chunkChars !== null || this.mediaAnswer.fault)
            return new HttpResponse(this.streamedMediaAnswer(id, media), {
              status: 201,
              headers: { "Content-Type": "application/json; charset=utf-8" },
            });
          let binary = "";
          for (const byte of media.bytes) binary += String.fromCharCode(byte);
          return HttpResponse.json(
            {
              mediaType: media.mediaType,
              fileName: `${id}.bin`,
              caption: null,
              size: { fileLength: String(media.bytes.byteLength), height: null, width: null },
              mimetype: media.mimetype,
              base64: btoa(binary),
              buffer: null,
            },
            { status: 201 },
          );
        }),
      ),
      // `fetchMessages` (Baileys channel): the instance's stored messages matching `where`,
      // newest first, in pages of `offset` (50 by default).
      route("post", "/chat/findMessages/:name", ({ name = "" }, body) =>
        this.withInstance(name, () => {
          const refused =
            unknownFields(body, ["where", "page", "offset", "sort", "limit"]) ??
            unknownFields(body.where ?? {}, [
              "id",
              "_id",
              "key",
              "message",
              "messageType",
              "source",
              "messageTimestamp",
            ]) ??
            unknownFields((body.where as Record<string, unknown> | undefined)?.key ?? {}, [
              "id",
              "fromMe",
              "remoteJid",
              "remoteJidAlt",
              "participant",
            ]);
          if (refused) return problem(400, "Bad Request", [refused]);
          const records = this.sent
            .filter((s) => s.instance === name && matches(s.record, body.where))
            .map((s) => s.record)
            .sort((a, b) => b.messageTimestamp - a.messageTimestamp);
          const offset = Number(body.offset ?? 50);
          const page = Number(body.page ?? 1);
          return HttpResponse.json({
            messages: {
              total: records.length,
              pages: Math.ceil(records.length / offset),
              currentPage: page,
              records: records.slice(offset * (page - 1), offset * page),
            },
          });
        }),
      ),
    );
    return this;
  }

  /**
   * A send (`sendMessageWithTyping`): the number is looked up first (a number ending in 0000 is
   * not on WhatsApp), then the message is relayed under `messageId` or a Baileys id and stored.
   */
  private async send(
    name: string,
    instance: FakeInstance,
    endpoint: string,
    body: Record<string, unknown>,
  ): Promise<Response> {
    const fields = SEND_FIELDS[endpoint] ?? { allowed: [], required: [] };
    const refused =
      unknownFields(body, fields.allowed) ??
      fields.required.find((field) => typeof body[field] !== "string" || body[field] === "") ??
      Object.entries(fields.typed ?? {}).find(([field, type]) => typeof body[field] !== type)?.[0] ??
      fields.check?.(body) ??
      // Every send schema declares `delay` an integer (milliseconds).
      (body.delay !== undefined && !Number.isInteger(body.delay) ? "delay" : undefined);
    if (refused) return problem(400, "Bad Request", [`instance requires or refuses property "${refused}"`]);
    const quotedProblem = body.quoted === undefined ? null : quotedRefused(body.quoted);
    if (quotedProblem) return problem(400, "Bad Request", [quotedProblem]);
    if (instance.state !== "open") return problem(400, "Bad Request", ["Error: Connection Closed"]);
    const fault = typeof this.sendFault === "function" ? this.sendFault(body) : this.sendFault;
    if (fault === "error") return problem(500, "Internal Server Error", ["Error: boom"]);
    if (fault === "hang") {
      await delay(GATEWAY_TIMEOUT_MS + 300);
      return problem(500, "Internal Server Error", ["Error: Timed Out"]);
    }
    const number = String(body.number);
    const remoteJid = jidOf(number);
    // `whatsappNumber` asks the network only for phone JIDs: a `@lid` one Evolution's number cache
    // does not hold "is considered valid" and is sent to as it is (2.3.6; 2.4.0-rc never refuses one).
    if (!remoteJid.endsWith("@lid") && number.endsWith("0000")) {
      return problem(400, "Bad Request", [{ jid: remoteJid, exists: false, number }]);
    }
    // Evolution does not check `messageId` for duplicates: it relays again under the same id
    // (and stores a second row). The network keys messages by id, so the recipient holds one;
    // the fake keeps one too and answers the message it holds.
    const id =
      fields.relaysMessageId !== false && typeof body.messageId === "string" ? body.messageId : this.nextId();
    const known = this.sent.find((s) => s.instance === name && s.id === id);
    const record = known?.record ?? this.store(name, instance, endpoint, body, remoteJid, id);
    this.relayed.push(id);
    if (fault === "lost") return HttpResponse.error();
    if (fault === "garbage") {
      return new HttpResponse("<html>upstream reset</html>", {
        status: 201,
        headers: { "Content-Type": "text/html" },
      });
    }
    const { id: _rowId, MessageUpdate: _updates, ...sent } = record;
    return HttpResponse.json({ ...sent, status: "PENDING" }, { status: 201 });
  }

  /** A `sendReaction`: checked against `reactionMessageSchema`, relayed, answered as `sendFault` says. */
  private react(name: string, instance: FakeInstance, body: Record<string, unknown>): Response {
    const key = body.key as Record<string, unknown> | undefined;
    const refused =
      unknownFields(body, ["key", "reaction"]) ??
      (typeof body.reaction !== "string" ? "reaction" : undefined) ??
      unknownFields(key ?? null, ["id", "remoteJid", "fromMe"]) ??
      (["id", "remoteJid"].find((field) => typeof key?.[field] !== "string" || key[field] === "") ||
        (typeof key?.fromMe !== "boolean" ? "fromMe" : undefined));
    if (refused) return problem(400, "Bad Request", [`instance requires or refuses property "${refused}"`]);
    if (instance.state !== "open") return problem(400, "Bad Request", ["Error: Connection Closed"]);
    const fault = typeof this.sendFault === "function" ? this.sendFault(body) : this.sendFault;
    if (fault === "error") return problem(500, "Internal Server Error", ["Error: boom"]);
    const id = this.nextId();
    this.reactions.push({ instance: name, body: { key, reaction: String(body.reaction) }, id });
    if (fault === "lost") return HttpResponse.error();
    return HttpResponse.json(
      {
        key: { remoteJid: key?.remoteJid, fromMe: true, id },
        pushName: "Você",
        status: "PENDING",
        message: { reactionMessage: { key, text: body.reaction } },
        contextInfo: null,
        messageType: "reactionMessage",
        messageTimestamp: Math.floor(Date.now() / 1000),
        instanceId: instance.id,
        source: "unknown",
      },
      { status: 201 },
    );
  }

  /**
   * `deleteMessage` of the Baileys channel (EvolutionAPI/evolution-api:
   * src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts): the body's key goes to
   * Baileys as `{ delete: key }`,
   * whether or not Evolution holds the message; a closed connection fails Baileys' send, which
   * the channel answers 500 "Error while deleting message for everyone" with the error's text.
   * The stored message by `key.id` is then marked deleted (`key.deleted`, the logical delete of
   * `DATABASE_DELETE_MESSAGE=true` of its .env.example). Answered 201 with the revoke Baileys
   * sent (https://github.com/WhiskeySockets/Baileys, src/Utils/messages.ts: `protocolMessage`
   * `{ key, type: REVOKE }`).
   */
  private deleteForEveryone(name: string, instance: FakeInstance, body: Record<string, unknown>): Response {
    const refused = deleteBodyRefused(body);
    if (refused) return problem(400, "Bad Request", [refused]);
    if (instance.state !== "open")
      return problem(500, "Internal Server Error", [
        "Error while deleting message for everyone",
        "Error: Connection Closed",
      ]);
    const key = { ...body };
    this.deletions.push({ instance: name, key });
    const stored = this.sent.find((s) => s.instance === name && s.id === key.id);
    if (stored) stored.record.key.deleted = true;
    if (this.chatActionFault === "lost") return HttpResponse.error();
    return HttpResponse.json(
      {
        key: { remoteJid: key.remoteJid, fromMe: true, id: this.nextId() },
        message: { protocolMessage: { key, type: "REVOKE" } },
        messageTimestamp: Math.floor(Date.now() / 1000),
        status: "PENDING",
      },
      { status: 201 },
    );
  }

  /**
   * `updateMessage` of the Baileys channel (EvolutionAPI/evolution-api:
   * src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts), in its order:
   * 1. `formatUpdateMessage`: the message Evolution stored under `key.id` (this instance's) must
   *    be a text (`conversation`, `extendedTextMessage`), an image or a video, else 400 "Message
   *    not compatible" (so is one it does not hold);
   * 2. the stored `key.remoteJid` must be `createJid(number)`, else 400 "RemoteJid does not match";
   *    (its "older than 15 minutes" check compares the stored seconds with `Date.now() + 900000`
   *    milliseconds and never holds, so the fake has none);
   * 3. Baileys sends `{ text, edit: key }` (kept in `edits`): a closed connection throws Baileys'
   *    "Connection Closed", which Evolution's error handler (src/main.ts) answers 500 with the
   *    text as `response.message`;
   * 4. a stored message deleted for everyone, or not the session's own, is then 400 "You cannot
   *    edit deleted messages" / "You cannot edit others messages"; else the stored text (a
   *    caption for media) becomes `text` and `messageTimestamp` now, with an `EDITED` update.
   * Answered 200 with the edit Baileys sent (`protocolMessage` `{ key, type: MESSAGE_EDIT,
   * editedMessage, timestampMs }`, https://github.com/WhiskeySockets/Baileys, src/Utils/messages.ts).
   */
  private updateMessage(name: string, instance: FakeInstance, body: Record<string, unknown>): Response {
    const refused = updateBodyRefused(body);
    if (refused) return problem(400, "Bad Request", [refused]);
    const key = body.key as { id: string; remoteJid: string; fromMe: boolean };
    const text = String(body.text);
    const jid = jidOf(String(body.number));
    const stored = this.sent.find((s) => s.instance === name && s.id === key.id)?.record;
    const editable = ["conversation", "extendedTextMessage", "imageMessage", "videoMessage"];
    if (!stored || !editable.includes(stored.messageType))
      return problem(400, "Bad Request", ["Message not compatible"]);
    if (stored.key.remoteJid !== jid) return problem(400, "Bad Request", ["RemoteJid does not match"]);
    if (instance.state !== "open") return problem(500, "Internal Server Error", "Connection Closed");
    this.edits.push({ instance: name, jid, text, key: { ...key } });
    if (stored.key.deleted) return problem(400, "Bad Request", ["You cannot edit deleted messages"]);
    if (!stored.key.fromMe) return problem(400, "Bad Request", ["You cannot edit others messages"]);
    const texts = stored.messageType === "conversation" || stored.messageType === "extendedTextMessage";
    const edited = texts
      ? { extendedTextMessage: { text } }
      : { [stored.messageType]: { ...(stored.message[stored.messageType] as object), caption: text } };
    if (texts) stored.message.conversation = text;
    else stored.message = edited;
    stored.messageTimestamp = Math.floor(Date.now() / 1000);
    stored.MessageUpdate.push({ status: "EDITED" });
    if (this.chatActionFault === "lost") return HttpResponse.error();
    return HttpResponse.json({
      key: { remoteJid: jid, fromMe: true, id: this.nextId() },
      message: {
        protocolMessage: { key, type: "MESSAGE_EDIT", editedMessage: edited, timestampMs: Date.now() },
      },
      messageTimestamp: stored.messageTimestamp,
      status: "PENDING",
    });
  }

  private nextId(): string {
    this.counter += 1;
    return `BAE5${this.counter.toString(16).toUpperCase().padStart(12, "0")}`;
  }

  private store(
    name: string,
    instance: FakeInstance,
    endpoint: string,
    body: Record<string, unknown>,
    remoteJid: string,
    id: string,
  ): StoredRecord {
    const [messageType, message] = storedMessage(endpoint, body);
    const record: StoredRecord = {
      id: `cm${crypto.randomUUID().replaceAll("-", "").slice(0, 23)}`,
      key: { remoteJid, fromMe: true, id },
      pushName: "Você",
      messageType,
      message,
      messageTimestamp: Math.floor(Date.now() / 1000),
      instanceId: instance.id,
      source: "unknown",
      contextInfo: null,
      MessageUpdate: [],
    };
    this.sent.push({ id, instance: name, path: `/message/${endpoint}/${name}`, remoteJid, body, record });
    return record;
  }

  /** The QR payload (`code`) the fake shows for the `n`th QR of instance `name`. */
  qrOf(name: string, n: number): string {
    return `2@fake-qr-${name}-${n},Zm9vYmFy,YmF6cXV4`;
  }

  /** The pairing code Baileys gives instance `name` for `number` (8 characters, as Baileys does). */
  pairingCodeOf(number: string): string {
    return `WZ${number.slice(-6)}`;
  }

  /** The instance `name`, which must exist. */
  instance(name: string): FakeInstance {
    const found = this.instances.get(name);
    if (!found) throw new Error(`fake Evolution has no instance ${name}`);
    return found;
  }

  /**
   * A phone links instance `name` (the state changes; the webhook is posted separately).
   * @returns the `connection.update` data Evolution then sends.
   */
  link(name: string, phone: string, profileName = "Fake Phone") {
    const instance = this.instance(name);
    instance.state = "open";
    instance.ownerJid = `${phone.replace("+", "")}@s.whatsapp.net`;
    instance.profileName = profileName;
    instance.pairingNumber = null;
    return this.connectionUpdate(name, 200);
  }

  /**
   * The connection of instance `name` closes with Baileys `DisconnectReason` `statusReason`
   * (401 loggedOut also unlinks the phone). @returns the `connection.update` data Evolution sends.
   */
  close(name: string, statusReason: number) {
    const instance = this.instance(name);
    if (statusReason === 401) this.unlink(instance);
    else instance.state = "close";
    return this.connectionUpdate(name, statusReason);
  }

  /** `connection.update` data (`connectionUpdate` of the Baileys channel) for the current state. */
  connectionUpdate(name: string, statusReason: number) {
    const instance = this.instance(name);
    return {
      instance: name,
      wuid: instance.ownerJid,
      profileName: instance.profileName,
      profilePictureUrl: null,
      state: instance.state,
      statusReason,
    };
  }

  /** Baileys shows the next QR of instance `name`. @returns the `qrcode.updated` data. */
  rotateQr(name: string) {
    const instance = this.instance(name);
    instance.qrCount += 1;
    const { code, pairingCode, base64 } = this.qrCode(name, instance);
    return { qrcode: { instance: name, pairingCode, code, base64 } };
  }

  /** `messages.update` data for a message the fake sent (`keyId` is its `key.id`). */
  messageUpdate(id: string, status: string) {
    const sent = this.sent.find((s) => s.id === id);
    if (!sent) throw new Error(`fake Evolution sent no message ${id}`);
    return {
      keyId: id,
      remoteJid: sent.remoteJid,
      fromMe: true,
      participant: null,
      status,
      instanceId: this.instance(sent.instance).id,
      messageId: `cm${id.toLowerCase()}`,
    };
  }

  /**
   * `messages.update` data of an edit of message `id` to `text`, made in chat `chat` (a number in
   * E.164, or a `<digits>@lid`) by the contact (or, `fromMe`, by the session on its phone): Baileys'
   * `processMessage` (Baileys' process-message.ts, https://github.com/WhiskeySockets/Baileys, `MESSAGE_EDIT`) emits
   * `messages.update` with the edit's key (our side of the chat) under the edited message's id and
   * `update.message` `{ editedMessage: { message } }`; Evolution's `messages.update` handler
   * (whatsapp.baileys.service.ts) sends `{ keyId, remoteJid, fromMe, participant, status, pollUpdates,
   * instanceId, message, messageId }`, `status` "SERVER_ACK" for an update without one. `caption`
   * edits a media message's caption (`imageMessage.caption`) instead of a text.
   */
  incomingEdit(
    name: string,
    id: string,
    chat: string,
    text: string,
    options: { fromMe?: boolean; caption?: boolean } = {},
  ) {
    const content = options.caption ? { imageMessage: { caption: text } } : { extendedTextMessage: { text } };
    return {
      keyId: id,
      remoteJid: chat.endsWith("@lid") ? chat : `${chat.replace("+", "")}@s.whatsapp.net`,
      fromMe: options.fromMe ?? false,
      participant: null,
      status: "SERVER_ACK",
      instanceId: this.instance(name).id,
      message: { editedMessage: { message: content } },
      messageId: `cm${id.toLowerCase()}`,
    };
  }

  /**
   * `messages.delete` data of the deletion for everyone of message `id` in chat `chat` (E.164 or a
   * `<digits>@lid`, with `phone` its number as `remoteJidAlt` when given) by the contact (or,
   * `fromMe`, by the session on its phone): Baileys' `processMessage` (`REVOKE`) emits
   * `messages.update` `{ key: { ...<the revoke's key>, id }, update: { message: null, … } }` and
   * Evolution's handler sends `{ ...key, status: "DELETED" }` (Baileys 7's key: `remoteJid`,
   * `remoteJidAlt`, `fromMe`, `id`, `addressingMode`).
   */
  incomingRevoke(id: string, chat: string, options: { fromMe?: boolean; phone?: string } = {}) {
    const lid = chat.endsWith("@lid");
    return {
      remoteJid: lid ? chat : `${chat.replace("+", "")}@s.whatsapp.net`,
      ...(options.phone ? { remoteJidAlt: `${options.phone.replace("+", "")}@s.whatsapp.net` } : {}),
      fromMe: options.fromMe ?? false,
      id,
      addressingMode: lid ? "lid" : "pn",
      status: "DELETED",
    };
  }

  /** `messages.upsert` data (`prepareMessage`) for a text `from` (E.164) sent to instance `name`. */
  /**
   * `messages.upsert` data of an image from `from` whose media Evolution holds (served by
   * `getBase64FromMediaMessage` under the message's id).
   */
  incomingImage(
    name: string,
    id: string,
    from: string,
    bytes: Uint8Array | { length: number },
    mimetype = "image/jpeg",
  ) {
    this.media.set(
      id,
      bytes instanceof Uint8Array
        ? { bytes, mimetype, mediaType: "imageMessage" }
        : { length: bytes.length, mimetype, mediaType: "imageMessage" },
    );
    return {
      ...this.incomingText(name, id, from, ""),
      message: { imageMessage: { caption: "photo", mimetype } },
      messageType: "imageMessage",
    };
  }

  /**
   * `messages.upsert` data of a location from `from` (`messageType: "locationMessage"`, Baileys'
   * `LocationMessage`: `degreesLatitude`, `degreesLongitude`, and `name`, `address`, `url` when
   * given; `prepareMessage` passes it on as it is), or of a live location's first message
   * (`live`: `liveLocationMessage`, the point with `caption` and `sequenceNumber`, no name).
   */
  incomingLocation(
    name: string,
    id: string,
    from: string,
    location: {
      degreesLatitude?: number;
      degreesLongitude?: number;
      name?: string;
      address?: string;
      url?: string;
    },
    live = false,
  ) {
    const type = live ? "liveLocationMessage" : "locationMessage";
    // `jpegThumbnail` bytes reach the webhook as a `Uint8Array` (`deserializeMessageBuffers`), which
    // JSON writes as an object of indexed bytes.
    const thumbnail = { 0: 255, 1: 216, 2: 255 };
    const body = live
      ? {
          degreesLatitude: location.degreesLatitude,
          degreesLongitude: location.degreesLongitude,
          accuracyInMeters: 10,
          caption: "On my way",
          sequenceNumber: 1,
          jpegThumbnail: thumbnail,
        }
      : { ...location, jpegThumbnail: thumbnail };
    return { ...this.incomingText(name, id, from, ""), message: { [type]: body }, messageType: type };
  }

  /**
   * The JSON of `getBase64FromMediaMessage` for `media`, members in the Baileys channel's order
   * (`mediaType, fileName, caption, size, mimetype, base64, buffer`), made as it is read in pieces
   * of {@link mediaAnswer}'s `chunkChars` characters; every byte read is counted in `pulled`.
   */
  private streamedMediaAnswer(id: string, media: FakeMediaFile): ReadableStream<Uint8Array> {
    const size = "length" in media ? media.length : media.bytes.byteLength;
    const head = `${JSON.stringify({
      mediaType: media.mediaType,
      fileName: `${id}.bin`,
      caption: null,
      size: { fileLength: String(size), height: null, width: null },
      mimetype: media.mimetype,
    }).slice(0, -1)},"base64":"`;
    const tail = '","buffer":null}';
    const chunk = this.mediaAnswer.chunkChars ?? 64 * 1024;
    const fault = this.mediaAnswer.fault;
    const pieces = (function* (): Generator<string> {
      if (!("length" in media)) {
        let binary = "";
        for (const byte of media.bytes) binary += String.fromCharCode(byte);
        let base64 = btoa(binary);
        const middle = Math.floor(base64.length / 8) * 4;
        if (fault === "garbled") base64 = `${base64.slice(0, middle)}!!!!${base64.slice(middle + 4)}`;
        const text = head + base64 + tail;
        const end = fault === "broken" ? Math.floor(text.length / 2) : text.length;
        for (let at = 0; at < end; at += chunk) yield text.slice(at, Math.min(at + chunk, end));
        if (fault === "broken") throw new TypeError("Network connection lost.");
        return;
      }
      // `length` bytes of "A": "AAA" is "QUFB" in base64; a last byte or two are "QQ==" or "QUE=".
      yield head;
      const block = "QUFB".repeat(Math.max(1, Math.floor(chunk / 4)));
      let groups = Math.floor(media.length / 3);
      for (; groups * 4 >= block.length; groups -= block.length / 4) yield block;
      yield "QUFB".repeat(groups) + ["", "QQ==", "QUE="][media.length % 3] + tail;
    })();
    const encoder = new TextEncoder();
    return new ReadableStream<Uint8Array>({
      pull: (controller) => {
        const next = pieces.next();
        if (next.done) return controller.close();
        const bytes = encoder.encode(next.value);
        this.mediaAnswer.pulled += bytes.byteLength;
        controller.enqueue(bytes);
      },
    });
  }

  incomingText(name: string, id: string, from: string, text: string) {
    return {
      key: { remoteJid: `${from.replace("+", "")}@s.whatsapp.net`, fromMe: false, id },
      pushName: "Bruno",
      status: "DELIVERY_ACK",
      message: { conversation: text },
      contextInfo: null,
      messageType: "conversation",
      messageTimestamp: Math.floor(Date.now() / 1000),
      instanceId: this.instance(name).id,
      source: "android",
    };
  }

  /**
   * `messages.upsert` data of a text `text` from the user of LID `lid` (`<digits>@lid`), with their
   * number `phone` (E.164) when the network gave it, its key in the shape `release` emitted.
   * Sources, by path in evolution-foundation/evolution-api at each release tag:
   * src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts (`messages.upsert` of
   * `messageHandle`; `prepareMessage`, which copies Baileys' key; `ExtendedIMessageKey`).
   * - `2.3.6` (2.3.5–2.3.6, Baileys 7 keys as they come): `{ remoteJid: lid, remoteJidAlt: phone
   *   JID (only when given), addressingMode: "lid", fromMe, id }`;
   * - `2.3.2` (2.3.1–2.3.2, Baileys 6): with `senderPn`, Evolution moved the LID to
   *   `previousRemoteJid` and put `senderPn` in `remoteJid` (`{ remoteJid: phone JID, fromMe, id,
   *   senderPn: phone JID, previousRemoteJid: lid }`); without it, `{ remoteJid: lid, fromMe, id }`;
   * - `2.4.0-rc2` (develop): a `@lid` `remoteJid` with `remoteJidAlt` is swapped with it before the
   *   webhook (`{ remoteJid: phone JID, remoteJidAlt: lid, addressingMode: "pn", fromMe, id }`);
   *   without it, the Baileys key (`{ remoteJid: lid, addressingMode: "lid", fromMe, id }`).
   * `pushName` is the sender's WhatsApp name (Baileys' `pushName`), null when not given.
   */
  incomingFromLid(
    name: string,
    id: string,
    lid: string,
    text: string,
    options: { phone?: string; release?: "2.3.6" | "2.3.2" | "2.4.0-rc2"; pushName?: string | null } = {},
  ) {
    const { phone, release = "2.3.6" } = options;
    const phoneJid = phone ? `${phone.replace("+", "")}@s.whatsapp.net` : null;
    let key: Record<string, unknown>;
    if (release === "2.3.2") {
      key = phoneJid
        ? { remoteJid: phoneJid, fromMe: false, id, senderPn: phoneJid, previousRemoteJid: lid }
        : { remoteJid: lid, fromMe: false, id };
    } else if (release === "2.4.0-rc2" && phoneJid) {
      key = { remoteJid: phoneJid, remoteJidAlt: lid, addressingMode: "pn", fromMe: false, id };
    } else {
      key = {
        remoteJid: lid,
        ...(phoneJid ? { remoteJidAlt: phoneJid } : {}),
        addressingMode: "lid",
        fromMe: false,
        id,
      };
    }
    // The rest as `incomingText`'s (`prepareMessage`), under this key and name.
    const { key: _phoneKey, ...rest } = this.incomingText(name, id, "", text);
    return { key, ...rest, pushName: options.pushName === undefined ? "Bruno" : options.pushName };
  }

  /**
   * `messages.upsert` data of a text from `from` replying to message `stanzaId`: Baileys'
   * `contextInfo` of the `extendedTextMessage` (`stanzaId`, `participant`, `quotedMessage`), which
   * `prepareMessage` lifts to the top as `contextInfo` (and the text to `conversation`).
   */
  incomingReply(name: string, id: string, from: string, text: string, stanzaId: string, quotedFromMe = true) {
    const instance = this.instance(name);
    return {
      ...this.incomingText(name, id, from, text),
      contextInfo: {
        stanzaId,
        participant: quotedFromMe ? instance.ownerJid : `${from.replace("+", "")}@s.whatsapp.net`,
        quotedMessage: { conversation: "the quoted text" },
      },
    };
  }

  /**
   * `messages.upsert` data of `from`'s reaction `text` ("" to remove) on message `reactedId`
   * (`messageType: "reactionMessage"`, Baileys' `ReactionMessage`: the reacted message's key,
   * `text`, `senderTimestampMs`).
   */
  incomingReaction(name: string, id: string, from: string, reactedId: string, text: string, at = Date.now()) {
    const remoteJid = `${from.replace("+", "")}@s.whatsapp.net`;
    return {
      ...this.incomingText(name, id, from, ""),
      message: {
        reactionMessage: { key: { remoteJid, fromMe: true, id: reactedId }, text, senderTimestampMs: at },
      },
      messageType: "reactionMessage",
      messageTimestamp: Math.floor(at / 1000),
    };
  }

  /**
   * `messages.upsert` data of `from`'s tap on a button or list row of message `tap.stanzaId`
   * (`messageType` the tap's message: WAProto.proto of WhiskeySockets/Baileys), whose
   * `contextInfo` (`stanzaId`, `participant`, `quotedMessage`: the tapped message, as the fake
   * stored it when it sent it) sits inside `message`, which `prepareMessage` passes on whole. At
   * the top, `contextInfo` is what `prepareMessage` of `release` put there: from 2.4.0-rc1 (the
   * default) the message's `messageContextInfo` (device list metadata, no `stanzaId`); up to 2.3.7
   * the content's `contextInfo`.
   * - `buttons`: `buttonsResponseMessage` `{ selectedButtonId, selectedDisplayText, type: 1
   *   (DISPLAY_TEXT) }`, a legacy buttons message's tap;
   * - `template`: `templateButtonReplyMessage` `{ selectedId, selectedDisplayText, selectedIndex }`;
   * - `quickReply`: `interactiveResponseMessage` `{ body: { text, format: 0 },
   *   nativeFlowResponseMessage: { name: "quick_reply", paramsJson: '{"id":…}' } }`, the tap on a
   *   `quick_reply` button of the native-flow message `buttonMessage` sends;
   * - `list`: `listResponseMessage` `{ title, listType: 1 (SINGLE_SELECT), singleSelectReply: {
   *   selectedRowId }, description }`, the choice of a legacy list's row.
   */
  incomingTap(
    name: string,
    id: string,
    from: string,
    tap:
      | { kind: "buttons" | "template" | "quickReply"; stanzaId: string; buttonId: string; text?: string }
      | { kind: "list"; stanzaId: string; rowId: string; title: string; description?: string },
    release: "2.4.0-rc2" | "2.3.7" = "2.4.0-rc2",
  ) {
    const quoted = this.sent.find((s) => s.instance === name && s.id === tap.stanzaId);
    const context = {
      stanzaId: tap.stanzaId,
      participant: this.instance(name).ownerJid,
      quotedMessage: quoted?.record.message ?? { conversation: "" },
    };
    let messageType: string;
    let content: Record<string, unknown>;
    if (tap.kind === "list") {
      messageType = "listResponseMessage";
      content = {
        title: tap.title,
        listType: 1,
        singleSelectReply: { selectedRowId: tap.rowId },
        contextInfo: context,
        ...(tap.description === undefined ? {} : { description: tap.description }),
      };
    } else if (tap.kind === "buttons") {
      messageType = "buttonsResponseMessage";
      content = {
        selectedButtonId: tap.buttonId,
        selectedDisplayText: tap.text,
        type: 1,
        contextInfo: context,
      };
    } else if (tap.kind === "template") {
      messageType = "templateButtonReplyMessage";
      content = {
        selectedId: tap.buttonId,
        selectedDisplayText: tap.text,
        selectedIndex: 0,
        contextInfo: context,
      };
    } else {
      messageType = "interactiveResponseMessage";
      content = {
        ...(tap.text === undefined ? {} : { body: { text: tap.text, format: 0 } }),
        nativeFlowResponseMessage: { name: "quick_reply", paramsJson: JSON.stringify({ id: tap.buttonId }) },
        contextInfo: context,
      };
    }
    const messageContextInfo = {
      deviceListMetadata: { senderTimestamp: "1747000000", recipientTimestamp: "1747000100" },
      deviceListMetadataVersion: 2,
    };
    return {
      ...this.incomingText(name, id, from, ""),
      message: { [messageType]: content, messageContextInfo },
      messageType,
      contextInfo: release === "2.3.7" ? context : messageContextInfo,
    };
  }

  private unlink(instance: FakeInstance): void {
    instance.state = "close";
    instance.ownerJid = null;
    instance.profileName = null;
  }

  /** `wa.QrCode` of the instance's current QR. */
  private qrCode(name: string, instance: FakeInstance) {
    return {
      pairingCode: instance.pairingNumber ? this.pairingCodeOf(instance.pairingNumber) : null,
      code: this.qrOf(name, instance.qrCount),
      base64: "data:image/png;base64,iVBORw0KGgo=",
      count: instance.qrCount,
    };
  }

  private withInstance<R extends Response | Promise<Response>>(
    name: string,
    answer: (instance: FakeInstance) => R,
  ): R | Response {
    const found = this.instances.get(name);
    return found ? answer(found) : problem(404, "Not Found", [`The "${name}" instance does not exist`]);
  }
}

/**
 * The JID a body's `number` names, as `createJid` makes it (evolution-foundation/evolution-api:
 * src/utils/createJid.ts): a device suffix `:<n>` dropped; one holding `@lid`, `@s.whatsapp.net`
 * or `@g.us` as it is; else its digits at `@s.whatsapp.net` (the Brazilian, Mexican and
 * Argentinian rewrites are not played).
 */
function jidOf(number: string): string {
  const bare = number.replace(/:\d+/, "");
  if (["@lid", "@s.whatsapp.net", "@g.us"].some((server) => bare.includes(server))) return bare;
  return `${bare.replace(/\D/g, "")}@s.whatsapp.net`;
}

/**
 * Why `quoted` is not a `Quoted` (`quotedOptionsSchema`: `key` with a non-empty `id`, and
 * `remoteJid` and `fromMe` when given, of their types; `message` an object), or null.
 */
function quotedRefused(quoted: unknown): string | null {
  const refused = unknownFields(quoted, ["key", "message"]);
  if (refused) return `quoted.${refused} is refused`;
  const { key, message } = quoted as { key?: Record<string, unknown>; message?: unknown };
  if (unknownFields(key ?? null, ["id", "remoteJid", "fromMe"])) return "quoted.key must be a message key";
  if (typeof key?.id !== "string" || key.id === "") return 'The "id" cannot be empty';
  if (key.remoteJid !== undefined && typeof key.remoteJid !== "string") return "quoted.key.remoteJid";
  if (key.fromMe !== undefined && typeof key.fromMe !== "boolean") return "quoted.key.fromMe";
  if (message !== undefined && (typeof message !== "object" || message === null)) return "quoted.message";
  return null;
}

/**
 * Why `key` is not a `readMessages` item of `readMessageSchema` (`id` and `remoteJid` non-empty
 * strings, `fromMe` a boolean, all required; other fields refused by the fake), or undefined.
 */
function readKeyRefused(key: unknown): string | undefined {
  const refused = unknownFields(key, ["id", "fromMe", "remoteJid"]);
  if (refused) return `readMessages.${refused}`;
  const { id, fromMe, remoteJid } = key as Record<string, unknown>;
  if (typeof id !== "string" || id === "") return "readMessages.id";
  if (typeof remoteJid !== "string" || remoteJid === "") return "readMessages.remoteJid";
  if (typeof fromMe !== "boolean") return "readMessages.fromMe";
  return undefined;
}

/**
 * Why a `deleteMessageForEveryone` body is refused by `deleteMessageSchema`
 * (EvolutionAPI/evolution-api src/validate/chat.schema.ts: `id` and `remoteJid` strings and
 * `fromMe` a boolean, all three required; `participant` a string), or undefined. Its
 * `isNotEmpty("id", "remoteJid", "participant")` never applies: its `if` holds only for a body
 * whose every property is one of those three, and `fromMe` is required, so "" passes as Evolution
 * lets it. The fake's own rule: a property the schema does not list is refused.
 */
function deleteBodyRefused(body: Record<string, unknown>): string | undefined {
  const refused = unknownFields(body, ["id", "fromMe", "remoteJid", "participant"]);
  if (refused) return `instance is not allowed to have the additional property "${refused}"`;
  if (typeof body.id !== "string") return 'instance requires property "id" (a string)';
  if (typeof body.remoteJid !== "string") return 'instance requires property "remoteJid" (a string)';
  if (typeof body.fromMe !== "boolean") return 'instance requires property "fromMe" (a boolean)';
  if (body.participant !== undefined && typeof body.participant !== "string")
    return "instance.participant is not of a type(s) string";
  return undefined;
}

/**
 * Why an `updateMessage` body is refused by `updateMessageSchema` (chat.schema.ts: `number` and
 * `text` strings, non-empty by its `isNotEmpty("number", "text", "key")`, which applies as the
 * fake allows no other property; `key` an object with `id` and `remoteJid` strings and `fromMe` a
 * boolean, all three required, its own `isNotEmpty("id", "remoteJid")` never applying since
 * `fromMe` is required), or undefined. The schema requires none of `number`, `text` and `key`;
 * the channel's `updateMessage` needs all three (`createJid(number)` throws without one), so the
 * fake refuses a body without one (400, where Evolution fails otherwise), and a property the
 * schema does not list.
 */
function updateBodyRefused(body: Record<string, unknown>): string | undefined {
  const refused = unknownFields(body, ["number", "text", "key"]);
  if (refused) return `instance is not allowed to have the additional property "${refused}"`;
  for (const field of ["number", "text"]) {
    if (typeof body[field] !== "string") return `instance.${field} is not of a type(s) string`;
    if (body[field] === "") return `The "${field}" cannot be empty`;
  }
  const keyRefused = unknownFields(body.key ?? null, ["id", "remoteJid", "fromMe"]);
  if (keyRefused) return `instance.key is not allowed to have the property "${keyRefused}"`;
  const key = body.key as Record<string, unknown>;
  if (typeof key.id !== "string") return 'instance.key requires property "id" (a string)';
  if (typeof key.remoteJid !== "string") return 'instance.key requires property "remoteJid" (a string)';
  if (typeof key.fromMe !== "boolean") return 'instance.key requires property "fromMe" (a boolean)';
  return undefined;
}

/** The first field of `body` not in `allowed`, or undefined. */
function unknownFields(body: unknown, allowed: string[]): string | undefined {
  if (typeof body !== "object" || body === null) return "body";
  return Object.keys(body).find((field) => !allowed.includes(field));
}

/**
 * Whether `record` matches a findMessages `where` as `fetchMessages` builds its Prisma query:
 * `key.id`, `key.fromMe` (only when true), `key.remoteJid` (against `remoteJid` or
 * `remoteJidAlt`), `messageType`, and `messageTimestamp` only when both `gte` and `lte` are given
 * (dates, compared in seconds).
 */
function matches(record: StoredRecord, where: unknown): boolean {
  const w = (where ?? {}) as {
    key?: { id?: string; fromMe?: boolean; remoteJid?: string };
    messageType?: string;
    messageTimestamp?: { gte?: string; lte?: string };
  };
  if (w.key?.id && record.key.id !== w.key.id) return false;
  if (w.key?.fromMe && record.key.fromMe !== true) return false;
  if (w.key?.remoteJid && record.key.remoteJid !== w.key.remoteJid) return false;
  if (w.messageType && record.messageType !== w.messageType) return false;
  const { gte, lte } = w.messageTimestamp ?? {};
  if (gte && lte) {
    const seconds = (date: string) => Math.floor(new Date(date).getTime() / 1000);
    if (record.messageTimestamp < seconds(gte) || record.messageTimestamp > seconds(lte)) return false;
  }
  return true;
}

/** The `messageType` and `message` Baileys stores for a send body (`prepareMessage`). */
function storedMessage(endpoint: string, body: Record<string, unknown>): [string, Record<string, unknown>] {
  if (endpoint === "sendText") return ["conversation", { conversation: body.text }];
  if (endpoint === "sendWhatsAppAudio") return ["audioMessage", { audioMessage: { ptt: true } }];
  // `mediaSticker`: Baileys' `stickerMessage` of the re-encoded WebP.
  if (endpoint === "sendSticker") return ["stickerMessage", { stickerMessage: { mimetype: "image/webp" } }];
  // `locationMessage` of the Baileys channel: the body's fields as Baileys' `LocationMessage`.
  if (endpoint === "sendLocation") {
    const { latitude, longitude, name, address } = body;
    return [
      "locationMessage",
      { locationMessage: { degreesLatitude: latitude, degreesLongitude: longitude, name, address } },
    ];
  }
  // `contactMessage`: one card as a `contactMessage`, several as a `contactsArrayMessage`.
  if (endpoint === "sendContact") {
    const cards = (body.contact as Record<string, string>[]).map((contact) => ({
      displayName: contact.fullName,
      vcard: evolutionVcard(contact),
    }));
    return cards.length === 1
      ? ["contactMessage", { contactMessage: cards[0] }]
      : [
          "contactsArrayMessage",
          { contactsArrayMessage: { displayName: `${cards.length} contacts`, contacts: cards } },
        ];
  }
  // `buttonMessage` (2.4.0-rc1 on): a native-flow `interactiveMessage` whose text is the title in
  // bold and the description, with `quick_reply` buttons (`toJSONString`: `{ display_text, id }`).
  if (endpoint === "sendButtons") {
    const { title, description, footer } = body;
    const buttons = (body.buttons as { type: string; displayText?: string; id?: string }[]).map((button) => ({
      name:
        button.type === "reply"
          ? "quick_reply"
          : button.type === "pix"
            ? "payment_info"
            : `cta_${button.type}`,
      buttonParamsJson: JSON.stringify({ display_text: button.displayText, id: button.id }),
    }));
    return [
      "interactiveMessage",
      {
        interactiveMessage: {
          body: { text: description ? `*${String(title)}*\n\n${String(description)}` : `*${String(title)}*` },
          ...(footer ? { footer: { text: footer } } : {}),
          nativeFlowMessage: {
            buttons,
            messageParamsJson: JSON.stringify({ from: "api", templateId: crypto.randomUUID() }),
          },
        },
      },
    ];
  }
  // `listMessage` (2.4.0-rc1 on): the legacy `listMessage`, `listType` SINGLE_SELECT (1), a
  // missing text written as "".
  if (endpoint === "sendList") {
    const sections = body.sections as {
      title: string;
      rows: { title: string; description?: string; rowId: string }[];
    }[];
    return [
      "listMessage",
      {
        listMessage: {
          title: body.title || "",
          description: body.description || "",
          buttonText: body.buttonText || "Ver Menu",
          footerText: body.footerText || "",
          listType: 1,
          sections: sections.map((section) => ({
            title: section.title || "",
            rows: section.rows.map((row) => ({
              title: row.title || "",
              description: row.description || "",
              rowId: row.rowId || "",
            })),
          })),
        },
      },
    ];
  }
  // `pollMessage`: Baileys' `PollCreationMessage`, `pollCreationMessageV3` for one choice
  // (`selectableCount` 1), else `pollCreationMessage` (`generateWAMessageContent`).
  if (endpoint === "sendPoll") {
    const type = body.selectableCount === 1 ? "pollCreationMessageV3" : "pollCreationMessage";
    const options = (body.values as string[]).map((optionName) => ({ optionName }));
    return [type, { [type]: { name: body.name, options, selectableOptionsCount: body.selectableCount } }];
  }
  const type = `${String(body.mediatype)}Message`;
  const caption = body.caption === undefined ? {} : { caption: body.caption };
  return [type, { [type]: { mimetype: body.mimetype ?? null, ...caption } }];
}

/** Evolution's error body (EvolutionAPI/evolution-api: src/main.ts): `{ status, error, response }`. */
function problem(status: number, error: string, message: unknown) {
  return HttpResponse.json({ status, error, response: { message } }, { status });
}

/**
 * Options of an event: its time (`at`, epoch ms, sent as ISO `date_time`; now by default), or
 * `dateTime` sent as given instead (null sends null), `sender` and `apikey` (null sends null).
 */
export interface EventOptions {
  at?: number;
  dateTime?: string | null;
  sender?: string | null;
  apikey?: string | null;
}

/**
 * The webhook body Evolution posts for `event` of `instance` (`WebhookController.emit`), with
 * `apikey` the instance's token ({@link evolutionInstanceToken}) unless given.
 */
export async function evolutionEnvelope(
  instance: string,
  event: string,
  data: unknown,
  options: EventOptions = {},
): Promise<Record<string, unknown>> {
  return {
    event,
    instance,
    data,
    destination: `${PUBLIC_URL}/gateway/evolution/events`,
    date_time:
      options.dateTime === undefined ? new Date(options.at ?? Date.now()).toISOString() : options.dateTime,
    sender: options.sender ?? null,
    server_url: EVOLUTION_URL,
    apikey:
      options.apikey === undefined
        ? await evolutionInstanceToken(EVOLUTION_API_KEY, instance)
        : options.apikey,
  };
}

/** Posts an Evolution webhook body ({@link evolutionEnvelope}) to our events endpoint. */
export async function postEvolutionEvent(
  instance: string,
  event: string,
  data: unknown,
  options: EventOptions = {},
) {
  return postEvolutionBody(await evolutionEnvelope(instance, event, data, options));
}

/** Posts `body` as is to our Evolution events endpoint. */
export function postEvolutionBody(body: unknown) {
  return call<{ success: boolean; ignored: boolean }>("POST", "/gateway/evolution/events", { body });
}
