import { z } from "zod";
import { SEND_ATTEMPT_OUTCOMES } from "../db/queries/messages";
import { ContactCardSchema } from "../lib/contact-cards";
import { InteractiveReplySchema, InteractiveSchema } from "../lib/interactive";
import { LocationSchema } from "../lib/location";
import { log } from "../lib/log";
import { PollSchema, PollVoteSchema } from "../lib/poll";
import { formatTimestamp } from "../lib/time";
import { INCOMING_MEDIA_REASONS } from "../media/incoming";
import { SETTLED_BY } from "../moves/message";
import { BUTTON_SUB_TYPES } from "./template";

/*
 * A message's `metadata` (the `messages.metadata` JSON column, shown as `Message.metadata` in
 * openapi.json): every key the service writes, with its type and meaning, declared once here. The
 * API document, the presenter (src/presenters/message.ts) and every reader use this schema; the
 * writers are the statements named beside each key. Keys are snake_case, times API timestamps
 * (src/lib/time.ts `formatTimestamp`: `2026-11-21T09:30:12.345000Z`, UTC), except the receipts'
 * (`events`), stored in epoch ms and shown as API timestamps ({@link StoredReceipt}).
 */

/** An API timestamp (src/lib/time.ts), UTC, with what it marks. */
const timestamp = (meaning: string) => z.string().describe(`${meaning} (an API timestamp, UTC).`);

/** A gateway's error as kept with a message: at most 200 characters, without the message's text (src/lib/redact.ts). */
const gatewayError = (meaning: string) =>
  z
    .string()
    .describe(`${meaning}: the gateway's words, cut to 200 characters and without the message's own text.`);

const SendAttempt = z.object({
  at: timestamp("When the attempt was made"),
  outcome: z
    .enum(SEND_ATTEMPT_OUTCOMES)
    .describe(
      "What it came to: `rejected` (the gateway refused it), `unknown` (it may or may not have sent it), " +
        "`absent` (asked, the gateway had not sent it) or `unreachable` (the gateway could not be asked).",
    ),
  reason: gatewayError("Why"),
});

const Receipt = z.object({
  type: z.enum(["delivered", "read", "failed"]).describe("The receipt's status."),
  at: timestamp("When the service learnt it"),
  gateway_at: timestamp("When the gateway says it happened, by the gateway's clock"),
});

const Typing = z.object({
  ms: z.int().describe("How long the recipient was shown typing…, in milliseconds."),
  started_at: timestamp("When the typing began"),
  shown: z.boolean().describe("Whether the gateway showed it."),
  reason: z.string().optional().describe("Why it was not shown (only when `shown` is false)."),
});

const Pricing = z.object({
  category: z
    .string()
    .nullable()
    .describe("Meta's pricing category: `service`, `utility`, `marketing`, `authentication`…"),
  billable: z.boolean().nullable().describe("Whether Meta bills the message."),
  pricing_model: z.string().optional().describe("Meta's pricing model (`CBP` or `PMP`), when given."),
});

const Failover = z.object({
  from_session_id: z.string().describe("The session it left."),
  to_session_id: z.string().describe("The session it moved to."),
  reason: z
    .string()
    .describe(
      "Why: `session_banned`, `session_failed`, `session_deleted` or `session_limited` (docs/campaigns.md, Campaigns).",
    ),
  at: timestamp("When it moved"),
});

const Template = z.object({
  name: z.string().describe("The template's name."),
  language: z.string().describe("The template's language code."),
  variables: z
    .object({
      body: z.array(z.string()).describe("The body's `{{1}}`, `{{2}}`… in order."),
      buttons: z
        .array(
          z.object({
            index: z.int().describe("The button's position, from 0."),
            sub_type: z.enum(BUTTON_SUB_TYPES),
            parameter: z.string().describe("A URL suffix or a payload."),
          }),
        )
        .describe("One parameter per button filled."),
    })
    .describe("The variables it was filled with; a one-time code's are masked."),
});

const Quoted = z.object({
  provider_message_id: z.string().describe("The gateway's id of the message quoted or reacted to."),
  from_me: z.boolean().describe("Whether the session sent that message."),
});

