import { and, asc, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import { batchSql, type Db } from "../client";
import { type EventRow, events, webhookDeliveries, webhookEndpoints } from "../schema";
import { accountNumberOf } from "./accounts";
import { eventBytes, eventColumns, eventTypeName } from "./events";
import { pageOf } from "./keyset";

// Deliveries and their attempts as stored (src/db/schema/events.ts `webhookDeliveries`): keyed by
// the endpoint's `number` and the event id's 16 bytes, status and type as small numbers, times
// after `created_at` as ms after it, the first attempt in the delivery's own row. Every statement
// converts at the edge of SQL, so callers see endpoint uuids, `evt_…` ids, names and epoch ms.

/** A delivery's statuses; the `status` column stores each as its index here. */
const STATUSES = ["pending", "succeeded", "failed"] as const;
export type WebhookDeliveryStatus = (typeof STATUSES)[number];

// Literals, not bound parameters: SQLite uses a partial index only for a query whose WHERE holds
// the index's own condition (https://www.sqlite.org/partialindex.html#queries_using_partial_indexes).
const statusCode = (status: WebhookDeliveryStatus) => sql.raw(String(STATUSES.indexOf(status)));
const PENDING = statusCode("pending");
const SUCCEEDED = statusCode("succeeded");
const FAILED = statusCode("failed");

/** The number of endpoint `endpointId`, or NULL when there is none. */
const endpointNumber = (endpointId: string) =>
  sql`(SELECT number FROM webhook_endpoints WHERE id = ${endpointId})`;
/** The number of the account's endpoint `endpointId`, or NULL when the account has none such. */
const ownedEndpointNumber = (accountId: string, endpointId: string) =>
  sql`(SELECT number FROM webhook_endpoints WHERE id = ${endpointId} AND account_id = ${accountId})`;
/**
 * The time of event `eventId`, which is its deliveries' `created_at` (src/db/schema/events.ts
 * `webhookDeliveries`), or NULL when the event is gone: with it, a delivery is found by its key.
 */
const eventTime = (eventId: string) => sql`(SELECT created_at FROM events WHERE id = ${eventBytes(eventId)})`;
/** The delivery `key` (alias-free, for UPDATE): a primary-key seek. */
const isKey = (key: DeliveryKey) =>
  sql`endpoint_number = ${endpointNumber(key.endpointId)} AND created_at = ${eventTime(key.eventId)} AND event_id = ${eventBytes(key.eventId)}`;

/** A delivery as the history shows it; times in epoch ms. */
export interface WebhookDelivery {
  endpointId: string;
  eventId: string;
  /** The event's catalogue type (src/events/catalogue.ts), as the fan-out stored it. */
  eventType: string;
  status: WebhookDeliveryStatus;
  /** Attempts claimed so far. */
  attempts: number;
  /** While pending, when the next attempt is due; else null. */
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** One attempt of a delivery: when (epoch ms), the HTTP status (null without an answer), and so on. */
export interface WebhookAttempt {
  /** 1 for the first. */
  attempt: number;
  attemptedAt: number;
  statusCode: number | null;
  durationMs: number;
  /** The first 1 KiB of the response body. */
  responseExcerpt: string | null;
  /** Why there was no answer (timeout, unreachable), else null. */
  error: string | null;
}

/** A delivery with its attempts, oldest first, as the delivery history shows it. */
export interface DeliveryHistory {
  delivery: WebhookDelivery;
  attempts: WebhookAttempt[];
}

const d = webhookDeliveries;

/**
 * A delivery's row joined to its endpoint and type, converted (uuid, `evt_…`, name, epoch ms);
 * each field an aliased expression: drizzle maps a batched query's rows by column name, and
 * checks a plain column's table against a FROM it can read (not one with INDEXED BY).
 */
const deliveryFields = {
  endpointId: sql<string>`${webhookEndpoints.id}`.as("endpoint_uuid"),
  eventId: sql<string>`'evt_' || lower(hex(${d.eventId}))`.as("event_id_text"),
  eventType: sql<string>`${eventTypeName(d.eventTypeCode)}`.as("event_type_name"),
  status: sql<number>`${d.status}`.as("status"),
  attempts: sql<number>`${d.attempts}`.as("attempts"),
  nextAttemptAt: sql<number | null>`${d.nextAttemptAt}`.as("next_attempt_at"),
  createdAt: sql<number>`${d.createdAt}`.as("created_at"),
  updatedAt: sql<number>`${d.createdAt} + ${d.updatedAfterMs}`.as("updated_at"),
  firstAttemptedAt: sql<number | null>`${d.createdAt} + ${d.firstAttemptAfterMs}`.as("first_attempted_at"),
  firstStatusCode: sql<number | null>`${d.firstStatusCode}`.as("first_status_code"),
  firstDurationMs: sql<number | null>`${d.firstDurationMs}`.as("first_duration_ms"),
  firstResponseExcerpt: sql<string | null>`${d.firstResponseExcerpt}`.as("first_response_excerpt"),
  firstError: sql<string | null>`${d.firstError}`.as("first_error"),
};

/**
 * Deliveries with {@link deliveryFields}, for a WHERE to pick; read through `index` when given
 * (SQLite's planner, without statistics, prefers the table's own key to a partial index).
 */
const selectDeliveries = (db: Db, index?: string) =>
  db
    .select(deliveryFields)
    .from(sql`${d}${sql.raw(index ? ` INDEXED BY ${index}` : "")}`)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.number, d.endpointNumber));

