import { sql } from "drizzle-orm";
import {
  customType,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
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
    /**
     * A small number of the endpoint's own (1, 2, …) that its deliveries are keyed by in place of
     * the 36-character id: one past the highest in use by an endpoint or a delivery when it is
     * made, so a number is never reused while history of an endpoint deleted before still holds it.
     */
    number: integer().notNull(),
  },
  (t) => [
    index("webhook_endpoints_account").on(t.accountId, t.createdAt, t.id),
    uniqueIndex("webhook_endpoints_number").on(t.number),
  ],
);

/**
 * 16 bytes held as a BLOB: the 32 hex digits of an event id (`evt_…`), half the size of its text.
 * Queries convert at the edge of SQL (`unhex(substr(id, 5))`, `'evt_' || lower(hex(bytes))`), and
 * bytes sort as their hex digits do, so keyset order is the text id's order.
 */
const idBytes = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "blob" });

/**
 * The event type names a delivery row refers to by number (`code`), so each row holds one byte
 * instead of the name. A name is added the first time a delivery of its type is made
 * (src/db/queries/webhook-deliveries.ts `createDeliveries`) and never changes.
 */
export const webhookEventTypes = sqliteTable("webhook_event_types", {
  code: integer().primaryKey(),
  name: text().notNull().unique(),
});

/**
 * One event's delivery to one webhook endpoint, with its first attempt: `pending` until an attempt
 * gets a 2xx (`succeeded`) or the retries run out or the endpoint answers 410 (`failed`).
 *
 * Stored small, since every event makes one per endpoint (README, Webhooks): the endpoint by its
 * `number`, which also gives the delivery's account; the event id as 16 bytes; the type by its
 * code in {@link webhookEventTypes}; `status` as 0 `pending`, 1 `succeeded`, 2 `failed`; times
 * after `created_at` (epoch ms) as ms after it. A delivery that succeeds at its first attempt is
 * this one row: the first attempt's outcome lives here (`first_*`), and {@link webhookAttempts}
 * holds only the attempts after it.
 *
 * `WITHOUT ROWID` (migrations/0046_webhook_history_small.sql, which drizzle-kit cannot express: a
 * later migration that rebuilds the table must keep it): the table is its primary key's b-tree, in
 * the order the history lists it (an endpoint's deliveries by `created_at`, then event id).
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    /** The endpoint's {@link webhookEndpoints} `number`. */
    endpointNumber: integer().notNull(),
    /** When the event was fanned out to the endpoint, epoch ms. */
    createdAt: integer().notNull(),
    eventId: idBytes().notNull(),
    /** The event's type ({@link webhookEventTypes} `code`), kept so the history reads without the event. */
    eventTypeCode: integer().notNull(),
    /** 0 `pending`, 1 `succeeded`, 2 `failed` (src/db/queries/webhook-deliveries.ts `STATUSES`). */
    status: integer().notNull(),
    /** Attempts claimed so far. */
    attempts: integer().notNull().default(0),
    /** While pending, when the next attempt is due (epoch ms); else null. */
    nextAttemptAt: integer(),
    /** The last change, in ms after `created_at`. */
    updatedAfterMs: integer().notNull(),
    /** The first attempt, in ms after `created_at`; null until it is recorded. */
    firstAttemptAfterMs: integer(),
    /** The first attempt's HTTP status; null without an answer. */
    firstStatusCode: integer(),
    firstDurationMs: integer(),
    /** The first 1 KiB of the first attempt's response body. */
    firstResponseExcerpt: text(),
    /** Why the first attempt got no answer (timeout, unreachable), else null. */
    firstError: text(),
  },
  (t) => [
    primaryKey({ columns: [t.endpointNumber, t.createdAt, t.eventId] }),
    // One delivery per (endpoint, event), found by its event id.
    uniqueIndex("webhook_deliveries_event").on(t.endpointNumber, t.eventId),
    // The few deliveries not `succeeded`, in list order: the status filters, the sweep, recover.
    index("webhook_deliveries_pending")
      .on(t.endpointNumber, t.createdAt, t.eventId)
      .where(sql`${t.status} = 0`),
    index("webhook_deliveries_failed")
      .on(t.endpointNumber, t.createdAt, t.eventId)
      .where(sql`${t.status} = 2`),
  ],
);

/**
 * The attempts of a delivery after its first (which its {@link webhookDeliveries} row holds): when
 * (epoch ms), the HTTP status (null without an answer), duration, and the start of the answer.
 * Keyed by its delivery and number, so an attempt recorded twice is one row; purged with its
 * delivery. `WITHOUT ROWID` like the deliveries (migrations/0046_webhook_history_small.sql).
 */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    endpointNumber: integer().notNull(),
    eventId: idBytes().notNull(),
    /** 2 for the second attempt, and so on. */
    attempt: integer().notNull(),
    attemptedAt: integer().notNull(),
    statusCode: integer(),
    durationMs: integer().notNull(),
    /** The first 1 KiB of the response body. */
    responseExcerpt: text(),
    /** Why there was no answer (timeout, unreachable), else null. */
    error: text(),
  },
  (t) => [primaryKey({ columns: [t.endpointNumber, t.eventId, t.attempt] })],
);
