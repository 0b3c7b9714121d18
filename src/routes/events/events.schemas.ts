import { z } from "@hono/zod-openapi";
import { EVENT_READ_SCOPE, EVENT_TYPES, type EventType } from "../../events/catalogue";
import { AccountSchema } from "../account/account.schemas";
import { CampaignSchema } from "../campaigns/campaigns.schemas";
import { ContactSchema, ContactUpdateSchema } from "../contacts/contacts.schemas";
import { ErasureSchema } from "../erasures/erasures.schemas";
import { MessageSchema } from "../messages/messages.schemas";
import { OtpSchema } from "../otp/otp.schemas";
import { CursorParam, enumListFilter, Limit, PageLinksSchema, TimeBound } from "../paging";
import { SessionSchema } from "../sessions/sessions.schemas";
import { TemplateStatusChangeSchema } from "../templates/templates.schemas";

/** The family of an event type (`contact` of `contact.created`). */
const familyOf = (type: EventType) => type.split(".")[0] ?? type;

/** The read scope of each family: its first type's. */
const FAMILY_SCOPE = new Map(
  [...EVENT_TYPES].reverse().map((type) => [familyOf(type), EVENT_READ_SCOPE[type]] as const),
);

/**
 * The read scope of each family of event types, for descriptions, a type whose scope is not its
 * family's named on its own: "`message.*` need `messages:read`, `session.*` `sessions:read`, …,
 * `contact.erased` `erasures:read`" (src/events/catalogue.ts).
 */
export const EVENT_SCOPES_NOTE = [
  ...new Map(
    EVENT_TYPES.map((type) => [
      EVENT_READ_SCOPE[type] === FAMILY_SCOPE.get(familyOf(type)) ? `${familyOf(type)}.*` : type,
      EVENT_READ_SCOPE[type],
    ]),
  ),
]
  .map(([family, scope], i) => `\`${family}\` ${i === 0 ? "need " : ""}\`${scope}\``)
  .join(", ");

/** Query of `GET /v1/events`. */
export const EventListQuery = z.object({
  "filter[type]": enumListFilter(EVENT_TYPES, "Event types").optional(),
  time_from: TimeBound.optional().openapi({ description: "Events created at or after this time." }),
  time_to: TimeBound.optional().openapi({ description: "Events created at or before this time." }),
  limit: Limit,
  cursor: CursorParam.optional(),
});

/** An event id, `evt_` and 32 hex digits, as a path parameter named `name`; a malformed one is answered 404. */
export const eventIdPathParam = (name: string) =>
  z
    .string()
    .max(36)
    .regex(/^evt_[0-9a-f]{32}$/, "an event id")
    .openapi({ param: { name, in: "path" }, example: "evt_3f2c9a7e1b6d4c08a5e97d2b1f04c6aa" });

/** `{ id }` path parameter holding an event id. */
export const EventIdParam = z.object({ id: eventIdPathParam("id") });

export const EventSchema = z
  .object({
    id: z.string().openapi({ example: "evt_3f2c9a7e1b6d4c08a5e97d2b1f04c6aa" }),
    type: z.enum(EVENT_TYPES),
    created_at: z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" }),
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        "The object after the change, in the shape its own GET returns: a Message (`message.*` but `message.reaction`, " +
        "whose data is `{message_id, session_id, from, emoji, at}`), a Session " +
        "(`session.status_changed`, `session.health_changed`), `{session, qr_code}` (`session.qr_updated`), an OTP (`otp.*`), a Campaign " +
        "(`campaign.*`), the Account (`account.balance_low`), a Contact (`contact.created`), `{contact, previous}` (`contact.updated`) or an Erasure (`contact.erased`).",
    }),
  })
  .openapi("Event");

export const EventEnvelopeSchema = z.object({ success: z.literal(true), data: EventSchema });

export const EventListSchema = z.object({
  success: z.literal(true),
  data: z.array(EventSchema),
  ...PageLinksSchema,
});

