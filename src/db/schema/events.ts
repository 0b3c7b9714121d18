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
 * 16 bytes held as a BLOB: the 32 hex digits of an event id (`evt_…`), half the size of its text.
 * Queries convert at the edge of SQL (`unhex(substr(id, 5))`, `'evt_' || lower(hex(bytes))`), and
 * bytes sort as their hex digits do, so keyset order is the text id's order.
 */
const idBytes = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "blob" });

/**
 * The number each event type is stored as (`events.type_code`, `webhook_deliveries.event_type_code`),
 * so a row holds one byte instead of the name. Every type of src/events/catalogue.ts has one
 * (test/events-storage.test.ts holds it); never change or reuse a number, since rows keep it.
 */
export const EVENT_TYPE_CODES: Readonly<Record<string, number>> = {
  "message.sent": 1,
  "message.delivered": 2,
  "message.read": 3,
  "message.failed": 4,
  "message.received": 5,
  "message.media_kept": 6,
  "message.media_failed": 7,
  "message.reaction": 8,
  "session.status_changed": 9,
  "session.qr_updated": 10,
  "session.health_changed": 11,
  "otp.verified": 12,
  "otp.failed": 13,
  "campaign.started": 14,
  "campaign.completed": 15,
  "campaign.cancelled": 16,
  "account.balance_low": 17,
  "template.status_changed": 18,
  "contact.created": 19,
  "contact.updated": 20,
  "contact.erased": 21,
  "message.deleted": 22,
  "message.edited": 23,
  "poll.voted": 24,
};

/**
 * The event types `events_account_type` leaves out: a message's three moves, most of the events
 * there are (three of every sent message's). A filter on one of them reads the account's events
 * newest first and keeps those of the type (about a third of them each).
 */
export const UNLISTED_EVENT_TYPES = ["message.sent", "message.delivered", "message.read"] as const;
/**
 * The condition of `events_account_type`, as SQL text: the index is made with it, and a query that
 * reads the index holds it literally (SQLite uses a partial index only then).
 */
export const LISTED_EVENT_TYPE_CONDITION = `type_code NOT IN (${UNLISTED_EVENT_TYPES.map((type) => EVENT_TYPE_CODES[type]).join(", ")})`;

/**
 * Every state change an account can be told of (src/events/catalogue.ts), written in the same D1
 * batch as the change itself (a transactional outbox). `snapshot` is the changed row as JSON
 * (camelCase keys, as Drizzle reads it), rendered into the resource's API shape when shown; a
 * message event instead points at its message and keeps only the message's fields that change
 * after it is made, as a JSON array of their values at the event (src/db/queries/events.ts
 * `MESSAGE_EVENT_FIELDS`): the rest is read from the message when the event is.
 * The same change applied twice (a redelivery, a replayed ack) records one event: a message
 * event's id is made of its message's id and type (src/db/queries/events.ts `messageEventId`),
 * which also names the message it points at; any other event has a unique `dedupe_key`. Kept 30
 * days.
 *
 * Stored small, since every message makes several (docs/retention.md, Data retention): the id as 16 bytes,
 * the account by its `number`, the type by its {@link EVENT_TYPE_CODES} number. `WITHOUT ROWID`
 * (migrations/accounts/0050_events_keyed_small.sql, which drizzle-kit cannot express: a later migration that
 * rebuilds the table must keep it): the table is its primary key's b-tree, so an id is found, and
 * a message event recorded twice is refused, with no index of its own.
 */
export const events = sqliteTable(
  "events",
  {
    /** The id's 32 hex digits as 16 bytes. */
    id: idBytes().primaryKey(),
    /** The account's {@link accounts} `number`. */
    accountNumber: integer().notNull(),
    /** The type's {@link EVENT_TYPE_CODES} number. */
    typeCode: integer().notNull(),
    /**
     * What makes the change once (`<type>:<what caused it>`); null for a message event whose id
     * already does (src/db/queries/events.ts `messageEventId`).
     */
    dedupeKey: text(),
    snapshot: text().notNull(),
    /**
     * The message a message event points at when its id does not say it (a message whose id is
     * not a UUID, or an event recorded before migrations/accounts/0049_smaller_events_and_indexes.sql);
     * else null.
     */
    objectId: text(),
    createdAt: integer().notNull(),
  },
  (t) => [
    uniqueIndex("events_dedupe_key").on(t.dedupeKey).where(sql`${t.dedupeKey} IS NOT NULL`),
    index("events_account_created").on(t.accountNumber, t.createdAt, t.id),
    // Only the types few events have: a filter on a type most events have (UNLISTED_EVENT_TYPES)
    // reads `events_account_created` instead, and those events spare the entry.
    index("events_account_type")
      .on(t.accountNumber, t.typeCode, t.createdAt, t.id)
      .where(sql.raw(LISTED_EVENT_TYPE_CONDITION)),
  ],
);

/**
 * An event as it is read (src/db/queries/events.ts `eventColumns`): its `evt_…` id, the account's
 * id, the type's name, the snapshot rendered (a message event's message as it was at the event)
 * and the time (epoch ms).
 */
export interface EventRow {
  id: string;
  accountId: string;
  type: string;
  snapshot: string;
  createdAt: number;
}

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
 * One event's delivery to one webhook endpoint, with its first attempt: `pending` until an attempt
 * gets a 2xx (`succeeded`) or the retries run out or the endpoint answers 410 (`failed`).
 *
 * Stored small, since every event makes one per endpoint (docs/webhooks.md, Webhooks): the endpoint by its
 * `number`, which also gives the delivery's account; the event id as 16 bytes; the type by its
 * {@link EVENT_TYPE_CODES} number; `status` as 0 `pending`, 1 `succeeded`, 2 `failed`; times
 * after `created_at` (epoch ms) as ms after it. A delivery that succeeds at its first attempt is
 * this one row: the first attempt's outcome lives here (`first_*`), and {@link webhookAttempts}
 * holds only the attempts after it.
 *
 * `WITHOUT ROWID` (migrations/accounts/0046_webhook_history_small.sql, which drizzle-kit cannot express: a
 * later migration that rebuilds the table must keep it): the table is its primary key's b-tree, in
 * the order the history lists it (an endpoint's deliveries by `created_at`, then event id). Its
 * `created_at` is its event's own time, so a delivery is found by endpoint and event id through the
 * event (src/db/queries/webhook-deliveries.ts `isKey`), with no index of its own, and written
 * once: a delivery that succeeds at its first attempt is one row written (migrations/accounts/0053_deliveries_keyed_by_event_time.sql).
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    /** The endpoint's {@link webhookEndpoints} `number`. */
    endpointNumber: integer().notNull(),
    /** The event's time (`events.created_at`), epoch ms. */
    createdAt: integer().notNull(),
    eventId: idBytes().notNull(),
    /** The event's type ({@link EVENT_TYPE_CODES}), kept so the history reads without the event. */
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
 * delivery, whose `created_at` it keeps to find it by key. `WITHOUT ROWID` like the deliveries
 * (migrations/accounts/0046_webhook_history_small.sql).
 */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    endpointNumber: integer().notNull(),
    eventId: idBytes().notNull(),
    /** 2 for the second attempt, and so on. */
    attempt: integer().notNull(),
    /** Its delivery's `created_at` (its event's time), epoch ms; null for one made before 0053 whose event was gone. */
    createdAt: integer(),
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
