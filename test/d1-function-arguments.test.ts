import { getTableName, is, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { eventColumns } from "../src/db/queries/events";
import { MAX_FUNCTION_ARGUMENTS, rowJson } from "../src/db/queries/row-json";
import * as schema from "../src/db/schema";

// D1 refuses a SQL function call with more than 32 arguments (its limits page, "Maximum arguments
// per SQL function"), where the SQLite of local runs allows far more: the JSON built of whole rows
// must stay within it for every table, however many columns it gains.

/** The argument count of every function call in `text` (string literals skipped). */
function callArities(text: string): { name: string; arguments: number }[] {
  const open: ({ name: string; arguments: number } | null)[] = [];
  const found: { name: string; arguments: number }[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'") {
      i = text.indexOf("'", i + 1);
      continue;
    }
    if (ch === "(") {
      const name = /([a-z_]+)\s*$/i.exec(text.slice(Math.max(0, i - 40), i))?.[1] ?? "";
      open.push(name ? { name, arguments: 1 } : null);
    } else if (ch === ")") {
      const call = open.pop();
      if (call) found.push({ name: call.name, arguments: call.arguments });
    } else if (ch === ",") {
      const call = open.at(-1);
      if (call) call.arguments++;
    }
  }
  return found;
}

const dialect = new SQLiteSyncDialect();
const textOf = (query: SQL) => dialect.sqlToQuery(query).sql;

describe("SQL function arguments within D1's limit", () => {
  const tables = (Object.values(schema) as unknown[]).filter((value): value is SQLiteTable =>
    is(value, SQLiteTable),
  );

  it("counts what it should", () => {
    expect(callArities("json_object('a', x, 'b', coalesce(y, 'c,d'))")).toEqual([
      { name: "coalesce", arguments: 2 },
      { name: "json_object", arguments: 4 },
    ]);
  });

  it.each(tables.map((table) => [getTableName(table), table] as const))("rowJson(%s)", (_name, table) => {
    for (const call of callArities(textOf(rowJson(table))))
      expect(call.arguments, call.name).toBeLessThanOrEqual(MAX_FUNCTION_ARGUMENTS);
  });

  it("an event as it is read (its message rendered)", () => {
    const { snapshot } = eventColumns();
    for (const call of callArities(textOf(snapshot.getSQL())))
      expect(call.arguments, call.name).toBeLessThanOrEqual(MAX_FUNCTION_ARGUMENTS);
    expect(callArities(textOf(rowJson(schema.messages))).length).toBeGreaterThan(1);
  });
});
