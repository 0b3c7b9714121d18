/**
 * A fake of the part of Meta's Graph API that the WhatsApp Cloud API gateway uses, answering with
 * the shapes of Meta's OpenAPI document (business-messaging-api_v23.0.yaml; schema names below)
 * and checking what it is sent against that document (schema.ts). Web-standard only (Request,
 * Response, WebCrypto): tests run it in workerd behind msw
 * (`http.all("https://graph.facebook.com/*", ({ request }) => graph.handle(request))`), and
 * scripts/fake-cloud-api.ts serves it from Node.
 *
 * Routes (any host; `{version}` like "v23.0"; a bearer token in Authorization):
 * - GET /{version}/{phone number id}: `PhoneNumberInfo`;
 * - GET /{version}/{WABA id}/phone_numbers: `WhatsAppBusinessAccountPhoneNumbersConnection`, the
 *   numbers of the WABA (every number of it, to any token that holds one of them);
 * - POST /{version}/{phone number id}/messages: `Message` in, `MessageResponsePayload` out; or,
 *   with `status: "read"`, a read receipt (`MarkMessageRequestPayload`, schema.ts reading l),
 *   with the typing indicator when asked (the document's example "Send typing indicator and read
 *   receipt"), for an incoming message, `MarkMessageResponsePayload` (`{ success: true }`) out;
 * - GET and POST /{version}/{WABA id}/message_templates: the document's inline schemas.
 * Errors are `GraphAPIError` bodies. Meta checks the token first: no token → 104, a token no
 * number holds (or a revoked one) → 190 (HTTP 401); then the object: an id this token may not use,
 * or that does not exist → 100 with subcode 33 ("Object with ID … does not exist"). Every call is
 * logged in {@link FakeGraph.calls}; faults ({@link FakeGraph.failNext}, `hangNext`, `dropNext`,
 * `loseNextAnswer`) answer the next call of an operation instead. Webhooks (`WebhookPayload`) are
 * queued, signed, for the caller to post: {@link FakeGraph.takeWebhooks}.
 *
 * Business-scoped user ids (BSUIDs), which the document predates, as Meta's "Business-scoped user
 * IDs" page (https://developers.facebook.com/documentation/business-messaging/whatsapp/
 * business-scoped-user-ids/) and its restatements (https://dualhook.com/docs/contacts-bsuid-api-changes,
 * https://dualhook.com/docs/contacts-bsuid-webhooks) give them, and schema.ts reading (j) checks:
 * a send names its recipient by `to` (a number) or `recipient` (a BSUID; with both, `to` wins);
 * an authentication template with an OTP button sent to a BSUID is refused with 131062; the answer
 * to a BSUID send has `contacts: [{ input, user_id }]`; users the fake knows ({@link FakeGraph.addUser},
 * or learnt from an incoming message) are named in webhooks by `from_user_id`, `user_id`,
 * `recipient_user_id` and `profile.username`, and by number only when one is known; a BSUID that
 * changed is told by a `user_id_update` webhook ({@link FakeGraph.queueUserIdUpdate}).
 */

import { type AnswerOperation, checkBody } from "./schema.ts";
import { signBody } from "./sign.ts";

/** A phone number's quality rating (`PhoneNumberInfo.quality_rating`). */
export type QualityRating = "GREEN" | "YELLOW" | "RED" | "NA";

/** A business phone number the fake serves, and the access token that may use it. */
export interface FakeNumber {
  /** `PhoneNumberInfo.id`, the {Phone-Number-ID} of the paths. */
  phoneNumberId: string;
  /** The WhatsApp Business Account that owns the number: {WABA-ID}, and `entry[].id` of webhooks. */
  wabaId: string;
  /** `PhoneNumberInfo.display_phone_number`, e.g. "+1 555 010 0001"; webhooks carry its digits. */
  displayPhoneNumber: string;
  /** `PhoneNumberInfo.verified_name`. */
  verifiedName: string;
  /** `PhoneNumberInfo.quality_rating`; GREEN when left out. */
  qualityRating?: QualityRating;
  /**
   * `throughput.level` ("STANDARD", "HIGH", "NOT_APPLICABLE"), answered only when asked for with
   * `fields=throughput`. Not in the document: Meta's Graph API reference of the WhatsApp
   * Business Phone Number node. STANDARD when left out.
   */
  throughputLevel?: string;
  /** The bearer token that may act for this number and its WABA. */
  accessToken: string;
}

/**
 * A WhatsApp user as Meta knows them for this business: their BSUID (`US.13491208655302741918`),
 * and, when Meta shares them, their number (digits), parent BSUID and username.
 */
export interface FakeUser {
  userId: string;
  phoneNumber?: string;
  parentUserId?: string;
  username?: string;
}

/** Meta's refusal of a send to a BSUID that needs a number (131062; Meta's "Business-scoped user IDs"). */
export const BSUID_NOT_SUPPORTED = {
  code: 131062,
  message: "Business-scoped User ID recipients are not supported for this message.",
};

/** A message the fake accepted: the phone number it was sent from, its body, and the wamid given. */
export interface SentMessage {
  phoneNumberId: string;
  body: Record<string, unknown>;
  wamid: string;
}

/**
 * The Graph API operations the fake serves (the names of schema.ts, after the document's). A read
 * receipt is a `sendMessage` call: the same method and path (schema.ts reading l).
 */
export type GraphOperation = Exclude<AnswerOperation, "error" | "markRead">;

/**
 * One call the fake received, whatever it answered: refused ones (bad token, fault, invalid body)
 * included. How a test sees what reached Meta, and when.
 */
export interface GraphCall {
  /** The operation its method and path name; "unknown" for any other path. */
  operation: GraphOperation | "unknown";
  /** The object id of the path: a phone number id or a WABA id. */
  id: string;
  /** The query string, e.g. "?fields=…&limit=100&after=…" ("" when none). */
  search: string;
  /** The JSON body when it is an object; null when there is none or it is not an object. */
  body: Record<string, unknown> | null;
  /** When it arrived, by the fake's clock (epoch ms). */
  at: number;
  /** The message id given when Meta took the message (sendMessage); null otherwise. */
  wamid: string | null;
}

/** A send the fake refused as invalid (error 100) and the problems schema.ts found. */
export interface InvalidBody {
  phoneNumberId: string;
  body: unknown;
  problems: string[];
}

/**
 * A Graph API error for the next call of an operation (`GraphAPIError.error`): `code` (131047,
 * 131026, 130429, 131056, 131049, 131050, 368, 190, 100, …) and `message`; `status` is the HTTP
 * status, 401 for 190 and 400 otherwise when left out (the document answers 190 with 401).
 * `details` is answered as `error_data.details`, as Meta's "Error codes" page shows it (e.g. why a
 * template was refused: "Body text is too long.").
 */
