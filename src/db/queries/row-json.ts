import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/** JSON of every column of `table`'s current row, camelCase keys (as Drizzle reads the row). */
export function rowJson(table: SQLiteTable): SQL {
  const pairs = Object.entries(getTableColumns(table)).map(([key, column]) => sql`${key}, ${column}`);
  return sql`json_object(${sql.join(pairs, sql`, `)})`;
}
