import { z } from "@hono/zod-openapi";
import type { ListQuery } from "../../db/queries/message-list";
import { ContactCardsSendSchema } from "../../lib/contact-cards";
import { InteractiveSchema } from "../../lib/interactive";
import { LocationSchema } from "../../lib/location";
import { mediaUrlProblem } from "../../lib/media-url";
import { toE164 } from "../../lib/phone";
import { PollSchema } from "../../lib/poll";
import { MessageMetadataSchema } from "../../messages/metadata";
import { isReactionEmoji } from "../../messages/reply";
import { BUTTON_SUB_TYPES } from "../../messages/template";
import { MESSAGE_STATUSES, SENDABLE_TYPES, STORED_TYPES } from "../../messages/types";
import { ContactRefSchema } from "../contacts/contacts.schemas";
import { ERASED_NOTE, UserId } from "../openapi";
import { CursorParam, Limit, once, PageLinksSchema, TimeBound } from "../paging";

/** Most recipients of one send: this API's limit (`to_number` of `POST /v1/chatapp/messages`). */
export const MAX_RECIPIENTS = 1000;
/** Furthest `scheduled_at` may lie ahead: 30 days, this API's limit (docs/messages.md, Sending messages). */
export const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 3600 * 1000;

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/**
 * What `media_url` takes and what becomes of it, for the send and campaign documents (docs/security.md,
 * Media; src/media/rules.ts).
 */
export const MEDIA_URL_DESCRIPTION =
  "Public https URL of the media, on port 443, at most 2,048 characters; required for image, video, audio, document. " +
  "The service fetches it once per send (or campaign), following at most 3 redirects and only within the same host, " +
  "and stores the file; the gateway gets a link of ours to that copy, never this URL. WhatsApp's limits apply: " +
  "image ≤ 5 MB (image/jpeg, image/png), video ≤ 16 MB (video/mp4, video/3gpp), audio ≤ 16 MB (audio/aac, audio/amr, " +
  "audio/mpeg, audio/mp4, audio/ogg), document ≤ 100 MB (PDF, plain text, Word, Excel, PowerPoint). Media that cannot " +
  "be fetched or break a limit are 422 `media_unavailable`, before anything is charged; nothing is fetched for an " +
  "account whose balance cannot pay (402 `insufficient_balance`). The copy is deleted once no message can still " +
  "need it (or `MEDIA_RETENTION_DAYS` after the messages' time; a running campaign keeps it until it ends), and " +
  "its messages then show `metadata.media_expired_at`. Shown back as given. " +
  "When the deployment sets `MEDIA_ALLOW_HTTP_LOCALHOST=true` (local development), `http://` or `https://` URLs of " +
  "`localhost` or `127.0.0.1` on any port are accepted too (redirects still only within the same host); " +
  "otherwise they are 422 `validation_failed` on `media_url`.";

/** Length in characters (Unicode code points), not UTF-16 code units: an emoji counts once. */
const characters = (value: string) => [...value].length;

/**
 * The types whose object travels in a send's field of the same name (`template`, `location` …),
 * as the Cloud API's message object carries it, and never in `content` or `media_url`.
 */
const OWN_FIELD_TYPES = ["reaction", "template", "location", "interactive", "contacts", "poll"] as const;

/** The refinement context of a zod `superRefine`. */
type RefineContext = z.core.$RefinementCtx;

/**
 * Each structured type's object travels in the field named after it, and only there: for each of
 * `types`, an issue on that field when the body is of the type without it ("required for …"), or
 * has it while of another type ("only for …"). Shared by sends and campaigns.
 */
export function checkOwnFields<T extends string>(
  body: { type: string } & Partial<Record<T, unknown>>,
  types: readonly T[],
  ctx: RefineContext,
): void {
  for (const type of types) {
    if (body.type === type && !body[type])
      ctx.addIssue({ code: "custom", path: [type], message: `required for ${type}` });
    if (body.type !== type && body[type])
      ctx.addIssue({ code: "custom", path: [type], message: `only for ${type}` });
  }
}