type StoredDelivery = Awaited<ReturnType<typeof selectDeliveries>>[number];

function toDelivery(row: StoredDelivery): WebhookDelivery {
  const status = STATUSES[row.status];
  if (!status) throw new Error(`webhook_deliveries: unknown status code ${row.status}`);
  return {
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType: row.eventType,
    status,
    attempts: row.attempts,
    nextAttemptAt: row.nextAttemptAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The first attempt a delivery row holds, or none (not yet recorded). */
function firstAttempt(row: StoredDelivery): WebhookAttempt[] {
  if (row.firstAttemptedAt === null) return [];
  return [
    {
      attempt: 1,
      attemptedAt: row.firstAttemptedAt,
      statusCode: row.firstStatusCode,
      durationMs: row.firstDurationMs ?? 0,
      responseExcerpt: row.firstResponseExcerpt,
      error: row.firstError,
    },
  ];
}

/** One page request of an endpoint's deliveries: statuses (none: all), size and cursor. */
export interface DeliveryListQuery {
  statuses: WebhookDeliveryStatus[];
  limit: number;
  /** Keyset on `(created_at, event_id)`: the cursor's `id` is an event id. */
  cursor: Cursor | null;
}

/**
 * One page of the account's endpoint `endpointId`'s deliveries with their attempts, newest first:
 * one keyset query per status or one over all, each at most `limit + 1` rows, merged; then the
 * later attempts of the page's deliveries that have any, in one query. All reads the table in its
 * key's order (`endpoint_number, created_at, event_id`); `pending` and `failed` read their partial
 * indexes, `succeeded` the table (most rows are). An endpoint of another account has no deliveries.
 *
 * @returns the page newest first (each row's `id` is its event id, for the cursor), and whether
 *   more rows lie beyond it in the direction read.
 */
export async function listDeliveries(
  db: Db,
  accountId: string,
  endpointId: string,
  query: DeliveryListQuery,
): Promise<{ rows: (DeliveryHistory & { id: string; createdAt: number })[]; more: boolean }> {
  const { cursor } = query;
  const backwards = cursor?.direction === "prev";
  const order = backwards ? asc : desc;
  const build = (status: WebhookDeliveryStatus | null) =>
    selectDeliveries(
      db,
      status === null || status === "succeeded" ? undefined : `webhook_deliveries_${status}`,
    )
      .where(
        and(
          eq(d.endpointNumber, ownedEndpointNumber(accountId, endpointId)),
          status === null ? undefined : sql`${d.status} = ${statusCode(status)}`,
          // keyset.ts `beyond`, with the cursor's event id as the column's bytes.
          cursor === null
            ? undefined
            : sql`(${d.createdAt}, ${d.eventId}) ${sql.raw(backwards ? ">" : "<")} (${cursor.createdAt}, ${eventBytes(cursor.id)})`,
        ),
      )
      .orderBy(order(d.createdAt), order(d.eventId))
      .limit(query.limit + 1);
  const [first, ...rest] = query.statuses.length === 0 ? [build(null)] : query.statuses.map(build);
  if (!first) return { rows: [], more: false };
  const results = rest.length === 0 ? [await first] : await db.batch([first, ...rest]);
  const page = pageOf(
    results.map((rows) => rows.map((row) => ({ ...row, id: row.eventId }))),
    query.limit,
    cursor,
  );
  const later = await laterAttempts(
    db,
    endpointId,
    page.rows.filter((row) => row.attempts > 1).map((row) => row.eventId),
  );
  return {
    rows: page.rows.map((row) => ({
      id: row.id,
      createdAt: row.createdAt,
      delivery: toDelivery(row),
      attempts: [...firstAttempt(row), ...(later.get(row.eventId) ?? [])],
    })),
    more: page.more,
  };
}

/** The account's delivery of event `eventId` to endpoint `endpointId` with its attempts, or null. */
export async function findDelivery(
  db: Db,
  accountId: string,
  endpointId: string,
  eventId: string,
): Promise<DeliveryHistory | null> {
  const [row] = await selectDeliveries(db)
    .where(
      and(
        eq(d.endpointNumber, ownedEndpointNumber(accountId, endpointId)),
        eq(d.createdAt, eventTime(eventId)),
        eq(d.eventId, eventBytes(eventId)),
      ),
    )
    .limit(1);
  if (!row) return null;
  const later = row.attempts > 1 ? await laterAttempts(db, endpointId, [eventId]) : new Map();
  return { delivery: toDelivery(row), attempts: [...firstAttempt(row), ...(later.get(eventId) ?? [])] };
}

/**
 * The attempts after the first of endpoint `endpointId`'s deliveries of `eventIds`, oldest first,
 * by event id; no query for no ids. The ids go in as one JSON array: D1 binds at most 100
 * parameters to a statement.
 */
async function laterAttempts(
  db: Db,
  endpointId: string,
  eventIds: string[],
): Promise<Map<string, WebhookAttempt[]>> {
  const byEvent = new Map<string, WebhookAttempt[]>();
  if (eventIds.length === 0) return byEvent;
  const rows = await db.all<WebhookAttempt & { eventId: string }>(sql`SELECT
      'evt_' || lower(hex(event_id)) AS eventId, attempt, attempted_at AS attemptedAt,
      status_code AS statusCode, duration_ms AS durationMs, response_excerpt AS responseExcerpt, error
    FROM webhook_attempts
    WHERE endpoint_number = ${endpointNumber(endpointId)}
      AND event_id IN (SELECT unhex(substr(value, 5)) FROM json_each(${JSON.stringify(eventIds)}))
    ORDER BY attempted_at, attempt`);
  for (const { eventId, ...attempt } of rows) {
    const list = byEvent.get(eventId) ?? [];
    list.push(attempt);
    byEvent.set(eventId, list);
  }
  return byEvent;
}

// A delivery's status (`pending` → `succeeded` | `failed`) moves only here, each move one
// conditional statement that re-checks the state it starts from, so two copies of a queue
// message, or a retry and the dead-letter queue, cannot both move it. Which move an attempt makes
// (which answers succeed, the retry schedule) is decided in src/webhooks/deliver.ts.

/** One event's delivery to one endpoint: the endpoint's uuid and the event's id. */
export interface DeliveryKey {
  endpointId: string;
  eventId: string;
}

/**
 * The endpoints event `eventId` (of type `type`) of the account is still to be delivered to: every
 * enabled endpoint of the account subscribed to the type (`events` null, or a JSON array holding
 * it) whose delivery of the event has not been attempted: it has no row yet (a delivery's row is
 * written with its first attempt's outcome, {@link recordAttempt}), or a `pending` one with no
 * attempt (as the fan-out made them before the first attempt wrote the row). Reads only: running
 * it again for the same event names the same endpoints until their first attempts are recorded.
 *
 * @returns their endpoint ids.
 */
export async function endpointsToDeliver(
  db: Db,
  accountId: string,
  eventId: string,
  type: string,
): Promise<string[]> {
  const rows = await db.all<{ endpoint_id: string }>(sql`SELECT w.id AS endpoint_id FROM webhook_endpoints w
    WHERE w.account_id = ${accountId} AND w.enabled = 1
      AND (w.events IS NULL OR EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = ${type}))
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_number = w.number
        AND d.created_at = ${eventTime(eventId)} AND d.event_id = ${eventBytes(eventId)}
        AND NOT (d.status = ${PENDING} AND d.attempts = 0))`);
  return rows.map((row) => row.endpoint_id);
}

/**
 * The statement that writes the delivery `key`'s row when it has none, from its event (its time
 * is the delivery's `created_at`, its type the delivery's) with `columns` (SQL names) set to
 * `values` (SQL over `e`, the event, and `w`, the endpoint): nothing when the row exists, the
 * event is gone or the endpoint is.
 */
function insertMissingDelivery(key: DeliveryKey, columns: string[], values: SQL[]): SQL {
  return sql`INSERT OR IGNORE INTO webhook_deliveries (endpoint_number, created_at, event_id, event_type_code, ${sql.raw(columns.join(", "))})
    SELECT w.number, e.created_at, e.id, e.type_code, ${sql.join(values, sql`, `)}
    FROM webhook_endpoints w JOIN events e ON e.id = ${eventBytes(key.eventId)}
    WHERE w.id = ${key.endpointId}
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
        WHERE d.endpoint_number = w.number AND d.created_at = e.created_at AND d.event_id = e.id)`;
}

/**
 * A delivery with its endpoint and event, each null when there is none: the delivery before its
 * first attempt is recorded, the endpoint or event when gone; all of the delivery's account.
 */
export interface DeliveryContext {
  delivery: WebhookDelivery | null;
  endpoint: typeof webhookEndpoints.$inferSelect | null;
  event: EventRow | null;
}

/**
 * Claims the next attempt of the delivery `key` if it may be made now, and reads the delivery with
 * its endpoint and event, in one D1 batch (one round trip). The claim is one conditional UPDATE:
 * the delivery is `pending`, its attempt is due (`next_attempt_at` null or at most `now + earlyMs`,
 * epoch ms), its endpoint is enabled and its event exists in the endpoint's account; it then adds
 * one to `attempts` and moves `next_attempt_at` to `leaseUntil`. So of two copies of a queue
 * message only one claims a retry, and a copy that arrives while that attempt is under way finds
 * it not due. A delivery with no row yet has nothing to claim: its first attempt is made
 * unclaimed and writes the row (src/webhooks/deliver.ts).
 *
 * @returns the number of the claimed attempt (1-based), or null when nothing was claimed; and the
 *   delivery as it stands after the claim, with its endpoint and event.
 */
export async function claimAttempt(
  db: Db,
  key: DeliveryKey,
  now: number,
  earlyMs: number,
  leaseUntil: number,
): Promise<{ attempt: number | null; context: DeliveryContext }> {
  const accountOfKey = accountNumberOf(
    sql`(SELECT account_id FROM webhook_endpoints WHERE id = ${key.endpointId})`,
  );
  const [claimed, [delivery], [endpoint], [event]] = await db.batch([
    db
      .update(d)
      .set({
        attempts: sql`${d.attempts} + 1`,
        nextAttemptAt: leaseUntil,
        updatedAfterMs: sql`${now} - ${d.createdAt}`,
      })
      .where(
        and(
          sql`${d.endpointNumber} = (SELECT number FROM webhook_endpoints WHERE id = ${key.endpointId} AND enabled = 1)`,
          eq(d.createdAt, eventTime(key.eventId)),
          eq(d.eventId, eventBytes(key.eventId)),
          sql`${d.status} = ${PENDING}`,
          sql`coalesce(${d.nextAttemptAt}, 0) <= ${now + earlyMs}`,
          sql`EXISTS (SELECT 1 FROM events v WHERE v.id = ${eventBytes(key.eventId)} AND v.account_number = ${accountOfKey})`,
        ),
      )
      .returning({ attempts: d.attempts }),
    selectDeliveries(db)
      .where(
        and(
          eq(d.endpointNumber, endpointNumber(key.endpointId)),
          eq(d.createdAt, eventTime(key.eventId)),
          eq(d.eventId, eventBytes(key.eventId)),
        ),
      )
      .limit(1),
    // Separate reads, not joins: drizzle maps the rows of a batched join by column name, and
    // the tables share names (`id`, `created_at`).
    db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, key.endpointId)).limit(1),
    db
      .select(eventColumns())
      .from(events)
      .where(and(eq(events.id, eventBytes(key.eventId)), eq(events.accountNumber, accountOfKey)))
      .limit(1),
  ]);
  const context = {
    delivery: delivery ? toDelivery(delivery) : null,
    endpoint: endpoint ?? null,
    event: event ?? null,
  };
  return { attempt: claimed[0]?.attempts ?? null, context };
}

