import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

// Partial indexes on messages (migrations/0043_messages_partial_indexes.sql): a message that was
// never refunded, or belongs to no campaign, takes no entry, and the queries that look messages up
// by refund or campaign (`= ?`, which implies IS NOT NULL) still use them.

async function plan(query: string, ...params: unknown[]): Promise<string> {
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query}`)
    .bind(...params)
    .all<{ detail: string }>();
  return rows.results.map((row) => row.detail).join("\n");
}

describe("partial indexes on messages", () => {
  it("are partial on refund_id and campaign_id", async () => {
    const sqlOf = (name: string) =>
      env.DB.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?")
        .bind(name)
        .first<{ sql: string }>();
    expect((await sqlOf("messages_refund"))?.sql).toMatch(/WHERE "messages"."refund_id" IS NOT NULL$/);
    expect((await sqlOf("messages_campaign"))?.sql).toMatch(/WHERE "messages"."campaign_id" IS NOT NULL$/);
  });

  it("serve a refund's messages and a campaign's messages by status", async () => {
    expect(await plan("SELECT COALESCE(SUM(cost), 0) FROM messages WHERE refund_id = ?", "r")).toMatch(
      /USING (COVERING )?INDEX messages_refund \(refund_id=\?\)/,
    );
    expect(
      await plan("SELECT count(*) FROM messages WHERE campaign_id = ? AND status = ?", "c", "queued"),
    ).toMatch(/USING COVERING INDEX messages_campaign \(campaign_id=\? AND status=\?\)/);
  });
});
