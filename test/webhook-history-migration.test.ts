import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { call, createAccount, TIMESTAMP } from "./helpers";
import { attemptsOf, createEndpoint, runQueue, seedEvent, useWebhookReceiver } from "./webhook-fixtures";

// Migration 0046 stores the webhook history small (src/db/schema/events.ts). This file puts the
// tables back as migration 0042 left them, stores history in that shape, runs 0046's statements
// again on it (and 0050's, which move the type codes to EVENT_TYPE_CODES, and 0053's, which key
// deliveries by their event's time) and checks that every
// delivery and attempt reads as before and delivery goes on.

const receiver = useWebhookReceiver();

/** The statements of the migration whose file name starts with `prefix`. */
function migration(prefix: string): string[] {
  const found = env.TEST_MIGRATIONS.find((m) => m.name.startsWith(prefix));
  if (!found) throw new Error(`migration ${prefix} is not among the test migrations`);
  return found.queries;
}

/** The webhook tables as migration 0042 left them: its CREATE statements, under their final names. */
function tablesOf0042(): string[] {
  return migration("0042_")
    .filter((q) => /^(\s*--[^\n]*\n)*\s*CREATE (TABLE|INDEX)/.test(q))
    .map((q) => q.replaceAll("__new_", ""));
}

/** Runs `statements` in order on account database `d1`. */
async function run(d1: D1Database, statements: string[]): Promise<void> {
  for (const statement of statements) await d1.prepare(statement).run();
}

interface Shown {
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: string;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  attempts: {
    attempt: number;
    attempted_at: string;
    status_code: number | null;
    duration_ms: number;
    response_excerpt: string | null;
    error: string | null;
  }[];
}

describe("migration 0046 (webhook history stored small)", () => {
  it("carries every delivery and attempt over, reads them as before, and delivery goes on", async () => {
    const { key, accountId } = await createAccount();
    const d1 = await accountD1(accountId);
    const endpoint = await createEndpoint(key, "migrated", receiver);
    const at = Date.UTC(2026, 10, 20, 9, 0, 0);
    const [once, retried, waiting, orphan] = [
      await seedEvent(accountId, at),
      await seedEvent(accountId, at + 1_000),
      await seedEvent(accountId),
      await seedEvent(accountId, at + 2_000),
    ];

    // Back to the shape of 0042, without the endpoints' numbers.
    expect(tablesOf0042()).toHaveLength(6); // 2 tables and their 4 indexes
    await run(d1, [
      "DROP INDEX webhook_endpoints_number",
      "ALTER TABLE webhook_endpoints DROP COLUMN number",
      "DROP TABLE webhook_deliveries",
      "DROP TABLE webhook_attempts",
      ...tablesOf0042(),
    ]);
    const delivery = d1.prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, account_id, event_type, status, attempts, next_attempt_at, last_status_code, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const attempt = d1.prepare(
      `INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, attempted_at, status_code, duration_ms, response_excerpt, error)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const gone = crypto.randomUUID();
    const now = Date.now();
    await d1.batch([
      delivery.bind(endpoint.id, once, accountId, "message.sent", "succeeded", 1, null, 200, at, at + 40),
      attempt.bind(endpoint.id, once, 1, at + 40, 200, 12, "ok", null),
      delivery.bind(
        endpoint.id,
        retried,
        accountId,
        "message.read",
        "succeeded",
        3,
        null,
        204,
        at + 1_000,
        at + 9_000,
      ),
      attempt.bind(endpoint.id, retried, 1, at + 1_010, null, 15_000, null, "timeout after 15000 ms"),
      attempt.bind(endpoint.id, retried, 2, at + 6_000, 500, 30, "boom", null),
      attempt.bind(endpoint.id, retried, 3, at + 9_000, 204, 8, null, null),
      delivery.bind(endpoint.id, waiting, accountId, "message.sent", "pending", 0, now, null, now, now),
      // A delivery of an endpoint deleted before: no route could list it, and it is not carried over.
      delivery.bind(gone, orphan, accountId, "message.sent", "failed", 1, null, 500, at, at),
      attempt.bind(gone, orphan, 1, at, 500, 3, null, null),
    ]);

    await run(d1, migration("0046_"));
    // And on to where the deliveries name their type by its EVENT_TYPE_CODES number (0050).
    const code = (q: string) => q.replace(/^\s*--.*$/gm, "");
    await run(
      d1,
      migration("0050_").filter((q) => /webhook_/.test(code(q))),
    );
    // And on to deliveries keyed by their event's time, found through it (0053).
    await run(d1, migration("0053_"));

    const listed = await call<{ data: Shown[] }>("GET", `/v1/webhooks/${endpoint.id}/deliveries`, { key });
    expect(listed.status).toBe(200);
    const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");
    expect(listed.body.data).toEqual([
      {
        event_id: waiting,
        event_type: "message.sent",
        endpoint_id: endpoint.id,
        status: "pending",
        next_attempt_at: expect.stringMatching(TIMESTAMP),
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
        attempts: [],
      },
      {
        event_id: retried,
        event_type: "message.read",
        endpoint_id: endpoint.id,
        status: "succeeded",
        next_attempt_at: null,
        created_at: iso(at + 1_000),
        updated_at: iso(at + 9_000),
        attempts: [
          {
            attempt: 1,
            attempted_at: iso(at + 1_010),
            status_code: null,
            duration_ms: 15_000,
            response_excerpt: null,
            error: "timeout after 15000 ms",
          },
          {
            attempt: 2,
            attempted_at: iso(at + 6_000),
            status_code: 500,
            duration_ms: 30,
            response_excerpt: "boom",
            error: null,
          },
          {
            attempt: 3,
            attempted_at: iso(at + 9_000),
            status_code: 204,
            duration_ms: 8,
            response_excerpt: null,
            error: null,
          },
        ],
      },
      {
        event_id: once,
        event_type: "message.sent",
        endpoint_id: endpoint.id,
        status: "succeeded",
        next_attempt_at: null,
        created_at: iso(at),
        updated_at: iso(at + 40),
        attempts: [
          {
            attempt: 1,
            attempted_at: iso(at + 40),
            status_code: 200,
            duration_ms: 12,
            response_excerpt: "ok",
            error: null,
          },
        ],
      },
    ]);
    // The first attempts went into their deliveries' rows; the old orphan is gone.
    const count = (table: string) => d1.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<number>("n");
    expect([await count("webhook_deliveries"), await count("webhook_attempts")]).toEqual([3, 2]);

    // The pending delivery is still delivered, its attempt recorded in its row.
    await runQueue("chatapp-webhooks", [
      { kind: "deliver", eventId: waiting, endpointId: endpoint.id, accountId },
    ]);
    expect(receiver.to("migrated")).toHaveLength(1);
    expect(await attemptsOf(endpoint.id, waiting)).toMatchObject([{ attempt: 1, status_code: 204 }]);
    // A new endpoint gets a number of its own.
    const next = await createEndpoint(key, "next", receiver);
    const numbers = await d1
      .prepare("SELECT id, number FROM webhook_endpoints WHERE account_id = ? ORDER BY number")
      .bind(accountId)
      .all<{ id: string; number: number }>();
    expect(numbers.results.map((row) => row.id)).toEqual([endpoint.id, next.id]);
  });
});