/**
 * The content rules of a send (docs/messages.md, Sending messages), shared by sends and campaigns: `content`
 * required for text (1–4,096 characters) and an optional caption (≤ 1,024) for image, video and
 * document but not audio; `media_url` required for media (https, port 443, public host) and
 * refused for text.
 * Adds an issue on `content` or `media_url` for each rule broken.
 */
export function checkContent(
  body: { type: (typeof SENDABLE_TYPES)[number]; content?: string | null; media_url?: string | null },
  ctx: RefineContext,
): void {
  const content = body.content ?? null;
  const length = content === null ? 0 : characters(content);
  if (OWN_FIELD_TYPES.some((type) => type === body.type)) {
    // What these carry travels in their own field (OWN_FIELD_TYPES).
    if (content !== null)
      ctx.addIssue({ code: "custom", path: ["content"], message: `not allowed for ${body.type}` });
    if (body.media_url != null)
      ctx.addIssue({ code: "custom", path: ["media_url"], message: `not allowed for ${body.type}` });
  } else if (body.type === "text") {
    if (content === null || content.length === 0)
      ctx.addIssue({ code: "custom", path: ["content"], message: "required for text" });
    else if (length > 4096)
      ctx.addIssue({ code: "custom", path: ["content"], message: "at most 4096 characters" });
    if (body.media_url != null)
      ctx.addIssue({ code: "custom", path: ["media_url"], message: "not allowed for text" });
  } else {
    if ((body.type === "audio" || body.type === "sticker") && content !== null) {
      ctx.addIssue({ code: "custom", path: ["content"], message: `${body.type} carries no caption` });
    } else if (length > 1024) {
      ctx.addIssue({ code: "custom", path: ["content"], message: "captions are at most 1024 characters" });
    }
    // The local-development exception passes here; the handler holds it to the deployment's
    // MEDIA_ALLOW_HTTP_LOCALHOST (src/media/fetch.ts `requireMediaUrlAllowed`).
    const problem =
      body.media_url == null
        ? `required for ${body.type}`
        : mediaUrlProblem(body.media_url, { allowLocalhost: true });
    if (problem) ctx.addIssue({ code: "custom", path: ["media_url"], message: problem });
  }
}

/** `scheduled_at`, when given, must lie in the future and at most 30 days ahead. */
export function checkScheduledAt(value: string | null | undefined, ctx: RefineContext): void {
  if (value != null) {
    const at = Date.parse(value);
    const now = Date.now();
    if (at <= now) ctx.addIssue({ code: "custom", path: ["scheduled_at"], message: "must be in the future" });
    else if (at > now + MAX_SCHEDULE_AHEAD_MS)
      ctx.addIssue({ code: "custom", path: ["scheduled_at"], message: "at most 30 days ahead" });
  }
}

/**
 * A template send's `template` (docs/gateways.md, Message templates): the approved template's `name` and
 * `language`, and its `variables`: `body` fills `{{1}}`, `{{2}}`… in order; `buttons` give a URL
 * button's suffix (`url`) or a quick reply's payload (`quick_reply`) by the button's 0-based index.
 */
export const TemplateSendSchema = z
  .strictObject({
    name: z.string().min(1).max(512).openapi({ example: "order_update" }),
    language: z.string().min(2).max(16).openapi({ example: "en_US" }),
    variables: z
      .strictObject({
        body: z
          .array(z.string().min(1).max(1024))
          .max(100)
          .default([])
          .openapi({
            description: "Values of `{{1}}`, `{{2}}`… of the body, in order.",
            example: ["Ana", "A-17"],
          }),
        buttons: z
          .array(
            z.strictObject({
              index: z
                .int()
                .min(0)
                .max(9)
                .openapi({ format: "int32", description: "The button's position, 0-based." }),
              sub_type: z.enum(BUTTON_SUB_TYPES),
              parameter: z.string().min(1).max(2000).openapi({
                description: "A `url` button's URL suffix, or a `quick_reply` button's payload.",
              }),
            }),
          )
          .max(10)
          .default([]),
      })
      .default({ body: [], buttons: [] }),
  })
  .openapi("TemplateSend");

