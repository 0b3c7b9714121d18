import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { databaseFor } from "../src/db/client";
import { recordAttempt } from "../src/db/queries/webhook-deliveries";

// Webhook history stored by its keys (migrations/0042_webhook_history_keys.sql): an attempt is
// keyed by its delivery and number, and both tables are their primary key's b-tree (WITHOUT
// ROWID), which drizzle-kit cannot express, so this test holds it against a later rebuild.

const tableSql = (name: string) =>
  env.DB.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
    .bind(name)
    .first<{ sql: string }>();

describe("webhook history tables", () => {
  it("are WITHOUT ROWID, keyed by delivery (and attempt number), with no index repeating the key", async () => {
    expect((await tableSql("webhook_deliveries"))?.sql).toMatch(
      /PRIMARY KEY\(`endpoint_id`, `event_id`\)\s*\)\s*WITHOUT ROWID$/,
    );
    expect((await tableSql("webhook_attempts"))?.sql).toMatch(
      /PRIMARY KEY\(`endpoint_id`, `event_id`, `attempt`\)\s*\)\s*WITHOUT ROWID$/,
    );
    const indexes = await env.DB.prepare(
      "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('webhook_deliveries', 'webhook_attempts') ORDER BY name",
    ).all<{ name: string }>();
    expect(indexes.results.map((row) => row.name)).toEqual([
      "webhook_attempts_time",
      "webhook_deliveries_endpoint_created",
      "webhook_deliveries_endpoint_status",
      "webhook_deliveries_pending",
    ]);
  });

  it("keeps an attempt recorded twice (a retried batch) once", async () => {
    const key = {
      endpointId: crypto.randomUUID(),
      eventId: `evt_${crypto.randomUUID().replaceAll("-", "")}`,
    };
    await env.DB.prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, account_id, event_type, status, attempts, created_at, updated_at)
       VALUES (?, ?, ?, 'message.sent', 'pending', 1, 1, 1)`,
    )
      .bind(key.endpointId, key.eventId, crypto.randomUUID())
      .run();
    const attempt = {
      ...key,
      attempt: 1,
      attemptedAt: 1_000,
      statusCode: 200,
      durationMs: 12,
      responseExcerpt: "ok",
      error: null,
    };
    const db = databaseFor(env);
    await recordAttempt(db, attempt, { status: "succeeded", nextAttemptAt: null });
    await recordAttempt(db, { ...attempt, durationMs: 99 }, { status: "succeeded", nextAttemptAt: null });
    const rows = await env.DB.prepare(
      "SELECT attempt, duration_ms, status_code FROM webhook_attempts WHERE endpoint_id = ? AND event_id = ?",
    )
      .bind(key.endpointId, key.eventId)
      .all();
    expect(rows.results).toEqual([{ attempt: 1, duration_ms: 12, status_code: 200 }]);
    const delivery = await env.DB.prepare(
      "SELECT status, last_status_code FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?",
    )
      .bind(key.endpointId, key.eventId)
      .first();
    expect(delivery).toEqual({ status: "succeeded", last_status_code: 200 });
  });

  it("reads a delivery's attempts through the primary key", async () => {
    const plan = await env.DB.prepare(
      "EXPLAIN QUERY PLAN SELECT * FROM webhook_attempts WHERE endpoint_id = ? AND event_id IN (?, ?) ORDER BY attempted_at, attempt",
    )
      .bind("e", "a", "b")
      .all<{ detail: string }>();
    expect(plan.results.map((row) => row.detail).join("\n")).toMatch(
      /SEARCH webhook_attempts USING PRIMARY KEY \(endpoint_id=\? AND event_id=\?\)/,
    );
  });
});
