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
