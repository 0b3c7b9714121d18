import { and, eq, getTableColumns, gte, lte, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import {
  accounts,
  EVENT_TYPE_CODES,
  type EventRow,
  events,
  LISTED_EVENT_TYPE_CONDITION,
  messages,
  UNLISTED_EVENT_TYPES,
} from "../schema";
import { accountNumberOf } from "./accounts";
import { contactJsonOfMessage } from "./contacts";
import { beyond, pageOf, readOrder } from "./keyset";
import { rowJson } from "./row-json";

/**
 * The columns of a message that may change after its first event, and so what a message event
 * keeps of it (`events.snapshot`, as they were at the event): the media link (an incoming
 * message's is kept, then expired), status, reason (a sent message the gateway fails), the
 * delivered and read times, and `metadata`. Stored as a JSON array in this order (the smallest
 * form: no keys), `metadata` as its receipt count, or while a key written later is in it as JSON
 * with its receipts as their count ({@link metadataAtEvent}), and each time as milliseconds from
 * the event's own time (`created_at`; null stays null); so the list only grows at its end, and an
 * array shorter than the list reads the missing fields from the message.
 *
 * Every other column is read from the message when the event is ({@link eventColumns}), since it
 * is the same then as at the event: `updated_at` is the event's own time (the event is dated by
 * it, {@link eventsForRows}); the session, the gateway's id, the sender's number and `sent_at` are
 * written only while a message is `queued` or `scheduled` (src/moves/message.ts `sentStatement`,
 * src/db/queries/messages.ts `moveToSessions`), before any event but a `message.failed` after which
 * it never leaves; the rest, `cost` included, is written once, when the message is stored.
 * `contact` is read as the contact is then (docs/contacts.md, Contacts: a contact only gains identifiers).
 */
export const MESSAGE_EVENT_FIELDS = [
  "mediaUrl",
  "status",
  "reason",
  "deliveredAt",
  "readAt",
  "metadata",
] as const satisfies readonly (keyof typeof messages.$inferSelect)[];

/** The {@link MESSAGE_EVENT_FIELDS} stored as milliseconds from the event's time. */
const RELATIVE_TIMES: ReadonlySet<string> = new Set(["deliveredAt", "readAt"]);

/** JSON path of a message's receipts in its `metadata` (src/moves/message.ts `withReceipt`). */
const RECEIPTS = "$.events";

/**
 * The `metadata` keys that may be written after a message's first event, each by its writer: the
 * rest are written before it (when the message is stored, retried or sent) and never change after
 * (src/messages/metadata.ts names every key's writer), and its receipts (`events`) are only ever
 * appended. A message event whose message has none of these keys yet keeps its `metadata` as the
 * receipt count alone ({@link metadataAtEvent}).
 * - `pricing`, `failed_at`: src/moves/message.ts `moveStatement` (a Cloud API status webhook; a
 *   sent message the gateway fails);
 * - `reactions`, `reactions_removed`: src/messages/reactions.ts `withReaction`;
 * - `media_error`, `media_expired_at`: src/db/queries/incoming-media.ts and outgoing-media.ts;
 * - `erased_at`: src/db/queries/erasures.ts (whose erasure also purges the message's events);
 * - `deleted_at`, `edited_at`, `edits`: src/chat-actions/delete.ts and edit.ts;
 * - `poll_votes`, `poll_votes_removed`, `poll_counts`: src/messages/poll-votes.ts `withPollVote`.
 */
const LATER_METADATA_KEYS = [
  "pricing",
  "failed_at",
  "reactions",
  "reactions_removed",
  "media_error",
  "media_expired_at",
  "erased_at",
  "deleted_at",
  "edited_at",
  "edits",
  "poll_votes",
  "poll_votes_removed",
  "poll_counts",
] as const;

/**
 * The JSON paths of {@link LATER_METADATA_KEYS} as SQL string literals, not bound parameters: an
 * event list reads each several times, and D1 takes at most 100 bound parameters a statement
 * (https://developers.cloudflare.com/d1/platform/limits/). The keys are this file's constants.
 */
const LATER_PATHS = LATER_METADATA_KEYS.map((key) => sql.raw(`'$.${key}'`));

/**
 * SQL: message `metadata` (JSON text) as a message event keeps it. While it holds none of the
 * {@link LATER_METADATA_KEYS}, the number of its receipts alone (a JSON integer): the message's
 * metadata at any later time, without those keys and with only its first that many receipts, is
 * the metadata at the event ({@link metadataOfEvent}). Otherwise the metadata with its receipts as
 * their count.
 */
function metadataAtEvent(metadata: SQLWrapper): SQL {
  const noLaterKey = sql.join(
    LATER_PATHS.map((path) => sql`json_type(${metadata}, ${path}) IS NULL`),
    sql` AND `,
  );
  return sql`CASE WHEN ${noLaterKey} THEN coalesce(json_array_length(${metadata}, ${RECEIPTS}), 0)
    WHEN json_type(${metadata}, ${RECEIPTS}) = 'array'
    THEN json_set(${metadata}, ${RECEIPTS}, json_array_length(${metadata}, ${RECEIPTS})) ELSE json(${metadata}) END`;
}

/**
 * SQL: the `metadata` (JSON text) a message event kept, `kept` (its SQL value), whole again from
 * the message's `metadata` now ({@link metadataAtEvent}): a receipt count alone becomes the
 * message's metadata without the {@link LATER_METADATA_KEYS} and with that many first receipts (none:
 * no `events`); a receipt count inside kept metadata becomes that many first receipts.
 */
function metadataOfEvent(kept: SQL, metadata: SQLWrapper): SQL {
  const receipts = (
    count: SQL,
  ) => sql`(SELECT json_group_array(json(r.value) ORDER BY r.key) FROM json_each(${metadata}, ${RECEIPTS}) r
    WHERE r.key < ${count})`;
  const laterKeys = sql.join(
    LATER_PATHS.map((path) => path),
    sql`, `,
  );
  return sql`CASE WHEN typeof(${kept}) = 'integer' THEN
      CASE WHEN ${kept} = 0 THEN json_remove(${metadata}, ${RECEIPTS}, ${laterKeys})
        ELSE json_remove(json_set(${metadata}, ${RECEIPTS}, json(${receipts(kept)})), ${laterKeys}) END
    WHEN json_type(${kept}, ${RECEIPTS}) = 'integer'
    THEN json_set(${kept}, ${RECEIPTS}, json(${receipts(sql`json_extract(${kept}, ${RECEIPTS})`)})) ELSE ${kept} END`;
}

/** SQL: the {@link MESSAGE_EVENT_FIELDS} of the message row at hand, as a JSON array. */
function messageEventSnapshot(): SQL {
  const columns = getTableColumns(messages);
  const values = MESSAGE_EVENT_FIELDS.map((key) => {
    if (key === "metadata") return metadataAtEvent(columns[key]);
    if (RELATIVE_TIMES.has(key)) return sql`${columns[key]} - ${columns.updatedAt}`;
    return sql`${columns[key]}`;
  });
  return sql`json_array(${sql.join(values, sql`, `)})`;
}

/**
 * SQL: the 16 bytes event id `id` (`evt_` and 32 hex digits) is stored as; NULL (or no bytes) for
 * any other string, which no event has.
 */
export function eventBytes(id: SQLWrapper | string): SQL {
  return sql`unhex(substr(${id}, 5))`;
}

/** SQL: the `evt_…` id of an event's stored bytes `bytes`. */
export function eventIdOf(bytes: SQLWrapper): SQL<string> {
  return sql<string>`'evt_' || lower(hex(${bytes}))`;
}

/**
 * The number event type `type` is stored as (src/db/schema/events.ts `EVENT_TYPE_CODES`).
 * @throws Error for a type the catalogue does not have.
 */
export function eventTypeCode(type: string): number {
  const code = EVENT_TYPE_CODES[type];
  if (code === undefined) throw new Error(`no stored code for event type ${type} (EVENT_TYPE_CODES)`);
  return code;
}

/** SQL: the name of the event type stored as `code` (a `type_code` column), NULL for none. */
export function eventTypeName(code: SQLWrapper): SQL<string> {
  const cases = Object.entries(EVENT_TYPE_CODES).map(([name, value]) => `WHEN ${value} THEN '${name}'`);
  return sql<string>`(CASE ${code} ${sql.raw(cases.join(" "))} END)`;
}

/**
 * SQL: the id of the message a message event with id bytes `bytes` points at, as
 * {@link messageEventId} made the event's id from it: the uuid with its version digit back.
 */
function messageIdOf(bytes: SQLWrapper): SQL {
  const hex = sql`lower(hex(${bytes}))`;
  return sql`(substr(${hex}, 1, 8) || '-' || substr(${hex}, 9, 4) || '-4' || substr(${hex}, 14, 3) || '-'
    || substr(${hex}, 17, 4) || '-' || substr(${hex}, 21))`;
}

/**
 * SQL: an event's snapshot as its rendering reads it (src/presenters/event.ts): the stored one,
 * or, for an event that points at a message (its snapshot a JSON array of
 * {@link MESSAGE_EVENT_FIELDS}), the message row as it is now with its contact, those fields as
 * they were at the event and `updatedAt` the event's time. The message is its `object_id`, or the
 * one its id names ({@link messageIdOf}): one primary-key read of the message per event. A
 * message's events go when the message does, or are made whole before (archives).
 */
function renderedSnapshot(): SQL<string> {
  const columns = getTableColumns(messages);
  const atEvent = MESSAGE_EVENT_FIELDS.map((key, index) => {
    const stored = sql`json_extract(${events.snapshot}, ${`$[${index}]`})`;
    // `metadata` is a text column: its JSON goes back in as text (`|| ''` drops the JSON subtype).
    const value =
      key === "metadata"
        ? sql`(${metadataOfEvent(stored, columns.metadata)} || '')`
        : RELATIVE_TIMES.has(key)
          ? sql`${events.createdAt} + ${stored}`
          : stored;
    return sql`${`$.${key}`}, CASE WHEN json_array_length(${events.snapshot}) > ${index} THEN ${value} ELSE ${columns[key]} END`;
  });
  // Nested fragments: a select of one table names its columns bare at the top level of a field's
  // SQL (drizzle-orm), where inside the subquery they would be the message's.
  const eventTime = sql`${events.createdAt}`;
  const itsMessage = sql`${columns.id} = ${messagePointedAt(sql`${events}`)}`;
  return sql<string>`CASE WHEN ${pointsAtMessage()} THEN (
    SELECT json_set(${rowJson(messages)}, ${"$.contact"}, json(${contactJsonOfMessage()}), ${sql.join(atEvent, sql`, `)}, ${"$.updatedAt"}, ${eventTime})
    FROM ${messages} WHERE ${itsMessage}) ELSE ${events.snapshot} END`;
}

/** SQL: whether the event at hand points at a message (its snapshot an array, not an object). */
function pointsAtMessage(): SQL {
  return sql`substr(${events.snapshot}, 1, 1) = '['`;
}

/**
 * SQL over `e` (an `events` alias): the id of the message event `e` points at (its `object_id`,
 * or the message its id names), or NULL for an event that points at none.
 */
export function messagePointedAt(e: SQL): SQL {
  return sql`CASE WHEN substr(${e}.snapshot, 1, 1) = '[' THEN COALESCE(${e}.object_id, ${messageIdOf(sql`${e}.id`)}) END`;
}

/**
 * The columns an event is read with, for `db.select(eventColumns())`: an {@link EventRow}, its id,
 * account and type converted from their stored forms and the snapshot rendered
 * ({@link renderedSnapshot}).
 */
export function eventColumns() {
  // Aliased apart from the columns: drizzle maps a batched query's rows by column name.
  return {
    id: eventIdOf(sql`${events.id}`).as("event_id"),
    accountId: sql<string>`(SELECT a.id FROM accounts a WHERE a.number = ${events.accountNumber})`.as(
      "account_uuid",
    ),
    type: eventTypeName(sql`${events.typeCode}`).as("type_name"),
    snapshot: renderedSnapshot().as("rendered_snapshot"),
    createdAt: events.createdAt,
  };
}

/**
 * The hex digit that stands for each event type pointing at a message in its events' ids
 * ({@link messageEventId}). Never change one: ids made with it are kept and delivered.
 */
const MESSAGE_EVENT_CODES: Readonly<Record<string, string>> = {
  "message.sent": "1",
  "message.delivered": "2",
  "message.read": "3",
  "message.failed": "5",
  "message.received": "6",
  "message.media_kept": "7",
  "message.media_failed": "8",
  "message.deleted": "9",
};

/**
 * SQL: whether message id `id` is a lower-case version 4 UUID (RFC 9562 §5.4), as
 * `crypto.randomUUID()` makes message ids: the ids {@link messageEventId} applies to. Its shape by
 * `GLOB` (no character classes: D1 refuses a pattern over 50 bytes,
 * https://developers.cloudflare.com/d1/platform/limits/), its 32 hex digits by `unhex`.
 */
function isUuidV4(id: SQLWrapper): SQL {
  return sql`(${id} GLOB '????????-????-4???-????-????????????'
    AND length(unhex(replace(${id}, '-', ''))) = 16 AND lower(${id}) = ${id})`;
}

/**
 * SQL: the id of message `id`'s event of type code `code` (SQL, {@link MESSAGE_EVENT_CODES}), as
 * stored (16 bytes): the message id's 32 hex digits with its version digit (the 13th, always `4`)
 * replaced by `code`; so each message has one event of each type, the event's id names its
 * message ({@link messageIdOf}), and recording it again is a
 * primary-key conflict (`INSERT OR IGNORE`) instead of a dedupe key to store and index. Only for
 * {@link isUuidV4} ids, where it is one-to-one; an event of another message gets a random id and
 * its dedupe key.
 */
function messageEventId(id: SQLWrapper, code: SQLWrapper): SQL {
  const hex = sql`replace(${id}, '-', '')`;
  return sql`unhex(substr(${hex}, 1, 12) || ${code} || substr(${hex}, 14))`;
}

/**
 * The statement that turns the events pointing at messages `ids` (SQL: a subquery of message ids
 * of account `accountId`) into whole snapshots, as {@link renderedSnapshot} renders them now
 * (`object_id` null): before those messages leave D1 (archived), so that their events still render
 * the same. Finds them by id ({@link messageEventId}) and by dedupe key (`<type>:<message id>`,
 * an event recorded before ids were derived or of a message whose id is not a UUID), for each of
 * `types`, the message event types: two primary-key or index reads per message and type (the
 * unary `+` keeps SQLite from reading the account's events by `account_number` instead,
 * https://sqlite.org/optoverview.html#uplus).
 */
export function materialiseMessageEventsStatement(
  accountId: string,
  ids: SQL,
  types: readonly string[],
): SQL {
  const codes = types.flatMap((type) => MESSAGE_EVENT_CODES[type] ?? []);
  return sql`UPDATE events SET snapshot = ${renderedSnapshot()}, object_id = NULL
    WHERE id IN (SELECT ${messageEventId(sql`x.id`, sql`c.value`)} FROM json_each(${JSON.stringify(codes)}) c, ${ids} x
        UNION ALL SELECT keyed.id FROM events keyed
          WHERE keyed.dedupe_key IN (SELECT t.value || ':' || x.id FROM json_each(${JSON.stringify(types)}) t, ${ids} x))
      AND ${pointsAtMessage()} AND +account_number = ${accountNumberOf(accountId)}`;
}

/**
 * For a type `events_account_type` holds, the index's condition as a literal (SQLite uses a
 * partial index only for a query whose WHERE holds it); none for an unlisted type
 * (src/db/schema/events.ts `UNLISTED_EVENT_TYPES`), whose page reads `events_account_created`.
 */
function listedType(type: string): SQL[] {
  return (UNLISTED_EVENT_TYPES as readonly string[]).includes(type)
    ? []
    : [sql.raw(LISTED_EVENT_TYPE_CONDITION)];
}

/** One page request of the event list: types (none: all), epoch-ms bounds, size and cursor. */
export interface EventListQuery {
  types: string[];
  timeFrom?: number;
  timeTo?: number;
  limit: number;
  cursor: Cursor | null;
}

/**
 * One page of the account's events, newest first, by keyset on `(created_at, id)`: one query per
 * type (index `events_account_type`, or `events_account_created` for a type most events have,
 * {@link listedType}) or one over all (`events_account_created`), run as one D1 batch and merged,
 * each reading `limit + 1` rows of its type.
 * @returns the page newest first, and whether more rows lie beyond it in the direction read.
 */
export async function listEvents(
  db: Db,
  accountId: string,
  query: EventListQuery,
): Promise<{ rows: EventRow[]; more: boolean }> {
  const build = (type: string | null) => {
    const where: (SQL | undefined)[] = [eq(events.accountNumber, accountNumberOf(accountId))];
    if (type !== null) where.push(eq(events.typeCode, eventTypeCode(type)), ...listedType(type));
    if (query.cursor) where.push(beyond(events, query.cursor, eventBytes));
    if (query.timeFrom !== undefined) where.push(gte(events.createdAt, query.timeFrom));
    if (query.timeTo !== undefined) where.push(lte(events.createdAt, query.timeTo));
    return db
      .select(eventColumns())
      .from(events)
      .where(and(...where))
      .orderBy(...readOrder(events, query.cursor))
      .limit(query.limit + 1);
  };
  const [first, ...rest] = query.types.length === 0 ? [build(null)] : query.types.map(build);
  if (!first) return { rows: [], more: false };
  const results = rest.length === 0 ? [await first] : await db.batch([first, ...rest]);
  return pageOf(results, query.limit, query.cursor);
}

/** The account's event with this id (`evt_…`), or null (none, another account's, not an event id). */
export async function findEvent(db: Db, accountId: string, id: string): Promise<EventRow | null> {
  if (!id.startsWith("evt_")) return null;
  const [row] = await db
    .select(eventColumns())
    .from(events)
    .where(and(eq(events.id, eventBytes(id)), eq(events.accountNumber, accountNumberOf(accountId))))
    .limit(1);
  return row ?? null;
}

/**
 * Deletes events created before `before` (epoch ms; the hourly sweep, 30-day retention): each
 * account's oldest, read by `events_account_created` (there is no index by time alone).
 */
export async function purgeEvents(db: Db, before: number): Promise<void> {
  await db.run(purgeEventsStatement(before));
}

/** The statement {@link purgeEvents} runs (exported for its query plan's test). */
export function purgeEventsStatement(before: number): SQL {
  return sql`DELETE FROM events WHERE account_number IN (SELECT number FROM accounts) AND created_at < ${before}`;
}

/**
 * Events that should have reached an endpoint but have no delivery row: recorded between
 * `from` and `to` (epoch ms), for an enabled endpoint of their account that existed then and is
 * subscribed to their type. These are events whose publication failed after their change
 * committed (see src/events/publish.ts); at most `limit`, oldest first.
 */
export async function undeliveredEvents(
  db: Db,
  range: { from: number; to: number },
  limit: number,
): Promise<{ id: string; accountId: string }[]> {
  const rows = await db.all<{ id: string; accountId: string }>(undeliveredEventsQuery(range, limit));
  return rows.map(({ id, accountId }) => ({ id, accountId }));
}

/**
 * The query {@link undeliveredEvents} runs (exported for its query plan's test): driven from the
 * enabled endpoints, each account's events in the range read by `events_account_created`.
 */
export function undeliveredEventsQuery(range: { from: number; to: number }, limit: number): SQL {
  return sql`SELECT DISTINCT ${eventIdOf(sql`e.id`)} AS id, a.id AS accountId, e.created_at FROM webhook_endpoints w
    JOIN accounts a ON a.id = w.account_id
    JOIN events e ON e.account_number = a.number AND e.created_at BETWEEN ${range.from} AND ${range.to}
      AND w.created_at <= e.created_at
      AND (w.events IS NULL OR ${eventTypeName(sql`e.type_code`)} IN (SELECT value FROM json_each(w.events)))
    WHERE w.enabled = 1
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
        WHERE d.endpoint_number = w.number AND d.created_at = e.created_at AND d.event_id = e.id)
    ORDER BY e.created_at LIMIT ${limit}`;
}

// Events are written in the same D1 batch as the change they record (a transactional outbox):
// the statements below go into the batch of the change, after the statement that makes it.

/**
 * What an event statement returns of each event it wrote: its id, its account, and whether the
 * account has an enabled webhook endpoint at all (only then is the event worth publishing).
 */
const RETURNING_RECORDED = sql.raw(`RETURNING 'evt_' || lower(hex(id)) AS id,
  (SELECT a.id FROM accounts a WHERE a.number = events.account_number) AS accountId,
  EXISTS (SELECT 1 FROM webhook_endpoints w JOIN accounts a ON a.id = w.account_id
    WHERE a.number = events.account_number AND w.enabled = 1) AS hooked`);

/** A fresh event id's 16 bytes, made by SQLite (one per row of an INSERT…SELECT). */
const NEW_EVENT_ID = sql`randomblob(16)`;

/** SQL: the account number of the row at hand of `table` (a table with `account_id`). */
const accountNumberOfRow = (table: SQLiteTable) =>
  sql`(SELECT a.number FROM accounts a WHERE a.id = ${table}.account_id)`;

/**
 * The statement that records a `type` event for every row of `table` (messages or OTPs: tables
 * with `id`, `account_id` and `updated_at`) that `where` selects, with the row as it is at this
 * point of the batch (a message: what {@link MESSAGE_EVENT_FIELDS} names, pointing at the message);
 * the event's time is the row's `updated_at`, which the change set. Each of these changes happens
 * once per row (a message is sent once, an OTP verified once), so the same change applied again
 * records nothing: a message's event has the id {@link messageEventId} gives it, any other row's
 * event the dedupe key `type:<row id>`. `extra` adds keys to the snapshot, each a JSON value
 * computed for the row (e.g. an OTP's attempts, read from another table).
 * @throws Error for a type without a stored code ({@link eventTypeCode}), or a message event type
 *   without a code in {@link MESSAGE_EVENT_CODES}.
 */
export function eventsForRows(
  type: string,
  table: SQLiteTable,
  where: SQL,
  extra: Record<string, SQL> = {},
): SQL {
  if (table === messages) return messageEvents(type, where);
  const snapshot = Object.entries(extra).reduce(
    (json, [key, value]) => sql`json_set(${json}, ${`$.${key}`}, json(${value}))`,
    rowJson(table),
  );
  return sql`INSERT OR IGNORE INTO events (id, account_number, type_code, dedupe_key, snapshot, created_at)
    SELECT ${NEW_EVENT_ID}, ${accountNumberOfRow(table)}, ${eventTypeCode(type)}, ${`${type}:`} || id, ${snapshot}, updated_at
    FROM ${table} WHERE ${where}
    ${RETURNING_RECORDED}`;
}

/**
 * {@link eventsForRows} for messages: each event points at its message and keeps what changes
 * ({@link MESSAGE_EVENT_FIELDS}). An event recorded before migrations/accounts/0049_smaller_events_and_indexes.sql
 * has a random id and the dedupe key `type:<message id>`: one with that key also means recorded
 * (until the hourly purge has taken the last of them, `EVENT_RETENTION_MS` after it). So has the
 * event of a message whose id is not a UUID, which names its message in `object_id`.
 */
function messageEvents(type: string, where: SQL): SQL {
  const code = MESSAGE_EVENT_CODES[type];
  if (code === undefined) throw new Error(`no event id code for ${type} (MESSAGE_EVENT_CODES)`);
  const { id } = getTableColumns(messages);
  const dedupeKey = sql`${`${type}:`} || ${id}`;
  return sql`INSERT OR IGNORE INTO events (id, account_number, type_code, dedupe_key, snapshot, object_id, created_at)
    SELECT CASE WHEN ${isUuidV4(id)} THEN ${messageEventId(id, sql`${code}`)} ELSE ${NEW_EVENT_ID} END,
      ${accountNumberOfRow(messages)}, ${eventTypeCode(type)}, CASE WHEN ${isUuidV4(id)} THEN NULL ELSE ${dedupeKey} END,
      ${messageEventSnapshot()}, CASE WHEN ${isUuidV4(id)} THEN NULL ELSE ${id} END, updated_at
    FROM ${messages} WHERE ${where}
      AND NOT EXISTS (SELECT 1 FROM events recorded WHERE recorded.dedupe_key = ${dedupeKey})
    ${RETURNING_RECORDED}`;
}

/**
 * The statement that records a `type` event for every row of `table` that `where` selects, with
 * `snapshotOf` the stored snapshot (given the row's JSON, {@link eventsForRows}'s), `dedupeKey` its
 * dedupe key (SQL over the row) and `at` (epoch ms) its time: for a change recorded before the
 * statement that makes it, so that the snapshot can hold the values before and after.
 */
export function eventsForRowsAs(
  type: string,
  table: SQLiteTable,
  where: SQL,
  dedupeKey: SQL,
  snapshotOf: (row: SQL) => SQL,
  at: number,
): SQL {
  return sql`INSERT OR IGNORE INTO events (id, account_number, type_code, dedupe_key, snapshot, created_at)
    SELECT ${NEW_EVENT_ID}, ${accountNumberOfRow(table)}, ${eventTypeCode(type)}, ${dedupeKey}, ${snapshotOf(rowJson(table))}, ${at}
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
  type: string,
  accountId: string,
  where: SQL,
  dedupeKey: string,
  extra: Record<string, unknown>,
): SQL {
  return sql`INSERT OR IGNORE INTO events (id, account_number, type_code, dedupe_key, snapshot, created_at)
    SELECT ${NEW_EVENT_ID}, number, ${eventTypeCode(type)}, ${dedupeKey}, json_patch(${rowJson(accounts)}, ${JSON.stringify(extra)}), updated_at
    FROM accounts WHERE id = ${accountId} AND ${where}
    ${RETURNING_RECORDED}`;
}

/** An event made outside D1 (src/events/record.ts `PendingEvent`), with an id of its own (`evt_…`). */
export interface StoredEvent {
  id: string;
  accountId: string;
  type: string;
  /** JSON, as {@link eventsForRows} stores it. */
  snapshot: string;
  /** Epoch ms. */
  createdAt: number;
}

/**
 * The statement that records `event`, made outside D1; writing it again records nothing (its id is
 * the primary key).
 */
export function insertEventStatement(event: StoredEvent): SQL {
  return sql`INSERT OR IGNORE INTO events (id, account_number, type_code, snapshot, created_at)
    VALUES (${eventBytes(event.id)}, ${accountNumberOf(event.accountId)}, ${eventTypeCode(event.type)}, ${event.snapshot}, ${event.createdAt})
    ${RETURNING_RECORDED}`;
}

/**
 * The statement that records `event` under `dedupeKey` (the change it records, so the same change
 * recorded again records nothing) when `where` holds at this point of the batch.
 */
export function insertKeyedEventStatement(event: StoredEvent, dedupeKey: string, where: SQL): SQL {
  return sql`INSERT OR IGNORE INTO events (id, account_number, type_code, dedupe_key, snapshot, created_at)
    SELECT ${eventBytes(event.id)}, ${accountNumberOf(event.accountId)}, ${eventTypeCode(event.type)}, ${dedupeKey}, ${event.snapshot}, ${event.createdAt}
    WHERE ${where}
    ${RETURNING_RECORDED}`;
}
