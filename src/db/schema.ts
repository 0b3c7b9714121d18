import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Conventions: ids are uuid strings; times are integer milliseconds since the epoch (UTC) and become
// ISO 8601 strings only in responses (lib/time.ts); money is integer minor units (lib/money.ts).

export const accounts = sqliteTable(
  "accounts",
  {
    id: text().primaryKey(),
    name: text().notNull(),
    balance: integer().notNull().default(0),
    /**
     * Minor units, or null for no alert: a charge that takes the balance from at least this to
     * below it records `account.balance_low` (src/billing/ledger.ts).
     */
    lowBalanceThreshold: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  // The database itself refuses a negative balance, so concurrent charges can never overdraw:
  // a charge that would cross zero aborts its whole batch (src/billing/ledger.ts checks first).
  (t) => [check("accounts_balance_non_negative", sql`${t.balance} >= 0`)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    prefix: text().notNull(),
    keyHash: text().notNull(),
    name: text(),
    /** JSON array of scopes (src/keys/scopes.ts); keys made before scopes existed hold `*`. */
    scopes: text({ mode: "json" }).$type<string[]>().notNull().default(["*"]),
    createdAt: integer().notNull(),
    lastUsedAt: integer(),
    revokedAt: integer(),
    /** Epoch ms after which the key is refused like a revoked one; null: it does not expire. */
    expiresAt: integer(),
  },
  (t) => [uniqueIndex("api_keys_key_hash").on(t.keyHash), index("api_keys_account").on(t.accountId)],
);

/**
 * Every change of an account's balance, with the balance after it and what caused it: the
 * messages it paid for or refunded (theirs `charge_id` / `refund_id` name the entry), and the
 * campaign or OTP behind it, or the operator's note on a credit (set by src/billing/ledger.ts's
 * callers).
 */
export const ledgerEntries = sqliteTable(
  "ledger_entries",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    kind: text({ enum: ["credit", "charge", "refund"] }).notNull(),
    /** Signed minor units: positive for credits and refunds, negative for charges. */
    amount: integer().notNull(),
    balanceAfter: integer().notNull(),
    /** How many messages a charge or refund covers (0 for credits). */
    messageCount: integer().notNull().default(0),
    /** The campaign a charge or refund is for (a refund of messages: when all are of one campaign). */
    campaignId: text(),
    /** The OTP a charge or refund is for (as for `campaign_id`). */
    otpId: text(),
    /** A credit's note (the admin API's `description`, or `Opening balance`); null otherwise. */
    description: text(),
    createdAt: integer().notNull(),
  },
  // Keyset paging of the ledger, newest first: all of it, or one kind (GET /v1/account/ledger).
  (t) => [
    index("ledger_entries_account").on(t.accountId, t.createdAt, t.id),
    index("ledger_entries_account_kind").on(t.accountId, t.kind, t.createdAt, t.id),
  ],
);

/** Read model of the session Durable Objects: only the session's own object writes a row here. */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    sessionId: text().notNull(),
    phoneNumber: text(),
    displayName: text().notNull(),
    status: text({ enum: ["pending", "connected", "disconnected", "banned", "failed"] }).notNull(),
    reason: text(),
    lastSeenAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  (t) => [
    uniqueIndex("sessions_session_id").on(t.sessionId),
    index("sessions_account").on(t.accountId, t.createdAt),
  ],
);

/**
 * Link tokens: bearer capabilities in a link URL (`<origin>/link/<token>`) that let whoever holds
 * one watch and link one session of one account without an API key (src/links/tokens.ts). Only
 * the token's SHA-256 (hex) is stored, as for API keys. A token is live until `expires_at` (epoch
 * ms) or `revoked_at`; it goes with its session (`ON DELETE CASCADE`).
 */
export const linkTokens = sqliteTable(
  "link_tokens",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    sessionId: text()
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    tokenHash: text().notNull(),
    /** Where the hosted page sends the user back to once linked (an https URL), or null. */
    returnUrl: text(),
    expiresAt: integer().notNull(),
    createdAt: integer().notNull(),
    revokedAt: integer(),
  },
  (t) => [
    uniqueIndex("link_tokens_token_hash").on(t.tokenHash),
    index("link_tokens_session").on(t.sessionId, t.revokedAt),
  ],
);

