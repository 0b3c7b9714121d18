import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { accountD1 } from "./databases";
import { call, createAccount, waitFor } from "./helpers";
import { connectedSession, sendText, waitForMessages } from "./message-fixtures";
import { network, useNetwork } from "./network";
import { DELIVERY_KEY, deliveriesOf } from "./webhook-fixtures";

// The whole path with the real queues: a message's change commits with its event, the event is
// published, fanned out to the endpoint and delivered, signed; a receiver at the HTTP boundary
// checks every signature with the `standardwebhooks` package's own `verify`.

useNetwork();

const RECEIVER = "https://receiver.example/e2e";

interface Delivered {
  id: string;
  type: string;
  verified: boolean;
  data: { id: string; status: string };
}

/** A receiver answering 204, keeping what it got and whether the signature verified. */
function receiver(secret: () => string): Delivered[] {
  const got: Delivered[] = [];
  network.use(
    http.post(RECEIVER, async ({ request }) => {
      const body = await request.text();
      let verified = false;
      try {
        new Webhook(secret()).verify(body, Object.fromEntries(request.headers));
        verified = true;
      } catch {}
      const event = JSON.parse(body) as Omit<Delivered, "verified">;
      got.push({ ...event, verified });
      expect(request.headers.get("webhook-id")).toBe(event.id);
      return new HttpResponse(null, { status: 204 });
    }),
  );
  return got;
}

async function until(done: () => boolean, what: string): Promise<void> {
  await waitFor(done, {
    reason: `${what} (the webhook queue, which the runtime delivers)`,
    timeoutMs: 7_500,
  });
}

async function endpointFor(key: string) {
  const res = await call<{ data: { id: string; secret: string } }>("POST", "/v1/webhooks", {
    key,
    body: {
      url: RECEIVER,
      events: ["message.sent", "message.delivered", "message.read", "message.received"],
    },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

/**
 * An account with a session and an endpoint on the receiver, and one text message to `to`
 * delivered as far as its three webhook deliveries (sent, delivered, read).
 */
async function deliveredMessage(to: string) {
  const { key, accountId } = await createAccount(1);
  let secret = "";
  const got = receiver(() => secret);
  const session = (await connectedSession(key)).id;
  const endpoint = await endpointFor(key);
  secret = endpoint.secret;
  const id = (await sendText(key, session, [to])).body.data.messages[0]!.id;
  await waitForMessages(key, [id], (m) => m.status === "read");
  await until(() => got.filter((e) => e.data.id === id).length >= 3, "three deliveries");
  return { key, accountId, session, endpoint, got, id };
}

describe("webhooks, end to end", () => {
  it("delivers message.sent, .delivered and .read once each, signed, with the events' ids", async () => {
    const { key, session, got, id } = await deliveredMessage("+14155552671");
    // A later event to the same endpoint: the local queue hands the consumer one batch at a time,
    // oldest first, and every delivery takes a second queue message after its event's. A second
    // delivery of the three, queued when they were, reaches the receiver before this one does.
    const inbound = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
      key,
      body: { from_number: "+14155552699", type: "text", content: "later" },
    });
    expect(inbound.status).toBe(201);
    await until(() => got.some((e) => e.data.id === inbound.body.data.id), "the later delivery");

    const mine = got.filter((e) => e.data.id === id);
    expect(mine.map((e) => [e.type, e.data.status, e.verified])).toEqual([
      ["message.sent", "sent", true],
      ["message.delivered", "delivered", true],
      ["message.read", "read", true],
    ]);
    const listed = await call<{ data: { id: string; data: { id: string } }[] }>(
      "GET",
      "/v1/events?limit=100",
      { key },
    );
    const ids = listed.body.data.filter((e) => e.data.id === id).map((e) => e.id);
    expect(mine.map((e) => e.id).sort()).toEqual([...ids].sort());
  });

  it("publishes again, from the hourly sweep, an event whose fan-out never happened", async () => {
    const { accountId, endpoint, got, id } = await deliveredMessage("+14155552672");

    // As if the sent event's queue message had been lost: no delivery, and old enough to sweep.
    const sent = got.find((e) => e.data.id === id && e.type === "message.sent");
    const tenMinutesAgo = Date.now() - 10 * 60_000;
    const d1 = await accountD1(accountId);
    await d1.batch([
      d1.prepare(`DELETE FROM webhook_deliveries WHERE ${DELIVERY_KEY}`).bind(endpoint.id, sent?.id),
      d1
        .prepare("UPDATE events SET created_at = ? WHERE id = unhex(substr(?, 5))")
        .bind(tenMinutesAgo, sent?.id),
      d1
        .prepare("UPDATE webhook_endpoints SET created_at = ? WHERE id = ?")
        .bind(tenMinutesAgo - 1, endpoint.id),
    ]);
    await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env);
    await until(() => got.filter((e) => e.id === sent?.id).length === 2, "the swept event");
    const delivery = (await deliveriesOf(endpoint.id)).find((row) => row.event_id === sent?.id);
    expect(delivery?.status).toBe("succeeded");
  });
});

describe("delivery history", () => {
  it("keeps finished deliveries with their attempts 30 days: the hourly sweep deletes older ones", async () => {
    const { accountId, endpoint, got, id } = await deliveredMessage("+14155552673");
    const d1 = await accountD1(accountId);
    const ofEndpoint = "endpoint_number = (SELECT number FROM webhook_endpoints WHERE id = ?)";
    const count = async (table: string, where = "true") =>
      (
        await d1
          .prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${ofEndpoint} AND ${where}`)
          .bind(endpoint.id)
          .first<{ n: number }>()
      )?.n;
    // The consumer records each delivery's attempt once its receiver answered: each succeeded at
    // once, so its row holds that attempt and webhook_attempts has none.
    await waitFor(
      async () => {
        expect([
          await count("webhook_deliveries", "first_attempt_after_ms IS NOT NULL"),
          await count("webhook_attempts"),
        ]).toEqual([3, 0]);
        return true;
      },
      { reason: "the webhook consumer to record its three deliveries", timeoutMs: 5_000 },
    );

    // One delivery made and last changed 31 days ago, with a later attempt; one made then but
    // changed (retried through the API) 29 days ago, which stays with its attempts.
    const day = 24 * 3600_000;
    const [first, second] = got.filter((e) => e.data.id === id);
    const age = (eventId: string | undefined, made: number, changed: number) => [
      d1
        .prepare(
          `UPDATE webhook_deliveries SET created_at = ?, updated_after_ms = ?, first_attempt_after_ms = 0 WHERE ${DELIVERY_KEY}`,
        )
        .bind(Date.now() - made * day, (made - changed) * day, endpoint.id, eventId),
      d1
        .prepare(
          `INSERT INTO webhook_attempts (endpoint_number, event_id, attempt, created_at, attempted_at, status_code, duration_ms)
         SELECT endpoint_number, event_id, 2, created_at, ?, 200, 5 FROM webhook_deliveries WHERE ${DELIVERY_KEY}`,
        )
        .bind(Date.now() - changed * day, endpoint.id, eventId),
    ];
    await d1.batch([...age(first?.id, 31, 31), ...age(second?.id, 31, 29)]);
    expect([await count("webhook_deliveries"), await count("webhook_attempts")]).toEqual([3, 2]);
    await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env);
    expect([await count("webhook_deliveries"), await count("webhook_attempts")]).toEqual([2, 1]);
    expect((await deliveriesOf(endpoint.id)).map((row) => row.event_id)).not.toContain(first?.id);
  });
});
