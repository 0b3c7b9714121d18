import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

/** Drizzle over the D1 binding, mapping camelCase fields to snake_case columns. */
export function createDb(d1: D1Database) {
  return drizzle(d1, { schema, casing: "snake_case" });
}

export type Db = ReturnType<typeof createDb>;