export const messages = sqliteTable(
  "messages",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    // No foreign key: a message outlives the deletion of its session.
    chatappSessionId: text(),
    campaignId: text(),
    otpId: text(),
    providerMessageId: text(),
    fromNumber: text(),
    toNumber: text().notNull(),
    type: text({ enum: ["text", "image", "video", "audio", "document"] }).notNull(),
    content: text(),
    mediaUrl: text(),
    status: text({ enum: ["queued", "sent", "delivered", "read", "failed", "scheduled"] }).notNull(),
    direction: text({ enum: ["incoming", "outgoing"] }).notNull(),
    reason: text(),
    /** Minor units. */
    cost: integer().notNull().default(0),
    /** Milliseconds the session waits after its previous gateway call before this one. */
    delayBetween: integer().notNull().default(0),
    /** Order of acceptance within one send request (0-based); pacing follows it. */
    sendIndex: integer().notNull().default(0),
    scheduledAt: integer(),
    /**
     * When the session object took the message into its outbox (epoch ms), or null while its
     * queue message has not reached it: the reconciliation sweep re-enqueues only those.
     */
    acceptedAt: integer(),
    sentAt: integer(),
    deliveredAt: integer(),
    readAt: integer(),
    /**
     * JSON object: `{ attempts, gateway, last_error, next_attempt_at, failed_at, events: [{ type,
     * at, gateway_at }] }`; every time in it is an API timestamp string (lib/time.ts).
     */
    metadata: text().notNull().default("{}"),
    chargeId: text(),
    refundId: text(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  // One index per list filter, each ending in the (created_at, id) keyset so that a page reads
  // about as many rows as it returns (this API's target; test/messages-rows-read.test.ts holds it).
  (t) => [
    index("messages_account_created").on(t.accountId, t.createdAt, t.id),
    index("messages_account_status").on(t.accountId, t.status, t.createdAt, t.id),
    index("messages_account_direction").on(t.accountId, t.direction, t.createdAt, t.id),
    index("messages_account_type").on(t.accountId, t.type, t.createdAt, t.id),
    index("messages_account_to").on(t.accountId, t.toNumber, t.createdAt, t.id),
    index("messages_account_from").on(t.accountId, t.fromNumber, t.createdAt, t.id),
    index("messages_account_session").on(t.accountId, t.chatappSessionId, t.createdAt, t.id),
    index("messages_provider_id").on(t.providerMessageId),
    // A gateway may deliver the same incoming message twice; it is stored once.
    uniqueIndex("messages_incoming_provider_id")
      .on(t.chatappSessionId, t.providerMessageId)
      .where(sql`${t.direction} = 'incoming'`),
    // Small: only messages no session object has accepted yet, for the reconciliation sweep.
    index("messages_unaccepted")
      .on(t.updatedAt)
      .where(sql`${t.status} IN ('queued', 'scheduled') AND ${t.acceptedAt} IS NULL`),
    // A ledger entry's messages in send order, read from the index alone (GET /v1/account/ledger).
    index("messages_charge").on(t.chargeId, t.sendIndex, t.id),
    index("messages_refund").on(t.refundId, t.sendIndex, t.id),
    index("messages_campaign").on(t.campaignId, t.status),
  ],
);

/** Stored first responses of requests sent with an `Idempotency-Key` header, kept 24 hours. */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: text().notNull(),
    key: text().notNull(),
    /** SHA-256 (hex) of method, path and body: a reused key with another request is refused. */
    requestHash: text().notNull(),
    status: text({ enum: ["in_progress", "done"] }).notNull(),
    responseStatus: integer(),
    responseBody: text(),
    createdAt: integer().notNull(),
    expiresAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_expires").on(t.expiresAt)],
);

/** One-time-code settings (interface document §2.3). Deleting sets `deleted_at` (soft delete). */
export const apps = sqliteTable(
  "apps",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    name: text().notNull(),
    senderId: text().notNull(),
    messageTemplate: text().notNull(),
    codeSize: integer().notNull().default(6),
    /** Seconds an OTP stays valid (60–3,600; default 600). */
    expirySeconds: integer().notNull().default(600),
    chatappSessionId: text(),
    /**
     * JSON array of upper-case ISO 3166-1 alpha-2 codes: the countries whose numbers may be sent
     * codes (src/otp/countries.ts). Null means every country.
     */
    allowedCountries: text({ mode: "json" }).$type<string[]>(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
    deletedAt: integer(),
  },
  (t) => [index("apps_account_live").on(t.accountId, t.deletedAt, t.createdAt, t.id)],
);

