import { and, asc, eq, inArray, lt, ne, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import { batchSql, type Db } from "../client";
import { type EventRow, events, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../schema";
import { eventColumns } from "./events";
import { beyond, pageOf, readOrder } from "./keyset";
import type { WebhookEndpointRow } from "./webhook-endpoints";

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
export type WebhookDeliveryStatus = WebhookDeliveryRow["status"];

/** A delivery with its attempts, oldest first, as the delivery history shows it. */
export interface DeliveryHistory {
  delivery: WebhookDeliveryRow;
  attempts: WebhookAttemptRow[];
}

/** One page request of an endpoint's deliveries: statuses (none: all), size and cursor. */
export interface DeliveryListQuery {
  statuses: WebhookDeliveryStatus[];
  limit: number;
  /** Keyset on `(created_at, event_id)`: the cursor's `id` is an event id. */
  cursor: Cursor | null;
}

// Deliveries page by `(created_at, event_id)`; the event id plays the keyset's `id`.
const keyset = { createdAt: webhookDeliveries.createdAt, id: webhookDeliveries.eventId };

/**
 * One page of the account's endpoint `endpointId`'s deliveries with their attempts, newest first:
 * one keyset query per status (index `webhook_deliveries_endpoint_status`) or one over all
 * (`webhook_deliveries_endpoint_created`), each at most `limit + 1` rows, merged; then the page's
 * attempts in one query. An endpoint of another account has no deliveries here.
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
  const build = (status: WebhookDeliveryStatus | null) => {
    const where: (SQL | undefined)[] = [
      eq(webhookDeliveries.endpointId, endpointId),
      eq(webhookDeliveries.accountId, accountId),
    ];
    if (status !== null) where.push(eq(webhookDeliveries.status, status));
    if (query.cursor) where.push(beyond(keyset, query.cursor));
    return db
      .select()
      .from(webhookDeliveries)
      .where(and(...where))
      .orderBy(...readOrder(keyset, query.cursor))
      .limit(query.limit + 1);
  };
  const [first, ...rest] = query.statuses.length === 0 ? [build(null)] : query.statuses.map(build);
  if (!first) return { rows: [], more: false };
  const results = rest.length === 0 ? [await first] : await db.batch([first, ...rest]);
  const page = pageOf(
    results.map((rows) => rows.map((delivery) => ({ ...delivery, id: delivery.eventId }))),
    query.limit,
    query.cursor,
  );
  const attempts = await attemptsOf(
    db,
    endpointId,
    page.rows.map((row) => row.eventId),
  );
  return {
    rows: page.rows.map(({ id, ...delivery }) => ({
      id,
      createdAt: delivery.createdAt,
      delivery,
      attempts: attempts.get(delivery.eventId) ?? [],
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
  const [delivery] = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpointId),
        eq(webhookDeliveries.eventId, eventId),
        eq(webhookDeliveries.accountId, accountId),
      ),
    )
    .limit(1);
  if (!delivery) return null;
  const attempts = await attemptsOf(db, endpointId, [eventId]);
  return { delivery, attempts: attempts.get(eventId) ?? [] };
}

/**
 * The attempts of endpoint `endpointId`'s deliveries of `eventIds`, oldest first, by event id. The
 * ids go in as one JSON array: D1 binds at most 100 parameters to a statement.
 */
async function attemptsOf(
  db: Db,
  endpointId: string,
  eventIds: string[],
): Promise<Map<string, WebhookAttemptRow[]>> {
  const byEvent = new Map<string, WebhookAttemptRow[]>();
  if (eventIds.length === 0) return byEvent;
  const rows = await db
    .select()
    .from(webhookAttempts)
    .where(
      and(
        eq(webhookAttempts.endpointId, endpointId),
        inArray(webhookAttempts.eventId, sql`(SELECT value FROM json_each(${JSON.stringify(eventIds)}))`),
      ),
    )
    .orderBy(asc(webhookAttempts.attemptedAt), asc(webhookAttempts.attempt));
  for (const row of rows) {
    const list = byEvent.get(row.eventId) ?? [];
    list.push(row);
    byEvent.set(row.eventId, list);
  }
  return byEvent;
}

// A delivery's status (`pending` → `succeeded` | `failed`) moves only here, each move one
// conditional statement that re-checks the state it starts from, so two copies of a queue
// message, or a retry and the dead-letter queue, cannot both move it. Which move an attempt makes
// (which answers succeed, the retry schedule) is decided in src/webhooks/deliver.ts.

/** One event's delivery to one endpoint: the table's primary key. */
export interface DeliveryKey {
  endpointId: string;
  eventId: string;
}

/**
 * Inserts a `pending` delivery of the account's event `eventId` (of type `type`) for every
 * endpoint of the account that is enabled and subscribed to the type (`events` null, or a JSON
 * array holding it), at `now` (epoch ms). A delivery that exists already is left as it is, so
 * running this again for the same event adds nothing.
 *
 * @returns the endpoint ids of the event's deliveries still `pending` with no attempt made: the
 *   new ones, and those of an earlier run whose queue messages may never have been sent.
 */
export async function createDeliveries(
  db: Db,
  accountId: string,
  eventId: string,
  type: string,
  now: number,
): Promise<string[]> {
  const [, waiting] = await batchSql<{ endpoint_id: string }>(db, [
    sql`INSERT OR IGNORE INTO webhook_deliveries
        (endpoint_id, event_id, account_id, event_type, status, attempts, next_attempt_at, last_status_code, created_at, updated_at)
      SELECT id, ${eventId}, ${accountId}, ${type}, 'pending', 0, ${now}, NULL, ${now}, ${now}
      FROM webhook_endpoints
      WHERE account_id = ${accountId} AND enabled = 1
        AND (events IS NULL OR EXISTS (SELECT 1 FROM json_each(webhook_endpoints.events) WHERE value = ${type}))`,
    sql`SELECT d.endpoint_id FROM webhook_endpoints e
      JOIN webhook_deliveries d ON d.endpoint_id = e.id AND d.event_id = ${eventId}
      WHERE e.account_id = ${accountId} AND d.status = 'pending' AND d.attempts = 0`,
  ]);
  return (waiting?.results ?? []).map((row) => row.endpoint_id);
}

/** A delivery with its endpoint and event (each null when gone), all of the delivery's account. */
export interface DeliveryContext {
  delivery: WebhookDeliveryRow;
  endpoint: WebhookEndpointRow | null;
  event: EventRow | null;
}

/**
 * Claims the next attempt of the delivery `key` if it may be made now, and reads the delivery with
 * its endpoint and event, in one D1 batch (one round trip). The claim is one conditional UPDATE:
 * the delivery is `pending`, its attempt is due (`next_attempt_at` null or at most `now + earlyMs`,
 * epoch ms), its endpoint is enabled and its event exists; it then adds one to `attempts` and
 * moves `next_attempt_at` to `leaseUntil`. So of two copies of a queue message only one claims an
 * attempt, and a copy that arrives while that attempt is under way finds it not due.
 *
 * @returns the number of the claimed attempt (1-based), or null when nothing was claimed; and the
 *   delivery as it stands after the claim (null when there is none).
 */
export async function claimAttempt(
  db: Db,
  key: DeliveryKey,
  now: number,
  earlyMs: number,
  leaseUntil: number,
): Promise<{ attempt: number | null; context: DeliveryContext | null }> {
  const sameKey = and(
    eq(webhookDeliveries.endpointId, key.endpointId),
    eq(webhookDeliveries.eventId, key.eventId),
  );
  const accountOfKey = sql`(SELECT account_id FROM webhook_deliveries WHERE endpoint_id = ${key.endpointId} AND event_id = ${key.eventId})`;
  const [claimed, [delivery], [endpoint], [event]] = await db.batch([
    db
      .update(webhookDeliveries)
      .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, nextAttemptAt: leaseUntil, updatedAt: now })
      .where(
        and(
          sameKey,
          eq(webhookDeliveries.status, "pending"),
          sql`coalesce(${webhookDeliveries.nextAttemptAt}, 0) <= ${now + earlyMs}`,
          sql`EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = ${webhookDeliveries.endpointId}
            AND e.account_id = ${webhookDeliveries.accountId} AND e.enabled = 1)`,
          sql`EXISTS (SELECT 1 FROM events v WHERE v.id = ${webhookDeliveries.eventId}
            AND v.account_id = ${webhookDeliveries.accountId})`,
        ),
      )
      .returning({ attempts: webhookDeliveries.attempts }),
    db.select().from(webhookDeliveries).where(sameKey).limit(1),
    // Separate reads, not joins: drizzle maps the rows of a batched join by column name, and
    // the three tables share names (`id`, `created_at`).
    db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, key.endpointId), eq(webhookEndpoints.accountId, accountOfKey)))
      .limit(1),
    db
      .select(eventColumns())
      .from(events)
      .where(and(eq(events.id, key.eventId), eq(events.accountId, accountOfKey)))
      .limit(1),
  ]);
  const context = delivery ? { delivery, endpoint: endpoint ?? null, event: event ?? null } : null;
  return { attempt: claimed[0]?.attempts ?? null, context };
}

