import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Events (the outbox of state changes an account can be told of) and their delivery to webhook
// endpoints: endpoints, deliveries and attempts. Conventions of every table: see index.ts.

/**
 * Every state change an account can be told of (src/events/catalogue.ts), written in the same D1
 * batch as the change itself (a transactional outbox). `snapshot` is the changed row as JSON
 * (camelCase keys, as Drizzle reads it), rendered into the resource's API shape when shown; a
 * message event instead points at its message (`object_id`) and keeps only the message's fields
 * that change after it is made, as they were at the event (src/db/queries/events.ts
 * `MESSAGE_EVENT_FIELDS`): the rest is read from the message when the event is.
 * The same change applied twice (a redelivery, a replayed ack) records one event: a message
 * event's id is made of its message's id and type (src/db/queries/events.ts `messageEventId`),
 * any other event has a unique `dedupe_key`. Kept 30 days.
 */
export const events = sqliteTable(
  "events",
  {
    /** `evt_` and 32 hex digits. */
    id: text().primaryKey(),
    accountId: text().notNull(),
    type: text().notNull(),
    /**
     * What makes the change once (`<type>:<what caused it>`); null for a message event, whose id
     * already does (src/db/queries/events.ts `messageEventId`).
     */
    dedupeKey: text(),
    snapshot: text().notNull(),
    /** The message a message event points at (its `snapshot` then holds what changes); else null. */
    objectId: text(),
    createdAt: integer().notNull(),
  },
  (t) => [
    uniqueIndex("events_dedupe_key").on(t.dedupeKey).where(sql`${t.dedupeKey} IS NOT NULL`),
    index("events_account_created").on(t.accountId, t.createdAt, t.id),
    index("events_account_type").on(t.accountId, t.type, t.createdAt, t.id),
    index("events_created").on(t.createdAt),
  ],
);

/** A row of {@link events}, as Drizzle reads it. */
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
    /**
     * The signing secret (`whsec_…`) sealed with AES-256-GCM, bound to the endpoint id
     * (src/webhooks/secret.ts); a row made before sealing holds it in clear until the hourly sweep
     * seals it. `previous_secret` likewise.
     */
    secret: text().notNull(),
    /** The secret's first characters as shown (`secret_prefix`), kept apart since the secret is sealed. */
    secretPrefix: text().notNull().default(""),
    previousSecret: text(),
    previousSecretExpiresAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
    /**
     * The id of the API key that created the endpoint; null for endpoints made before this column
     * existed. Revoking that key turns the endpoint off (src/keys/revoke.ts).
     */
    createdBy: text(),
    /**
     * The id of the API key that set the endpoint's current `url` (the creating key, or the last
     * key whose `PATCH` pointed it elsewhere); null for endpoints made before this column existed.
     * Revoking that key turns the endpoint off (src/keys/revoke.ts).
     */
    urlSetBy: text(),
  },
  (t) => [index("webhook_endpoints_account").on(t.accountId, t.createdAt, t.id)],
);

/**
 * One event's delivery to one webhook endpoint: `pending` until an attempt gets a 2xx
 * (`succeeded`) or the retries run out or the endpoint answers 410 (`failed`). `attempts` counts
 * the attempts made; `next_attempt_at` (epoch ms) is when the next one is due while pending.
 */
// `WITHOUT ROWID` (migrations/0042_webhook_history_keys.sql): the primary key is the table, not
// an index beside it; a later migration that rebuilds the table must keep it.
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

/**
 * Every delivery attempt: when, the HTTP status (null without an answer), duration, and the start
 * of the answer. Keyed by its delivery and number, so an attempt recorded twice is one row; the
 * table is its primary key's b-tree (`WITHOUT ROWID`, migrations/0042_webhook_history_keys.sql,
 * which drizzle-kit cannot express: a later migration that rebuilds the table must keep it).
 */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
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
    primaryKey({ columns: [t.endpointId, t.eventId, t.attempt] }),
    index("webhook_attempts_time").on(t.attemptedAt),
  ],
);