/** What an attempt left a delivery as. */
export interface DeliveryOutcome {
  status: WebhookDeliveryStatus;
  /** Epoch ms of the next attempt while `pending`, else null. */
  nextAttemptAt: number | null;
}

/**
 * Records attempt `attempt.attempt` of the delivery `key` and moves the delivery to `outcome`,
 * its last change at the attempt's time. The delivery moves only while it is still at that attempt
 * and `pending` (a dead-letter mark that came first stands); the attempt is kept either way, and
 * an attempt recorded again changes nothing.
 *
 * The first attempt goes into the delivery's own row (`first_*`, unless set already), which it
 * writes when there is none (the delivery's first attempt is what makes its row,
 * {@link endpointsToDeliver}): a delivery that succeeds at once is one row written once. A later
 * one is a {@link webhookAttempts} row (keyed by delivery and number) and the delivery's move, one
 * batch.
 */
export async function recordAttempt(
  db: Db,
  key: DeliveryKey,
  attempt: WebhookAttempt,
  outcome: DeliveryOutcome,
): Promise<void> {
  const moves = sql`attempts = ${attempt.attempt} AND status = ${PENDING}`;
  const updatedAfter = sql`${attempt.attemptedAt} - created_at`;
  if (attempt.attempt === 1) {
    const unset = sql`first_attempt_after_ms IS NULL`;
    const first = (column: string, value: unknown) =>
      sql`${sql.raw(column)} = CASE WHEN ${unset} THEN ${value} ELSE ${sql.raw(column)} END`;
    const move = (column: string, value: unknown) =>
      sql`${sql.raw(column)} = CASE WHEN ${moves} THEN ${value} ELSE ${sql.raw(column)} END`;
    const sinceEvent = sql`${attempt.attemptedAt} - e.created_at`;
    await batchSql(db, [
      sql`UPDATE webhook_deliveries SET
        ${first("first_attempt_after_ms", updatedAfter)}, ${first("first_status_code", attempt.statusCode)},
        ${first("first_duration_ms", attempt.durationMs)},
        ${first("first_response_excerpt", attempt.responseExcerpt)}, ${first("first_error", attempt.error)},
        ${move("status", statusCode(outcome.status))}, ${move("next_attempt_at", outcome.nextAttemptAt)},
        ${move("updated_after_ms", updatedAfter)}
      WHERE ${isKey(key)} AND (${unset} OR (${moves}))`,
      insertMissingDelivery(
        key,
        [
          "status",
          "attempts",
          "next_attempt_at",
          "updated_after_ms",
          "first_attempt_after_ms",
          "first_status_code",
          "first_duration_ms",
          "first_response_excerpt",
          "first_error",
        ],
        [
          sql`${statusCode(outcome.status)}`,
          sql`1`,
          sql`${outcome.nextAttemptAt}`,
          sinceEvent,
          sinceEvent,
          sql`${attempt.statusCode}`,
          sql`${attempt.durationMs}`,
          sql`${attempt.responseExcerpt}`,
          sql`${attempt.error}`,
        ],
      ),
    ]);
    return;
  }
  await batchSql(db, [
    sql`INSERT INTO webhook_attempts
        (endpoint_number, event_id, attempt, created_at, attempted_at, status_code, duration_ms, response_excerpt, error)
      SELECT number, ${eventBytes(key.eventId)}, ${attempt.attempt}, ${eventTime(key.eventId)}, ${attempt.attemptedAt},
        ${attempt.statusCode}, ${attempt.durationMs}, ${attempt.responseExcerpt}, ${attempt.error}
      FROM webhook_endpoints WHERE id = ${key.endpointId}
      ON CONFLICT DO NOTHING`,
    sql`UPDATE webhook_deliveries
      SET status = ${statusCode(outcome.status)}, next_attempt_at = ${outcome.nextAttemptAt}, updated_after_ms = ${updatedAfter}
      WHERE ${isKey(key)} AND ${moves}`,
  ]);
}

