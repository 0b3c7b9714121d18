import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { delay, HttpResponse } from "msw";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newEventId } from "../src/events/record";
import worker from "../src/index";
import { handleWebhookBatch } from "../src/webhooks/consumer";
import { MAX_ATTEMPTS, parseRetryAfter, retryDelaySeconds } from "../src/webhooks/schedule";
import { accountD1 } from "./databases";
import { EVENTS } from "./event-fixtures";
import { call, createAccount } from "./helpers";
import { connectedSession, driveAlarmUntil, getMessage, sendText } from "./message-fixtures";
import {
  attemptsOf,
  createEndpoint,
  DAY_MS,
  deliveriesOf,
  oneDelivery as deliveryTo,
  type EventRecord,
  endpointRow,
  insertDelivery,
  makeDue,
  recordingEnv,
  runBatch,
  runQueue,
  seedEvent,
  useWebhookReceiver,
} from "./webhook-fixtures";

const receiver = useWebhookReceiver();

const oneDelivery = (path: string) => deliveryTo(receiver, path);

describe("fan-out and delivery of real events", () => {
  it("delivers each event once to each subscribed endpoint, signed, with the body GET /v1/events shows", async () => {
    const { key, accountId } = await createAccount(10);
    const all = await createEndpoint(key, "all", receiver);
    const reads = await createEndpoint(key, "reads", receiver, ["message.read"]);
    const session = await connectedSession(key);
    const sent = await sendText(key, session.id, ["+14155552672"], { delay_between: 0 });
    const id = sent.body.data.messages[0]!.id;
    await driveAlarmUntil(session.id, async () => (await getMessage(key, id)).status === "read");

    const { results: events } = await (await accountD1(accountId))
      .prepare(`SELECT id, type FROM ${EVENTS} WHERE account_id = ? ORDER BY created_at, id`)
      .bind(accountId)
      .all<{ id: string; type: string }>();
    expect(events.map((e) => e.type).sort()).toEqual([
      "message.delivered",
      "message.read",
      "message.sent",
      "session.status_changed",
    ]);
    // The events were published as their changes committed; the real queues fan them out and
    // deliver them.
    for (let i = 0; i < 400 && receiver.received.length < 5; i++) await delay(25);
    await delay(200);

    // The filter holds: the endpoint subscribed to message.read has that delivery only.
    const readEvent = events.find((e) => e.type === "message.read")!;
    expect((await deliveriesOf(reads.id)).map((d) => d.event_id)).toEqual([readEvent.id]);
    expect(await deliveriesOf(all.id)).toHaveLength(4);

    expect(receiver.received).toHaveLength(5);
    for (const request of receiver.received) {
      expect(request.verified).toBe(true);
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["user-agent"]).toBe("chatapp-otp-api-webhooks/0.1.0");
      expect(request.headers["webhook-timestamp"]).toMatch(/^\d{10}$/);
      const body = JSON.parse(request.body) as EventRecord;
      expect(request.headers["webhook-id"]).toBe(body.id);
      const shown = await call<{ data: EventRecord }>("GET", `/v1/events/${body.id}`, { key });
      expect(shown.status).toBe(200);
      expect(body).toEqual(shown.body.data);
    }
    expect(
      receiver
        .to("all")
        .map((r) => r.headers["webhook-id"])
        .sort(),
    ).toEqual(events.map((e) => e.id).sort());
    expect(receiver.to("reads").map((r) => r.headers["webhook-id"])).toEqual([readEvent.id]);
    for (const row of [...(await deliveriesOf(all.id)), ...(await deliveriesOf(reads.id))])
      expect(row).toMatchObject({
        status: "succeeded",
        attempts: 1,
        last_status_code: 204,
        next_attempt_at: null,
      });

    // A redelivered fan-out message creates nothing and sends nothing more.
    const eventMessages = events.map((e) => ({ kind: "event", eventId: e.id, accountId }));
    const again = recordingEnv();
    expect((await runQueue("chatapp-webhooks", eventMessages, again.env)).explicitAcks).toHaveLength(4);
    expect(again.sent).toEqual([]);
    expect(await deliveriesOf(all.id)).toHaveLength(4);
  });

  it("fans out to no endpoint that is disabled, and not at all for an unknown event", async () => {
    const { key, accountId } = await createAccount();
    const endpoint = await createEndpoint(key, "off", receiver);
    expect(
      (await call("PATCH", `/v1/webhooks/${endpoint.id}`, { key, body: { enabled: false } })).status,
    ).toBe(200);
    const eventId = await seedEvent(accountId);
    const recording = recordingEnv();
    const result = await runQueue(
      "chatapp-webhooks",
      [
        { kind: "event", eventId, accountId },
        { kind: "event", eventId: newEventId(), accountId },
      ],
      recording.env,
    );
    expect(result.explicitAcks).toHaveLength(2);
    expect(recording.sent).toEqual([]);
    expect(await deliveriesOf(endpoint.id)).toEqual([]);
  });
});

