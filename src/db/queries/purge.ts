import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "../client";

// The retention purges of the tables that grow with traffic (docs/retention.md, Data
// retention): each deletes the rows whose time column is before a cut-off, a bounded chunk to a
// statement, so that no statement holds D1's one writer long (a statement may run at most 30 s:
// https://developers.cloudflare.com/d1/platform/limits/) and no hourly job runs for minutes.

/** What one purge run did: the rows it deleted, and whether it stopped with rows perhaps left. */
export interface Purge {
  deleted: number;
  /**
   * True when the run stopped at its time budget after a full chunk: rows past their retention may
   * remain, and the next run (the next hour, or `POST /admin/jobs/{name}`) goes on with them.
   */
  more: boolean;
}

/** How much one purge run does: rows per statement, and the time after which it stops (ms). */
export interface PurgeBudget {
  chunk: number;
  maxMs: number;
}

/** 1,000 rows a statement (milliseconds of D1's time each); 10 s of chunks a run at most. */
export const PURGE_BUDGET: PurgeBudget = { chunk: 1_000, maxMs: 10_000 };

/**
 * The statement that deletes at most `chunk` rows of `table` whose `column` (epoch ms) is before
 * `before`: the rows are picked by rowid in a subquery (SQLite's `DELETE … LIMIT` is a compile-time
 * option D1 does not promise), through an index on `column` (test/retention-small-tables.test.ts
 * reads each purge's plan).
 */
export function purgeStatement(table: SQLiteTable, column: SQLiteColumn, before: number, chunk: number): SQL {
  return sql`DELETE FROM ${table} WHERE rowid IN
    (SELECT rowid FROM ${table} WHERE ${column} < ${before} LIMIT ${chunk})`;
}

/**
 * Deletes the rows of `table` whose `column` (epoch ms) is before `before`, in chunks of
 * `budget.chunk` ({@link purgeStatement}), until a chunk comes back short or `budget.maxMs` has
 * passed since the start (checked between chunks). Each chunk commits on its own: a run that fails
 * halfway keeps what it deleted, and the next run takes the rest.
 * @throws what D1 throws (the hourly job's failure is logged; the next hour tries again).
 */
export async function purgeBefore(
  db: Db,
  table: SQLiteTable,
  column: SQLiteColumn,
  before: number,
  budget: PurgeBudget = PURGE_BUDGET,
): Promise<Purge> {
  const started = Date.now();
  let deleted = 0;
  for (;;) {
    const result = await db.run(purgeStatement(table, column, before, budget.chunk));
    const changes = result.meta.changes ?? 0;
    deleted += changes;
    if (changes < budget.chunk) return { deleted, more: false };
    if (Date.now() - started >= budget.maxMs) return { deleted, more: true };
  }
}
