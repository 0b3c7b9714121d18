import { ACCOUNT_TABLES, type AccountTable } from "./account-tables";

// One account's rows of one table, copied, counted or deleted a page at a time, between account
// databases (src/db/account-tables.ts; docs/databases.md, Databases, Moving an account). Raw D1 statements:
// the tables are walked generically, by their names and columns, not through Drizzle's types.

/** The account whose rows are meant: `?1` and `?2` of each table's `where`. */
export interface AccountKey {
  id: string;
  number: number;
}

/**
 * Where a copy stands in a table: the `order` values of the last row copied, as JSON (blobs as
 * `{"blob": base64}`); null at the table's start.
 */
export type CopyCursor = string | null;

/** D1 binds at most 100 parameters to a statement (https://developers.cloudflare.com/d1/platform/limits/). */
const MAX_BOUND_PARAMETERS = 100;

/**
 * Copies up to `limit` of account `account`'s rows of `table` after `cursor` from `source` to
 * `target`, in `order`, in one batch on the target. A row the target already has (the same page
 * copied twice) is left as it is; a {@link AccountTable.replaced} table's rows of the account are
 * deleted from the target before its first page, in the same batch.
 * @returns how many rows it read, and the cursor after them (null when the table is done).
 */
export async function copyPage(
  source: D1Database,
  target: D1Database,
  table: AccountTable,
  account: AccountKey,
  cursor: CopyCursor,
  limit: number,
): Promise<{ rows: number; cursor: CopyCursor }> {
  const after = cursor === null ? [] : decodeCursor(cursor);
  const { results: rows } = await pageQuery(source, table, account, after, limit).all<
    Record<string, unknown>
  >();
  const statements: D1PreparedStatement[] = [];
  if (cursor === null && table.replaced) {
    const where = accountWhere(table, account);
    statements.push(target.prepare(`DELETE FROM ${table.name} WHERE ${where.sql}`).bind(...where.params));
  }
  if (rows.length > 0) {
    const renumber = await renumbering(source, target, table, rows);
    statements.push(...insertStatements(target, table, rows, renumber));
  }
  if (statements.length > 0) await target.batch(statements);
  const last = rows.at(-1);
  return {
    rows: rows.length,
    cursor: rows.length < limit || !last ? null : encodeCursor(table.order.map((c) => last[c])),
  };
}

/**
 * The query of one page of account `account`'s rows of `table`: up to `limit` after the `order`
 * values `after` (none: from the start), in that order.
 */
export function pageQuery(
  db: D1Database,
  table: AccountTable,
  account: AccountKey,
  after: unknown[],
  limit: number,
): D1PreparedStatement {
  const where = accountWhere(table, account);
  const columns = table.order.join(", ");
  const past = after.length ? ` AND (${columns}) > (${after.map(() => "?").join(", ")})` : "";
  return db
    .prepare(`SELECT * FROM ${table.name} WHERE (${where.sql})${past} ORDER BY ${columns} LIMIT ${limit}`)
    .bind(...where.params, ...after.map(bindable));
}