describe("at-least-once queue messages never send twice", () => {
  it("sends nothing for a deliver message redelivered after a 2xx", async () => {
    const { endpoint, eventId, message } = await oneDelivery("once");
    expect((await runQueue("chatapp-webhooks", [message])).explicitAcks).toHaveLength(1);
    const redelivered = await runQueue("chatapp-webhooks", [message], env, 2);
    expect(redelivered.explicitAcks).toHaveLength(1);
    expect(redelivered.retryMessages).toEqual([]);
    expect(receiver.to("once")).toHaveLength(1);
    expect(await attemptsOf(endpoint.id, eventId)).toHaveLength(1);
  });

  it("records one first attempt for two copies handled at the same time, and sends a retry once", async () => {
    const { eventId, endpoint, message } = await oneDelivery("twins");
    const answer = (status: number) =>
      receiver.answers.set("twins", async () => {
        await delay(50);
        return new HttpResponse("answer", { status });
      });
    // Before its first attempt is recorded a delivery has no row to claim: both copies send it
    // (at-least-once, one webhook-id), and its one row records one first attempt.
    answer(500);
    const first = await runQueue("chatapp-webhooks", [message, message]);
    expect(first.retryMessages).toHaveLength(2);
    expect(receiver.to("twins")).toHaveLength(2);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { event_id: eventId, status: "pending", attempts: 1, last_status_code: 500 },
    ]);
    expect(await attemptsOf(endpoint.id, eventId)).toHaveLength(1);
    // A retry is claimed first: two copies send it once.
    answer(200);
    await makeDue(endpoint.id, eventId);
    const retried = await runQueue("chatapp-webhooks", [message, message], env, 2);
    expect(retried.explicitAcks).toHaveLength(2);
    expect(receiver.to("twins")).toHaveLength(3);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { event_id: eventId, status: "succeeded", attempts: 2, last_status_code: 200 },
    ]);
  });
});