/**
 * Makes the account's delivery `key` due now (`now`, epoch ms), whatever its status: a `failed`
 * or `succeeded` one is `pending` again, a `pending` one waits no longer for its scheduled retry.
 * Its attempt count stands, so the attempt it gets next follows the retry schedule from where the
 * delivery stood (one whose retries had run out gets that one attempt).
 *
 * @returns whether the delivery exists (in that account).
 */
export async function reopenDelivery(
  db: Db,
  accountId: string,
  key: DeliveryKey,
  now: number,
): Promise<boolean> {
  const result = await db.run(sql`UPDATE webhook_deliveries
    SET status = ${PENDING}, next_attempt_at = ${now}, updated_after_ms = ${now} - created_at
    WHERE endpoint_number = ${ownedEndpointNumber(accountId, key.endpointId)} AND created_at = ${eventTime(key.eventId)}
      AND event_id = ${eventBytes(key.eventId)}`);
  return result.meta.changes > 0;
}

/**
 * Makes up to `limit` `failed` deliveries of the account's endpoint `endpointId` whose event came at or
 * after `since` (epoch ms) `pending` and due at `now`, as {@link reopenDelivery} does one: the
 * oldest first (index `webhook_deliveries_failed`), so repeating the call goes on where the last
 * one stopped.
 *
 * @returns the event ids of the deliveries reopened.
 */