/**
 * One-time codes sent through an app (README, One-time codes). The code itself is never
 * stored: `code_hmac` is HMAC-SHA256 (hex) of `${id}:${code}` keyed with the `OTP_SECRET`
 * secret (src/otp/code.ts), so the row cannot be turned back into a code without the key.
 * `status` is stored as `expired` only once a verify finds it so; readers treat a `pending` row
 * past `expires_at` as expired too.
 */
export const otps = sqliteTable(
  "otps",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    appId: text()
      .notNull()
      .references(() => apps.id),
    /** The message that carried the latest code; null until it is created. No foreign key, as on messages. */
    messageId: text(),
    toNumber: text().notNull(),
    codeHmac: text().notNull(),
    status: text({ enum: ["pending", "verified", "failed", "expired"] }).notNull(),
    failedAttempts: integer().notNull().default(0),
    /** Codes sent for this OTP, the first included (at most 5). */
    sends: integer().notNull().default(1),
    lastSentAt: integer().notNull(),
    expiresAt: integer().notNull(),
    verifiedAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  (t) => [index("otps_account").on(t.accountId, t.createdAt)],
);

/**
 * Every code sent (first sends and resends), the log that the per-number limit counts
 * (`OTP_MAX_PER_NUMBER_PER_HOUR` per app and number in a rolling hour). `seq` is the send's
 * number within its OTP (1–5), so one OTP cannot log the same send twice.
 */
export const otpSends = sqliteTable(
  "otp_sends",
  {
    otpId: text()
      .notNull()
      .references(() => otps.id),
    seq: integer().notNull(),
    appId: text().notNull(),
    toNumber: text().notNull(),
    sentAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.otpId, t.seq] }),
    index("otp_sends_app_number").on(t.appId, t.toNumber, t.sentAt),
  ],
);

/**
 * Every state change an account can be told of (src/events/catalogue.ts), written in the same D1
 * batch as the change itself (a transactional outbox). `snapshot` is the changed row as JSON
 * (camelCase keys, as Drizzle reads it), rendered into the resource's API shape when shown.
 * `dedupe_key` is unique: the same change applied twice (a redelivery, a replayed ack) records
 * one event. Kept 30 days.
 */
export const events = sqliteTable(
  "events",
  {
    /** `evt_` and 32 hex digits. */
    id: text().primaryKey(),
    accountId: text().notNull(),
    type: text().notNull(),
    dedupeKey: text().notNull(),
    snapshot: text().notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [
    uniqueIndex("events_dedupe_key").on(t.dedupeKey),
    index("events_account_created").on(t.accountId, t.createdAt, t.id),
    index("events_account_type").on(t.accountId, t.type, t.createdAt, t.id),
    index("events_created").on(t.createdAt),
  ],
);

export type EventRow = typeof events.$inferSelect;

/**
 * Where an account's events are pushed (Standard Webhooks). `secret` is the signing secret
 * (`whsec_` + base64), kept in clear because signing needs it; after a rotation the old one stays
 * in `previous_secret` and keeps signing until `previous_secret_expires_at` (epoch ms).
 */
export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    url: text().notNull(),
    description: text(),
    /** JSON array of event type names; null means every type, including types added later. */
    events: text({ mode: "json" }).$type<string[]>(),
    enabled: integer({ mode: "boolean" }).notNull().default(true),
    /** Why delivery turned the endpoint off; null while enabled or when turned off through the API. */
    disabledReason: text(),
    secret: text().notNull(),
    previousSecret: text(),
    previousSecretExpiresAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  (t) => [index("webhook_endpoints_account").on(t.accountId, t.createdAt, t.id)],
);