describe("failed attempts", () => {
  it("retries a 500 after about 5 s, then about 5 min, and records every attempt", async () => {
    const { endpoint, eventId, message } = await oneDelivery("fails");
    receiver.answers.set("fails", () => HttpResponse.json({ error: "boom" }, { status: 500 }));

    const first = await runQueue("chatapp-webhooks", [message]);
    expect(first.explicitAcks).toEqual([]);
    expect(first.retryMessages).toEqual([{ msgId: expect.any(String), delaySeconds: 5 }]);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { status: "pending", attempts: 1, last_status_code: 500, next_attempt_at: expect.any(Number) },
    ]);

    // The retry comes after its 5 s (within the minute a retry may come early).
    const second = await runQueue("chatapp-webhooks", [message], env, 2);
    const wait = second.retryMessages[0]?.delaySeconds ?? 0;
    expect(wait).toBeGreaterThanOrEqual(270);
    expect(wait).toBeLessThanOrEqual(330);
    // A copy arriving minutes before its retry is due is acked without sending.
    const early = await runQueue("chatapp-webhooks", [message], env, 2);
    expect(early.explicitAcks).toHaveLength(1);
    expect(early.retryMessages).toEqual([]);

    const attempts = await attemptsOf(endpoint.id, eventId);
    expect(attempts).toMatchObject([
      { attempt: 1, status_code: 500, response_excerpt: '{"error":"boom"}', error: null },
      { attempt: 2, status_code: 500, response_excerpt: '{"error":"boom"}', error: null },
    ]);
    for (const a of attempts) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    expect(receiver.to("fails")).toHaveLength(2);
    expect(receiver.to("fails").every((r) => r.verified && r.headers["webhook-id"] === eventId)).toBe(true);
  });

  it("keeps only the first 1 KiB of a response body", async () => {
    const { endpoint, eventId, message } = await oneDelivery("long");
    receiver.answers.set("long", () => new HttpResponse("x".repeat(5000), { status: 200 }));
    await runQueue("chatapp-webhooks", [message]);
    const [attempt] = await attemptsOf(endpoint.id, eventId);
    expect(attempt?.response_excerpt).toBe("x".repeat(1024));
    expect(attempt?.status_code).toBe(200);
  });

  it("retries an attempt that timed out, recording the timeout", async () => {
    const { endpoint, eventId, message } = await oneDelivery("slow");
    receiver.answers.set("slow", async () => {
      await delay(2_000);
      return new HttpResponse(null, { status: 204 });
    });
    // The 15 s timeout, shortened for the test.
    const result = await runBatch("chatapp-webhooks", [message], (batch) =>
      handleWebhookBatch(batch, env, { timeoutMs: 100 }),
    );
    expect(result.retryMessages).toEqual([{ msgId: expect.any(String), delaySeconds: 5 }]);
    expect(await attemptsOf(endpoint.id, eventId)).toMatchObject([
      { attempt: 1, status_code: null, response_excerpt: null, error: "timeout: no answer within 100 ms" },
    ]);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([{ status: "pending", last_status_code: null }]);
  });

  it("retries when the receiver cannot be reached", async () => {
    const { endpoint, eventId, message } = await oneDelivery("down");
    receiver.answers.set("down", () => HttpResponse.error());
    const result = await runQueue("chatapp-webhooks", [message]);
    expect(result.retryMessages).toEqual([{ msgId: expect.any(String), delaySeconds: 5 }]);
    const [attempt] = await attemptsOf(endpoint.id, eventId);
    expect(attempt).toMatchObject({ status_code: null });
    expect(attempt?.error).toEqual(expect.any(String));
  });

  it("waits at least as long as a 429's Retry-After", async () => {
    const { message } = await oneDelivery("busy");
    receiver.answers.set(
      "busy",
      () => new HttpResponse("slow down", { status: 429, headers: { "Retry-After": "120" } }),
    );
    const result = await runQueue("chatapp-webhooks", [message]);
    expect(result.retryMessages[0]?.delaySeconds).toBeGreaterThanOrEqual(120);
    expect(result.retryMessages[0]?.delaySeconds).toBeLessThanOrEqual(132);
  });

  it("disables the endpoint at once on 410 Gone, without a retry", async () => {
    const { key, endpoint, eventId, message } = await oneDelivery("gone");
    receiver.answers.set("gone", () => new HttpResponse("gone", { status: 410 }));
    const result = await runQueue("chatapp-webhooks", [message]);
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { event_id: eventId, status: "failed", attempts: 1, last_status_code: 410, next_attempt_at: null },
    ]);
    const shown = await call<{ data: { enabled: boolean; disabled_reason: string | null } }>(
      "GET",
      `/v1/webhooks/${endpoint.id}`,
      { key },
    );
    expect(shown.body.data).toMatchObject({ enabled: false, disabled_reason: "gone" });
  });

  it("fails the delivery after 8 attempts, without a further retry", async () => {
    const { endpoint, eventId, message } = await oneDelivery("never");
    receiver.answers.set("never", () => new HttpResponse("no", { status: 503 }));
    const waits: number[] = [];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await makeDue(endpoint.id, eventId);
      const result = await runQueue("chatapp-webhooks", [message], env, attempt);
      if (attempt < MAX_ATTEMPTS) waits.push(result.retryMessages[0]?.delaySeconds ?? 0);
      else {
        expect(result.retryMessages).toEqual([]);
        expect(result.explicitAcks).toHaveLength(1);
      }
    }
    expect(waits).toHaveLength(7);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { status: "failed", attempts: 8, last_status_code: 503, next_attempt_at: null },
    ]);
    expect(await attemptsOf(endpoint.id, eventId)).toHaveLength(8);
    expect(receiver.to("never")).toHaveLength(8);
    // A redelivered copy of a failed delivery sends nothing.
    await runQueue("chatapp-webhooks", [message], env, 9);
    expect(receiver.to("never")).toHaveLength(8);
  });

  it("disables an endpoint whose deliveries have all failed for 5 days", async () => {
    const { accountId, endpoint, eventId, message } = await oneDelivery("failing");
    // An older delivery of the same run that failed 6 days ago.
    const old = await seedEvent(accountId, Date.now() - 6 * DAY_MS);
    await insertDelivery({
      endpointId: endpoint.id,
      eventId: old,
      status: "failed",
      attempts: 8,
      updatedAt: Date.now() - DAY_MS,
    });
    receiver.answers.set("failing", () => new HttpResponse(null, { status: 500 }));
    await runQueue("chatapp-webhooks", [message]);
    expect(await endpointRow(endpoint.id)).toEqual({ enabled: 0, disabled_reason: "failing" });
    // Its pending delivery is not sent again while the endpoint is off.
    await makeDue(endpoint.id, eventId);
    expect((await runQueue("chatapp-webhooks", [message], env, 2)).explicitAcks).toHaveLength(1);
    expect(receiver.to("failing")).toHaveLength(1);
  });

  it("keeps an endpoint that succeeded within 5 days on", async () => {
    const { accountId, endpoint, message } = await oneDelivery("flaky");
    const old = await seedEvent(accountId, Date.now() - 6 * DAY_MS);
    const recent = await seedEvent(accountId, Date.now() - DAY_MS);
    // Each delivery made at its event's time.
    for (const [eventId, status] of [
      [old, "failed"],
      [recent, "succeeded"],
    ] as const)
      await insertDelivery({ endpointId: endpoint.id, eventId, status, attempts: 1 });
    receiver.answers.set("flaky", () => new HttpResponse(null, { status: 500 }));
    await runQueue("chatapp-webhooks", [message]);
    expect(await endpointRow(endpoint.id)).toEqual({ enabled: 1, disabled_reason: null });
  });
});

