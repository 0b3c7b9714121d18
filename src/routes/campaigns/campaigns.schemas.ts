import { z } from "@hono/zod-openapi";
import {
  campaignTemplateProblems,
  checkRecipients,
  MAX_RECIPIENTS_PER_REQUEST,
  VARIABLE_NAME,
} from "../../campaigns/recipients";
import { templateValues } from "../../campaigns/template";
import { ContactCardSchema, ContactCardsSendSchema } from "../../lib/contact-cards";
import { InteractiveSchema } from "../../lib/interactive";
import { LocationSchema } from "../../lib/location";
import { CAMPAIGN_TYPES } from "../../messages/types";
import {
  checkContent,
  checkOwnFields,
  checkScheduledAt,
  LocationSendSchema,
  MEDIA_URL_DESCRIPTION,
  SimulateTyping,
  TemplateSendSchema,
} from "../messages/messages.schemas";

/** The types whose every message carries the object of the campaign's field of the same name. */
const PAYLOAD_TYPES = ["location", "contacts", "interactive"] as const;

import { ERASED_NOTE } from "../openapi";
import { PageLinksSchema } from "../paging";

/** Sessions one campaign may spread over (docs/campaigns.md, Campaigns). */
export const MAX_CAMPAIGN_SESSIONS = 20;
/** Longest gap between two of a session's campaign messages: 10 minutes, in ms. */
export const MAX_DELAY_MS = 600_000;
/** The gap when neither `delay_between` nor `delay_range` is given, as for sends (ms). */
export const DEFAULT_DELAY_MS = 500;

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

const Variables = z
  .record(z.string().regex(VARIABLE_NAME, "a variable name: letters, digits and _"), z.string().max(1_000))
  .refine((v) => Object.keys(v).length <= 50, "at most 50 variables")
  .openapi({
    description: "Values of the template's placeholders for this recipient (names: letters, digits, `_`).",
    example: { name: "Ada", order: "A-1042" },
  });

const Recipient = z
  .strictObject({
    to_number: z.string().max(32).optional().openapi({
      description: "The recipient's number in international format; or give `to_user_id`.",
      example: "+14155552671",
    }),
    // Its kind is checked with the rest of the recipient (campaigns/recipients.ts `checkRecipients`),
    // so one answer names every recipient's problems.
    to_user_id: z
      .string()
      .max(160)
      .optional()
      .openapi({
        example: "US.13491208655302741918",
        description:
          "The recipient known by the network's id instead of a number (docs/contacts.md, Contacts): a business-scoped user id " +
          "(Cloud API) or a LID (`<digits>@lid`; WAHA, Evolution API). Every session of the campaign must send to its " +
          "kind, and a template campaign whose template is an authentication template with a code button takes no " +
          "business-scoped user id: 422 `recipient_not_supported` otherwise.",
      }),
    variables: Variables.optional(),
  })
  .openapi({ description: "Exactly one of `to_number` and `to_user_id` (422 naming the field otherwise)." });

const Recipients = z
  .array(Recipient)
  .max(MAX_RECIPIENTS_PER_REQUEST)
  .openapi({
    description: `Up to ${MAX_RECIPIENTS_PER_REQUEST.toLocaleString("en")} recipients per request; an address (a number or a user id) is kept once per campaign.`,
  });

const DelayMs = z.int().min(0).max(MAX_DELAY_MS).openapi({ format: "int32" });
const ClockTime = z
  .string()
  .max(5, "a time HH:MM (00:00–23:59)")
  .regex(/^(?:[01]\d|2[0-3]):[0-5]\d$/, "a time HH:MM (00:00–23:59)");

/** Whether `zone` is an IANA time zone this runtime knows. */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const SendWindowSchema = z
  .strictObject({
    start: ClockTime.openapi({ example: "09:00" }),
    end: ClockTime.openapi({ example: "18:00" }),
    time_zone: z.string().max(64).refine(isTimeZone, "an IANA time zone, e.g. Europe/Berlin").openapi({
      example: "America/New_York",
    }),
  })
  .refine((w) => w.start !== w.end, { message: "start and end must differ", path: ["end"] })
  .openapi({
    description:
      "Campaign messages are handed to the gateway only between `start` and `end` (local time in `time_zone`); an `end` before `start` spans midnight.",
  });

const DelayRange = z
  .strictObject({ min_ms: DelayMs, max_ms: DelayMs })
  .refine((r) => r.min_ms <= r.max_ms, { message: "min_ms must not exceed max_ms", path: ["max_ms"] })
  .openapi({
    description: `A random gap, uniform in [min_ms, max_ms], before each of a session's campaign messages (0–${MAX_DELAY_MS.toLocaleString("en")} ms).`,
  });

