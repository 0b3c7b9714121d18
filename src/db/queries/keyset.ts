import { asc, desc, gte, lte, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Cursor } from "../../lib/cursor";

// Keyset paging on `(created_at, id)`, newest first, shared by the lists that page that way
// (messages, events, the ledger): each page query reads at most `limit + 1` rows from an index
// ending in `(created_at, id)`; a `prev` cursor reads oldest first and the page is turned round.

/** A table's keyset columns. */
export interface KeysetColumns {
  createdAt: SQLiteColumn;
  id: SQLiteColumn;
}

/**
 * The condition that selects rows beyond `cursor` in its direction. `stored` gives the id as the
 * column holds it (SQL), for a table that keeps ids in another form than the API's (e.g. events'
 * 16 bytes, src/db/queries/events.ts `eventBytes`); by default the id itself.
 */
export function beyond(
  columns: KeysetColumns,
  cursor: Cursor,
  stored: (id: string) => SQL = (id) => sql`${id}`,
): SQL {
  return cursor.direction === "prev"
    ? sql`(${columns.createdAt}, ${columns.id}) > (${cursor.createdAt}, ${stored(cursor.id)})`
    : sql`(${columns.createdAt}, ${columns.id}) < (${cursor.createdAt}, ${stored(cursor.id)})`;
}

/**
 * The conditions that place a page: beyond `cursor` (when given) and within the inclusive epoch-ms
 * bounds `from`/`to` on `created_at`. SQLite seeks an index range with one bound per side. The
 * cursor and `to` (reading forward) or `from` (reading back) bound the same side, and a planner
 * that picks the time bound reads every row between it and the cursor; so only the tighter of the
 * two is kept (it implies the other, so the rows are the same).
 */
export function pageWindow(
  columns: KeysetColumns,
  cursor: Cursor | null,
  bounds: { from?: number; to?: number },
): SQL[] {
  const where: SQL[] = [];
  let { from, to } = bounds;
  if (cursor) {
    const backwards = cursor.direction === "prev";
    const keysetIsTighter = backwards
      ? from === undefined || cursor.createdAt >= from
      : to === undefined || cursor.createdAt <= to;
    if (keysetIsTighter) {
      if (backwards) from = undefined;
      else to = undefined;
      where.push(beyond(columns, cursor));
    }
  }
  if (from !== undefined) where.push(gte(columns.createdAt, from));
  if (to !== undefined) where.push(lte(columns.createdAt, to));
  return where;
}

/** ORDER BY of a page read in `cursor`'s direction (newest first without one). */
export function readOrder(columns: KeysetColumns, cursor: Cursor | null) {
  return cursor?.direction === "prev"
    ? [asc(columns.createdAt), asc(columns.id)]
    : [desc(columns.createdAt), desc(columns.id)];
}

/**
 * One page from the rows of one or more page queries (each read in the cursor's direction, at
 * most `limit + 1` rows): merged in keyset order, cut to `limit`, newest first.
 * @returns the page, and whether more rows lie beyond it in the direction read.
 */
export function pageOf<Row extends { createdAt: number; id: string }>(
  results: Row[][],
  limit: number,
  cursor: Cursor | null,
): { rows: Row[]; more: boolean } {
  const backwards = cursor?.direction === "prev";
  const ascending = (a: Row, b: Row) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const rows =
    results.length === 1
      ? (results[0] ?? [])
      : results
          .flat()
          .sort((a, b) => (backwards ? ascending(a, b) : ascending(b, a)))
          .slice(0, limit + 1);
  const page = rows.slice(0, limit);
  return { rows: backwards ? page.reverse() : page, more: rows.length > limit };
}
