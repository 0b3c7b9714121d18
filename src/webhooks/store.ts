import { and, asc, eq, lt, ne, sql } from "drizzle-orm";
import { batchSql, type Db } from "../db/client";
import type { WebhookAttemptRow, WebhookDeliveryRow } from "../db/queries/webhook-deliveries";
import type { WebhookEndpointRow } from "../db/queries/webhook-endpoints";
import { type EventRow, events, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../db/schema";

// A delivery's status (`pending` → `succeeded` | `failed`) moves only here, each move one
// conditional statement that re-checks the state it starts from, so two copies of a queue
// message, or a retry and the dead-letter queue, cannot both move it.

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
      .select()
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
  attempt: Omit<WebhookAttemptRow, "id">,
  outcome: DeliveryOutcome,
): Promise<void> {
  await db.batch([
    db.insert(webhookAttempts).values({ id: crypto.randomUUID(), ...attempt }),
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
       RETURNING event_id AS eventId`,
    )
    .bind(now, endpointId, accountId, since, limit)
    .all<{ eventId: string }>();
  return results.map((row) => row.eventId);
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
 * Turns the enabled endpoint `endpointId` off with `disabled_reason` `reason` at `now` (epoch ms);
 * `PATCH {enabled: true}` turns it back on. Returns false when it was off already or is gone.
 */
export async function disableEndpoint(
  db: Db,
  endpointId: string,
  reason: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .update(webhookEndpoints)
    .set({
      enabled: false,
      disabledReason: reason,
      updatedAt: sql`max(${now}, ${webhookEndpoints.updatedAt} + 1)`,
    })
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.enabled, true)));
  return result.meta.changes > 0;
}

/**
 * Turns the enabled endpoint `endpointId` off with `disabled_reason` `reason` when it has been
 * failing for `windowMs` up to `now` (epoch ms): no delivery of it succeeded in that window, and
 * a delivery made after its latest success (or ever, without one) that is `pending` or `failed`
 * is at least `windowMs` old. One statement, so it decides on one view of the table.
 *
 * @returns whether the endpoint was turned off.
 */
export async function disableEndpointIfFailing(
  db: Db,
  endpointId: string,
  reason: string,
  windowMs: number,
  now: number,
): Promise<boolean> {
  const since = now - windowMs;
  const result = await db.run(sql`UPDATE webhook_endpoints
    SET enabled = 0, disabled_reason = ${reason}, updated_at = max(${now}, updated_at + 1)
    WHERE id = ${endpointId} AND enabled = 1
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries
        WHERE endpoint_id = ${endpointId} AND status = 'succeeded' AND updated_at >= ${since})
      AND EXISTS (SELECT 1 FROM webhook_deliveries
        WHERE endpoint_id = ${endpointId} AND status IN ('pending', 'failed') AND created_at <= ${since}
          AND created_at > coalesce((SELECT max(updated_at) FROM webhook_deliveries
            WHERE endpoint_id = ${endpointId} AND status = 'succeeded'), -1))`);
  return result.meta.changes > 0;
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
