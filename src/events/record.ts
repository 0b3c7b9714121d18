import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { accounts } from "../db/schema";
import type { EventType } from "./catalogue";

// Events are written in the same D1 batch as the change they record (a transactional outbox):
// the statements below go into the batch of the change, after the statement that makes it.

/**
 * What an event statement returns of each event it wrote: its id, its account, and whether the
 * account has an enabled webhook endpoint at all (only then is the event worth publishing).
 */
const RETURNING_RECORDED = sql.raw(`RETURNING id, account_id AS accountId,
  EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.account_id = events.account_id AND w.enabled = 1) AS hooked`);

/** A fresh event id, `evt_` and 32 hex digits, made by SQLite (one per row of an INSERT…SELECT). */
const NEW_EVENT_ID = sql`'evt_' || lower(hex(randomblob(16)))`;

/** JSON of every column of `table`'s current row, camelCase keys (as Drizzle reads the row). */
function rowJson(table: SQLiteTable): SQL {
  const pairs = Object.entries(getTableColumns(table)).map(([key, column]) => sql`${key}, ${column}`);
  return sql`json_object(${sql.join(pairs, sql`, `)})`;
}

/**
 * The statement that records a `type` event for every row of `table` (messages or OTPs: tables
 * with `id`, `account_id` and `updated_at`) that `where` selects, with the row as it is at this
 * point of the batch; the event's time is the row's `updated_at`, which the change set. Its
 * dedupe key is `type:<row id>`: each of these changes happens once per row (a message is sent
 * once, an OTP verified once), so the same change applied again records nothing. `extra` adds
 * keys to the snapshot, each a JSON value computed for the row (e.g. an OTP's attempts, read
 * from another table).
 */
export function eventsForRows(
  type: EventType,
  table: SQLiteTable,
  where: SQL,
  extra: Record<string, SQL> = {},
): SQL {
  const snapshot = Object.entries(extra).reduce(
    (json, [key, value]) => sql`json_set(${json}, ${`$.${key}`}, json(${value}))`,
    rowJson(table),
  );
  return sql`INSERT OR IGNORE INTO events (id, account_id, type, dedupe_key, snapshot, created_at)
    SELECT ${NEW_EVENT_ID}, account_id, ${type}, ${`${type}:`} || id, ${snapshot}, updated_at
    FROM ${table} WHERE ${where}
    ${RETURNING_RECORDED}`;
}

/**
 * The statement that records a `type` event for account `accountId` when `where` holds of its row
 * at this point of the batch. The snapshot is the row with `extra` merged in (what rendering it
 * needs beyond the row, e.g. the prices of the moment); the event's time is the row's
 * `updated_at`, which the change set. `dedupeKey` names the change (`<type>:<what caused it>`),
 * so the same change applied again records nothing.
 */
export function eventForAccount(
  type: EventType,
  accountId: string,
  where: SQL,
  dedupeKey: string,
  extra: Record<string, unknown>,
): SQL {
  return sql`INSERT OR IGNORE INTO events (id, account_id, type, dedupe_key, snapshot, created_at)
    SELECT ${NEW_EVENT_ID}, id, ${type}, ${dedupeKey}, json_patch(${rowJson(accounts)}, ${JSON.stringify(extra)}), updated_at
    FROM accounts WHERE id = ${accountId} AND ${where}
    ${RETURNING_RECORDED}`;
}

/** An event made outside D1 (by a session object), with its own id as its dedupe key. */
export interface PendingEvent {
  id: string;
  accountId: string;
  type: EventType;
  /** JSON, as {@link eventsForRows} stores it. */
  snapshot: string;
  /** Epoch ms. */
  createdAt: number;
}

/** A new {@link PendingEvent} id: `evt_` and 32 hex digits, like the ones SQLite makes. */
export function newEventId(): string {
  return `evt_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** The statement that records a {@link PendingEvent}; writing it again records nothing. */
export function insertEventStatement(event: PendingEvent): SQL {
  return sql`INSERT OR IGNORE INTO events (id, account_id, type, dedupe_key, snapshot, created_at)
    VALUES (${event.id}, ${event.accountId}, ${event.type}, ${event.id}, ${event.snapshot}, ${event.createdAt})
    ${RETURNING_RECORDED}`;
}

/**
 * The statement that records `event` under `dedupeKey` (the change it records, so the same change
 * recorded again records nothing) when `where` holds at this point of the batch.
 */
export function insertKeyedEventStatement(event: PendingEvent, dedupeKey: string, where: SQL): SQL {
  return sql`INSERT OR IGNORE INTO events (id, account_id, type, dedupe_key, snapshot, created_at)
    SELECT ${event.id}, ${event.accountId}, ${event.type}, ${dedupeKey}, ${event.snapshot}, ${event.createdAt}
    WHERE ${where}
    ${RETURNING_RECORDED}`;
}

/**
 * An event a batch recorded, as its event statement's `RETURNING` gives it (the statements
 * above return the events they wrote, none for a change already recorded).
 */
export interface RecordedEvent {
  id: string;
  accountId: string;
}

/**
 * The events a D1 batch recorded that have somewhere to go: the `RETURNING` rows of its event
 * statements at `indexes`, for accounts with an enabled webhook endpoint. (An endpoint enabled
 * later receives only events recorded after it, see src/events/sweep.ts.)
 */
export function recordedIn(results: D1Result[], indexes: number[]): RecordedEvent[] {
  return indexes.flatMap((index) =>
    ((results[index]?.results ?? []) as (RecordedEvent & { hooked: number })[])
      .filter((row) => row.hooked === 1)
      .map(({ id, accountId }) => ({ id, accountId })),
  );
}

/** How long events are kept (30 days); the hourly sweep deletes older ones. */
export const EVENT_RETENTION_MS = 30 * 24 * 3600 * 1000;