/**
 * One event's delivery to one webhook endpoint: `pending` until an attempt gets a 2xx
 * (`succeeded`) or the retries run out or the endpoint answers 410 (`failed`). `attempts` counts
 * the attempts made; `next_attempt_at` (epoch ms) is when the next one is due while pending.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    endpointId: text().notNull(),
    eventId: text().notNull(),
    accountId: text().notNull(),
    /** The event's type, kept so the delivery history reads without the event (purged first). */
    eventType: text().notNull(),
    status: text({ enum: ["pending", "succeeded", "failed"] }).notNull(),
    attempts: integer().notNull().default(0),
    nextAttemptAt: integer(),
    lastStatusCode: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.endpointId, t.eventId] }),
    // Keyset paging of an endpoint's deliveries, all of them or by status (newest first).
    index("webhook_deliveries_endpoint_created").on(t.endpointId, t.createdAt, t.eventId),
    index("webhook_deliveries_endpoint_status").on(t.endpointId, t.status, t.createdAt, t.eventId),
    index("webhook_deliveries_pending").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
  ],
);

/** Every delivery attempt: when, the HTTP status (null without an answer), duration, and the start of the answer. */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: text().primaryKey(),
    endpointId: text().notNull(),
    eventId: text().notNull(),
    /** 1 for the first attempt. */
    attempt: integer().notNull(),
    attemptedAt: integer().notNull(),
    statusCode: integer(),
    durationMs: integer().notNull(),
    /** The first 1 KiB of the response body. */
    responseExcerpt: text(),
    /** Why there was no answer (timeout, unreachable), else null. */
    error: text(),
  },
  (t) => [
    index("webhook_attempts_delivery").on(t.endpointId, t.eventId, t.attempt),
    index("webhook_attempts_time").on(t.attemptedAt),
  ],
);

/**
 * A bulk send across several sessions (README, Campaigns): a `draft` gathers its recipients, then
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
    type: text({ enum: ["text", "image", "video", "audio", "document"] }).notNull(),
    content: text(),
    mediaUrl: text(),
    delayMinMs: integer().notNull(),
    delayMaxMs: integer().notNull(),
    /** Epoch ms, or null to start at once. */
    scheduledAt: integer(),
    /** JSON `{start: "HH:MM", end: "HH:MM", time_zone}` (IANA), or null for any time. */
    sendWindow: text({ mode: "json" }).$type<{ start: string; end: string; time_zone: string }>(),
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

export type CampaignRow = typeof campaigns.$inferSelect;
export type CampaignRecipientRow = typeof campaignRecipients.$inferSelect;

/**
 * The account's suppression list: numbers (E.164) that bulk campaigns skip. A number is added
 * through the API (`source` `api`) or by the contact texting an opt-out keyword to one of the
 * account's sessions (`keyword`, with the keyword matched; src/opt-outs/keywords.ts). One row per
 * (account, number): adding it again changes nothing. Single sends and OTP codes ignore the list.
 */
export const optOuts = sqliteTable(
  "opt_outs",
  {
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    toNumber: text().notNull(),
    source: text({ enum: ["api", "keyword"] }).notNull(),
    /** The opt-out keyword the contact sent (upper case, e.g. `STOP`); null for `api`. */
    keyword: text(),
    createdAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.toNumber] }),
    // Keyset paging of the list, newest first: (created_at, to_number) within the account.
    index("opt_outs_account_created").on(t.accountId, t.createdAt, t.toNumber),
  ],
);

export type OptOutRow = typeof optOuts.$inferSelect;

/**
 * Running counters of an account's outgoing messages per UTC hour (`hour`, epoch ms of its start,
 * by the message's `created_at`) and type: how many are in each status now, what they cost and
 * what of that was refunded (minor units). Kept by triggers on `messages` (migrations/0014), in
 * the statement that inserts a message or moves its status, so they are exact by construction
 * and cost no statement of their own; `GET /v1/account/usage` reads them, never the messages.
 */
export const accountUsage = sqliteTable(
  "account_usage",
  {
    accountId: text().notNull(),
    hour: integer().notNull(),
    type: text({ enum: ["text", "image", "video", "audio", "document"] }).notNull(),
    queued: integer().notNull().default(0),
    scheduled: integer().notNull().default(0),
    sent: integer().notNull().default(0),
    delivered: integer().notNull().default(0),
    read: integer().notNull().default(0),
    failed: integer().notNull().default(0),
    cost: integer().notNull().default(0),
    refunded: integer().notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.hour, t.type] })],
);

export type AccountUsageRow = typeof accountUsage.$inferSelect;

export type MessageRow = typeof messages.$inferSelect;
export type MessageType = MessageRow["type"];
export type MessageStatus = MessageRow["status"];
