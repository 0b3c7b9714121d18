import { type SQL, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { countingD1 } from "./d1-counter";
import * as schema from "./schema";

/**
 * Drizzle over the D1 binding, mapping camelCase fields to snake_case columns. Every statement
 * it runs (and {@link batchSql}, through `$client`) is counted for `GET /admin/metrics`
 * (src/db/d1-counter.ts).
 */
export function createDb(d1: D1Database) {
  return drizzle(countingD1(d1), { schema, casing: "snake_case" });
}

export type Db = ReturnType<typeof createDb>;

/**
 * The one way code outside tests gets its database: a request (src/app.ts), a queue message, a
 * session object or a scheduled job names the account it serves where it knows it, and this
 * decides which D1 database holds that account's data. Today every account lives in the `DB`
 * binding; a split by account (another binding, a D1 per region) changes this function only.
 */
export function databaseFor(env: { DB: D1Database }, _accountId?: string | null): Db {
  let db = databases.get(env.DB);
  if (!db) {
    db = createDb(env.DB);
    databases.set(env.DB, db);
  }
  return db;
}

/**
 * One Drizzle instance per D1 binding for the isolate's life: building one walks the whole schema
 * (its relational config), which costs more than a short request's own work. A binding object
 * lives as long as the isolate's `env`; a test's fresh binding gets its own instance.
 */
const databases = new WeakMap<D1Database, Db>();

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
