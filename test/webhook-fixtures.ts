import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { HttpResponse, http } from "msw";
import { Webhook } from "standardwebhooks";
import { beforeAll, beforeEach, expect } from "vitest";
import { eventColumns, eventTypeCode } from "../src/db/queries/events";
import { events } from "../src/db/schema";
import { newEventId } from "../src/events/record";
import worker from "../src/index";
import { accountDb, everyAccountD1 } from "./databases";
import { insertEvent } from "./event-fixtures";
import { call, createAccount } from "./helpers";
import { connectedSession, sendText, waitForMessages } from "./message-fixtures";
import { network, useNetwork } from "./network";

// The webhook tests' parts: a fake receiver at the HTTP boundary that verifies every signature
// with `standardwebhooks`' own `verify`, queue batches run through the real Worker handler, and
// seeded events and deliveries. A test file sets them up with `useWebhookReceiver()`.

export const RECEIVER = "https://receiver.example";
export const DAY_MS = 24 * 3_600_000;

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Whether `standardwebhooks`' `verify` accepted it with the endpoint's current secret. */
  verified: boolean;
}

type Answer = (n: number) => Response | Promise<Response>;

/**
 * The fake receiver at the HTTP boundary: one endpoint per path, each answering with its
 * `answer` (given the 1-based number of the request to that path; 204 by default) and checking
 * every request's signature with `standardwebhooks`' own `verify` and the secret it was given.
 */
export class Receiver {
  readonly received: Received[] = [];
  readonly secrets = new Map<string, string>();
  readonly answers = new Map<string, Answer>();

  /** Forgets what it received and was told, and answers again on the (reset) test network. */
  reset(): this {
    this.received.length = 0;
    this.secrets.clear();
    this.answers.clear();
    return this.install();
  }

  install(): this {
    network.use(
      http.post(`${RECEIVER}/:path`, async ({ request, params }) => {
        const path = String(params.path);
        const body = await request.text();
        const headers = Object.fromEntries(request.headers);
        let verified = false;
        try {
          new Webhook(this.secrets.get(path) ?? "").verify(body, headers);
          verified = true;
        } catch {}
        this.received.push({ path, headers, body, verified });
        const answer = this.answers.get(path) ?? (() => new HttpResponse(null, { status: 204 }));
        return answer(this.received.filter((r) => r.path === path).length);
      }),
    );
    return this;
  }

  to(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }
}

/** Messages the fan-out put on WEBHOOK_QUEUE, read from a stand-in for the binding. */
export function recordingEnv(): { env: Env; sent: unknown[] } {
  const sent: unknown[] = [];
  const queue = {
    send: async (body: unknown) => {
      sent.push(body);
    },
    sendBatch: async (messages: Iterable<MessageSendRequest>) => {
      for (const m of messages) sent.push(m.body);
    },
  };
  return { env: { ...env, WEBHOOK_QUEUE: queue as unknown as Queue }, sent };
}

let batchCounter = 0;

/**
 * Runs `handle` on `bodies` as one batch of `queue`; returns the acks and the retries with their
 * `delaySeconds` (`getQueueResult` lists retried message ids only, so the options are caught on
 * each message's `retry`).
 */