export async function reopenFailedDeliveries(
  db: Db,
  accountId: string,
  endpointId: string,
  since: number,
  now: number,
  limit: number,
): Promise<string[]> {
  const results = await db.all<{ eventId: string; createdAt: number }>(sql`UPDATE webhook_deliveries
    SET status = ${PENDING}, next_attempt_at = ${now}, updated_after_ms = ${now} - created_at
    WHERE (endpoint_number, created_at, event_id) IN (
      SELECT endpoint_number, created_at, event_id FROM webhook_deliveries INDEXED BY webhook_deliveries_failed
      WHERE endpoint_number = ${ownedEndpointNumber(accountId, endpointId)} AND status = ${FAILED} AND created_at >= ${since}
      ORDER BY created_at, event_id LIMIT ${limit})
    RETURNING 'evt_' || lower(hex(event_id)) AS eventId, created_at AS createdAt`);
  // RETURNING comes in no promised order: sort.
  return results
    .sort((a, b) => a.createdAt - b.createdAt || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0))
    .map((row) => row.eventId);
}

/**
 * `pending` deliveries whose next attempt was due before `before` (epoch ms), oldest first, at
 * most `limit`: those whose queue message was lost (a retry or a reopen whose message was never
 * sent). Read from index `webhook_deliveries_pending`, which holds only the pending ones.
 */
