import { describe, expect, it } from "vitest";
import { ACCOUNT_USAGE, CAMPAIGN_STATS, counterTriggers, statusTriggerSql } from "../src/moves/counters";
import { everyAccountD1 } from "./databases";

// The counters that follow a message's status are SQLite triggers written by the migrations; their
// definition lives in src/moves/counters.ts beside the moves. This holds the database to it.

/** SQL with whitespace runs made one space, and no space inside brackets or before a comma. */
function normalised(sqlText: string): string {
  return sqlText
    .replace(/--[^\n]*/g, "")
    .replace(/\s+/g, " ")
    .replace(/\(\s/g, "(")
    .replace(/\s\)/g, ")")
    .replace(/\s,/g, ",")
    .replace(/;\s*$/, "")
    .trim();
}

describe("counter triggers", () => {
  it("are, in each migrated account database, exactly the SQL src/moves/counters.ts generates", async () => {
    const defined = counterTriggers();
    for (const d1 of everyAccountD1()) {
      const { results } = await d1
        .prepare(
          "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' ORDER BY name",
        )
        .all<{ name: string; sql: string }>();
      expect(results.map((row) => row.name)).toEqual(Object.keys(defined).sort());
      for (const row of results)
        expect(normalised(row.sql), row.name).toBe(normalised(defined[row.name] ?? ""));
    }
  });

  it("would notice a counter the definition changed", () => {
    const changed = statusTriggerSql({
      ...CAMPAIGN_STATS,
      columns: { ...CAMPAIGN_STATS.columns, queued: ["queued"] },
    });
    expect(normalised(changed)).not.toBe(normalised(statusTriggerSql(CAMPAIGN_STATS)));
    expect(statusTriggerSql(ACCOUNT_USAGE)).toContain(
      "scheduled = scheduled - (OLD.status = 'scheduled') + (NEW.status = 'scheduled')",
    );
  });
});