describe("secret rotation", () => {
  it("signs with both the new and the previous secret while the previous one lasts", async () => {
    const { key, endpoint, message } = await oneDelivery("rotated");
    const rotated = await call<{ data: { secret: string } }>(
      "POST",
      `/v1/webhooks/${endpoint.id}/rotate-secret`,
      {
        key,
        body: { expires_in_seconds: 3600 },
      },
    );
    expect(rotated.status).toBe(200);
    const secret = rotated.body.data.secret;
    receiver.secrets.set("rotated", secret);
    await runQueue("chatapp-webhooks", [message]);

    const [request] = receiver.to("rotated");
    expect(request?.verified).toBe(true);
    const signatures = request!.headers["webhook-signature"]!.split(" ");
    expect(signatures).toHaveLength(2);
    for (const [i, s] of [secret, endpoint.secret].entries()) {
      const only = { ...request!.headers, "webhook-signature": signatures[i]! };
      expect(() => new Webhook(s).verify(request!.body, only)).not.toThrow();
    }
    expect(() =>
      new Webhook(endpoint.secret).verify(request!.body, {
        ...request!.headers,
        "webhook-signature": signatures[0]!,
      }),
    ).toThrow();
  });

  it("signs with the new secret only once the previous one expired", async () => {
    const { key, endpoint, message } = await oneDelivery("expired");
    const rotated = await call<{ data: { secret: string } }>(
      "POST",
      `/v1/webhooks/${endpoint.id}/rotate-secret`,
      {
        key,
        body: { expires_in_seconds: 0 },
      },
    );
    receiver.secrets.set("expired", rotated.body.data.secret);
    await runQueue("chatapp-webhooks", [message]);
    const [request] = receiver.to("expired");
    expect(request?.verified).toBe(true);
    expect(request!.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
  });
});

describe("endpoints made before secrets were sealed", () => {
  it("sign as before with their secrets in clear, and the hourly sweep seals them, signatures unchanged", async () => {
    const { key, accountId, endpoint, eventId, message } = await oneDelivery("legacy");
    const d1 = await accountD1(accountId);
    // The row as an older release stored it (migration 0036 gave it its prefix): both secrets in clear.
    const previous = `whsec_${btoa("p".repeat(32))}`;
    await d1
      .prepare(
        "UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_secret_expires_at = ? WHERE id = ?",
      )
      .bind(endpoint.secret, previous, Date.now() + 3_600_000, endpoint.id)
      .run();
    const expectSignedByBoth = (request: (typeof receiver.received)[number] | undefined) => {
      expect(request?.verified).toBe(true);
      const signatures = request!.headers["webhook-signature"]!.split(" ");
      expect(signatures).toHaveLength(2);
      for (const [i, s] of [endpoint.secret, previous].entries()) {
        const only = { ...request!.headers, "webhook-signature": signatures[i]! };
        expect(() => new Webhook(s).verify(request!.body, only)).not.toThrow();
      }
    };
    await runQueue("chatapp-webhooks", [message]);
    expect(receiver.to("legacy")).toHaveLength(1);
    expectSignedByBoth(receiver.to("legacy")[0]);

    await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env);
    const stored = await d1
      .prepare("SELECT secret, secret_prefix, previous_secret FROM webhook_endpoints WHERE id = ?")
      .bind(endpoint.id)
      .first<{ secret: string; secret_prefix: string; previous_secret: string }>();
    expect(stored?.secret).toMatch(/^v1\./);
    expect(stored?.previous_secret).toMatch(/^v1\./);
    expect(stored?.secret_prefix).toBe(endpoint.secret.slice(0, 14));
    expect(JSON.stringify(stored)).not.toContain(endpoint.secret.slice(6));
    expect(JSON.stringify(stored)).not.toContain(previous.slice(6));

    // Sealed, the same secrets sign the next attempt.
    const retried = await call("POST", `/v1/webhooks/${endpoint.id}/deliveries/${eventId}/retry`, { key });
    expect(retried.status).toBe(200);
    expect(receiver.to("legacy")).toHaveLength(2);
    expectSignedByBoth(receiver.to("legacy")[1]);
  });
});