const Reaction = z.object({
  from: z.string().describe("The contact's E.164 number."),
  emoji: z.string().describe("The emoji they set."),
  at: timestamp("When they set it, by the gateway's clock"),
});

const RemovedReaction = z.object({
  from: z.string().describe("The contact's E.164 number."),
  at: timestamp("When they took their reaction off, by the gateway's clock"),
});

const IncomingMedia = z.object({
  mimetype: z.string().nullable().describe("The MIME type the gateway gave, or null."),
});

const MediaError = z.object({
  reason: z
    .enum(INCOMING_MEDIA_REASONS)
    .describe("Why the media could not be kept (src/media/incoming.ts `IncomingMediaReason`)."),
  detail: z.string().describe("What went wrong, in words."),
  tries: z.int().describe("Downloads tried."),
  at: timestamp("When the last try ended"),
});

/**
 * The `metadata` of a message, `Message.metadata` in openapi.json. Every key is optional (a key
 * appears once what it records has happened); keys not declared here pass through (forward
 * compatibility: a reader of an older deployment's rows, a client of a newer one). Each key's
 * writer:
 *
 * - `attempts`, `gateway`, `settled_by`, `typing` (and removing `outcome`, `last_error`,
 *   `next_attempt_at`): the `sent` move, src/moves/message.ts `sentStatement`;
 * - `attempts`, `last_error`, `next_attempt_at`, `send_attempts`, `outcome`: src/db/queries/messages.ts `recordRetry`;
 * - `events`, `failed_at`, `pricing`: src/moves/message.ts `moveStatement`;
 * - `failover`: src/delivery/failover.ts;
 * - `template`, `quoted`: the send, src/messages/send.ts and src/campaigns/materialise.ts;
 * - `location`, `contacts`: the send, src/messages/send.ts, and for an incoming message src/db/queries/messages.ts `incomingRow`;
 * - `interactive`: the send, src/messages/send.ts; `interactive_reply`: src/db/queries/messages.ts `incomingRow`;
 * - `poll`: the send, src/messages/send.ts; `poll_votes`, `poll_votes_removed`, `poll_counts`:
 *   src/messages/poll-votes.ts `withPollVote`;
 * - `deleted_at`, `edited_at`, `edits`: src/messages/edits.ts `writeDeleted`, `writeEdit`;
 * - `reactions`, `reactions_removed`: src/messages/reactions.ts `withReaction`;
 * - `media`: src/db/queries/messages.ts `incomingRow`;
 * - `media_error`, `media_expired_at`: src/db/queries/incoming-media.ts and outgoing-media.ts;
 * - `erased_at` (and removing what may name the contact): src/db/queries/erasures.ts `eraseRowsStatements`.
 *
 * A key written after a message's first event (any writer but the send, a retry, a failover and
 * the `sent` move) must be listed in src/db/queries/events.ts `LATER_METADATA_KEYS`: a message
 * event rebuilds the metadata it had without those keys.
 */
