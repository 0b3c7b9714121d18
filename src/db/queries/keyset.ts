import { asc, desc, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Cursor } from "../../lib/cursor";

// Keyset paging on `(created_at, id)`, newest first, shared by the lists that page that way
// (messages, events): each page query reads at most `limit + 1` rows from an index ending in
// `(created_at, id)`; a `prev` cursor reads oldest first and the page is turned round.

/** A table's keyset columns. */
export interface KeysetColumns {
  createdAt: SQLiteColumn;
  id: SQLiteColumn;
}

/** The condition that selects rows beyond `cursor` in its direction. */
export function beyond(columns: KeysetColumns, cursor: Cursor): SQL {
  return cursor.direction === "prev"
    ? sql`(${columns.createdAt}, ${columns.id}) > (${cursor.createdAt}, ${cursor.id})`
    : sql`(${columns.createdAt}, ${columns.id}) < (${cursor.createdAt}, ${cursor.id})`;
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