export async function runBatch(
  queue: string,
  bodies: unknown[],
  handle: (batch: MessageBatch<unknown>) => Promise<void>,
  attempts = 1,
) {
  const batch = createMessageBatch(
    queue,
    bodies.map((body) => ({ id: `m-${++batchCounter}`, timestamp: new Date(), attempts, body })),
  );
  const delays = new Map<string, number | undefined>();
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    message.retry = (options?: QueueRetryOptions) => {
      delays.set(message.id, options?.delaySeconds);
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await handle(batch);
  const result = await getQueueResult(batch, ctx);
  return {
    explicitAcks: result.explicitAcks,
    retryMessages: result.retryMessages.map((r) => ({ msgId: r.msgId, delaySeconds: delays.get(r.msgId) })),
  };
}

/** Runs the Worker's queue handler on `bodies` as one batch of `queue`. */
export function runQueue(queue: string, bodies: unknown[], workerEnv: Env = env, attempts = 1) {
  return runBatch(queue, bodies, (batch) => worker.queue(batch, workerEnv), attempts);
}

export async function createEndpoint(
  key: string,
  path: string,
  receiver: Receiver,
  events: string[] | null = null,
): Promise<{ id: string; secret: string }> {
  const res = await call<{ data: { id: string; secret: string } }>("POST", "/v1/webhooks", {
    key,
    body: { url: `${RECEIVER}/${path}`, events },
  });
  expect(res.status).toBe(201);
  receiver.secrets.set(path, res.body.data.secret);
  return res.body.data;
}

// Deliveries are stored small (src/db/schema/events.ts `webhookDeliveries`): keyed by the
// endpoint's number and the event id's 16 bytes, the status as 0/1/2, the first attempt in the
// delivery's row. These read and write them in the shapes the tests speak.

/** A delivery's key in SQL, bound to an endpoint uuid and an `evt_…` id. */
export const DELIVERY_KEY =
  "endpoint_number = (SELECT number FROM webhook_endpoints WHERE id = ?) AND event_id = unhex(substr(?, 5))";
const STATUS_NAME = "CASE d.status WHEN 0 THEN 'pending' WHEN 1 THEN 'succeeded' ELSE 'failed' END";
export const STATUS_CODE = { pending: 0, succeeded: 1, failed: 2 } as const;

/**
 * The account database holding webhook endpoint `endpointId`: an endpoint's id names no account,
 * so each account database is asked; exactly one must hold it.
 */
async function endpointD1(endpointId: string): Promise<D1Database> {
  const holding: D1Database[] = [];
  for (const d1 of everyAccountD1())
    if (await d1.prepare("SELECT 1 FROM webhook_endpoints WHERE id = ?").bind(endpointId).first())
      holding.push(d1);
  const [d1] = holding;
  if (!d1 || holding.length > 1)
    throw new Error(`webhook endpoint ${endpointId} is in ${holding.length} account databases, not one`);
  return d1;
}

export interface DeliveryRow {
  endpoint_id: string;
  event_id: string;
  status: string;
  attempts: number;
  /** The HTTP status of the latest attempt recorded (null without an answer or an attempt). */
  last_status_code: number | null;
  next_attempt_at: number | null;
}

export async function deliveriesOf(endpointId: string): Promise<DeliveryRow[]> {
  const { results } = await (await endpointD1(endpointId))
    .prepare(
      `SELECT w.id AS endpoint_id, 'evt_' || lower(hex(d.event_id)) AS event_id, ${STATUS_NAME} AS status,
       d.attempts, CASE WHEN a.attempt IS NULL THEN d.first_status_code ELSE a.status_code END AS last_status_code,
       d.next_attempt_at
     FROM webhook_deliveries d JOIN webhook_endpoints w ON w.number = d.endpoint_number
     LEFT JOIN webhook_attempts a ON a.endpoint_number = d.endpoint_number AND a.event_id = d.event_id
       AND a.attempt = (SELECT max(attempt) FROM webhook_attempts b WHERE b.endpoint_number = d.endpoint_number AND b.event_id = d.event_id)
     WHERE w.id = ? ORDER BY d.created_at, d.event_id`,
    )
    .bind(endpointId)
    .all<DeliveryRow>();
  return results;
}

/** Every attempt of a delivery as stored, oldest first: the first from its row, the rest from webhook_attempts. */
export async function attemptsOf(endpointId: string, eventId: string) {
  const { results } = await (await endpointD1(endpointId))
    .prepare(
      `SELECT 1 AS attempt, first_status_code AS status_code, first_duration_ms AS duration_ms,
       first_response_excerpt AS response_excerpt, first_error AS error
     FROM webhook_deliveries WHERE ${DELIVERY_KEY} AND first_attempt_after_ms IS NOT NULL
     UNION ALL
     SELECT attempt, status_code, duration_ms, response_excerpt, error FROM webhook_attempts WHERE ${DELIVERY_KEY}
     ORDER BY attempt`,
    )
    .bind(endpointId, eventId, endpointId, eventId)
    .all<{
      attempt: number;
      status_code: number | null;
      duration_ms: number;
      response_excerpt: string | null;
      error: string | null;
    }>();
  return results;
}

/**
 * A delivery as a test seeds it: its `created_at` is its event's time (src/db/schema/events.ts
 * `webhookDeliveries`), `updatedAt` (epoch ms) defaults to it.
 */
export interface SeededDelivery {
  endpointId: string;
  eventId: string;
  status: keyof typeof STATUS_CODE;
  attempts: number;
  updatedAt?: number;
  nextAttemptAt?: number | null;
  type?: string;
}

/** Inserts a delivery without attempt records, as the fan-out and later moves would leave it. */
export async function insertDelivery(delivery: SeededDelivery): Promise<void> {
  const type = delivery.type ?? "message.sent";
  await (await endpointD1(delivery.endpointId))
    .prepare(
      `INSERT INTO webhook_deliveries (endpoint_number, created_at, event_id, event_type_code, status, attempts, next_attempt_at, updated_after_ms)
     SELECT w.number, e.created_at, e.id, ?, ?, ?, ?, coalesce(? - e.created_at, 0)
     FROM webhook_endpoints w JOIN events e ON e.id = unhex(substr(?, 5)) WHERE w.id = ?`,
    )
    .bind(
      eventTypeCode(type),
      STATUS_CODE[delivery.status],
      delivery.attempts,
      delivery.nextAttemptAt ?? null,
      delivery.updatedAt ?? null,
      delivery.eventId,
      delivery.endpointId,
    )
    .run();
}

export async function endpointRow(id: string) {
  return (await endpointD1(id))
    .prepare("SELECT enabled, disabled_reason FROM webhook_endpoints WHERE id = ?")
    .bind(id)
    .first<{ enabled: number; disabled_reason: string | null }>();
}

/** The wait before a scheduled retry has passed (tests own the clock). */
export async function makeDue(endpointId: string, eventId: string): Promise<void> {
  await (await endpointD1(endpointId))
    .prepare(`UPDATE webhook_deliveries SET next_attempt_at = 0 WHERE ${DELIVERY_KEY}`)
    .bind(endpointId, eventId)
    .run();
}

/** A real event of the sandbox (a message's `message.sent`), copied as a fresh event of `accountId`. */
let template: { type: string; snapshot: string };

export async function seedEvent(accountId: string, createdAt = Date.now()): Promise<string> {
  const id = newEventId();
  await insertEvent({ id, accountId, type: template.type, snapshot: template.snapshot, createdAt });
  return id;
}

export interface EventRecord {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** Makes the event that {@link seedEvent} copies: a real `message.sent` of the sandbox. */
export async function loadEventTemplate(): Promise<void> {
  const { key, accountId } = await createAccount(10);
  const session = await connectedSession(key);
  const res = await sendText(key, session.id, ["+14155552671"], { delay_between: 0 });
  await waitForMessages(key, [res.body.data.messages[0]!.id]);
  // As the event renders (src/db/queries/events.ts `eventColumns`): the message whole, so that
  // the copy stands alone, as events stored before they pointed at their message do.
  const [row] = await (await accountDb(accountId))
    .select(eventColumns())
    .from(events)
    .where(eq(events.typeCode, eventTypeCode("message.sent")))
    .limit(1);
  template = { type: row!.type, snapshot: row!.snapshot };
}

/** Creates an account with one endpoint and one event, fanned out; returns what the deliver needs. */
export async function oneDelivery(receiver: Receiver, path: string) {
  const { key, accountId } = await createAccount();
  const endpoint = await createEndpoint(key, path, receiver);
  const eventId = await seedEvent(accountId);
  const recording = recordingEnv();
  const fanned = await runQueue("chatapp-webhooks", [{ kind: "event", eventId, accountId }], recording.env);
  expect(fanned.explicitAcks).toHaveLength(1);
  expect(recording.sent).toEqual([{ kind: "deliver", eventId, endpointId: endpoint.id, accountId }]);
  return { key, accountId, endpoint, eventId, message: recording.sent[0] };
}

/**
 * Sets up a webhook test file: the fake network, the event template {@link seedEvent} copies,
 * and one {@link Receiver}, emptied and installed again before each test.
 */
export function useWebhookReceiver(): Receiver {
  useNetwork();
  const receiver = new Receiver();
  beforeAll(loadEventTemplate);
  beforeEach(() => {
    receiver.reset();
  });
  return receiver;
}