export const CreateCampaignBody = z
  .strictObject({
    name: z.string().min(1).max(200).openapi({ example: "November newsletter" }),
    chatapp_session_ids: z
      .array(z.uuid().max(36))
      .min(1)
      .max(MAX_CAMPAIGN_SESSIONS)
      .refine((ids) => new Set(ids).size === ids.length, "must not repeat a session")
      .openapi({
        description: `1–${MAX_CAMPAIGN_SESSIONS} of the account's sessions, all \`connected\`; recipients are spread over them in turn.`,
      }),
    type: z.enum(CAMPAIGN_TYPES).openapi({
      description:
        "`template` only when every session is on the `cloud_api` gateway (422 naming `type` otherwise).",
    }),
    content: z.string().nullish().openapi({
      maxLength: 4_096,
      description:
        "The message text (or caption) as a template: `{{name}}` placeholders take each recipient's `variables`. Same rules as a send.",
      example: "Hi {{name}}, your order {{order}} has shipped.",
    }),
    media_url: z.string().nullish().openapi({ maxLength: 2_048, description: MEDIA_URL_DESCRIPTION }),
    template: TemplateSendSchema.optional().openapi({
      description:
        "For `template`: an APPROVED template of every session, as a send names it; each value of `variables` " +
        "(body values, button parameters) may hold `{{name}}` placeholders that take each recipient's `variables`. " +
        "Unknown or unapproved on any session: 422 `template_not_found`; a missing or extra variable: 422 " +
        "`validation_failed` naming it.",
    }),
    location: LocationSendSchema.optional().openapi({
      description: "For `location`: the point and place every message shares, as a send's `location`.",
    }),
    contacts: ContactCardsSendSchema.optional().openapi({
      description: "For `contacts`: the contact cards every message shares, as a send's `contacts`.",
    }),
    interactive: InteractiveSchema.optional().openapi({
      description:
        "For `interactive`: the reply buttons or list every message carries, as a send's `interactive`; a kind a " +
        "session's gateway cannot send: 422 `type_not_supported_by_gateway`. Each tap arrives as the recipient's " +
        "`interactive_reply`.",
    }),
    recipients: Recipients.optional(),
    delay_between: DelayMs.optional().openapi({
      description: `A fixed gap in ms between a session's campaign messages, 0–${MAX_DELAY_MS.toLocaleString("en")}; default ${DEFAULT_DELAY_MS}.`,
    }),
    delay_range: DelayRange.optional(),
    scheduled_at: z.iso.datetime({ offset: true }).max(64).nullish().openapi({
      description:
        "Start no earlier than this (ISO 8601, at most 30 days ahead); the campaign is `scheduled` until then.",
    }),
    send_window: SendWindowSchema.nullish(),
    check_numbers: z
      .boolean()
      .optional()
      .openapi({
        description:
          "Check each recipient against the chat network before its message is made (docs/sessions.md, Number checks): one " +
          "not on it is `skipped` with reason `recipient_not_on_chatapp` and refunded; one the gateway cannot tell " +
          "about is sent. Default false.",
      }),
    simulate_typing: SimulateTyping,
  })
  .superRefine((body, ctx) => {
    checkContent(body, ctx);
    checkOwnFields(body, PAYLOAD_TYPES, ctx);
    checkScheduledAt(body.scheduled_at, ctx);
    for (const message of campaignTemplateProblems(body.content ?? null))
      ctx.addIssue({ code: "custom", path: ["content"], message });
    if (body.type === "template" && !body.template)
      ctx.addIssue({ code: "custom", path: ["template"], message: "required for template" });
    if (body.type !== "template" && body.template)
      ctx.addIssue({ code: "custom", path: ["template"], message: "only for template" });
    for (const value of body.template ? templateValues(body.template) : [])
      for (const message of campaignTemplateProblems(value.text))
        ctx.addIssue({ code: "custom", path: value.path, message });
    if (body.delay_between !== undefined && body.delay_range !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["delay_range"],
        message: "give delay_between or delay_range, not both",
      });
  })
  // Once the rest is valid, the recipients are checked against the template and their numbers
  // normalised, in one pass: the handler gets the rows to store.
  .transform((body, ctx) => {
    const message = { type: body.type, content: body.content ?? null, template: body.template ?? null };
    const { rows, problems } = checkRecipients(message, body.recipients ?? []);
    for (const problem of problems)
      ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
    return { ...body, recipientRows: rows };
  });

export const AddRecipientsBody = z.strictObject({ recipients: Recipients.min(1) });