export const MessageMetadataSchema = z
  .looseObject({
    attempts: z.int().optional().describe("Gateway calls made to send the message so far."),
    gateway: z
      .string()
      .optional()
      .describe("The gateway that sent it (`sandbox`, `waha`, `evolution`, `cloud_api`), once sent."),
    last_error: gatewayError("While a retry waits, why the last call failed (removed once sent)").optional(),
    next_attempt_at: z
      .string()
      .nullable()
      .optional()
      .describe(
        "While a retry waits, when the next call is due (an API timestamp, UTC); null when none is planned. " +
          "Removed once the message is sent.",
      ),
    send_attempts: z
      .array(SendAttempt)
      .optional()
      .describe(
        "Each send attempt that did not end in `sent`, oldest first (docs/exactly-once.md, Exactly once).",
      ),
    outcome: z
      .literal("unknown")
      .optional()
      .describe(
        "`unknown` while the gateway may hold the message unsettled (it stays `queued` until the gateway is asked; " +
          "docs/exactly-once.md, Exactly once). Removed once settled.",
      ),
    settled_by: z
      .enum(SETTLED_BY)
      .optional()
      .describe(
        "How the send's outcome became known, once sent: `answer` (the send's own answer), `lookup` (the gateway " +
          "was asked) or `status_webhook` (a receipt naming the message arrived first).",
      ),
    typing: Typing.optional().describe(
      "With `simulate_typing`, once sent: the typing… shown before it (docs/messages.md, Typing before a send).",
    ),
    events: z
      .array(Receipt)
      .optional()
      .describe("The gateway's receipts for the sent message, in arrival order."),
    pricing: Pricing.optional().describe(
      "Meta's pricing of a message sent on a Cloud API session, from its status webhook (the last receipt's).",
    ),
    failed_at: timestamp("When the message failed").optional(),
    failover: z
      .array(Failover)
      .optional()
      .describe("Each move of a campaign's waiting message to another of the campaign's sessions."),
    template: Template.optional().describe(
      "A template message's template, as sent (docs/gateways.md, Message templates).",
    ),
    location: LocationSchema.optional().describe(
      "A `location` message's point and place, sent or received (docs/messages.md, Sending messages → Locations).",
    ),
    contacts: z
      .array(ContactCardSchema)
      .optional()
      .describe(
        "A `contacts` message's cards, sent or received (docs/messages.md, Sending messages → Contact cards).",
      ),
    interactive: InteractiveSchema.optional().describe(
      "An `interactive` message's buttons or list, as sent (docs/messages.md, Sending messages → Buttons and lists).",
    ),
    poll: PollSchema.optional().describe(
      "A `poll` message's question and options, as sent (docs/messages.md, Sending messages → Polls).",
    ),
    poll_votes: z
      .record(z.string(), PollVoteSchema)
      .optional()
      .describe(
        "A poll's votes, one per contact, by voter (their E.164 number, or their user id when the network gives no " +
          "number): the options they picked and when. A later vote replaces an earlier one (docs/messages.md, Sending messages → Polls).",
      ),
    poll_votes_removed: z
      .record(
        z.string(),
        z.object({ at: timestamp("When they took their vote back, by the gateway's clock") }),
      )
      .optional()
      .describe("Contacts who took their vote back, by voter, so an older vote cannot come back."),
    poll_counts: z
      .record(z.string(), z.int())
      .optional()
      .describe(
        "How many contacts picked each option of a poll, by option, in the poll's order (0 for none).",
      ),
    interactive_reply: InteractiveReplySchema.optional().describe(
      "An `interactive_reply`'s tap: the button or row the contact chose; `reply_to` is the message it answers.",
    ),
    deleted_at: timestamp(
      "When the message was deleted for everyone: by the session, or by the contact who sent it (docs/messages.md, Chat actions)",
    ).optional(),
    edited_at: timestamp(
      "When the text was last edited: by the session, or by the contact who sent it (docs/messages.md, Chat actions)",
    ).optional(),
    edits: z
      .array(
        z.object({
          content: z.string().nullable().describe("The text before this edit."),
          at: timestamp("When it was replaced"),
        }),
      )
      .optional()
      .describe("Each edit of the text, oldest first: the text it replaced and when."),
    quoted: Quoted.optional().describe(
      "A reply's quoted message, or a reaction's message, as the gateway knows it (docs/messages.md, Replies and reactions).",
    ),
    reactions: z
      .array(Reaction)
      .optional()
      .describe(
        "Contacts' reactions to the message, one per contact (docs/messages.md, Replies and reactions).",
      ),
    reactions_removed: z
      .array(RemovedReaction)
      .optional()
      .describe(
        "Contacts who took their reaction off, one per contact, so an older reaction cannot come back.",
      ),
    media: IncomingMedia.optional().describe(
      "An incoming message's media the gateway holds but does not link to (its `media_url` null until kept).",
    ),
    media_error: MediaError.optional().describe(
      "Why an incoming message's media could not be kept (docs/messages.md, Incoming media); removed if a later try keeps it.",
    ),
    media_expired_at: timestamp(
      "When the stored media (an incoming message's kept file, an outgoing one's copy) was deleted by its retention",
    ).optional(),
    erased_at: timestamp(
      "When the message was erased with its contact (docs/contacts.md, Erasure): its text, media and addresses are gone",
    ).optional(),
  })
  .describe(
    "What happened to the message beyond its fields: its attempts, receipts, typing, failover, quote, reactions " +
      "and media. Every key is optional and appears once what it records has happened; keys not listed may be " +
      "added later and should be ignored.",
  );