/** How many of account `account`'s rows `table` holds in `db`. */
export async function countRows(db: D1Database, table: AccountTable, account: AccountKey): Promise<number> {
  const where = accountWhere(table, account);
  const row = await db
    .prepare(`SELECT count(*) AS n FROM ${table.name} WHERE ${where.sql}`)
    .bind(...where.params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * Deletes up to `limit` of account `account`'s rows of `table` from `db`, by its primary key.
 * @returns how many it deleted (0: none of the account's are left).
 */
export async function deletePage(
  db: D1Database,
  table: AccountTable,
  account: AccountKey,
  limit: number,
): Promise<number> {
  const key = table.key.length === 1 ? (table.key[0] as string) : `(${table.key.join(", ")})`;
  const where = accountWhere(table, account);
  const { meta } = await db
    .prepare(
      `DELETE FROM ${table.name} WHERE ${key} IN (SELECT ${table.key.join(", ")} FROM ${table.name} WHERE ${where.sql} LIMIT ${limit})`,
    )
    .bind(...where.params)
    .run();
  return meta.changes;
}

/**
 * `table.where` with its `?1` (the account's id) and `?2` (its number) as plain parameters, and
 * their values in order: D1 takes exactly as many values as a statement has parameters.
 */
function accountWhere(table: AccountTable, account: AccountKey): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const sql = table.where.replace(/\?([12])/g, (_, n: string) => {
    params.push(n === "1" ? account.id : account.number);
    return "?";
  });
  return { sql, params };
}

/** INSERT statements of `rows`, as many rows to each as D1's bound parameters allow (one where a value is computed). */
function insertStatements(
  target: D1Database,
  table: AccountTable,
  rows: Record<string, unknown>[],
  renumber: Map<unknown, unknown>,
): D1PreparedStatement[] {
  const columns = Object.keys(rows[0] as object);
  const computed = table.numbered?.column;
  const bound = columns.filter((c) => c !== computed);
  const perStatement = computed ? 1 : Math.max(1, Math.floor(MAX_BOUND_PARAMETERS / columns.length));
  const tuple = `(${columns.map((c) => (c === computed ? `(SELECT ${table.numbered?.value})` : "?")).join(", ")})`;
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const values = chunk.flatMap((row) =>
      bound.map((c) => bindable(c === table.renumbered?.column ? renumber.get(row[c]) : row[c])),
    );
    statements.push(
      target
        .prepare(
          `INSERT INTO ${table.name} (${columns.join(", ")}) VALUES ${chunk.map(() => tuple).join(", ")} ON CONFLICT DO NOTHING`,
        )
        .bind(...values),
    );
  }
  return statements;
}

/**
 * For a table whose rows point to another's {@link AccountTable.numbered} number: each source
 * number of `rows` → the target's number of the same row (found through its stable id).
 * @throws Error when the target lacks a row pointed to: the copy runs tables in order, so it has
 *   every parent row; a missing one means the copy is wrong, and the move unwinds.
 */
async function renumbering(
  source: D1Database,
  target: D1Database,
  table: AccountTable,
  rows: Record<string, unknown>[],
): Promise<Map<unknown, unknown>> {
  const map = new Map<unknown, unknown>();
  if (!table.renumbered) return map;
  const { column, table: parent } = table.renumbered;
  const numbered = ACCOUNT_TABLES.find((t) => t.name === parent)?.numbered;
  if (!numbered) throw new Error(`${parent} has no numbered column`);
  const numbers = [...new Set(rows.map((r) => r[column]))];
  const ids = await pairs(source, parent, numbered.column, numbered.id, numbers);
  const fresh = await pairs(target, parent, numbered.id, numbered.column, [...ids.values()]);
  for (const n of numbers) {
    const renumbered = fresh.get(ids.get(n));
    if (renumbered === undefined) throw new Error(`${parent} ${String(n)} is not in the target`);
    map.set(n, renumbered);
  }
  return map;
}

/** `from` → `to` of the rows of `table` whose `from` is one of `values` (at most 100 at a time). */
async function pairs(
  db: D1Database,
  table: string,
  from: string,
  to: string,
  values: unknown[],
): Promise<Map<unknown, unknown>> {
  const map = new Map<unknown, unknown>();
  for (let i = 0; i < values.length; i += MAX_BOUND_PARAMETERS) {
    const chunk = values.slice(i, i + MAX_BOUND_PARAMETERS);
    const { results } = await db
      .prepare(
        `SELECT ${from} AS k, ${to} AS v FROM ${table} WHERE ${from} IN (${chunk.map(() => "?").join(", ")})`,
      )
      .bind(...chunk.map(bindable))
      .all<{ k: unknown; v: unknown }>();
    for (const r of results) map.set(r.k, r.v);
  }
  return map;
}

/** A value as D1 takes it back: a blob D1 returned (an array of bytes) as bytes. */
function bindable(value: unknown): unknown {
  if (Array.isArray(value)) return new Uint8Array(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return value ?? null;
}

function encodeCursor(values: unknown[]): string {
  return JSON.stringify(
    values.map((v) => {
      const bytes = Array.isArray(v) || v instanceof ArrayBuffer ? new Uint8Array(v) : null;
      return bytes ? { blob: btoa(String.fromCharCode(...bytes)) } : v;
    }),
  );
}

function decodeCursor(cursor: string): unknown[] {
  return (JSON.parse(cursor) as unknown[]).map((v) =>
    typeof v === "object" && v !== null && "blob" in v
      ? Array.from(atob(String((v as { blob: unknown }).blob)), (ch) => ch.charCodeAt(0))
      : v,
  );
}