/** `data` of a `message.reaction` event: a contact's reaction on one of the account's messages. */
export const MessageReactionSchema = z
  .object({
    message_id: z.uuid().openapi({ description: "The message reacted to." }),
    session_id: z.uuid().openapi({ description: "The session whose chat it is." }),
    from: z.string().openapi({ description: "The contact who reacted (E.164).", example: "+14155552672" }),
    emoji: z
      .string()
      .openapi({ description: 'The emoji; "" when the contact took their reaction off.', example: "👍" }),
    at: z.string().openapi({
      description: "When the gateway says the contact reacted.",
      example: "2026-11-21T09:30:12.345000Z",
    }),
  })
  .openapi("MessageReaction");

/** `data` of a `message.edited` event (src/messages/edits.ts `writeEdit`). */
const MessageEditedSchema = z
  .object({
    message_id: z.uuid().openapi({ description: "The message edited." }),
    session_id: z.uuid().openapi({
      description: "The session the message is on: it sent it, or the contact who edited it sent it there.",
    }),
    content: z.string().openapi({ description: "The text it now has." }),
    previous_content: z.string().nullable().openapi({ description: "The text it had before this edit." }),
    edited_at: z
      .string()
      .openapi({ description: "When it was edited.", example: "2026-11-21T09:30:12.345000Z" }),
  })
  .openapi("MessageEdited");

/** `data` of a `poll.voted` event (src/messages/poll-votes.ts `receivePollVote`). */
const PollVotedSchema = z
  .object({
    message_id: z.uuid().openapi({ description: "The poll voted on." }),
    session_id: z.uuid().openapi({ description: "The session that sent the poll." }),
    from: z.string().openapi({
      description:
        "The voter: their number (E.164), or their user id when the network gives no number (a LID).",
      example: "+14155552672",
    }),
    options: z.array(z.string()).openapi({
      description: "The options they now pick, in the poll's order; [] when they took their vote back.",
      example: ["Tuesday"],
    }),
    at: z.string().openapi({
      description: "When the gateway says they voted.",
      example: "2026-11-21T09:30:12.345000Z",
    }),
  })
  .openapi("PollVoted");

/** `data` of each event type: the object in the shape its own GET returns (catalogue.ts). */
export const EVENT_DATA: Record<EventType, z.ZodType> = {
  "message.sent": MessageSchema,
  "message.delivered": MessageSchema,
  "message.read": MessageSchema,
  "message.failed": MessageSchema,
  "message.received": MessageSchema,
  "message.media_kept": MessageSchema,
  "message.media_failed": MessageSchema,
  "message.reaction": MessageReactionSchema,
  "message.deleted": MessageSchema,
  "message.edited": MessageEditedSchema,
  "poll.voted": PollVotedSchema,
  "session.status_changed": SessionSchema,
  "session.health_changed": SessionSchema,
  "session.qr_updated": z
    .object({
      session: SessionSchema,
      qr_code: z.string().openapi({ description: "The new QR code, a `data:image/png;base64,…` URI." }),
    })
    .openapi("SessionQrUpdate"),
  "otp.verified": OtpSchema,
  "otp.failed": OtpSchema,
  "campaign.started": CampaignSchema,
  "campaign.completed": CampaignSchema,
  "campaign.cancelled": CampaignSchema,
  "account.balance_low": AccountSchema,
  "template.status_changed": TemplateStatusChangeSchema,
  "contact.created": ContactSchema,
  "contact.updated": ContactUpdateSchema,
  "contact.erased": ErasureSchema,
};

/** The event of one type as it is listed and delivered: `{ id, type, created_at, data }`. */
export function typedEventSchema(type: EventType) {
  return z.object({
    id: EventSchema.shape.id,
    type: z.literal(type),
    created_at: EventSchema.shape.created_at,
    data: EVENT_DATA[type],
  });
}
