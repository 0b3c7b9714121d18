import { z } from "@hono/zod-openapi";
import { LEDGER_MESSAGE_IDS } from "../../db/queries/ledger";
import { MESSAGE_TYPES } from "../../messages/types";
import { DefaultedBucketQuery, GRANULARITIES } from "../buckets";
import { moneyAmount } from "../openapi";
import { CursorParam, enumListFilter, Limit, PageLinksSchema, TimeBound } from "../paging";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** A value per message type. */
const perType = <T extends z.ZodType>(value: T) =>
  z.object(
    Object.fromEntries(MESSAGE_TYPES.map((type) => [type, value])) as Record<
      (typeof MESSAGE_TYPES)[number],
      T
    >,
  );

/** The caller's own account as `GET /v1/account` shows it: what the balance buys now. */
export const AccountSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    balance: z.number().openapi({ description: "Balance in major units.", example: 9.98 }),
    remaining_messages: perType(z.int()).openapi({
      description:
        "How many messages of each type the balance covers (a part-message rounds down; for text, as `remaining_messages` after a send).",
      example: {
        text: 998,
        image: 499,
        video: 332,
        audio: 499,
        document: 499,
        template: 998,
        location: 998,
        interactive: 998,
        contacts: 998,
        sticker: 998,
        poll: 998,
      },
    }),
    low_balance_threshold: z.number().nullable().openapi({
      description:
        "Major units: a charge that takes the balance from this or more to below it records `account.balance_low`. Null: no alert.",
      example: 5,
    }),
    prices: perType(z.number()).openapi({
      description: "Price of one message by type, in major units.",
      example: {
        text: 0.01,
        image: 0.02,
        video: 0.03,
        audio: 0.02,
        document: 0.02,
        template: 0.01,
        location: 0.01,
        interactive: 0.01,
        contacts: 0.01,
        sticker: 0.01,
        poll: 0.01,
      },
    }),
    message_retention_days: z.int().openapi({
      description:
        "Days a final message stays before the hourly job moves it to an archive (`GET /v1/account/archives`); 0: as soon as it is final. Set by the service's operator.",
      example: 90,
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Account");

/** A limit and its use: `current` of at most `max`. */
const LimitUsageSchema = z.object({
  max: z.int().openapi({ description: "The limit, set by the service's operator.", example: 50 }),
  current: z.int().openapi({ description: "How much of it the account uses now.", example: 3 }),
});

/** The account's limits (docs/security.md, Account limits), each with its use now. */
export const AccountLimitsSchema = z
  .object({
    max_sessions: LimitUsageSchema.openapi({
      description: "Sessions the account holds (every session not deleted) and may hold.",
    }),
    max_draft_recipients: LimitUsageSchema.openapi({
      description: "Recipients the account's `draft` campaigns hold together, and may hold.",
      example: { max: 1_000_000, current: 12_000 },
    }),
  })
  .openapi("AccountLimits", {
    description:
      "Creating a session or adding recipients to a draft beyond a limit is 409 `account_limit_reached`, naming the limit.",
  });

/** The caller's account with its limits, as `GET` and `PATCH /v1/account` answer it. */
export const OwnAccountSchema = AccountSchema.extend({ limits: AccountLimitsSchema }).openapi("OwnAccount");

export const AccountEnvelopeSchema = z.object({ success: z.literal(true), data: OwnAccountSchema });

/** Body of `PATCH /v1/account`: each field given is changed, the others kept. */
export const UpdateAccountBody = z.strictObject({
  name: z.string().trim().min(1).max(100).optional().openapi({ example: "Acme" }),
  low_balance_threshold: moneyAmount(0).nullable().optional().openapi({
    description:
      "Major units, at most 2 decimals, as `balance`: below it a charge records `account.balance_low`. `null` turns the alert off.",
    example: 5,
  }),
});

const LEDGER_KINDS = ["credit", "charge", "refund"] as const;

/** Query of `GET /v1/account/ledger`. */
export const LedgerListQuery = z.object({
  "filter[kind]": enumListFilter(LEDGER_KINDS, "Entry kinds").optional(),
  time_from: TimeBound.optional().openapi({ description: "Entries made at or after this time." }),
  time_to: TimeBound.optional().openapi({ description: "Entries made at or before this time." }),
  limit: Limit,
  cursor: CursorParam.optional(),
});

export const LedgerEntrySchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(LEDGER_KINDS),
    amount: z.number().openapi({
      description: "Major units, signed: negative for a charge, positive for a credit or refund.",
      example: -0.03,
    }),
    balance_after: z
      .number()
      .openapi({ description: "The balance after the entry, major units.", example: 9.97 }),
    message_count: z.int().openapi({
      description:
        "Messages the charge or refund covers (0 for a credit). A campaign's charge counts its recipients at start; " +
        "the refund of a cancelled campaign's remainder counts recipients whose messages were never made.",
    }),
    source: z
      .object({
        type: z.enum(["messages", "otp", "campaign", "admin"]).openapi({
          description:
            "`messages`: a send (`POST /v1/chatapp/messages`), or the refund of failed messages of several causes; " +
            "`otp`: a one-time code's message; `campaign`: a campaign's start, or refunds of its messages and remainder; " +
            "`admin`: a credit through the admin API (the opening balance included).",
        }),
        message_ids: z.array(z.uuid()).openapi({
          description: `The messages the entry paid for or refunded, in send order: the first ${LEDGER_MESSAGE_IDS}. Empty for a credit.`,
        }),
        message_ids_truncated: z.boolean().openapi({
          description: `Whether the entry has more messages than \`message_ids\` lists (more than ${LEDGER_MESSAGE_IDS}).`,
        }),
        campaign_id: z.uuid().nullable(),
        otp_id: z.uuid().nullable(),
        description: z.string().nullable().openapi({
          description: "A credit's note: the admin credit's `description`, or `Opening balance`.",
        }),
      })
      .openapi({ description: "What caused the entry." }),
    created_at: timestamp,
  })
  .openapi("LedgerEntry");

export const LedgerListSchema = z.object({
  success: z.literal(true),
  data: z.array(LedgerEntrySchema),
  ...PageLinksSchema,
});

/** Query of `GET /v1/account/usage`. */
export const UsageQuery = DefaultedBucketQuery;

const counts = z.object({
  queued: z.int(),
  scheduled: z.int(),
  sent: z.int(),
  delivered: z.int(),
  read: z.int(),
  failed: z.int(),
});

export const UsageBucketSchema = z
  .object({
    start: timestamp.openapi({ description: "Start of the bucket (UTC hour or day)." }),
    type: z.enum(MESSAGE_TYPES),
    counts: counts.openapi({
      description: "The bucket's messages of this type by their status now (they move as the messages move).",
    }),
    cost: z.number().openapi({ description: "What they cost, major units.", example: 0.25 }),
    refunded: z
      .number()
      .openapi({ description: "What of `cost` was refunded (failed messages), major units." }),
  })
  .openapi("UsageBucket");

export const UsageSchema = z.object({
  success: z.literal(true),
  data: z.object({
    granularity: z.enum(GRANULARITIES),
    time_from: timestamp.openapi({ description: "The range covered: `time_from` rounded down." }),
    time_to: timestamp.openapi({ description: "The range covered (exclusive): `time_to` rounded up." }),
    buckets: z.array(UsageBucketSchema).openapi({
      description: "Oldest first, then by type; a bucket and type without messages is left out.",
    }),
  }),
});