describe("dead letters and poison messages", () => {
  it("marks the deliveries of dead-lettered messages failed", async () => {
    const { endpoint, eventId, message, accountId } = await oneDelivery("dead");
    const result = await runQueue(
      "chatapp-webhooks-dlq",
      [message, { kind: "event", eventId, accountId }],
      env,
      11,
    );
    expect(result.explicitAcks).toHaveLength(2);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { event_id: eventId, status: "failed", attempts: 0 },
    ]);
    expect(receiver.received).toEqual([]);
  });

  it("acks poison messages instead of retrying them forever", async () => {
    for (const queue of ["chatapp-webhooks", "chatapp-webhooks-dlq"]) {
      const result = await runQueue(queue, [
        { kind: "deliver", eventId: "nope" },
        { kind: "event", eventId: newEventId() },
        "text",
      ]);
      expect(result.explicitAcks).toHaveLength(3);
      expect(result.retryMessages).toEqual([]);
    }
  });
});

describe("retry schedule", () => {
  it("follows the Standard Webhooks schedule, ±10%, for 8 attempts", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelaySeconds(n, mid))).toEqual([
      5,
      300,
      1_800,
      7_200,
      18_000,
      36_000,
      36_000,
      null,
    ]);
    expect(retryDelaySeconds(2, () => 0)).toBe(270);
    expect(retryDelaySeconds(2, () => 0.999_999)).toBe(330);
    expect(retryDelaySeconds(9, mid)).toBeNull();
  });

  it("honours a longer Retry-After, capped at 12 hours", () => {
    const mid = () => 0.5;
    expect(retryDelaySeconds(1, mid, 120)).toBe(120);
    expect(retryDelaySeconds(3, mid, 120)).toBe(1_800);
    expect(retryDelaySeconds(1, mid, 100_000)).toBe(43_200);
    expect(retryDelaySeconds(8, mid, 120)).toBeNull();
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-23T10:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120);
    expect(parseRetryAfter("Mon, 23 Nov 2026 10:02:00 GMT", now)).toBe(120);
    expect(parseRetryAfter("Mon, 23 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});