/**
 * A reaction to send (docs/messages.md, Replies and reactions): the account's message to react to and one
 * emoji (a single grapheme, {@link isReactionEmoji}), or "" to take the reaction off.
 */
export const ReactionSchema = z
  .strictObject({
    message_id: z.uuid().max(36).openapi({ description: "The message to react to (one of the account's)." }),
    emoji: z
      .string()
      .max(64)
      .refine(isReactionEmoji, "one emoji, or an empty string to remove the reaction")
      .openapi({ example: "👍" }),
  })
  .openapi("ReactionSend");

/**
 * A location to send (docs/messages.md, Sending messages → Locations): the Cloud API's `location` object
 * (Meta's OpenAPI document, `LocationMessage`) with numbers for the coordinates; no `url`, which
 * only a received location has.
 */
export const LocationSendSchema = z
  .strictObject({
    latitude: LocationSchema.shape.latitude.openapi({ example: 38.7223 }),
    longitude: LocationSchema.shape.longitude.openapi({ example: -9.1393 }),
    name: LocationSchema.shape.name.openapi({ example: "Lisbon store" }),
    address: LocationSchema.shape.address.openapi({ example: "Rua Augusta 1, 1100-048 Lisboa" }),
  })
  .openapi("LocationSend");

/** `simulate_typing` of a send or a campaign (docs/messages.md, Typing before a send). */
export const SimulateTyping = z
  .boolean()
  .optional()
  .openapi({
    description:
      'Show "typing…" to each recipient before its message (docs/messages.md, Typing before a send): 1 s per 30 ' +
      "characters of the text or caption, 1–8 s, within the session's pacing. Best effort; the outcome is in " +
      "the message's `metadata.typing` once sent. Default false.",
  });

/**
 * The send body (`POST /v1/chatapp/messages` in openapi.json) with this API's rules (docs/messages.md,
 * Sending messages): numbers normalised to E.164 (an invalid one named by its index, duplicates
 * sent once), `content` required for text (1–4,096) and an optional caption (≤ 1,024) for
 * image, video and document but not audio, `media_url` required for media (https, port 443,
 * public host; its file is fetched and checked by the send itself, src/media/store.ts),
 * `delay_between` 0–60,000 ms (default 500), `scheduled_at` in the future and at most 30 days
 * ahead.
 */
