import { type SQL, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { countingD1 } from "./d1-counter";
import * as schema from "./schema";

/**
 * Drizzle over the D1 binding named `name`, mapping camelCase fields to snake_case columns. Every
 * statement it runs (and {@link batchSql}, through `$client`) is counted for `GET /admin/metrics`
 * (src/db/d1-counter.ts), under that name too.
 */
export function createDb(d1: D1Database, name = "unnamed") {
  return drizzle(countingD1(d1, name), { schema, casing: "snake_case" });
}

export type Db = ReturnType<typeof createDb>;

const dialect = new SQLiteAsyncDialect({ casing: "snake_case" });

/**
 * Runs drizzle `sql` statements as one D1 batch: one transaction, all or nothing, in order.
 * drizzle-orm 0.45's own `db.batch` cannot bind the parameters of raw `sql` items (its raw
 * query has no prepared statement), so this compiles them with drizzle's dialect and hands the
 * statements to D1 directly.
 *
 * @returns one D1 result per statement (`results` holds RETURNING rows).
 */
export function batchSql<T = Record<string, unknown>>(db: Db, statements: SQL[]): Promise<D1Result<T>[]> {
  const d1 = db.$client;
  return d1.batch<T>(
    statements.map((statement) => {
      const query = dialect.sqlToQuery(statement);
      return d1.prepare(query.sql).bind(...query.params);
    }),
  );
}

/**
 * A D1 statement built by a named query of src/db/queries/ (or by src/moves/), for code outside
 * them to put into a batch ({@link batchSql}) without writing SQL itself.
 */
export type Statement = SQL;

/** A condition built by a named query of src/db/queries/, for a statement's WHERE clause. */
export type Condition = SQL;

/** The condition that both `a` and `b` hold (`a AND b`). */
export function both(a: Condition, b: Condition): Condition {
  return sql`${a} AND ${b}`;
}