export async function overdueDeliveries(
  db: Db,
  before: number,
  limit: number,
): Promise<(DeliveryKey & { accountId: string })[]> {
  return db.all<DeliveryKey & { accountId: string }>(sql`SELECT w.id AS endpointId,
      'evt_' || lower(hex(d.event_id)) AS eventId, w.account_id AS accountId
    FROM webhook_deliveries d INDEXED BY webhook_deliveries_pending
    JOIN webhook_endpoints w ON w.number = d.endpoint_number
    WHERE d.status = ${PENDING} AND d.next_attempt_at < ${before}
    ORDER BY d.next_attempt_at LIMIT ${limit}`);
}

/**
 * Moves the given deliveries that are still `pending` to `failed` at `now` (epoch ms), in one
 * batch; one with no row yet (never attempted) gets a `failed` row with no attempt, when its event
 * and endpoint still exist.
 */
export async function failPendingDeliveries(db: Db, keys: DeliveryKey[], now: number): Promise<void> {
  if (keys.length === 0) return;
  await batchSql(
    db,
    keys.flatMap((key) => [
      sql`UPDATE webhook_deliveries
        SET status = ${FAILED}, next_attempt_at = NULL, updated_after_ms = ${now} - created_at
        WHERE ${isKey(key)} AND status = ${PENDING}`,
      insertMissingDelivery(
        key,
        ["status", "attempts", "updated_after_ms"],
        [sql`${FAILED}`, sql`0`, sql`${now} - e.created_at`],
      ),
    ]),
  );
}