/** What an attempt left a delivery as. */
export interface DeliveryOutcome {
  status: WebhookDeliveryRow["status"];
  /** Epoch ms of the next attempt while `pending`, else null. */
  nextAttemptAt: number | null;
}

/**
 * Records attempt `attempt.attempt` of a delivery and moves the delivery to `outcome`, with the
 * attempt's HTTP status as its `last_status_code`, in one D1 batch. The delivery changes only
 * while it is still at that attempt and `pending` (a dead-letter mark that came first stands).
 */
export async function recordAttempt(
  db: Db,
  attempt: WebhookAttemptRow,
  outcome: DeliveryOutcome,
): Promise<void> {
  await db.batch([
    // Keyed by delivery and number: the same attempt recorded again is one row.
    db.insert(webhookAttempts).values(attempt).onConflictDoNothing(),
    db
      .update(webhookDeliveries)
      .set({
        status: outcome.status,
        nextAttemptAt: outcome.nextAttemptAt,
        lastStatusCode: attempt.statusCode,
        updatedAt: attempt.attemptedAt,
      })
      .where(
        and(
          eq(webhookDeliveries.endpointId, attempt.endpointId),
          eq(webhookDeliveries.eventId, attempt.eventId),
          eq(webhookDeliveries.attempts, attempt.attempt),
          eq(webhookDeliveries.status, "pending"),
        ),
      ),
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
  const result = await db
    .update(webhookDeliveries)
    .set({ status: "pending", nextAttemptAt: now, updatedAt: now })
    .where(
      and(
        eq(webhookDeliveries.endpointId, key.endpointId),
        eq(webhookDeliveries.eventId, key.eventId),
        eq(webhookDeliveries.accountId, accountId),
      ),
    );
  return result.meta.changes > 0;
}

/**
 * Makes up to `limit` `failed` deliveries of the account's endpoint `endpointId` whose event came at
 * or after `since` (epoch ms) `pending` and due at `now`, as {@link reopenDelivery} does one: the
 * oldest first, so repeating the call goes on where the last one stopped.
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
  const { results } = await db.$client
    .prepare(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?1, updated_at = ?1
       WHERE endpoint_id = ?2 AND event_id IN (
         SELECT event_id FROM webhook_deliveries
         WHERE endpoint_id = ?2 AND account_id = ?3 AND status = 'failed' AND created_at >= ?4
         ORDER BY created_at, event_id LIMIT ?5)
       RETURNING event_id AS eventId, created_at AS createdAt`,
    )
    .bind(now, endpointId, accountId, since, limit)
    .all<{ eventId: string; createdAt: number }>();
  // RETURNING comes in no promised order (the table is keyed by endpoint and event id): sort.
  return results
    .sort((a, b) => a.createdAt - b.createdAt || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0))
    .map((row) => row.eventId);
}

/**
 * `pending` deliveries whose next attempt was due before `before` (epoch ms), oldest first, at
 * most `limit`: those whose queue message was lost (a retry or a reopen whose message was never
 * sent). Index `webhook_deliveries_pending`.
 */
export async function overdueDeliveries(db: Db, before: number, limit: number): Promise<DeliveryKey[]> {
  return db
    .select({ endpointId: webhookDeliveries.endpointId, eventId: webhookDeliveries.eventId })
    .from(webhookDeliveries)
    .where(and(sql`${webhookDeliveries.status} = 'pending'`, lt(webhookDeliveries.nextAttemptAt, before)))
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(limit);
}

/** Moves the given deliveries that are still `pending` to `failed` at `now` (epoch ms), in one batch. */
export async function failPendingDeliveries(db: Db, keys: DeliveryKey[], now: number): Promise<void> {
  if (keys.length === 0) return;
  await batchSql(
    db,
    keys.map(
      (
        key,
      ) => sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = ${now}
        WHERE endpoint_id = ${key.endpointId} AND event_id = ${key.eventId} AND status = 'pending'`,
    ),
  );
}

/**
 * Deletes attempt records and finished deliveries older than `before` (epoch ms): the hourly
 * sweep keeps 30 days of delivery history, as long as the events they delivered.
 */
export async function purgeDeliveryHistory(db: Db, before: number): Promise<void> {
  await db.batch([
    db.delete(webhookAttempts).where(lt(webhookAttempts.attemptedAt, before)),
    db
      .delete(webhookDeliveries)
      .where(and(ne(webhookDeliveries.status, "pending"), lt(webhookDeliveries.updatedAt, before))),
  ]);
}
