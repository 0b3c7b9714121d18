import { and, asc, desc, eq, gte, lt, lte, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { type EventRow, events } from "../schema";

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
  const backwards = query.cursor?.direction === "prev";
  const build = (type: string | null) => {
    const where: (SQL | undefined)[] = [eq(events.accountId, accountId)];
    if (type !== null) where.push(eq(events.type, type));
    if (query.cursor) {
      const { createdAt, id } = query.cursor;
      where.push(
        backwards
          ? sql`(${events.createdAt}, ${events.id}) > (${createdAt}, ${id})`
          : sql`(${events.createdAt}, ${events.id}) < (${createdAt}, ${id})`,
      );
    }
    if (query.timeFrom !== undefined) where.push(gte(events.createdAt, query.timeFrom));
    if (query.timeTo !== undefined) where.push(lte(events.createdAt, query.timeTo));
    const order = backwards
      ? [asc(events.createdAt), asc(events.id)]
      : [desc(events.createdAt), desc(events.id)];
    return db
      .select()
      .from(events)
      .where(and(...where))
      .orderBy(...order)
      .limit(query.limit + 1);
  };
  const [first, ...rest] = query.types.length === 0 ? [build(null)] : query.types.map(build);
  const rows = !first
    ? []
    : rest.length === 0
      ? await first
      : (await db.batch([first, ...rest]))
          .flat()
          .sort((a, b) => (backwards ? keyset(a, b) : keyset(b, a)))
          .slice(0, query.limit + 1);
  const page = rows.slice(0, query.limit);
  return { rows: backwards ? page.reverse() : page, more: rows.length > query.limit };
}

/** Ascending `(created_at, id)` order. */
function keyset(a: EventRow, b: EventRow): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
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
