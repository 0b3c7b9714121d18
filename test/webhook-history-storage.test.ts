import { env } from "cloudflare:workers";
import { HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { d1Counts } from "../src/db/d1-counter";
import { undeliveredEvents } from "../src/db/queries/events";
import {
  claimAttempt,
  endpointsToDeliver,
  failPendingDeliveries,
  findDelivery,
  listDeliveries,
  overdueDeliveries,
  purgeDeliveryHistory,
  recordAttempt,
  reopenDelivery,
  reopenFailedDeliveries,
} from "../src/db/queries/webhook-deliveries";
import { deleteWebhookEndpoint, disableEndpointIfFailing } from "../src/db/queries/webhook-endpoints";
import { accountD1, accountDb, firstAccountD1 } from "./databases";
import { call } from "./helpers";
import {
  attemptsOf,
  deliveriesOf,
  makeDue,
  oneDelivery,
  runQueue,
  useWebhookReceiver,
} from "./webhook-fixtures";

// Webhook history stored small (migrations/accounts/0046_webhook_history_small.sql): a delivery that
// succeeds at once is one row holding its attempt; both tables are their primary key's b-tree
// (WITHOUT ROWID), which drizzle-kit cannot express, so this file holds it against a later
// rebuild, with the plan of every statement the queries run on them.

const receiver = useWebhookReceiver();

const tableSql = (name: string) =>
  firstAccountD1()
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
    .bind(name)
    .first<{ sql: string }>();

/** The rows of a table of one endpoint, of account `accountId`. */
const rowsOf = async (accountId: string, table: string, endpointId: string) =>
  (
    await (
      await accountD1(accountId)
    )
      .prepare(
        `SELECT * FROM ${table} WHERE endpoint_number = (SELECT number FROM webhook_endpoints WHERE id = ?)`,
      )
      .bind(endpointId)
      .all()
  ).results;

describe("webhook history tables", () => {
  it("are WITHOUT ROWID, keyed as the history lists them, with only the indexes a query needs", async () => {
    expect((await tableSql("webhook_deliveries"))?.sql).toMatch(
      /PRIMARY KEY\(`endpoint_number`, `created_at`, `event_id`\)\s*\)\s*WITHOUT ROWID$/,
    );
    expect((await tableSql("webhook_attempts"))?.sql).toMatch(
      /PRIMARY KEY\(`endpoint_number`, `event_id`, `attempt`\)\s*\)\s*WITHOUT ROWID$/,
    );
    const indexes = await firstAccountD1()
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('webhook_deliveries', 'webhook_attempts') ORDER BY name",
      )
      .all<{ name: string; sql: string }>();
    expect(indexes.results.map((row) => row.name)).toEqual([
      "webhook_deliveries_failed",
      "webhook_deliveries_pending",
    ]);
    expect(indexes.results.map((row) => row.sql.match(/WHERE .*$/)?.[0] ?? null)).toEqual([
      'WHERE "webhook_deliveries"."status" = 2',
      'WHERE "webhook_deliveries"."status" = 0',
    ]);
  });

  it("keeps a delivery that succeeded at its first attempt as one row, that attempt in it", async () => {
    // The fan-out (in oneDelivery) wrote no row: the first attempt writes it, once.
    const { key, endpoint, eventId, message, accountId } = await oneDelivery(receiver, "once");
    expect(await rowsOf(accountId, "webhook_deliveries", endpoint.id)).toEqual([]);
    receiver.answers.set("once", () => HttpResponse.text("ok", { status: 200 }));
    const before = d1Counts().rowsWritten;
    await runQueue("chatapp-webhooks", [message]);
    // D1 counts the row alone: the table is its key's b-tree, and the partial indexes hold no
    // succeeded delivery.
    expect(d1Counts().rowsWritten - before).toBe(1);

    const [row, ...others] = await rowsOf(accountId, "webhook_deliveries", endpoint.id);
    expect(others).toEqual([]);
    expect(row).toMatchObject({
      status: 1,
      attempts: 1,
      next_attempt_at: null,
      first_status_code: 200,
      first_response_excerpt: "ok",
      first_error: null,
    });
    // The event id's 16 bytes (a BLOB: D1 reads it as an array of bytes).
    expect(row?.event_id).toEqual(
      [...eventId.slice(4).matchAll(/../g)].map(([hex]) => Number.parseInt(hex, 16)),
    );
    expect(await rowsOf(accountId, "webhook_attempts", endpoint.id)).toEqual([]);

    const shown = await call<{ data: { attempts: { attempt: number; status_code: number }[] } }>(
      "GET",
      `/v1/webhooks/${endpoint.id}/deliveries/${eventId}`,
      { key },
    );
    expect(shown.body.data.attempts).toMatchObject([
      { attempt: 1, status_code: 200, response_excerpt: "ok", error: null },
    ]);
  });

  it("keeps the attempts after the first as rows of their own, and lists every attempt", async () => {
    const { key, endpoint, eventId, message, accountId } = await oneDelivery(receiver, "thrice");
    receiver.answers.set("thrice", (n) =>
      n < 3 ? new HttpResponse(`no ${n}`, { status: 500 + n }) : HttpResponse.json({ n }),
    );
    await runQueue("chatapp-webhooks", [message]);
    for (const attempt of [2, 3]) {
      await makeDue(endpoint.id, eventId);
      await runQueue("chatapp-webhooks", [message], env, attempt);
    }
    expect(receiver.to("thrice")).toHaveLength(3);
    expect((await rowsOf(accountId, "webhook_attempts", endpoint.id)).map((row) => row.attempt)).toEqual([
      2, 3,
    ]);

    const listed = await call<{
      data: {
        status: string;
        attempts: { attempt: number; status_code: number; response_excerpt: string }[];
      }[];
    }>("GET", `/v1/webhooks/${endpoint.id}/deliveries`, { key });
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]?.status).toBe("succeeded");
    expect(listed.body.data[0]?.attempts.map((a) => [a.attempt, a.status_code, a.response_excerpt])).toEqual([
      [1, 501, "no 1"],
      [2, 502, "no 2"],
      [3, 200, '{"n":3}'],
    ]);
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: "succeeded", attempts: 3 });
  });

  it("keeps an attempt recorded twice (a retried batch) once, the first or a later one", async () => {
    const { endpoint, eventId, accountId } = await oneDelivery(receiver, "twice");
    const db = await accountDb(accountId);
    const key = { endpointId: endpoint.id, eventId };
    const now = Date.now();
    const attempt = { attemptedAt: now, statusCode: 500, durationMs: 12, responseExcerpt: "no", error: null };
    const retry = { status: "pending" as const, nextAttemptAt: now + 5_000 };

    // The first attempt has no row to claim (recordAttempt writes it).
    const unclaimed = await claimAttempt(db, key, now, 60_000, now + 120_000);
    expect(unclaimed.attempt).toBeNull();
    expect(unclaimed.context.delivery).toBeNull();
    await recordAttempt(db, key, { ...attempt, attempt: 1 }, retry);
    await recordAttempt(db, key, { ...attempt, attempt: 1, durationMs: 99 }, retry);
    await makeDue(endpoint.id, eventId);
    expect((await claimAttempt(db, key, now, 60_000, now + 120_000)).attempt).toBe(2);
    const succeeded = { status: "succeeded" as const, nextAttemptAt: null };
    await recordAttempt(db, key, { ...attempt, attempt: 2, statusCode: 200 }, succeeded);
    await recordAttempt(db, key, { ...attempt, attempt: 2, statusCode: 200, durationMs: 99 }, succeeded);

    expect(await attemptsOf(endpoint.id, eventId)).toEqual([
      { attempt: 1, status_code: 500, duration_ms: 12, response_excerpt: "no", error: null },
      { attempt: 2, status_code: 200, duration_ms: 12, response_excerpt: "no", error: null },
    ]);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { status: "succeeded", attempts: 2, last_status_code: 200, next_attempt_at: null },
    ]);
  });

  it("records a first attempt that a dead-letter mark overtook, and leaves the mark", async () => {
    const { endpoint, eventId, accountId } = await oneDelivery(receiver, "overtaken");
    const db = await accountDb(accountId);
    const key = { endpointId: endpoint.id, eventId };
    const now = Date.now();
    // No row yet: the dead-letter mark writes a failed one, with no attempt.
    await failPendingDeliveries(db, [key], now + 1);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([{ status: "failed", attempts: 0 }]);
    const attempt = {
      attempt: 1,
      attemptedAt: now,
      statusCode: 200,
      durationMs: 3,
      responseExcerpt: null,
      error: null,
    };
    await recordAttempt(db, key, attempt, { status: "succeeded", nextAttemptAt: null });
    expect(await deliveriesOf(endpoint.id)).toMatchObject([{ status: "failed", last_status_code: 200 }]);
    expect(await attemptsOf(endpoint.id, eventId)).toHaveLength(1);
  });

  it("fails an endpoint's pending deliveries when it is deleted, and does not give its number again", async () => {
    const { key, endpoint, eventId, message, accountId } = await oneDelivery(receiver, "deleted");
    const d1 = await accountD1(accountId);
    // A first attempt that failed leaves the delivery pending, its retry to come.
    receiver.answers.set("deleted", () => new HttpResponse("no", { status: 500 }));
    await runQueue("chatapp-webhooks", [message]);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([{ status: "pending", attempts: 1 }]);
    const number = async (id: string) =>
      (await d1
        .prepare("SELECT number FROM webhook_endpoints WHERE id = ?")
        .bind(id)
        .first<number>("number")) ?? null;
    const before = await number(endpoint.id);
    expect((await call("DELETE", `/v1/webhooks/${endpoint.id}`, { key })).status).toBe(204);
    const [row] = await d1
      .prepare("SELECT status, next_attempt_at FROM webhook_deliveries WHERE endpoint_number = ?")
      .bind(before)
      .all()
      .then((r) => r.results);
    expect(row).toEqual({ status: 2, next_attempt_at: null });
    // Deleting the newest endpoint frees no number while its history stands.
    const next = await call<{ data: { id: string } }>("POST", "/v1/webhooks", {
      key,
      body: { url: "https://receiver.example/next" },
    });
    expect(await number(next.body.data.id)).toBeGreaterThan(before ?? Number.POSITIVE_INFINITY);
    // Its history is no longer shown: the endpoint is gone.
    expect((await call("GET", `/v1/webhooks/${endpoint.id}/deliveries/${eventId}`, { key })).status).toBe(
      404,
    );
  });
});

