import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/**
 * Most arguments D1 lets one SQL function take (https://developers.cloudflare.com/d1/platform/limits/,
 * "Maximum arguments per SQL function"); SQLite alone allows more, so local runs would not see it.
 */
export const MAX_FUNCTION_ARGUMENTS = 32;

/**
 * JSON of every column of `table`'s current row, camelCase keys (as Drizzle reads the row). Built
 * in steps that each stay within {@link MAX_FUNCTION_ARGUMENTS}: `json_object` of the first columns,
 * then `json_insert` of the rest (which, unlike `json_patch`, keeps null values).
 */
export function rowJson(table: SQLiteTable): SQL {
  const pairs = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, column }));
  const first = pairs.slice(0, MAX_FUNCTION_ARGUMENTS / 2);
  let json = sql`json_object(${sql.join(
    first.map(({ key, column }) => sql`${key}, ${column}`),
    sql`, `,
  )})`;
  const perInsert = (MAX_FUNCTION_ARGUMENTS - 1) >> 1;
  for (let i = first.length; i < pairs.length; i += perInsert) {
    const more = pairs.slice(i, i + perInsert).map(({ key, column }) => sql`${`$.${key}`}, ${column}`);
    json = sql`json_insert(${json}, ${sql.join(more, sql`, `)})`;
  }
  return json;
}