export const SendBody = z
  .strictObject({
    chatapp_session_id: z
      .uuid()
      .max(36)
      .openapi({ description: "Session to send from; it must be `connected`." }),
    to_number: z
      .array(z.string().max(32))
      .min(1)
      .max(MAX_RECIPIENTS)
      .optional()
      .openapi({
        description:
          "Recipients in international format. With `to_user_id`, 1 to 1,000 recipients in all, each once; at least one but for `reaction`, which goes to the reacted message's chat.",
        example: ["+14155552671"],
      }),
    to_user_id: z
      .array(UserId)
      .min(1)
      .max(MAX_RECIPIENTS)
      .optional()
      .openapi({
        description:
          "Recipients known by the network's id instead of a number (docs/contacts.md, Contacts): a business-scoped user id (Cloud API) or a LID (`<digits>@lid`; WAHA, Evolution API). A kind the session's gateway cannot send to: 422 `recipient_not_supported` naming it, before any charge.",
        example: ["US.13491208655302741918"],
      }),
    type: z.enum(SENDABLE_TYPES),
    content: z.string().nullish().openapi({
      maxLength: 4_096,
      description:
        "Text body (1–4,096 characters) for `text`; optional caption (≤ 1,024) for image, video, document; not allowed for audio or reaction.",
    }),
    media_url: z.string().nullish().openapi({ maxLength: 2_048, description: MEDIA_URL_DESCRIPTION }),
    template: TemplateSendSchema.optional().openapi({
      description:
        "For `template` (Cloud API sessions only): an APPROVED template of the session and its variables. " +
        "Unknown or unapproved: 422 `template_not_found`; a missing or extra variable: 422 `validation_failed` naming it.",
    }),
    reply_to: z.uuid().max(36).nullish().openapi({
      description:
        "Quote one of the account's messages of this chat (docs/messages.md, Replies and reactions): an outgoing message of the session to the recipient, or an incoming one from them. One recipient only. Unknown: 422 `reply_to_not_found`; another chat: 422 `reply_to_other_chat`; not yet on the network: 409 `reply_to_not_sent`.",
    }),
    reaction: ReactionSchema.optional().openapi({
      description:
        "For `reaction`: the message to react to (as `reply_to`, errors included) and the emoji; an empty `emoji` takes the session's reaction off. `to_number` must be that message's chat (422 `reaction_other_chat`). Priced as a text.",
    }),
    location: LocationSendSchema.optional().openapi({
      description:
        "For `location`: the point (`latitude`, `longitude` in decimal degrees) and, optionally, the place's `name` and `address` (each ≤ 1,000 characters). Stored in `metadata.location`; `content` shows the name (else the address). Priced `PRICE_LOCATION`.",
    }),
    contacts: ContactCardsSendSchema.optional().openapi({
      description:
        "For `contacts`: 1–5 contact cards in the Cloud API's `contacts` shape (docs/messages.md, Sending messages → Contact cards): each a `name` with its `formatted_name`, at least one of `phones` (`wa_id`, the number's WhatsApp id, adds a Message button), and optionally `emails`, `org` and `urls`; `type` of a phone, email or URL is `HOME` or `WORK`. Linked devices receive them as vCards. Stored in `metadata.contacts`; `content` shows the names. Priced `PRICE_CONTACTS`.",
    }),
    interactive: InteractiveSchema.optional().openapi({
      description:
        'For `interactive`: reply buttons (`type: "button"`, 1–3 buttons) or a list (`type: "list"`, up to 10 rows in up to 10 sections), in the Cloud API\'s `interactive` shape and limits (docs/messages.md, Sending messages → Buttons and lists). A contact\'s tap arrives as an incoming `interactive_reply` message whose `reply_to` is this one. A kind the session\'s gateway cannot send: 422 `type_not_supported_by_gateway`, before any charge. Priced `PRICE_INTERACTIVE`.',
    }),
    poll: PollSchema.optional().openapi({
      description:
        "For `poll` (linked devices only: the sandbox, WAHA, Evolution API): a `question` (1–255 characters), 2–12 unique `options` (1–100 characters each) and `multiple_answers` (default false: one choice), WhatsApp's limits (docs/messages.md, Sending messages → Polls). Evolution API takes at most 10 options; a Cloud API session none: 422 `type_not_supported_by_gateway`, before any charge. Stored in `metadata.poll`, `content` shows the question; contacts' votes are kept in `metadata.poll_votes` and `metadata.poll_counts`, each change recorded as `poll.voted`. Priced `PRICE_POLL`.",
    }),
    delay_between: z.int().min(0).max(60_000).default(500).openapi({
      format: "int32",
      description: "Milliseconds between this session's gateway calls for these messages.",
    }),
    scheduled_at: z.iso.datetime({ offset: true }).max(64).nullish().openapi({
      description:
        "Send later: ISO 8601 time in the future, at most 30 days ahead. Messages are `scheduled` until then.",
    }),
    simulate_typing: SimulateTyping,
    mark_read: z.boolean().optional().openapi({
      description:
        "With `reply_to` naming a contact's message: mark it, and the chat's earlier ones, read before the reply goes out, as `POST /v1/chatapp/messages/{id}/read` does (docs/messages.md, Chat actions). Needs the `messages:write` scope too; a receipt the gateway refuses fails the send before anything is charged. Default false.",
    }),
  })
  .superRefine((body, ctx) => {
    if (body.mark_read && body.reply_to == null)
      ctx.addIssue({
        code: "custom",
        path: ["mark_read"],
        message: "needs reply_to: the contact's message to mark read",
      });
    if (body.to_number === undefined && body.to_user_id === undefined && body.type !== "reaction")
      ctx.addIssue({ code: "custom", path: ["to_number"], message: "required (or to_user_id)" });
    if ((body.to_number?.length ?? 0) + (body.to_user_id?.length ?? 0) > MAX_RECIPIENTS)
      ctx.addIssue({
        code: "custom",
        path: ["to_user_id"],
        message: `at most ${MAX_RECIPIENTS} recipients in all`,
      });
    body.to_number?.forEach((number, index) => {
      if (!toE164(number))
        ctx.addIssue({ code: "custom", path: ["to_number", index], message: "invalid phone number" });
    });
    checkContent(body, ctx);
    checkOwnFields(body, OWN_FIELD_TYPES, ctx);
    if (body.type === "reaction" && body.reply_to != null)
      ctx.addIssue({
        code: "custom",
        path: ["reply_to"],
        message: "a reaction names its message in reaction.message_id",
      });
    if (
      (body.reply_to != null || body.type === "reaction") &&
      (body.to_number?.length ?? 0) + (body.to_user_id?.length ?? 0) > 1
    )
      ctx.addIssue({
        code: "custom",
        path: [body.type === "reaction" ? "reaction" : "reply_to"],
        message: "only with one recipient: a reply or reaction belongs to one chat",
      });
    checkScheduledAt(body.scheduled_at, ctx);
  });

