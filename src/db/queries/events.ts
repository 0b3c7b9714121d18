import { and, eq, gte, lt, lte, type SQL } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { type EventRow, events } from "../schema";
import { beyond, pageOf, readOrder } from "./keyset";

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
 * type (index `events_account_type`) or one over all (`events_account_created`), run as one D1
 * batch and merged, each reading at most `limit + 1` rows.
 * @returns the page newest first, and whether more rows lie beyond it in the direction read.
 */
export async function listEvents(
  db: Db,
  accountId: string,
  query: EventListQuery,
): Promise<{ rows: EventRow[]; more: boolean }> {
  const build = (type: string | null) => {
    const where: (SQL | undefined)[] = [eq(events.accountId, accountId)];
    if (type !== null) where.push(eq(events.type, type));
    if (query.cursor) where.push(beyond(events, query.cursor));
    if (query.timeFrom !== undefined) where.push(gte(events.createdAt, query.timeFrom));
    if (query.timeTo !== undefined) where.push(lte(events.createdAt, query.timeTo));
    return db
      .select()
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

/** The account's event with this id, or null. */
export async function findEvent(db: Db, accountId: string, id: string): Promise<EventRow | null> {
  const [row] = await db
    .select()
    .from(events)
    .where(and(eq(events.id, id), eq(events.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

/** Deletes events created before `before` (epoch ms; the hourly sweep, 30-day retention). */
export async function purgeEvents(db: Db, before: number): Promise<void> {
  await db.delete(events).where(lt(events.createdAt, before));
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
  const { results } = await db.$client
    .prepare(
      `SELECT DISTINCT e.id AS id, e.account_id AS accountId, e.created_at FROM events e
       JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.enabled = 1 AND w.created_at <= e.created_at
         AND (w.events IS NULL OR e.type IN (SELECT value FROM json_each(w.events)))
       WHERE e.created_at BETWEEN ? AND ?
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.event_id = e.id)
       ORDER BY e.created_at LIMIT ?`,
    )
    .bind(range.from, range.to, limit)
    .all<{ id: string; accountId: string }>();
  return results.map(({ id, accountId }) => ({ id, accountId }));
}