/** A message's `metadata`, as {@link MessageMetadataSchema} declares it. */
export type MessageMetadata = z.infer<typeof MessageMetadataSchema>;

/**
 * A receipt as `metadata.events` stores it (src/moves/message.ts `withReceipt`): its times in
 * epoch ms, `gateway_at` left out when it equals `at` (the sandbox's receipts, and any gateway
 * whose clock reads as ours), so a read message's receipts keep less than half the bytes (docs/retention.md,
 * Data retention). Shown as {@link Receipt} ({@link shownReceipts}); receipts stored
 * before keep their API timestamps and are shown as stored.
 */
interface StoredReceipt {
  type: string;
  /** Epoch ms. */
  at: number;
  /** Epoch ms; absent: `at`. */
  gateway_at?: number;
}

/** Whether `value` is a receipt in its stored form ({@link StoredReceipt}). */
function isStoredReceipt(value: unknown): value is StoredReceipt {
  return typeof value === "object" && value !== null && typeof (value as StoredReceipt).at === "number";
}

/**
 * Metadata `value` with its receipts as the API shows them ({@link Receipt}: `type`, `at`,
 * `gateway_at`, API timestamps), whichever form each is stored in; `value` itself when it has none
 * stored in epoch ms.
 */
function shownReceipts(value: Record<string, unknown>): Record<string, unknown> {
  const receipts = value.events;
  if (!Array.isArray(receipts) || !receipts.some(isStoredReceipt)) return value;
  return {
    ...value,
    events: receipts.map((receipt) =>
      isStoredReceipt(receipt)
        ? {
            ...receipt,
            at: formatTimestamp(receipt.at),
            gateway_at: formatTimestamp(receipt.gateway_at ?? receipt.at),
          }
        : receipt,
    ),
  };
}

/**
 * A stored `metadata` JSON text as the API shows it before it is checked: {@link metadataObject}
 * with its receipts in the API's form ({@link shownReceipts}).
 */
export function shownMetadata(text: string): Record<string, unknown> {
  return shownReceipts(metadataObject(text));
}

/** Whether `value` is metadata as declared: the check behind {@link parseMessageMetadata}. */
function isMessageMetadata(value: unknown): value is MessageMetadata {
  return MessageMetadataSchema.safeParse(value).success;
}

/**
 * A stored `metadata` JSON text as an object with its own members in their own order (what the API
 * shows), or `{}` for text that is not a JSON object (never stored: the column defaults to `{}` and
 * is changed only by `json_set` and its kin).
 */
export function metadataObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value))
    : {};
}

/**
 * A stored `metadata` JSON text as {@link MessageMetadata}, its members in their stored order (so
 * the API shows the row as stored), its receipts in the API's form ({@link shownReceipts}) and
 * undeclared keys kept. Never throws, so no stored row can turn a read into a 500: a declared key
 * whose value does not fit its declaration (never written by this service; a test checks every
 * writer) is left out and logged (`message_metadata_invalid`), and text that is not a JSON object
 * reads as `{}`.
 */
export function parseMessageMetadata(text: string): MessageMetadata {
  const value = shownMetadata(text);
  if (isMessageMetadata(value)) return value;
  const shape: Record<string, z.ZodType> = MessageMetadataSchema.shape;
  const invalid = Object.keys(value).filter((key) => shape[key]?.safeParse(value[key]).success === false);
  log.warn("message_metadata_invalid", { keys: invalid });
  const kept = Object.fromEntries(Object.entries(value).filter(([key]) => !invalid.includes(key)));
  return isMessageMetadata(kept) ? kept : {};
}

/**
 * The JSON text of `metadata` as the `messages.metadata` column stores it: the one way code
 * outside SQL writes a message's metadata, so what it writes is checked against the declaration.
 */
export function metadataText(metadata: MessageMetadata): string {
  return JSON.stringify(metadata);
}