export const MessageSchema = z
  .object({
    id: z.uuid(),
    chatapp_session_id: z.uuid().nullable(),
    campaign_id: z.string().nullable(),
    otp_id: z.uuid().nullable(),
    provider_message_id: z.string().nullable(),
    from_number: z
      .string()
      .nullable()
      .openapi({
        description:
          "The sender's number (E.164) of an incoming message, null for one known by a user id alone; the session's number for an outgoing one." +
          ERASED_NOTE,
      }),
    to_number: z
      .string()
      .nullable()
      .openapi({
        description:
          "The recipient's number (E.164) of an outgoing message, null when it was sent to a user id (`contact.user_id`); the session's number for an incoming one." +
          ERASED_NOTE,
      }),
    contact: ContactRefSchema.nullable().openapi({
      description:
        "Who is on the other side of the chat, by number, user id (BSUID or LID) or both (docs/contacts.md, Contacts): the recipient of an outgoing message, the sender of an incoming one. `id` is null where the service keeps no contact for them (the address alone).",
    }),
    type: z.enum(STORED_TYPES),
    content: z.string().nullable().openapi({
      description:
        "The text or caption; a reaction's emoji (\"\" when it takes one off); a location's name, else its address (its point is in `metadata.location`).",
    }),
    reply_to: z.uuid().nullable().openapi({
      description:
        "The message this one quotes (a reply, sent or received), or for a reaction the message it reacts to; null for neither (docs/messages.md, Replies and reactions).",
    }),
    media_url: z.string().nullable().openapi({
      description: "The `media_url` the message was sent with, as given (the gateway got a copy).",
    }),
    status: z.enum(MESSAGE_STATUSES),
    direction: z.enum(["incoming", "outgoing"]),
    reason: z.string().nullable().openapi({
      description:
        "Why the message failed: `recipient_not_on_chatapp`, `retries_exhausted`, `message_expired`, `session_banned`, `session_deleted`, `dispatch_failed`, `enqueue_failed`, `outcome_unknown` (the gateway could not be asked whether it had sent it within `OUTCOME_SETTLE_HOURS`), `media_not_stored` (a media message without a stored copy: queued before media were stored, or still waiting when its copy passed its retention), or the gateway's reason.",
    }),
    cost: z.number().openapi({ description: "Cost in major units; refunded when the message fails." }),
    sent_at: timestamp.nullable(),
    delivered_at: timestamp.nullable(),
    read_at: timestamp.nullable(),
    metadata: MessageMetadataSchema.openapi("MessageMetadata"),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Message");

export const SentMessageSchema = MessageSchema.pick({
  id: true,
  chatapp_session_id: true,
  campaign_id: true,
  from_number: true,
  to_number: true,
  type: true,
  content: true,
  reply_to: true,
  media_url: true,
  status: true,
  direction: true,
  cost: true,
  sent_at: true,
  delivered_at: true,
  read_at: true,
  created_at: true,
  updated_at: true,
});

export const SendResponseSchema = z.object({
  success: z.literal(true),
  message: z.string().openapi({ example: "Message queued for sending." }),
  data: z.object({
    messages: z.array(SentMessageSchema),
    count: z.int(),
    total_cost: z.number(),
    new_balance: z.number(),
    remaining_messages: z
      .int()
      .openapi({ description: "How many more messages of this type the new balance covers." }),
  }),
});

export const MessageEnvelopeSchema = z.object({ success: z.literal(true), data: MessageSchema });

/** Body of `PATCH /v1/chatapp/messages/{id}`: the text's new content (1–4,096 characters, as a send's). */
export const EditBody = z
  .strictObject({
    content: z
      .string()
      .min(1)
      .refine((value) => characters(value) <= 4096, "at most 4096 characters")
      .openapi({ maxLength: 4_096, description: "The text's new content, 1–4,096 characters." }),
  })
  .openapi("MessageEdit");

export const MarkReadResponseSchema = z.object({
  success: z.literal(true),
  data: MessageSchema,
  marked: z.int().openapi({
    description:
      "How many of the chat's incoming messages this call moved to `read` (0 when all already were).",
  }),
});

export const MessageListSchema = z.object({
  success: z.literal(true),
  data: z.array(MessageSchema),
  ...PageLinksSchema,
});

/** Most numbers in `filter[to_number]`, counting each comma-separated one. */
export const MAX_FILTER_NUMBERS = 100;

const SESSION_REF =
  /^(?:session_)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * A session named by its uuid, in any case, or by its `session_<uuid>` name (the `session_id`
 * parameter of `GET /v1/chatapp/messages` in openapi.json); parses to the lower-case uuid.
 */
export const SessionRef = z
  .string({ error: once("a session uuid or session_<uuid>") })
  .max(44, "a session uuid or session_<uuid>")
  .regex(SESSION_REF, "a session uuid or session_<uuid>")
  .transform((value) => value.replace(/^session_/, "").toLowerCase());

/** A phone number in international format; parses to E.164. */
const PhoneFilter = z
  .string({ error: once("invalid phone number") })
  .max(32, "invalid phone number")
  .transform((value, ctx) => {
    const e164 = toE164(value);
    if (!e164) ctx.addIssue({ code: "custom", message: "invalid phone number", input: value });
    return e164 ?? value;
  });

/**
 * `filter[to_number]`, gathered from all of its forms (see {@link listQuerySchema}) into a list of
 * values, each of which may hold several comma-separated numbers; parses to distinct E.164
 * numbers. Every bad number is reported under `filter[to_number]`, not under an index.
 */
const ToNumbersFilter = z
  .array(z.string().max(2_000, "invalid phone number"))
  .max(MAX_FILTER_NUMBERS, `at most ${MAX_FILTER_NUMBERS} numbers`)
  .transform((values, ctx) => {
    const parts = values.flatMap((value) => value.split(","));
    if (parts.length > MAX_FILTER_NUMBERS) {
      ctx.addIssue({ code: "custom", message: `at most ${MAX_FILTER_NUMBERS} numbers`, input: values });
      return [];
    }
    const numbers: string[] = [];
    for (const part of parts) {
      const e164 = toE164(part);
      if (e164) numbers.push(e164);
      else
        ctx.addIssue({ code: "custom", message: `invalid phone number: ${part.slice(0, 40)}`, input: part });
    }
    return [...new Set(numbers)];
  })
  .openapi({
    description:
      "Recipient numbers in international format, at most 100: repeat `filter[to_number][]=`, index " +
      "`filter[to_number][0]=`, or separate them with commas.",
  });

const listQueryShape = {
  "filter[to_number]": ToNumbersFilter.optional(),
  "filter[from_number]": PhoneFilter.optional().openapi({ description: "Sender number." }),
  "filter[user_id]": UserId.optional().openapi({
    description:
      "The messages of the contact ever known by this user id (a BSUID or a LID), both ways, whatever address each used (docs/contacts.md, Contacts).",
  }),
  "filter[status]": z
    .enum(MESSAGE_STATUSES, { error: once(`one of ${MESSAGE_STATUSES.join(", ")}`) })
    .optional(),
  "filter[direction]": z
    .enum(["incoming", "outgoing"], { error: once("one of incoming, outgoing") })
    .optional(),
  "filter[type]": z.enum(STORED_TYPES, { error: once(`one of ${STORED_TYPES.join(", ")}`) }).optional(),
  session_id: SessionRef.optional().openapi({
    description: "The session's uuid or its `session_<id>` name.",
  }),
  time_from: TimeBound.optional().openapi({ description: "Messages created at or after this time." }),
  time_to: TimeBound.optional().openapi({ description: "Messages created at or before this time." }),
  limit: Limit,
  cursor: CursorParam.optional(),
};

const TO_NUMBER_KEY = /^filter\[to_number\](?:\[\d*\])?$/;

/**
 * The message-list query (`GET /v1/chatapp/messages` in openapi.json) as one schema that parses
 * it, validates it and documents it. It reads the object Hono's query validator builds
 * (`c.req.queries()`: a string per parameter, an array for a repeated one) and first gathers
 * `filter[to_number]`, `filter[to_number][]` and `filter[to_number][<n>]` into one list under
 * `filter[to_number]` and drops parameters that are neither known nor filters. The object is
 * strict, so any other `filter[…]` (`filter[colour]`, `filter[status][]`) is refused under its own
 * name, and a parameter given twice fails its string schema. Errors are keyed by the query
 * parameter name.
 */
function listQuerySchema<Shape extends Partial<typeof listQueryShape>>(shape: Shape) {
  const known = new Set(Object.keys(shape));
  return z
    .transform((raw: unknown) => {
      if (typeof raw !== "object" || raw === null) return raw;
      const query: Record<string, unknown> = {};
      const toNumbers: unknown[] = [];
      for (const [key, value] of Object.entries(raw)) {
        if (TO_NUMBER_KEY.test(key)) toNumbers.push(...(Array.isArray(value) ? value : [value]));
        else if (known.has(key) || key.startsWith("filter[")) query[key] = value;
      }
      if (toNumbers.length > 0) query["filter[to_number]"] = toNumbers;
      return query;
    })
    .pipe(z.strictObject(shape));
}

/** Query of `GET /v1/chatapp/messages`. */
export const MessageListQuery = listQuerySchema(listQueryShape);

/** Query of `GET /v1/chatapp/messages/{session_id}/session`: the path names the session. */
const { session_id: _, ...sessionListShape } = listQueryShape;
export const SessionMessageListQuery = listQuerySchema(sessionListShape);

/** A parsed message-list query, as `c.req.valid("query")` gives it. */
export type MessageListParams = z.output<typeof MessageListQuery>;

/**
 * The parsed query as the list's database query takes it; `sessionId` (a parsed
 * {@link SessionRef}) replaces the query's `session_id` when the path names the session.
 */
export function toListQuery(params: MessageListParams, sessionId = params.session_id): ListQuery {
  return {
    filters: {
      toNumbers: params["filter[to_number]"],
      fromNumber: params["filter[from_number]"],
      userId: params["filter[user_id]"],
      status: params["filter[status]"],
      direction: params["filter[direction]"],
      type: params["filter[type]"],
      sessionId,
      timeFrom: params.time_from,
      timeTo: params.time_to,
    },
    limit: params.limit,
    cursor: params.cursor ?? null,
  };
}