export const CampaignStatsSchema = z
  .object({
    total: z.int().openapi({ description: "Distinct recipients." }),
    queued: z
      .int()
      .openapi({ description: "Recipients whose message is not sent yet (queued or scheduled)." }),
    sent: z.int().openapi({ description: "Messages sent, with no receipt yet." }),
    delivered: z.int().openapi({ description: "Messages delivered, not read yet." }),
    read: z.int().openapi({ description: "Messages read." }),
    failed: z.int().openapi({ description: "Recipients whose message failed or was cancelled (refunded)." }),
    replied: z
      .int()
      .openapi({ description: "Recipients who wrote back after their campaign message was sent." }),
    skipped: z.int().openapi({
      description:
        "Recipients not sent to, not charged: opted out (at start), or not on the chat network with `check_numbers` (refunded when their message would have been made).",
    }),
  })
  .openapi("CampaignStats", {
    description:
      "Kept current as messages move. `queued`, `sent`, `delivered`, `read`, `failed` and `skipped` count each recipient " +
      "once, by where its message stands now, so they add up to `total` once the campaign has started.",
  });

export const CampaignSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    status: z.enum(["draft", "scheduled", "running", "paused", "completed", "cancelled"]),
    chatapp_session_ids: z.array(z.uuid()),
    type: z.enum(CAMPAIGN_TYPES),
    content: z.string().nullable(),
    media_url: z.string().nullable(),
    template: TemplateSendSchema.nullable().openapi({
      description: "A template campaign's template, its values' `{{name}}` placeholders unfilled; else null.",
    }),
    location: LocationSchema.nullable().openapi({
      description: "A location campaign's point and place; else null.",
    }),
    contacts: z
      .array(ContactCardSchema)
      .nullable()
      .openapi({ description: "A contacts campaign's cards; else null." }),
    interactive: InteractiveSchema.nullable().openapi({
      description: "An interactive campaign's reply buttons or list; else null.",
    }),
    delay_range: z.object({ min_ms: z.int(), max_ms: z.int() }).openapi({
      description: "The gap before each of a session's messages; equal ends for a fixed `delay_between`.",
    }),
    scheduled_at: timestamp.nullable(),
    send_window: SendWindowSchema.nullable(),
    check_numbers: z.boolean().openapi({
      description: "Whether recipients are checked against the chat network before their message is made.",
    }),
    simulate_typing: z.boolean().openapi({
      description:
        'Whether each message shows "typing…" to its recipient first (docs/messages.md, Typing before a send).',
    }),
    stats: CampaignStatsSchema,
    cost: z.number().openapi({ description: "Charged for the campaign, in the account's currency units." }),
    refunded: z.number().openapi({ description: "Refunded (failed or cancelled messages)." }),
    started_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
    eta: timestamp.nullable().openapi({
      description:
        "When the last queued message should be sent, from the rate so far (or the pacing, before the first); null when nothing waits or the campaign is paused.",
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Campaign");

export const CampaignEnvelopeSchema = z.object({ success: z.literal(true), data: CampaignSchema });

export const CreatedCampaignSchema = z.object({
  success: z.literal(true),
  data: CampaignSchema,
  recipients: z.object({ added: z.int(), duplicates: z.int(), total: z.int() }),
});

export const AddedRecipientsSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      added: z.int().openapi({ description: "New recipients." }),
      duplicates: z.int().openapi({
        description: "Addresses (numbers or user ids) already in the campaign (or repeated), ignored.",
      }),
      total: z.int().openapi({ description: "Recipients of the campaign now." }),
    }),
  })
  .openapi("AddedRecipients");

export const CampaignRecipientSchema = z
  .object({
    seq: z.int().openapi({ description: "Order of addition, from 1." }),
    to_number: z
      .string()
      .nullable()
      .openapi({
        description: `The recipient's number (E.164); null for a recipient known by a user id.${ERASED_NOTE}`,
      }),
    to_user_id: z.string().nullable().openapi({
      description: "The recipient's user id (a BSUID or a LID) as it was added; null for a number.",
    }),
    variables: z.record(z.string(), z.string()).nullable(),
    status: z.string().openapi({
      description:
        "`pending` until its message is created; then its message's status (`queued`, `scheduled`, `sent`, `delivered`, `read`, `failed`), or `skipped` or `failed` without a message (see `reason`: `recipient_opted_out`, `recipient_not_on_chatapp`, …).",
    }),
    reason: z.string().nullable(),
    message_id: z.uuid().nullable(),
  })
  .openapi("CampaignRecipient");

export const CampaignListSchema = z.object({
  success: z.literal(true),
  data: z.array(CampaignSchema),
  ...PageLinksSchema,
});

export const RecipientListSchema = z.object({
  success: z.literal(true),
  data: z.array(CampaignRecipientSchema),
  ...PageLinksSchema,
});