/**
 * The statement that moves every `pending` delivery of endpoint `endpointId` to `failed` at `now`
 * (epoch ms): run with the endpoint's deletion (src/db/queries/webhook-endpoints.ts), since a
 * delivery whose endpoint is gone can no longer be attempted, failed, or found by the sweep.
 */
export function failEndpointDeliveries(endpointId: string, now: number): SQL {
  return sql`UPDATE webhook_deliveries INDEXED BY webhook_deliveries_pending
    SET status = ${FAILED}, next_attempt_at = NULL, updated_after_ms = ${now} - created_at
    WHERE endpoint_number = ${endpointNumber(endpointId)} AND status = ${PENDING}`;
}

/**
 * Deletes the finished deliveries whose last change came before `before` (epoch ms), with their
 * attempts: the hourly sweep keeps 30 days of delivery history, as long as the events they
 * delivered. Each endpoint's range of the table is read from its start to `before` (a delivery
 * changes after it is made), the endpoint numbers found in the key itself (one seek each), so the
 * sweep reads old rows only.
 */
export async function purgeDeliveryHistory(db: Db, before: number): Promise<void> {
  await batchSql(db, [
    sql`DELETE FROM webhook_attempts AS a WHERE EXISTS (SELECT 1 FROM webhook_deliveries d
      WHERE d.endpoint_number = a.endpoint_number AND d.created_at = a.created_at AND d.event_id = a.event_id
        AND d.status <> ${PENDING} AND d.created_at + d.updated_after_ms < ${before})`,
    sql`WITH RECURSIVE numbers(n) AS (
        SELECT min(endpoint_number) FROM webhook_deliveries
        UNION ALL
        SELECT (SELECT min(endpoint_number) FROM webhook_deliveries WHERE endpoint_number > n) FROM numbers WHERE n IS NOT NULL)
      DELETE FROM webhook_deliveries
      WHERE endpoint_number IN (SELECT n FROM numbers) AND created_at < ${before}
        AND status <> ${PENDING} AND created_at + updated_after_ms < ${before}`,
  ]);
}

/**
 * The condition that endpoint `endpointId` has been failing since `since` (epoch ms): no delivery
 * of it succeeded at or after `since`, and one made after its latest success (or ever, without
 * one) that is `pending` or `failed` was made at or before `since`. Its first term, such a
 * delivery made at or before `since` at all, is a seek in the partial indexes; only when it holds
 * are the endpoint's successes read (all of them: a success's time is not in an index).
 */
export function endpointFailingSince(endpointId: string, since: number): SQL {
  const endpoint = endpointNumber(endpointId);
  const lastSuccess = sql`coalesce((SELECT max(created_at + updated_after_ms) FROM webhook_deliveries
    WHERE endpoint_number = ${endpoint} AND status = ${SUCCEEDED}), -1)`;
  const unfinishedAfter = (after: SQL) => {
    const exists = (status: SQL) => sql`EXISTS (SELECT 1 FROM webhook_deliveries
      WHERE endpoint_number = ${endpoint} AND status = ${status} AND created_at <= ${since} AND created_at > ${after})`;
    return sql`(${exists(PENDING)} OR ${exists(FAILED)})`;
  };
  return sql`${unfinishedAfter(sql`-1`)} AND ${lastSuccess} < ${since} AND ${unfinishedAfter(lastSuccess)}`;
}
