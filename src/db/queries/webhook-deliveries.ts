import { and, asc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { webhookAttempts, webhookDeliveries } from "../schema";
import { beyond, pageOf, readOrder } from "./keyset";

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
