import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { recoverFailed, resendNow } from "../src/webhooks/resend";
import { OVERDUE_AFTER_MS, requeueOverdueDeliveries } from "../src/webhooks/sweep";
import { accountDb } from "./databases";
import { call, createAccount, expectProblem, TIMESTAMP, waitFor } from "./helpers";
import { network } from "./network";
import {
  attemptsOf,
  createEndpoint,
  DAY_MS,
  deliveriesOf,
  oneDelivery as deliveryTo,
  endpointRow,
  insertDelivery,
  makeDue,
  RECEIVER,
  recordingEnv,
  runQueue,
  seedEvent,
  useWebhookReceiver,
} from "./webhook-fixtures";

// The delivery history of an endpoint and what an account can do with it: list and show
// deliveries with their attempts, retry one now, recover failed ones since a time, send a test.

const receiver = useWebhookReceiver();

const oneDelivery = (path: string) => deliveryTo(receiver, path);

interface Attempt {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

interface Delivery {
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: string;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  attempts: Attempt[];
}

interface DeliveryPage {
  data: Delivery[];
  meta: { next_cursor: string | null; prev_cursor: string | null };
}

const history = (key: string, endpointId: string, query = "") =>
  call<DeliveryPage>("GET", `/v1/webhooks/${endpointId}/deliveries${query}`, { key });

/** Inserts a delivery of a fresh event of the account at `createdAt`, with `status` and no attempt. */
async function seedDelivery(
  accountId: string,
  endpointId: string,
  status: "pending" | "succeeded" | "failed",
  createdAt: number,
): Promise<string> {
  const eventId = await seedEvent(accountId, createdAt);
  await insertDelivery({
    endpointId,
    eventId,
    status,
    attempts: status === "pending" ? 0 : 8,
    nextAttemptAt: status === "pending" ? createdAt : null,
  });
  return eventId;
}

describe("GET /v1/webhooks/{id}/deliveries", () => {
  it("shows each delivery with every attempt: time, status, duration and the start of the answer", async () => {
    const { key, endpoint, eventId, message } = await oneDelivery("history");
    receiver.answers.set("history", (n) =>
      n === 1 ? new HttpResponse("boom", { status: 500 }) : HttpResponse.json({ ok: true }),
    );
    await runQueue("chatapp-webhooks", [message]);
    await makeDue(endpoint.id, eventId);
    await runQueue("chatapp-webhooks", [message], env, 2);

    const res = await history(key, endpoint.id);
    expect(res.status).toBe(200);
    const stored = await attemptsOf(endpoint.id, eventId);
    expect(res.body.data).toEqual([
      {
        event_id: eventId,
        event_type: "message.sent",
        endpoint_id: endpoint.id,
        status: "succeeded",
        next_attempt_at: null,
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
        attempts: stored.map((row) => ({
          attempt: row.attempt,
          attempted_at: expect.stringMatching(TIMESTAMP),
          status_code: row.status_code,
          duration_ms: row.duration_ms,
          response_excerpt: row.response_excerpt,
          error: null,
        })),
      },
    ]);
    expect(res.body.data[0]?.attempts.map((a) => [a.attempt, a.status_code, a.response_excerpt])).toEqual([
      [1, 500, "boom"],
      [2, 200, '{"ok":true}'],
    ]);
    // The same delivery, shown alone.
    const one = await call<{ data: Delivery }>("GET", `/v1/webhooks/${endpoint.id}/deliveries/${eventId}`, {
      key,
    });
    expect(one.body.data).toEqual(res.body.data[0]);
  });

  it("pages newest first and filters by status", async () => {
    const { key, accountId } = await createAccount();
    const endpoint = await createEndpoint(key, "paged", receiver);
    const base = Date.now() - DAY_MS;
    const statuses = ["succeeded", "failed", "pending", "succeeded", "failed"] as const;
    const ids: string[] = [];
    for (const [i, status] of statuses.entries())
      ids.push(await seedDelivery(accountId, endpoint.id, status, base + i * 1000));
    const newestFirst = [...ids].reverse();

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: DeliveryPage } = await history(
        key,
        endpoint.id,
        `?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((d) => d.event_id));
      cursor = page.body.meta.next_cursor;
    } while (cursor);
    expect(seen).toEqual(newestFirst);

    const failed = await history(key, endpoint.id, "?filter[status]=failed");

    expect(failed.body.data.map((d) => d.event_id)).toEqual([ids[4], ids[1]]);
    const open = await history(key, endpoint.id, "?filter[status]=failed,pending&limit=2");
    expect(open.body.data.map((d) => [d.event_id, d.status])).toEqual([
      [ids[4], "failed"],
      [ids[2], "pending"],
    ]);
    const rest = await history(
      key,
      endpoint.id,
      `?filter[status]=failed,pending&cursor=${open.body.meta.next_cursor}`,
    );
    expect(rest.body.data.map((d) => d.event_id)).toEqual([ids[1]]);
    expect(open.body.data[1]?.next_attempt_at).toMatch(TIMESTAMP);
  });

  it("refuses an unknown status and answers 404 for an unknown or malformed event id", async () => {
    const { key } = await createAccount();
    const endpoint = await createEndpoint(key, "bad", receiver);
    const res = await history(key, endpoint.id, "?filter[status]=lost");
    expectProblem(res, 422, "validation_failed");
    expect(JSON.stringify(res.body)).toContain("filter[status]");
    for (const eventId of ["evt_00000000000000000000000000000000", "evt_nope"]) {
      expectProblem(
        await call("GET", `/v1/webhooks/${endpoint.id}/deliveries/${eventId}`, { key }),
        404,
        "not_found",
      );
    }
  });
});

describe("POST /v1/webhooks/{id}/deliveries/{event_id}/retry", () => {
  const retry = (key: string, endpointId: string, eventId: string) =>
    call<{ data: Delivery }>("POST", `/v1/webhooks/${endpointId}/deliveries/${eventId}/retry`, { key });

  it("re-sends a delivery that failed on 410 once the endpoint is back on, with the same webhook-id", async () => {
    const { key, endpoint, eventId, message } = await oneDelivery("back");
    receiver.answers.set("back", (n) => new HttpResponse(null, { status: n === 1 ? 410 : 204 }));
    await runQueue("chatapp-webhooks", [message]);
    expect(await endpointRow(endpoint.id)).toEqual({ enabled: 0, disabled_reason: "gone" });

    expectProblem(await retry(key, endpoint.id, eventId), 409, "webhook_endpoint_disabled");
    expect(receiver.to("back")).toHaveLength(1);

    await call("PATCH", `/v1/webhooks/${endpoint.id}`, { key, body: { enabled: true } });
    const res = await retry(key, endpoint.id, eventId);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ event_id: eventId, status: "succeeded", next_attempt_at: null });
    expect(res.body.data.attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 410],
      [2, 204],
    ]);
    const sent = receiver.to("back");
    expect(sent.map((r) => [r.headers["webhook-id"], r.verified])).toEqual([
      [eventId, true],
      [eventId, true],
    ]);
    expect(sent[1]?.body).toBe(sent[0]?.body);
  });

  it("sends again a delivery that succeeded (a receiver that lost it asks)", async () => {
    const { key, endpoint, eventId, message } = await oneDelivery("again");
    await runQueue("chatapp-webhooks", [message]);
    const res = await retry(key, endpoint.id, eventId);
    expect(res.body.data.status).toBe("succeeded");
    expect(res.body.data.attempts).toHaveLength(2);
    expect(receiver.to("again")).toHaveLength(2);
  });

  it("keeps a delivery whose retry fails pending, and queues its next attempt on the schedule", async () => {
    const { accountId, endpoint, eventId, message } = await oneDelivery("down");
    receiver.answers.set("down", () => new HttpResponse(null, { status: 500 }));
    await runQueue("chatapp-webhooks", [message]);
    const recording = recordingEnv();
    const before = Date.now();
    const found = await resendNow(
      env,
      await accountDb(accountId),
      recording.env.WEBHOOK_QUEUE,
      accountId,
      { endpointId: endpoint.id, eventId },
      { random: () => 0.5 },
    );
    expect(found).toBe(true);
    const [row] = await deliveriesOf(endpoint.id);
    // Attempt 2 failed: the schedule's wait after it is 5 minutes (jitter 0 at random 0.5).
    expect(row).toMatchObject({ status: "pending", attempts: 2, last_status_code: 500 });
    expect(row!.next_attempt_at! - before).toBeGreaterThanOrEqual(300_000);
    expect(row!.next_attempt_at! - Date.now()).toBeLessThanOrEqual(300_000);
    expect(recording.sent).toEqual([{ kind: "deliver", eventId, endpointId: endpoint.id, accountId }]);
    // The queued copy that was waiting for the first retry is now early: it sends nothing.
    expect((await runQueue("chatapp-webhooks", [message], env, 2)).explicitAcks).toHaveLength(1);
    expect(receiver.to("down")).toHaveLength(2);
  });

  it("is 404 for an event the endpoint has no delivery of, and sends nothing", async () => {
    const { key, accountId } = await createAccount();
    const endpoint = await createEndpoint(key, "none", receiver);
    const other = await seedEvent(accountId);
    expectProblem(await retry(key, endpoint.id, other), 404, "not_found");
    expect(receiver.to("none")).toEqual([]);
  });
});

describe("POST /v1/webhooks/{id}/recover", () => {
  it("re-sends every failed delivery since the time given, and nothing else", async () => {
    const { key, accountId } = await createAccount();
    const endpoint = await createEndpoint(key, "recover", receiver);
    const now = Date.now();
    const old = await seedDelivery(accountId, endpoint.id, "failed", now - 3 * DAY_MS);
    const recent = [
      await seedDelivery(accountId, endpoint.id, "failed", now - DAY_MS),
      await seedDelivery(accountId, endpoint.id, "failed", now - DAY_MS + 1000),
    ];
    const done = await seedDelivery(accountId, endpoint.id, "succeeded", now - DAY_MS + 2000);
    const since = new Date(now - 2 * DAY_MS).toISOString();

    const recording = recordingEnv();
    const count = await recoverFailed(
      await accountDb(accountId),
      recording.env.WEBHOOK_QUEUE,
      accountId,
      endpoint.id,
      Date.parse(since),
      now,
    );
    expect(count).toEqual({ count: 2, more: false });
    expect(recording.sent).toEqual(
      expect.arrayContaining(
        recent.map((eventId) => ({ kind: "deliver", eventId, endpointId: endpoint.id, accountId })),
      ),
    );
    expect(recording.sent).toHaveLength(2);
    const rows = new Map((await deliveriesOf(endpoint.id)).map((row) => [row.event_id, row.status]));
    expect([rows.get(old), rows.get(recent[0]!), rows.get(recent[1]!), rows.get(done)]).toEqual([
      "failed",
      "pending",
      "pending",
      "succeeded",
    ]);
    // Each reopened delivery gets one more attempt: retries that had run out are failed again.
    receiver.answers.set("recover", () => new HttpResponse(null, { status: 500 }));
    await runQueue("chatapp-webhooks", recording.sent, env, 1);
    expect(receiver.to("recover")).toHaveLength(2);
    expect((await deliveriesOf(endpoint.id)).map((row) => row.status).sort()).toEqual([
      "failed",
      "failed",
      "failed",
      "succeeded",
    ]);
  });

  it("answers 202 with the count, and the queue delivers them", async () => {
    const { key, accountId } = await createAccount();
    const endpoint = await createEndpoint(key, "queued", receiver);
    const eventId = await seedDelivery(accountId, endpoint.id, "failed", Date.now() - 1000);
    const res = await call<{ data: { since: string; deliveries: number } }>(
      "POST",
      `/v1/webhooks/${endpoint.id}/recover`,
      { key, body: { since: "2026-01-01" } },
    );
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ since: "2026-01-01T00:00:00.000000Z", deliveries: 1, more: false });
    await waitFor(() => receiver.to("queued").length > 0, {
      reason: "the webhook queue (the runtime delivers it) to deliver",
      timeoutMs: 5_000,
    });
    expect(receiver.to("queued").map((r) => [r.headers["webhook-id"], r.verified])).toEqual([
      [eventId, true],
    ]);
  });

  it("reopens at most the limit a call, oldest first, and says there is more", async () => {
    const { key, accountId } = await createAccount();
    const endpoint = await createEndpoint(key, "many", receiver);
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(await seedDelivery(accountId, endpoint.id, "failed", now - 3000 + i * 1000));
    const recording = recordingEnv();
    const db = await accountDb(accountId);
    const recover = () => recoverFailed(db, recording.env.WEBHOOK_QUEUE, accountId, endpoint.id, 0, now, 2);
    expect(await recover()).toEqual({ count: 2, more: true });
    expect(await recover()).toEqual({ count: 1, more: false });
    expect(recording.sent.map((m) => (m as { eventId: string }).eventId)).toEqual(ids);
  });

  it("refuses a missing or unreadable since, and a disabled endpoint", async () => {
    const { key } = await createAccount();
    const endpoint = await createEndpoint(key, "refused", receiver);
    const recover = (body: unknown) => call("POST", `/v1/webhooks/${endpoint.id}/recover`, { key, body });
    for (const body of [{}, { since: "yesterday" }, { since: "2026-01-01", extra: 1 }])
      expectProblem(await recover(body), 422, "validation_failed");
    await call("PATCH", `/v1/webhooks/${endpoint.id}`, { key, body: { enabled: false } });
    expectProblem(await recover({ since: "2026-01-01" }), 409, "webhook_endpoint_disabled");
  });
});

describe("POST /v1/webhooks/{id}/test", () => {
  interface TestResult {
    succeeded: boolean;
    event: { id: string; type: string; created_at: string; data: Record<string, unknown> };
    attempted_at: string;
    status_code: number | null;
    duration_ms: number;
    response_excerpt: string | null;
    error: string | null;
  }
  const test = (key: string, id: string) =>
    call<{ data: TestResult }>("POST", `/v1/webhooks/${id}/test`, { key });

  it("posts a signed webhook.test event whose data is the endpoint, and stores nothing", async () => {
    const { key } = await createAccount();
    const endpoint = await createEndpoint(key, "test", receiver, ["otp.verified"]);
    receiver.answers.set("test", () => HttpResponse.json({ hello: "there" }));
    const res = await test(key, endpoint.id);
    expect(res.status).toBe(200);
    const shown = await call<{ data: Record<string, unknown> }>("GET", `/v1/webhooks/${endpoint.id}`, {
      key,
    });
    expect(res.body.data).toEqual({
      succeeded: true,
      event: {
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        type: "webhook.test",
        created_at: expect.stringMatching(TIMESTAMP),
        data: shown.body.data,
      },
      attempted_at: res.body.data.event.created_at,
      status_code: 200,
      duration_ms: expect.any(Number),
      response_excerpt: '{"hello":"there"}',
      error: null,
    });
    const [request] = receiver.to("test");
    expect(request?.verified).toBe(true);
    expect(request?.headers["webhook-id"]).toBe(res.body.data.event.id);
    expect(JSON.parse(request!.body)).toEqual(res.body.data.event);
    expect(await deliveriesOf(endpoint.id)).toEqual([]);
    const events = await call<{ data: unknown[] }>("GET", "/v1/events", { key });
    expect(events.body.data).toEqual([]);
  });

  it("reports a failing or unreachable receiver, also for a disabled endpoint", async () => {
    const { key } = await createAccount();
    const endpoint = await createEndpoint(key, "broken", receiver);
    await call("PATCH", `/v1/webhooks/${endpoint.id}`, { key, body: { enabled: false } });
    receiver.answers.set("broken", () => new HttpResponse("down for maintenance", { status: 503 }));
    expect((await test(key, endpoint.id)).body.data).toMatchObject({
      succeeded: false,
      status_code: 503,
      response_excerpt: "down for maintenance",
      error: null,
    });
    network.use(http.post(`${RECEIVER}/broken`, () => HttpResponse.error()));
    expect((await test(key, endpoint.id)).body.data).toMatchObject({
      succeeded: false,
      status_code: null,
      response_excerpt: null,
      error: expect.stringMatching(/\S/),
    });
  });
});

describe("the hourly sweep and pending deliveries", () => {
  it("queues again a pending delivery whose next attempt is over an hour late, and no other", async () => {
    const { key, accountId } = await createAccount();
    const endpoint = await createEndpoint(key, "late", receiver);
    const now = Date.now();
    const lost = await seedDelivery(accountId, endpoint.id, "pending", now - OVERDUE_AFTER_MS - 60_000);
    await seedDelivery(accountId, endpoint.id, "pending", now - OVERDUE_AFTER_MS + 60_000);
    await seedDelivery(accountId, endpoint.id, "failed", now - 2 * OVERDUE_AFTER_MS);
    const recording = recordingEnv();
    await requeueOverdueDeliveries(recording.env, await accountDb(accountId), now);
    expect(recording.sent.filter((m) => (m as { endpointId: string }).endpointId === endpoint.id)).toEqual([
      { kind: "deliver", eventId: lost, endpointId: endpoint.id, accountId },
    ]);
  });
});

describe("OpenAPI document", () => {
  it("lists the webhook.test event with the endpoint as its data", async () => {
    type Doc = {
      webhooks: Record<
        string,
        { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }
      >;
      components: { schemas: Record<string, { properties: Record<string, { $ref?: string }> }> };
    };
    const doc = (await call<Doc>("GET", "/openapi.json")).body;
    const ref = doc.webhooks["webhook.test"]?.post.requestBody.content["application/json"]?.schema.$ref;
    expect(ref).toBe("#/components/schemas/WebhookTestEvent");
    expect(doc.components.schemas.WebhookTestEvent?.properties.data?.$ref).toBe(
      "#/components/schemas/WebhookEndpoint",
    );
  });
});