export interface GraphFault {
  code: number;
  message: string;
  status?: number;
  details?: string;
}

/** A message template: the fields the document's GET message_templates answers per template. */
export interface FakeTemplate {
  id: string;
  wabaId: string;
  name: string;
  /** Language and locale code, e.g. "en_US". */
  language: string;
  /** MARKETING, UTILITY or AUTHENTICATION. */
  category: string;
  /** PENDING, APPROVED, REJECTED, PAUSED, DISABLED, … */
  status: string;
  /** The components as created (`type`, `text`, `buttons`, …), answered as they are. */
  components: unknown[];
}

/** A webhook ready to post: the JSON body and its `X-Hub-Signature-256` value (sign.ts). */
export interface QueuedWebhook {
  body: string;
  signature: string;
}

/**
 * The fake's settings: the app secret webhooks are signed with; `now` in milliseconds;
 * `templatePageSize`, the most templates one page of GET message_templates holds whatever `limit`
 * asks (Meta's `limit` is an upper bound; default 25, Meta's default page size);
 * `phoneNumberPageSize`, the same for GET phone_numbers (default 25, the document's default).
 */
export interface FakeGraphOptions {
  appSecret: string;
  now?: () => number;
  templatePageSize?: number;
  phoneNumberPageSize?: number;
}

/**
 * The parts of a Request the fake reads: a workerd or Node `Request`, or the one msw hands a
 * handler (whose `json()` is typed differently, hence not `Request` itself).
 */
export type GraphRequest = Pick<Request, "method" | "url" | "headers" | "text">;

type Fault = { operation: GraphOperation } & (
  | { kind: "error"; fault: GraphFault }
  | { kind: "hang" }
  | { kind: "drop" }
  | { kind: "lost" }
);

/** Template statuses that refuse a send, with Meta's error (Meta's "Error codes" page). */
const TEMPLATE_REFUSALS: Record<string, { code: number; message: string }> = {
  PAUSED: { code: 132015, message: "Template is Paused" },
  DISABLED: { code: 132016, message: "Template is disabled" },
};
const TEMPLATE_MISSING = { code: 132001, message: "Template name does not exist in the translation" };
/** Where the fake's media `url`s point (Meta's are on `lookaside.fbsbx.com`); tests route it to {@link FakeGraph.downloadMedia}. */
export const MEDIA_DOWNLOAD_URL = "https://lookaside.fbsbx.com/whatsapp_business/attachments/";
const ERROR_CODES_URL = "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/";

function randomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** A message id in Meta's shape ("wamid." and base64). */
function newWamid(): string {
  return `wamid.${base64(randomBytes(24))}`;
}

