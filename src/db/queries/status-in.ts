import { type SQL, sql } from "drizzle-orm";

/**
 * `column IN ('a', 'b')` for a fixed list of status names: enum values the caller's rules name
 * (src/moves/), never request input, so they are written into the SQL text.
 */
export function statusIn(column: string, statuses: readonly string[]): SQL {
  return sql.raw(`${column} IN (${statuses.map((status) => `'${status}'`).join(", ")})`);
}