/** D1 binding `binding`, recording each statement prepared through it with the values bound to it. */
function recordingD1(binding: D1Database): {
  d1: D1Database;
  statements: { sql: string; params: unknown[] }[];
} {
  const statements: { sql: string; params: unknown[] }[] = [];
  const d1 = new Proxy(binding, {
    get(target, prop) {
      if (prop === "prepare")
        return (sql: string) => {
          const entry = { sql, params: [] as unknown[] };
          statements.push(entry);
          const statement = target.prepare(sql);
          return new Proxy(statement, {
            get(inner, name) {
              if (name === "bind")
                return (...params: unknown[]) => {
                  entry.params = params;
                  return inner.bind(...params);
                };
              const value = Reflect.get(inner, name);
              return typeof value === "function" ? value.bind(inner) : value;
            },
          });
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { d1, statements };
}

/**
 * The query plans of the statements each of `runs` prepares, on account database `binding`, that
 * read or write the webhook history, by the run's name, one plan per statement.
 */
async function plansOf(
  binding: D1Database,
  runs: Record<string, (db: ReturnType<typeof createDb>) => Promise<unknown>>,
): Promise<Record<string, string[]>> {
  const plans: Record<string, string[]> = {};
  for (const [name, run] of Object.entries(runs)) {
    const { d1, statements } = recordingD1(binding);
    await run(createDb(d1));
    plans[name] = [];
    for (const { sql, params } of statements) {
      if (!/webhook_(deliveries|attempts)/.test(sql)) continue;
      const { results } = await binding
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...params)
        .all<{ detail: string }>();
      plans[name].push(results.map((row) => row.detail).join("\n"));
    }
  }
  return plans;
}

/** A plan line that reads a whole history table (its b-tree, or an index of all its rows). */
const FULL_SCAN =
  /SCAN (webhook_deliveries|webhook_attempts|d|a)\b(?! USING (COVERING )?INDEX webhook_deliveries_(pending|failed))/;

describe("query plans of the webhook history", () => {
  it("seek by key or read a partial index: no statement reads a history table whole", async () => {
    const { accountId, endpoint, eventId } = await oneDelivery(receiver, "plans");
    const key = { endpointId: endpoint.id, eventId };
    const now = Date.now();
    const cursor = { createdAt: now + 1, id: eventId, direction: "next" as const };
    const attempt = { attemptedAt: now, statusCode: 500, durationMs: 1, responseExcerpt: null, error: null };
    const pending = { status: "pending" as const, nextAttemptAt: now };
    const list = (statuses: ("pending" | "succeeded" | "failed")[]) => (db: ReturnType<typeof createDb>) =>
      listDeliveries(db, accountId, endpoint.id, { statuses, limit: 10, cursor });
    const plans = await plansOf(await accountD1(accountId), {
      create: (db) => endpointsToDeliver(db, accountId, eventId, "message.sent"),
      claim: (db) => claimAttempt(db, key, now, 0, now),
      recordFirst: (db) => recordAttempt(db, key, { ...attempt, attempt: 1 }, pending),
      claimAgain: (db) => claimAttempt(db, key, now, 0, now),
      recordLater: (db) => recordAttempt(db, key, { ...attempt, attempt: 2 }, pending),
      listAll: list([]),
      listPending: list(["pending"]),
      listFailed: list(["failed"]),
      listSucceeded: list(["succeeded"]),
      find: (db) => findDelivery(db, accountId, endpoint.id, eventId),
      reopen: (db) => reopenDelivery(db, accountId, key, now),
      fail: (db) => failPendingDeliveries(db, [key], now),
      reopenFailed: (db) => reopenFailedDeliveries(db, accountId, endpoint.id, 0, now, 10),
      sweep: (db) => overdueDeliveries(db, now + 1, 10),
      failing: (db) => disableEndpointIfFailing(db, endpoint.id, "failing", 1, now + 10),
      undelivered: (db) => undeliveredEvents(db, { from: now - 1, to: now + 1 }, 10),
      purge: (db) => purgeDeliveryHistory(db, now - 1),
      remove: (db) => deleteWebhookEndpoint(db, accountId, endpoint.id, now),
    });
    for (const [name, list] of Object.entries(plans)) {
      expect(list.length, name).toBeGreaterThan(0);
      // The purge reads webhook_attempts whole (only retried deliveries have rows there), each
      // row's delivery by its key; nothing else reads a history table whole.
      for (const plan of name === "purge" ? list.slice(1) : list) expect(plan, name).not.toMatch(FULL_SCAN);
    }
    const one = (name: string) => plans[name]?.join("\n---\n") ?? "";
    // A page is read in the key's order, the status filters from their partial indexes, unsorted
    // (then its later attempts, sorted).
    const page =
      /SEARCH webhook_deliveries USING (PRIMARY KEY|INDEX webhook_deliveries_(\w+)) \(endpoint_number=\? AND \(created_at,event_id\)<\(\?,\?\)\)/;
    for (const [name, index] of [
      ["listAll", "PRIMARY KEY"],
      ["listSucceeded", "PRIMARY KEY"],
      ["listPending", "INDEX webhook_deliveries_pending"],
      ["listFailed", "INDEX webhook_deliveries_failed"],
    ] as const) {
      const [query] = plans[name] ?? [];
      expect(query?.match(page)?.[1], name).toBe(index);
      expect(query, name).not.toMatch(/USE TEMP B-TREE/);
    }
    // Later attempts by their delivery's key; a delivery by its event id.
    expect(one("find")).toMatch(
      /SEARCH webhook_attempts USING PRIMARY KEY \(endpoint_number=\? AND event_id=\?\)/,
    );
    for (const name of ["claim", "recordFirst", "recordLater", "find", "reopen", "fail", "reopenFailed"])
      expect(one(name), name).toMatch(
        /SEARCH (webhook_deliveries|d|u) USING PRIMARY KEY \(endpoint_number=\? AND created_at=\? AND event_id=\?\)/,
      );
    expect(one("reopenFailed")).toMatch(
      /INDEX webhook_deliveries_failed \(endpoint_number=\? AND created_at>\?\)/,
    );
    // The sweep reads the pending deliveries only; the purge each endpoint's old rows only.
    expect(one("sweep")).toMatch(/SCAN d USING INDEX webhook_deliveries_pending/);
    expect(one("purge")).toMatch(
      /SEARCH webhook_deliveries USING PRIMARY KEY \(endpoint_number=\? AND created_at<\?\)/,
    );
    expect(one("remove")).toMatch(/INDEX webhook_deliveries_pending \(endpoint_number=\?\)/);
  });
});
