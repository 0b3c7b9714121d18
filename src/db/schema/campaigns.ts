import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { ContactCard } from "../../lib/contact-cards";
import type { Interactive } from "../../lib/interactive";
import type { Location } from "../../lib/location";
import { accounts } from "./accounts";

// Campaigns (bulk sends across sessions) and their recipients. Conventions of every table: see
// index.ts.

/**
 * A template campaign's message template as stored (the shape of messages/template.ts
 * `TemplateSend`): name, language, and variables whose values may hold `{{name}}` placeholders.
 */
export interface CampaignTemplate {
  name: string;
  language: string;
  variables: {
    body: string[];
    buttons: { index: number; sub_type: "url" | "quick_reply"; parameter: string }[];
  };
}

/**
 * What a location, contacts or interactive campaign's every message carries (docs/campaigns.md, Campaigns):
 * the send's object under its type's key, as a message keeps it in `metadata`.
 */
export type CampaignPayload =
  | { location: Location }
  | { contacts: ContactCard[] }
  | { interactive: Interactive };

/**
 * A bulk send across several sessions (docs/campaigns.md, Campaigns): a `draft` gathers its recipients, then
 * runs. `content` is a template whose `{{name}}` placeholders each recipient's variables fill.
 * Pacing is a gap of `delay_min_ms`–`delay_max_ms` (equal for a fixed `delay_between`) per session.
 * The counters are kept current as messages move, never recounted on read; money is minor units.
 */
export const campaigns = sqliteTable(
  "campaigns",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    name: text().notNull(),
    status: text({
      enum: ["draft", "scheduled", "running", "paused", "completed", "cancelled"],
    }).notNull(),
    /** JSON array of 1–20 session ids, in the order recipients are spread over them. */
    sessionIds: text({ mode: "json" }).$type<string[]>().notNull(),
    type: text({
      enum: [
        "text",
        "image",
        "video",
        "audio",
        "document",
        "template",
        "location",
        "interactive",
        "contacts",
        "sticker",
      ],
    }).notNull(),
    content: text(),
    /**
     * For `type` `template` (Cloud API sessions only): JSON of the message template to send, as the
     * campaign gave it (`{ name, language, variables: { body, buttons } }`, messages/template.ts
     * `TemplateSend`, {@link CampaignTemplate}), its variables' `{{name}}` placeholders unfilled; each recipient's
     * `variables` fill them when its message is made. Null for other types.
     */
    template: text({ mode: "json" }).$type<CampaignTemplate>(),
    /**
     * For `type` `location`, `contacts` or `interactive`: JSON of what every message carries, under
     * the type's key (`{ location }`, `{ contacts }`, `{ interactive }`, {@link CampaignPayload}),
     * which each message keeps in its `metadata`. Null for other types.
     */
    payload: text({ mode: "json" }).$type<CampaignPayload>(),
    /** The caller's `media_url`, as given and shown. */
    mediaUrl: text(),
    /**
     * The stored copy of the media, fetched once at creation for every message: its `MEDIA` key;
     * null once the retention sweep deleted it (src/messages/media-retention.ts).
     */
    mediaKey: text(),
    /** The stored copy's content type. */
    mediaContentType: text(),
    delayMinMs: integer().notNull(),
    delayMaxMs: integer().notNull(),
    /** Epoch ms, or null to start at once. */
    scheduledAt: integer(),
    /** JSON `{start: "HH:MM", end: "HH:MM", time_zone}` (IANA), or null for any time. */
    sendWindow: text({ mode: "json" }).$type<{ start: string; end: string; time_zone: string }>(),
    /**
     * Whether recipients are checked against the chat network before their message is made
     * (docs/sessions.md, Number checks): those not on it are `skipped` (`recipient_not_on_chatapp`) and
     * refunded (src/campaigns/number-checks.ts).
     */
    checkNumbers: integer({ mode: "boolean" }).notNull().default(false),
    /** Whether each of its messages shows "typing…" first (messages `simulate_typing`). */
    simulateTyping: integer({ mode: "boolean" }).notNull().default(false),
    /** Distinct recipients added. */
    total: integer().notNull().default(0),
    queued: integer().notNull().default(0),
    sent: integer().notNull().default(0),
    delivered: integer().notNull().default(0),
    read: integer().notNull().default(0),
    failed: integer().notNull().default(0),
    replied: integer().notNull().default(0),
    skipped: integer().notNull().default(0),
    /** Minor units charged at start: (total − skipped) × {@link price}. */
    cost: integer().notNull().default(0),
    /** Minor units refunded since (failed messages, and the unsent remainder of a cancel). */
    refunded: integer().notNull().default(0),
    /** Price of one message at start, minor units (0 in a draft). */
    price: integer().notNull().default(0),
    /** The start's charge (its ledger entry id), or null in a draft. */
    chargeId: text(),
    /**
     * Recipients up to this `seq` have their message (or were skipped); the rest wait for the
     * campaign queue's next step (src/campaigns/materialise.ts).
     */
    materialisedSeq: integer().notNull().default(0),
    startedAt: integer(),
    completedAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  (t) => [
    index("campaigns_account").on(t.accountId, t.createdAt, t.id),
    index("campaigns_active").on(t.status).where(sql`${t.status} IN ('scheduled', 'running', 'paused')`),
    // Only campaigns that still keep a stored copy of their media, for the retention sweep.
    index("campaigns_media").on(t.mediaKey).where(sql`${t.mediaKey} IS NOT NULL`),
  ],
);

/**
 * A campaign's recipients in the order they were added (`seq`, from 1), each number once per
 * campaign. `variables` fill the campaign's template. `status` is `pending` in a draft; once the
 * campaign starts, `skipped` (with `reason`) or the status of its message (`message_id`).
 */
export const campaignRecipients = sqliteTable(
  "campaign_recipients",
  {
    campaignId: text()
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    seq: integer().notNull(),
    toNumber: text().notNull(),
    /** JSON object of string values, or null. */
    variables: text({ mode: "json" }).$type<Record<string, string>>(),
    status: text().notNull(),
    reason: text(),
    messageId: text(),
    /** When the recipient first wrote back after their message was sent (epoch ms), or null. */
    repliedAt: integer(),
  },
  (t) => [
    primaryKey({ columns: [t.campaignId, t.seq] }),
    uniqueIndex("campaign_recipients_number").on(t.campaignId, t.toNumber),
    index("campaign_recipients_message").on(t.messageId),
  ],
);

/** A row of {@link campaigns}, as Drizzle reads it. */
export type CampaignRow = typeof campaigns.$inferSelect;
/** A row of {@link campaignRecipients}, as Drizzle reads it. */
export type CampaignRecipientRow = typeof campaignRecipients.$inferSelect;