/** A numeric Graph object id below 2^53, so it survives JSON numbers (template ids are integers in webhooks). */
function newObjectId(): string {
  return String(1_000_000_000_000_000 + Math.floor(Math.random() * 8_000_000_000_000_000));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The objects of `value` when it is an array (others left out); none when it is not one. */
function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** The request's JSON body; undefined when it is not JSON. */
async function jsonOf(request: GraphRequest): Promise<unknown> {
  try {
    return JSON.parse(await request.text());
  } catch {
    return undefined;
  }
}

/** The operation a method and path edge name (see the module comment's routes). */
function operationOf(method: string, edge: string | undefined): GraphOperation | "unknown" {
  const route = `${method} ${edge ?? ""}`;
  if (route === "GET ") return "getPhoneNumber";
  if (route === "GET phone_numbers") return "listPhoneNumbers";
  if (route === "POST messages") return "sendMessage";
  if (route === "GET message_templates") return "listTemplates";
  if (route === "POST message_templates") return "createTemplate";
  return "unknown";
}

/**
 * The cursor of the `index`-th template (or phone number) of a list (`paging.cursors`). Meta's
 * cursors are opaque strings; the fake's are the base64 of the index, so a test can name the one
 * it expects.
 */
export function templateCursor(index: number): string {
  return btoa(String(index));
}

function digits(phone: string): string {
  return phone.replace(/\D/g, "");
}

/** A `GraphAPIError` answer; `type` is always OAuthException, as the document's examples have it. */
function graphError(
  status: number,
  error: {
    message: string;
    code: number;
    error_subcode?: number;
    error_user_title?: string;
    error_user_msg?: string;
    error_data?: { details: string };
    is_transient?: boolean;
  },
): Response {
  const fbtrace_id = base64(randomBytes(17)).replace(/\+/g, "-").replace(/\//g, "_").slice(0, 23);
  return Response.json({ error: { ...error, type: "OAuthException", fbtrace_id } }, { status });
}

function unsupported(method: string, id: string): Response {
  return graphError(400, {
    message: `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
    code: 100,
    error_subcode: 33,
  });
}

function invalidParameter(problems: string[]): Response {
  return graphError(400, { message: "Invalid parameter", code: 100, error_user_msg: problems.join("; ") });
}

/** The answer of a fault: Meta's error, a network failure (`Response.error()`), or none ever. */
function faultAnswer(fault: Fault): Promise<Response> {
  if (fault.kind === "drop") return Promise.resolve(Response.error());
  if (fault.kind === "error") {
    const { code, message, status, details } = fault.fault;
    const error = { code, message, ...(details === undefined ? {} : { error_data: { details } }) };
    return Promise.resolve(graphError(status ?? (code === 190 ? 401 : 400), error));
  }
  // "hang" (and "lost", which only sends use): a Response that never comes; the caller's own
  // abort (its timeout) ends the call.
  return new Promise<Response>(() => {});
}

/**
 * The template `npm run fake:cloud-api` and the fake's tests seed: an APPROVED AUTHENTICATION
 * template, `otp_code` (en_US), shaped as the document's authentication template example: a body
 * with the code as `{{1}}` and a copy-code button (`addTemplate` takes it with a `wabaId`).
 */
export const OTP_CODE_TEMPLATE = {
  name: "otp_code",
  language: "en_US",
  category: "AUTHENTICATION",
  components: [
    { type: "BODY", text: "{{1}} is your verification code." },
    { type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE", text: "Copy Code" }] },
  ],
};

/** Who sends an incoming message: a number (digits), a BSUID with its username, or both. */
export interface IncomingSender {
  from?: string;
  userId?: string;
  username?: string;
  parentUserId?: string;
}

function isBsuid(value: string): boolean {
  return /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/.test(value);
}

/** `<prefix>user_id` and `<prefix>parent_user_id` of `user` (`from_`, `recipient_`). */
function userIdsOf(user: FakeUser, prefix: "from_" | "recipient_"): Record<string, string> {
  return {
    [`${prefix}user_id`]: user.userId,
    ...(user.parentUserId === undefined ? {} : { [`${prefix}parent_user_id`]: user.parentUserId }),
  };
}

/**
 * A `contacts[]` entry for `user` ("Business-scoped user IDs"): `profile` with `name` (incoming
 * messages) and `username` (when asked and the user has one; Meta leaves it out of `sent`
 * statuses), `wa_id` when the number is known, `user_id`, `parent_user_id` when enabled.
 */
function contactEntry(user: FakeUser, with_: { username: boolean; name?: string }): Record<string, unknown> {
  const profile = {
    ...(with_.name === undefined ? {} : { name: with_.name }),
    ...(with_.username && user.username !== undefined ? { username: user.username } : {}),
  };
  return {
    ...(Object.keys(profile).length > 0 ? { profile } : {}),
    ...(user.phoneNumber === undefined ? {} : { wa_id: user.phoneNumber }),
    user_id: user.userId,
    ...(user.parentUserId === undefined ? {} : { parent_user_id: user.parentUserId }),
  };
}

/**
 * Whether a template needs the recipient's number: an authentication template with an OTP button
 * (one-tap, zero-tap or copy-code), which Meta refuses to send to a BSUID (131062).
 */
function needsNumber(template: FakeTemplate): boolean {
  if (template.category !== "AUTHENTICATION") return false;
  return template.components.some(
    (c) =>
      isRecord(c) &&
      String(c.type).toUpperCase() === "BUTTONS" &&
      Array.isArray(c.buttons) &&
      c.buttons.some((b) => isRecord(b) && String(b.type).toUpperCase() === "OTP"),
  );
}

/** The fake Graph API; see the module comment for its routes. */
export class FakeGraph {
  /** Every call received, in order, whatever it was answered (see {@link GraphCall}). */
  readonly calls: GraphCall[] = [];
  /** Messages accepted, in order (including those whose answer was lost or never came). */
  readonly sent: SentMessage[] = [];
  /**
   * Media of incoming messages Meta holds, by media id ({@link queueIncomingImage} with `bytes`),
   * and every call for them: `url <id>` (Retrieve Media URL) and `download <id>`.
   */
  readonly media = new Map<string, { bytes: Uint8Array; mimeType: string; phoneNumberId: string }>();
  readonly mediaCalls: string[] = [];
  /** Sends refused as invalid against the document, in order. */
  readonly invalidBodies: InvalidBody[] = [];
  /** Every template of every WABA, seeded or created. */
  readonly templates: FakeTemplate[] = [];
  /**
   * Every read receipt taken (`status: "read"` on the messages edge), in order: the number, the
   * incoming message it marks read, whether it asked for the typing indicator, and when.
   */
  readonly reads: { phoneNumberId: string; messageId: string; typingIndicator: boolean; at: number }[] = [];
  /** Meta's error for every read receipt while set (nothing is recorded in {@link reads}). */
  readFault: GraphFault | null = null;

  private readonly appSecret: string;
  private readonly now: () => number;
  private readonly templatePageSize: number;
  private readonly phoneNumberPageSize: number;
  private readonly numbers = new Map<string, FakeNumber>();
  private readonly revoked = new Set<string>();
  private readonly faults: Fault[] = [];
  private readonly sendsByWamid = new Map<string, { number: FakeNumber; to: string }>();
  /** The users the fake knows, by BSUID (see {@link FakeUser}). */
  private readonly users = new Map<string, FakeUser>();
  /** The number each incoming message (by wamid) was sent to. */
  private readonly incomingByWamid = new Map<string, string>();
  private queue: { body: string; wamid?: string; status?: string }[] = [];

  constructor(options: FakeGraphOptions) {
    this.appSecret = options.appSecret;
    this.now = options.now ?? Date.now;
    this.templatePageSize = options.templatePageSize ?? 25;
    this.phoneNumberPageSize = options.phoneNumberPageSize ?? 25;
  }

  /** Serves a phone number (and its WABA) to the holder of `number.accessToken`. */
  addNumber(number: FakeNumber): void {
    this.numbers.set(number.phoneNumberId, { ...number });
  }

  /**
   * Makes `user` known: webhooks about them carry their BSUID (and their number and username when
   * given), and a send by `recipient` reaches them. Replaces what was known of that BSUID.
   */
  addUser(user: FakeUser): void {
    this.users.set(user.userId, { ...user });
  }

  /** The user of BSUID `userId`, or the one whose number is `digits`, if known. */
  private userOf(to: { userId?: string; digits?: string }): FakeUser | undefined {
    if (to.userId) return this.users.get(to.userId);
    return [...this.users.values()].find((u) => u.phoneNumber !== undefined && u.phoneNumber === to.digits);
  }

  /** From now on, calls with `token` answer error 190 (HTTP 401), as an expired or revoked token does. */
  revokeToken(token: string): void {
    this.revoked.add(token);
  }

  /**
   * Seeds a template (APPROVED unless said otherwise; a new numeric id unless one is given)
   * without a webhook; returns it.
   */
  addTemplate(
    template: Omit<FakeTemplate, "id" | "status"> & { id?: string; status?: string },
  ): FakeTemplate {
    const added = { id: newObjectId(), status: "APPROVED", ...template };
    this.templates.push(added);
    return added;
  }

  /**
   * Deletes WABA `wabaId`'s templates named `name`, in every language, as Meta's
   * `DELETE /{WABA-ID}/message_templates?name=` does (the document's deleteTemplateByName; no
   * webhook); returns how many went.
   */
  deleteTemplates(wabaId: string, name: string): number {
    const before = this.templates.length;
    const kept = this.templates.filter((t) => t.wabaId !== wabaId || t.name !== name);
    this.templates.splice(0, before, ...kept);
    return before - kept.length;
  }

  /**
   * Moves a template (by name and language, in any WABA) to `status` and queues its
   * `message_template_status_update` webhook (`event` = status, `reason`; Meta's webhook
   * reference). Throws when no such template exists.
   */
  setTemplateStatus(name: string, language: string, status: string, reason: string | null = "NONE"): void {
    const template = this.templates.find((t) => t.name === name && t.language === language);
    if (!template) throw new Error(`No template ${name} (${language})`);
    template.status = status;
    const value = {
      event: status,
      message_template_id: Number(template.id),
      message_template_name: name,
      message_template_language: language,
      reason,
      message_template_category: template.category,
    };
    const entry = {
      id: template.wabaId,
      time: Math.floor(this.now() / 1000),
      changes: [{ value, field: "message_template_status_update" }],
    };
    this.queue.push({ body: JSON.stringify({ object: "whatsapp_business_account", entry: [entry] }) });
  }

  /**
   * The next call of `operation` (a send unless said) that passes the token check answers `fault`
   * (HTTP `fault.status`, else 401 for 190, else 400); nothing is sent or created. Faults queue:
   * each answers one call, in order.
   */
  failNext(fault: GraphFault, operation: GraphOperation = "sendMessage"): void {
    this.faults.push({ operation, kind: "error", fault });
  }

  /**
   * The next call of `operation` is never answered: the caller's timeout fires. A valid send is
   * sent all the same (recorded, webhooks queued): whether Meta took it cannot be told.
   */
  hangNext(operation: GraphOperation = "sendMessage"): void {
    this.faults.push({ operation, kind: "hang" });
  }

  /** The next call of `operation` fails as a network error does (no HTTP answer); nothing happens. */
  dropNext(operation: GraphOperation): void {
    this.faults.push({ operation, kind: "drop" });
  }

  /** The next valid send is sent (recorded, webhooks queued) but answered 500 (error code 2, transient). */
  loseNextAnswer(): void {
    this.faults.push({ operation: "sendMessage", kind: "lost" });
  }

  /** The calls of `operation`, in order. */
  callsOf(operation: GraphOperation): GraphCall[] {
    return this.calls.filter((c) => c.operation === operation);
  }

  /** The send calls whose `biz_opaque_callback_data` is `data`, in order, refused ones included. */
  sendsOf(data: string): GraphCall[] {
    return this.callsOf("sendMessage").filter((c) => c.body?.biz_opaque_callback_data === data);
  }

  /**
   * Queues a `failed` status webhook for a sent message, with `errors: [{ code, title, message,
   * error_data: { details }, href }]` (`StatusError`), and drops its still-queued `delivered` and
   * `read` webhooks. Throws for a wamid the fake did not give.
   */
  queueFailedStatus(wamid: string, code: number, title: string): void {
    const send = this.sendsByWamid.get(wamid);
    if (!send) throw new Error(`No message ${wamid}`);
    this.queue = this.queue.filter((w) => w.wamid !== wamid || w.status === "sent");
    // A failed status carries no contacts[]; `recipient_user_id` only for a send by BSUID.
    const status = {
      id: wamid,
      status: "failed",
      timestamp: this.seconds(),
      ...(isBsuid(send.to) ? { recipient_user_id: send.to } : { recipient_id: digits(send.to) }),
      errors: [{ code, title, message: title, error_data: { details: title }, href: ERROR_CODES_URL }],
    };
    this.queueMessagesChange(send.number, { statuses: [status] }, wamid, "failed");
  }

  /**
   * Queues an incoming text message from `from` (digits) or from user `userId` (a BSUID, with
   * their `username`; both for a user known by both) to the number; returns its wamid.
   */
  queueIncoming(
    message: IncomingSender & {
      phoneNumberId: string;
      text: string;
      profileName?: string;
    },
  ): string {
    return this.queueIncomingMessage(message, { type: "text", text: { body: message.text } });
  }

  /**
   * Queues an incoming text from `from` (digits) replying to message `quoted` (a wamid): its
   * `context` is `{ from, id }` (`ContextObject`, reading i), `from` the number that sent the
   * quoted message (the business number for one the fake sent). Returns its wamid.
   */
  queueIncomingReply(message: { phoneNumberId: string; from: string; text: string; quoted: string }): string {
    const number = this.numbers.get(message.phoneNumberId);
    const ours = this.sendsByWamid.has(message.quoted);
    const context = {
      from: ours && number ? digits(number.displayPhoneNumber) : digits(message.from),
      id: message.quoted,
    };
    return this.queueIncomingMessage(message, { type: "text", text: { body: message.text }, context });
  }

  /**
   * Queues `from`'s (digits) reaction `emoji` on message `messageId` (a wamid): `type: reaction`
   * with `reaction: { message_id, emoji }` (`ReactionMessage_1`; an empty emoji when taken off).
   * Returns the reaction's own wamid.
   */
  queueIncomingReaction(message: {
    phoneNumberId: string;
    from: string;
    messageId: string;
    emoji: string;
  }): string {
    return this.queueIncomingMessage(message, {
      type: "reaction",
      reaction: { message_id: message.messageId, emoji: message.emoji },
    });
  }

  /**
   * Queues `from`'s (digits) edit of their text `original` (a wamid of theirs) to `text`: `type:
   * edit` with `edit: { original_message_id, message: { type: "text", text: { body } } }`
   * (schema.ts `EDIT_MESSAGE`, reading o; Meta's "Edit messages webhook reference"). Returns the
   * edit's own wamid.
   */
  queueIncomingEdit(message: {
    phoneNumberId: string;
    from: string;
    original: string;
    text: string;
  }): string {
    return this.queueIncomingMessage(message, {
      type: "edit",
      edit: {
        original_message_id: message.original,
        message: { type: "text", text: { body: message.text } },
      },
    });
  }

  /**
   * Queues `from`'s (digits) deletion for everyone of their message `original` (a wamid of theirs):
   * `type: revoke` with `revoke: { original_message_id }` (schema.ts `REVOKE_MESSAGE`, reading o;
   * Meta's "Revoke messages webhook reference"). Returns the revoke's own wamid.
   */
  queueIncomingRevoke(message: { phoneNumberId: string; from: string; original: string }): string {
    return this.queueIncomingMessage(message, {
      type: "revoke",
      revoke: { original_message_id: message.original },
    });
  }

  /**
   * Queues shared contact cards (`ContactSharingMessage`: `type: "contacts"`, `contacts` of
   * `ContactObject_1`, as given, whose fields Meta may omit); returns its wamid.
   */
  queueIncomingContacts(message: {
    phoneNumberId: string;
    from: string;
    contacts: Record<string, unknown>[];
    profileName?: string;
  }): string {
    return this.queueIncomingMessage(message, { type: "contacts", contacts: message.contacts });
  }

  /**
   * Queues an incoming image (`ImageMessage_1`: `image.id`, `mime_type`, `sha256`, optional
   * `caption`); returns its wamid. With `bytes`, the media id is downloadable from the fake.
   */
  queueIncomingImage(message: {
    phoneNumberId: string;
    from: string;
    caption?: string;
    mediaId?: string;
    mimeType?: string;
    profileName?: string;
    /** The image's bytes: Meta then holds them under the media id (Retrieve Media URL, Download Media). */
    bytes?: Uint8Array;
  }): string {
    const mediaId = message.mediaId ?? newObjectId();
    if (message.bytes) {
      this.media.set(mediaId, {
        bytes: message.bytes,
        mimeType: message.mimeType ?? "image/jpeg",
        phoneNumberId: message.phoneNumberId,
      });
    }
    const image = {
      id: mediaId,
      mime_type: message.mimeType ?? "image/jpeg",
      sha256: base64(randomBytes(32)),
      ...(message.caption === undefined ? {} : { caption: message.caption }),
    };
    return this.queueIncomingMessage(message, { type: "image", image });
  }

  /**
   * Queues an incoming sticker (`StickerMessage_1`: `sticker` a media object, `id`, `mime_type`
   * `image/webp`, `sha256`, with `animated`, which the document requires); returns its wamid. With
   * `bytes`, the media id is downloadable from the fake, as for {@link queueIncomingImage}.
   */
  queueIncomingSticker(message: {
    phoneNumberId: string;
    from: string;
    animated: boolean;
    bytes?: Uint8Array;
  }): string {
    const mediaId = newObjectId();
    if (message.bytes)
      this.media.set(mediaId, {
        bytes: message.bytes,
        mimeType: "image/webp",
        phoneNumberId: message.phoneNumberId,
      });
    const sticker = {
      id: mediaId,
      mime_type: "image/webp",
      sha256: base64(randomBytes(32)),
      animated: message.animated,
    };
    return this.queueIncomingMessage(message, { type: "sticker", sticker });
  }

  /**
   * Queues `from`'s (digits) location (`LocationMessage_1`: `location: { latitude, longitude,
   * name, address, url? }`, the coordinates as JSON numbers, `name` and `address` required by the
   * document, `url` when given: "Usually only included for business locations"); returns its wamid.
   */
  queueIncomingLocation(message: {
    phoneNumberId: string;
    from: string;
    location: { latitude: number; longitude: number; name: string; address: string; url?: string };
    profileName?: string;
  }): string {
    const { latitude, longitude, name, address, url } = message.location;
    const location = { address, latitude, longitude, name, ...(url === undefined ? {} : { url }) };
    return this.queueIncomingMessage(message, { type: "location", location });
  }

  /**
   * Queues `from`'s (digits) tap on the reply button or list row `id` of interactive message
   * `quoted` (a wamid the fake gave for a send from this number): `type: interactive`
   * (`InteractiveMessageReply`; Meta's "Interactive messages webhook reference") with `context: {
   * from, id }` (the business number and `quoted`) and `interactive`: `{ type: "button_reply",
   * button_reply: { id, title } }` for reply buttons, `{ type: "list_reply", list_reply: { id,
   * title, description } }` for a list, the title and description those the send gave the button
   * or row (a row without a description answers none: schema.ts reading n). Returns the tap's own
   * wamid. Throws when `quoted` is no interactive button or list message sent from the number, or
   * it has no button or row `id`.
   */
  queueIncomingInteractiveReply(message: {
    phoneNumberId: string;
    from: string;
    quoted: string;
    id: string;
    profileName?: string;
  }): string {
    const { number, body } = this.sentFrom(message.phoneNumberId, message.quoted);
    const interactive = isRecord(body.interactive) ? body.interactive : {};
    const action = isRecord(interactive.action) ? interactive.action : {};
    const context = { from: digits(number.displayPhoneNumber), id: message.quoted };
    if (body.type === "interactive" && interactive.type === "button") {
      const replies = records(action.buttons).flatMap((b) => (isRecord(b.reply) ? [b.reply] : []));
      const reply = replies.find((r) => r.id === message.id);
      if (!reply) throw new Error(`No button ${message.id} on ${message.quoted}`);
      const button_reply = { id: message.id, title: String(reply.title) };
      return this.queueIncomingMessage(message, {
        context,
        type: "interactive",
        interactive: { type: "button_reply", button_reply },
      });
    }
    if (body.type === "interactive" && interactive.type === "list") {
      const rows = records(action.sections).flatMap((section) => records(section.rows));
      const row = rows.find((r) => r.id === message.id);
      if (!row) throw new Error(`No row ${message.id} on ${message.quoted}`);
      const list_reply = {
        id: message.id,
        title: String(row.title),
        ...(typeof row.description === "string" ? { description: row.description } : {}),
      };
      return this.queueIncomingMessage(message, {
        context,
        type: "interactive",
        interactive: { type: "list_reply", list_reply },
      });
    }
    throw new Error(`${message.quoted} is no interactive button or list message`);
  }

  /**
   * Queues `from`'s (digits) tap on quick-reply button `index` (its place among the buttons of
   * the template's BUTTONS component, from 0) of template message `quoted` (a wamid the fake gave
   * for a send from this number): `type: button` (`ButtonMessage`; Meta's "Button messages webhook
   * reference") with `context: { from, id }` and `button: { payload, text }`, `text` the button's
   * label as the template was created, `payload` the one the send gave that button (its `button`
   * component of `sub_type: "quick_reply"` and that `index`), else the label (the reference's
   * syntax gives the label for both). Returns the tap's own wamid. Throws when `quoted` is no
   * template message sent from the number, or its template has no quick-reply button `index`.
   */
  queueIncomingQuickReply(message: {
    phoneNumberId: string;
    from: string;
    quoted: string;
    index: number;
    profileName?: string;
  }): string {
    const { number, body } = this.sentFrom(message.phoneNumberId, message.quoted);
    const template = body.type === "template" && isRecord(body.template) ? body.template : undefined;
    const row = template && this.findTemplate(number.wabaId, template);
    if (!template || !row) throw new Error(`${message.quoted} is no template message`);
    const buttons = records(row.components).flatMap((c) => (c.type === "BUTTONS" ? records(c.buttons) : []));
    const button = buttons[message.index];
    if (button?.type !== "QUICK_REPLY") throw new Error(`No quick reply ${message.index} on ${row.name}`);
    const filled = records(template.components).find(
      (c) => c.type === "button" && c.sub_type === "quick_reply" && c.index === String(message.index),
    );
    const parameter = records(filled?.parameters).find((p) => p.type === "payload");
    const text = String(button.text);
    return this.queueIncomingMessage(message, {
      context: { from: digits(number.displayPhoneNumber), id: message.quoted },
      type: "button",
      button: { payload: typeof parameter?.payload === "string" ? parameter.payload : text, text },
    });
  }

  /** The number and body of the message the fake sent from `phoneNumberId` as `wamid`; throws when none. */
  private sentFrom(
    phoneNumberId: string,
    wamid: string,
  ): { number: FakeNumber; body: Record<string, unknown> } {
    const number = this.numbers.get(phoneNumberId);
    const sent = this.sent.find((s) => s.wamid === wamid && s.phoneNumberId === phoneNumberId);
    if (!number || !sent) throw new Error(`No message ${wamid} sent from ${phoneNumberId}`);
    return { number, body: sent.body };
  }

  /** Returns the queued webhooks, signed, in order, and empties the queue. */
  async takeWebhooks(): Promise<QueuedWebhook[]> {
    const taken = this.queue;
    this.queue = [];
    return Promise.all(
      taken.map(async ({ body }) => ({ body, signature: await signBody(this.appSecret, body) })),
    );
  }

  /** Answers one Graph API request (see the module comment); logs it in {@link calls}. */
  async handle(request: GraphRequest): Promise<Response> {
    const at = this.now();
    const url = new URL(request.url);
    const [version, id, edge, ...rest] = url.pathname.split("/").filter(Boolean);
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await jsonOf(request);
    const operation = rest.length > 0 ? "unknown" : operationOf(request.method, edge);
    const call: GraphCall = {
      operation,
      id: id ?? "",
      search: url.search,
      body: isRecord(body) ? body : null,
      at,
      wamid: null,
    };
    this.calls.push(call);
    if (!version || !id || rest.length > 0) return unsupported(request.method, url.pathname);
    if (!/^v[0-9]+\.[0-9]+$/.test(version)) {
      return graphError(400, { message: "Invalid version format. Use format like 'v23.0'", code: 100 });
    }
    const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    if (!token) {
      return graphError(401, { message: "An access token is required to request this resource", code: 104 });
    }
    const holds = [...this.numbers.values()].filter((n) => n.accessToken === token);
    if (holds.length === 0 || this.revoked.has(token)) {
      return graphError(401, { message: "Invalid OAuth access token", code: 190 });
    }
    const held = request.method === "GET" && edge === undefined ? this.media.get(id) : undefined;
    if (held) return this.mediaUrl(id, held, holds, call);
    const number = holds.find((n) => n.phoneNumberId === id);
    const wabaId = holds.find((n) => n.wabaId === id)?.wabaId;
    const onNumber = operation === "getPhoneNumber" || operation === "sendMessage";
    if (operation === "unknown" || !(onNumber ? number : wabaId)) return unsupported(request.method, id);
    if (operation === "sendMessage" && number) return this.send(number, body, call);
    const fault = this.takeFault(operation);
    if (fault) return faultAnswer(fault);
    if (operation === "getPhoneNumber" && number) return this.phoneNumber(number, url);
    if (operation === "listPhoneNumbers" && wabaId) return this.listPhoneNumbers(wabaId, url);
    if (operation === "listTemplates" && wabaId) return this.listTemplates(wabaId, url);
    if (operation === "createTemplate" && wabaId) return this.createTemplate(wabaId, body);
    return unsupported(request.method, id);
  }

  /**
   * GET /{version}/{media id} (Meta, Cloud API reference, Media, "Retrieve Media URL"):
   * `{ messaging_product, url, mime_type, sha256, file_size, id }` to a token of the number that
   * received the media; another token is refused as an object it cannot see (code 100).
   */
  private mediaUrl(
    id: string,
    held: { bytes: Uint8Array; mimeType: string; phoneNumberId: string },
    holds: FakeNumber[],
    call: GraphCall,
  ): Response {
    call.operation = "unknown";
    this.mediaCalls.push(`url ${id}`);
    if (!holds.some((n) => n.phoneNumberId === held.phoneNumberId)) {
      return graphError(400, {
        message: `Unsupported get request. Object with ID '${id}' does not exist`,
        code: 100,
      });
    }
    return Response.json({
      messaging_product: "whatsapp",
      url: `${MEDIA_DOWNLOAD_URL}?mid=${encodeURIComponent(id)}`,
      mime_type: held.mimeType,
      sha256: "0".repeat(64),
      file_size: held.bytes.byteLength,
      id,
    });
  }

  /**
   * GET of a media `url` (Meta, "Download Media"): the bytes with their `Content-Type`, to the
   * Bearer token of the number that received them; 404 for another token or an unknown `mid`.
   */
  downloadMedia(request: { url: string; headers: Headers }): Response {
    const id = new URL(request.url).searchParams.get("mid") ?? "";
    this.mediaCalls.push(`download ${id}`);
    const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const held = this.media.get(id);
    const owner = held && [...this.numbers.values()].find((n) => n.phoneNumberId === held.phoneNumberId);
    if (!held || !owner || owner.accessToken !== token) return new Response("Not Found", { status: 404 });
    return new Response(held.bytes.slice(), {
      headers: { "Content-Type": held.mimeType, "Content-Length": String(held.bytes.byteLength) },
    });
  }

  /** Takes the first queued fault of `operation`, if any. */
  private takeFault(operation: GraphOperation): Fault | undefined {
    const index = this.faults.findIndex((f) => f.operation === operation);
    return index < 0 ? undefined : this.faults.splice(index, 1)[0];
  }

  /** GET /{version}/{phone number id}: `PhoneNumberInfo`, default fields plus those of `fields`. */
  private phoneNumber(number: FakeNumber, url: URL): Response {
    const answer: Record<string, unknown> = {
      id: number.phoneNumberId,
      display_phone_number: number.displayPhoneNumber,
      verified_name: number.verifiedName,
      quality_rating: number.qualityRating ?? "GREEN",
    };
    const extra: Record<string, unknown> = {
      name_status: "APPROVED",
      code_verification_status: "VERIFIED",
      throughput: { level: number.throughputLevel ?? "STANDARD" },
    };
    for (const field of (url.searchParams.get("fields") ?? "").split(",").filter(Boolean)) {
      if (field in answer) continue;
      if (!(field in extra)) {
        return graphError(400, {
          message: "Invalid field requested. Available fields: name_status, code_verification_status",
          code: 100,
        });
      }
      answer[field] = extra[field];
    }
    return Response.json(answer);
  }

  /**
   * GET /{version}/{WABA id}/phone_numbers?fields=&limit=&after=: the WABA's numbers, in the order
   * they were added, as `WhatsAppBusinessAccountPhoneNumber` (`status` LINKED); `paging.cursors`
   * and, while more follow, `paging.next`, as {@link listTemplates} pages. Without `fields`, the
   * fields of the document's "single_phone_number" example (id, display_phone_number,
   * verified_name, status, quality_rating); with it, `id` and those named, and error 100 for a
   * field the fake does not serve. A page holds `limit` numbers (1 to 100, default 25) at most,
   * and never more than the fake's `phoneNumberPageSize`.
   */
  private listPhoneNumbers(wabaId: string, url: URL): Response {
    const all = [...this.numbers.values()].filter((n) => n.wabaId === wabaId);
    const served = ["id", "display_phone_number", "verified_name", "status", "quality_rating"];
    const asked = url.searchParams.get("fields")?.split(",").filter(Boolean) ?? served;
    const unknown = asked.filter((field) => !served.includes(field));
    if (unknown.length > 0) {
      return graphError(400, {
        message: `(#100) Tried accessing nonexisting field (${unknown.join(", ")})`,
        code: 100,
      });
    }
    const limit = Math.min(
      this.phoneNumberPageSize,
      Math.min(100, Math.max(1, Number(url.searchParams.get("limit")) || 25)),
    );
    const after = url.searchParams.get("after");
    const start = after ? Number(atob(after)) + 1 : 0;
    const page = all.slice(start, start + limit);
    const data = page.map((number) => {
      const fields: Record<string, unknown> = {
        id: number.phoneNumberId,
        display_phone_number: number.displayPhoneNumber,
        verified_name: number.verifiedName,
        status: "LINKED",
        quality_rating: number.qualityRating ?? "GREEN",
      };
      return Object.fromEntries(Object.entries(fields).filter(([k]) => k === "id" || asked.includes(k)));
    });
    if (data.length === 0) return Response.json({ data });
    const cursors = { before: templateCursor(start), after: templateCursor(start + data.length - 1) };
    if (start + data.length >= all.length) return Response.json({ data, paging: { cursors } });
    const next = new URL(url);
    next.searchParams.set("after", cursors.after);
    return Response.json({ data, paging: { cursors, next: next.toString() } });
  }

  /** POST /{version}/{phone number id}/messages: checks, records, queues statuses, answers. */
  private async send(number: FakeNumber, body: unknown, call: GraphCall): Promise<Response> {
    if (isRecord(body) && body.status === "read") return this.markRead(number, body);
    const problems = checkBody("sendMessage", body);
    if (!isRecord(body) || problems.length > 0) {
      this.invalidBodies.push({ phoneNumberId: number.phoneNumberId, body, problems });
      return invalidParameter(problems);
    }
    const template = body.type === "template" && isRecord(body.template) ? body.template : undefined;
    const templateRow = template && this.findTemplate(number.wabaId, template);
    if (template && templateRow?.status !== "APPROVED") {
      const refusal = (templateRow && TEMPLATE_REFUSALS[templateRow.status]) ?? TEMPLATE_MISSING;
      return graphError(400, refusal);
    }
    // `to` wins over `recipient` (reading j): a BSUID send is one without `to`.
    const byUserId = body.to === undefined ? String(body.recipient) : undefined;
    if (byUserId !== undefined && templateRow && needsNumber(templateRow)) {
      return graphError(400, BSUID_NOT_SUPPORTED);
    }
    const fault = this.takeFault("sendMessage");
    if (fault?.kind === "error" || fault?.kind === "drop") return faultAnswer(fault);

    const wamid = newWamid();
    const to = byUserId ?? String(body.to);
    call.wamid = wamid;
    this.sent.push({ phoneNumberId: number.phoneNumberId, body, wamid });
    this.sendsByWamid.set(wamid, { number, to });
    const category = templateRow ? templateRow.category.toLowerCase() : "service";
    const opaque =
      typeof body.biz_opaque_callback_data === "string" ? body.biz_opaque_callback_data : undefined;
    this.queueStatuses(number, wamid, to, category, opaque);

    if (fault?.kind === "hang") return faultAnswer(fault);
    if (fault?.kind === "lost") {
      return graphError(500, {
        message: "An unexpected error has occurred. Please retry your request later.",
        code: 2,
        is_transient: true,
      });
    }
    return Response.json({
      messaging_product: "whatsapp",
      contacts: [byUserId === undefined ? { input: to, wa_id: digits(to) } : { input: to, user_id: to }],
      // `message_status` (`MessageStatus`) comes with template messages only.
      messages: [template ? { id: wamid, message_status: "accepted" } : { id: wamid }],
    });
  }

  /**
   * A read receipt, with the typing indicator when asked: `MarkMessageRequestPayload` (`{
   * messaging_product: "whatsapp", status: "read", message_id }`) with an optional
   * `typing_indicator: { type: "text" }`, nothing else (schema.ts reading l, checked by
   * `checkBody("markRead")`; a refused body is recorded in {@link invalidBodies}). The message must
   * be one the number received (Meta: error 100 otherwise). Answers `{ success: true }`
   * (`MarkMessageResponsePayload`), as Meta's "Mark messages as read" guide shows; or
   * {@link readFault} while it is set.
   */
  private markRead(number: FakeNumber, body: Record<string, unknown>): Response {
    const problems = checkBody("markRead", body);
    if (problems.length > 0) {
      this.invalidBodies.push({ phoneNumberId: number.phoneNumberId, body, problems });
      return invalidParameter(problems);
    }
    if (this.incomingByWamid.get(String(body.message_id)) !== number.phoneNumberId)
      return invalidParameter([`message_id: no message ${String(body.message_id)} to this number`]);
    if (this.readFault)
      return graphError(this.readFault.status ?? 400, {
        code: this.readFault.code,
        message: this.readFault.message,
        ...(this.readFault.details === undefined ? {} : { error_data: { details: this.readFault.details } }),
      });
    this.reads.push({
      phoneNumberId: number.phoneNumberId,
      messageId: String(body.message_id),
      typingIndicator: body.typing_indicator !== undefined,
      at: this.now(),
    });
    return Response.json({ success: true });
  }

  private findTemplate(wabaId: string, template: Record<string, unknown>): FakeTemplate | undefined {
    const language = isRecord(template.language) ? template.language.code : undefined;
    return this.templates.find(
      (t) => t.wabaId === wabaId && t.name === template.name && t.language === language,
    );
  }

  /**
   * GET /{version}/{WABA id}/message_templates?name=&limit=&after=: `data[]`, `paging.cursors`
   * and, while more follow, `paging.next` (this URL with `after`; the document's `PagingInfo`).
   * A page holds `limit` templates at most, and never more than the fake's `templatePageSize`.
   */
  private listTemplates(wabaId: string, url: URL): Response {
    const name = url.searchParams.get("name");
    const all = this.templates.filter((t) => t.wabaId === wabaId && (name === null || t.name === name));
    const limit = Math.min(this.templatePageSize, Math.max(1, Number(url.searchParams.get("limit")) || 25));
    const after = url.searchParams.get("after");
    const start = after ? Number(atob(after)) + 1 : 0;
    const page = all.slice(start, start + limit);
    const data = page.map(({ id, name, language, category, status, components }) => ({
      id,
      name,
      language,
      category,
      status,
      components,
    }));
    if (data.length === 0) return Response.json({ data });
    const cursors = { before: templateCursor(start), after: templateCursor(start + data.length - 1) };
    if (start + data.length >= all.length) return Response.json({ data, paging: { cursors } });
    const next = new URL(url);
    next.searchParams.set("after", cursors.after);
    return Response.json({ data, paging: { cursors, next: next.toString() } });
  }

  /** POST /{version}/{WABA id}/message_templates: a PENDING template; answers `{ id, status, category }`. */
  private createTemplate(wabaId: string, body: unknown): Response {
    const problems = checkBody("createTemplate", body);
    if (!isRecord(body) || problems.length > 0) return invalidParameter(problems);
    const { name, language, category, components } = body;
    if (typeof name !== "string" || typeof language !== "string" || typeof category !== "string") {
      return invalidParameter(["name, language and category are required"]);
    }
    if (this.templates.some((t) => t.wabaId === wabaId && t.name === name && t.language === language)) {
      return graphError(400, {
        message: "Invalid parameter",
        code: 100,
        error_subcode: 2388024,
        error_user_title: "Content in This Language Already Exists",
      });
    }
    const created = this.addTemplate({
      wabaId,
      name,
      language,
      category,
      status: "PENDING",
      components: Array.isArray(components) ? components : [],
    });
    return Response.json({ id: created.id, status: created.status, category: created.category });
  }

  private seconds(offset = 0): string {
    return String(Math.floor(this.now() / 1000) + offset);
  }

  /**
   * Queues sent, delivered and read (`Statuses`). Per Meta's status webhook reference, `pricing`
   * and `conversation` come with sent and with one of delivered or read (here delivered);
   * `biz_opaque_callback_data` comes only when the send carried it. A recipient the fake knows
   * a BSUID of ({@link addUser}) is also named by it ("Business-scoped user IDs"): the status
   * gains `recipient_user_id` (and `recipient_parent_user_id`), and the value a `contacts[]` entry
   * (`user_id`, `wa_id` when the number is known, `parent_user_id`, and on delivered and read
   * `profile.username`); a send by BSUID to a user whose number is not known has no `recipient_id`.
   */
  private queueStatuses(number: FakeNumber, wamid: string, to: string, category: string, opaque?: string) {
    const conversationId = Array.from(randomBytes(16), (b) => b.toString(16).padStart(2, "0")).join("");
    const pricing = { billable: category !== "service", pricing_model: "PMP", category };
    (["sent", "delivered", "read"] as const).forEach((status, step) => {
      const priced = status !== "read";
      const conversation = {
        id: conversationId,
        ...(status === "sent" ? { expiration_timestamp: this.seconds(24 * 60 * 60) } : {}),
        origin: { type: category },
      };
      const user = this.userOf(isBsuid(to) ? { userId: to } : { digits: digits(to) });
      const recipientId = isBsuid(to) ? user?.phoneNumber : digits(to);
      const value = {
        id: wamid,
        status,
        timestamp: this.seconds(step),
        ...(recipientId === undefined ? {} : { recipient_id: recipientId }),
        ...(user ? userIdsOf(user, "recipient_") : {}),
        ...(opaque === undefined ? {} : { biz_opaque_callback_data: opaque }),
        ...(priced ? { conversation, pricing } : {}),
      };
      const contacts = user ? [contactEntry(user, { username: status !== "sent" })] : undefined;
      this.queueMessagesChange(
        number,
        { ...(contacts ? { contacts } : {}), statuses: [value] },
        wamid,
        status,
      );
    });
  }

  /**
   * Queues an incoming message from `from` (digits), or from a user by BSUID (`userId`, with the
   * `username` and `parentUserId` given, which the fake then knows: {@link addUser}); a user known
   * by both is named by both. A user with a BSUID and no number is named by `from_user_id` and no
   * `from`, the `contacts[]` entry by `user_id` and no `wa_id` ("Business-scoped user IDs").
   */
  private queueIncomingMessage(
    message: IncomingSender & { phoneNumberId: string; profileName?: string },
    content: Record<string, unknown>,
  ): string {
    const number = this.numbers.get(message.phoneNumberId);
    if (!number) throw new Error(`No number ${message.phoneNumberId}`);
    const wamid = newWamid();
    const from = message.from === undefined ? undefined : digits(message.from);
    if (message.userId) {
      const known = this.users.get(message.userId);
      this.addUser({
        ...known,
        userId: message.userId,
        ...(from === undefined ? {} : { phoneNumber: from }),
        ...(message.username === undefined ? {} : { username: message.username }),
        ...(message.parentUserId === undefined ? {} : { parentUserId: message.parentUserId }),
      });
    }
    const user = this.userOf(message.userId ? { userId: message.userId } : { digits: from });
    if (from === undefined && !user) throw new Error("An incoming message needs `from` or `userId`");
    const name = message.profileName ?? from ?? user?.username ?? "";
    const entry = user ? contactEntry(user, { username: true, name }) : { profile: { name }, wa_id: from };
    const sender = {
      ...(from === undefined ? {} : { from }),
      ...(user ? userIdsOf(user, "from_") : {}),
    };
    this.incomingByWamid.set(wamid, number.phoneNumberId);
    this.queueMessagesChange(number, {
      contacts: [entry],
      messages: [{ ...sender, id: wamid, timestamp: this.seconds(), ...content }],
    });
    return wamid;
  }

  /**
   * Queues a `user_id_update` webhook for the number's WABA: the user of BSUID `previous` is now
   * `current` (a BSUID follows the user's number); the fake knows them by `current` from now on.
   * The value is schema.ts `USER_ID_UPDATE_VALUE` (reading j): `user_id_update: [{ wa_id?,
   * user_id: { previous, current }, timestamp }]`, `wa_id` when the user's number is known.
   */
  queueUserIdUpdate(update: { phoneNumberId: string; previous: string; current: string }): void {
    const number = this.numbers.get(update.phoneNumberId);
    if (!number) throw new Error(`No number ${update.phoneNumberId}`);
    const known = this.users.get(update.previous);
    this.users.delete(update.previous);
    this.addUser({ ...known, userId: update.current });
    const entry = {
      ...(known?.phoneNumber === undefined ? {} : { wa_id: known.phoneNumber }),
      user_id: { previous: update.previous, current: update.current },
      timestamp: this.seconds(),
    };
    const value = {
      messaging_product: "whatsapp",
      metadata: {
        display_phone_number: digits(number.displayPhoneNumber),
        phone_number_id: number.phoneNumberId,
      },
      user_id_update: [entry],
    };
    const body = {
      object: "whatsapp_business_account",
      entry: [{ id: number.wabaId, changes: [{ value, field: "user_id_update" }] }],
    };
    this.queue.push({ body: JSON.stringify(body) });
  }

  /** Queues a `messages` change of the number's WABA (`WebhookPayload` > `Entry` > `Change`). */
  private queueMessagesChange(
    number: FakeNumber,
    fields: Record<string, unknown>,
    wamid?: string,
    status?: string,
  ): void {
    const value = {
      messaging_product: "whatsapp",
      metadata: {
        display_phone_number: digits(number.displayPhoneNumber),
        phone_number_id: number.phoneNumberId,
      },
      ...fields,
    };
    const body = {
      object: "whatsapp_business_account",
      entry: [{ id: number.wabaId, changes: [{ value, field: "messages" }] }],
    };
    this.queue.push({ body: JSON.stringify(body), wamid, status });
  }
}
