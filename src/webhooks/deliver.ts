import { DEFAULT_GATEWAY, type GatewayKind } from "../config";
import type { Db } from "../db/client";
import {
  claimAttempt,
  type DeliveryOutcome,
  failPendingDeliveries,
  recordAttempt,
} from "../db/queries/webhook-deliveries";
import { disableEndpoint, disableEndpointIfFailing } from "../db/queries/webhook-endpoints";
import { toEventRecord } from "../presenters/event";
import { acknowledged, DELIVERY_TIMEOUT_MS, postEvent, RESPONSE_EXCERPT_BYTES } from "./post";
import type { DeliverMessage } from "./queue-messages";
import { parseRetryAfter, retryDelaySeconds } from "./schedule";
import { withOpenSecrets } from "./secret";

/** An endpoint whose deliveries have all failed this long (5 days) is turned off as `failing`. */
export const FAILING_WINDOW_MS = 5 * 24 * 3_600_000;

/**
 * How early (60 s) a retry may arrive before its `next_attempt_at` and still run: Queues start a
 * delay after the batch returns, so a retry comes late, but the clocks of two machines may differ.
 */
export const EARLY_TOLERANCE_MS = 60_000;
/**
 * How long (2 min) a claimed attempt holds its delivery: a copy of the queue message arriving
 * meanwhile finds the attempt not due and is acked. Longer than a timeout plus the tolerance.
 */
export const CLAIM_LEASE_MS = 120_000;

/** What the caller injects; the defaults are the real ones. */
export interface DeliveryOptions {
  /** Epoch ms. */
  now?: () => number;
  /** In [0, 1), for the retry jitter. */
  random?: () => number;
  timeoutMs?: number;
  /**
   * The deployment's `CHATAPP_GATEWAY`, for a session event snapshot taken before sessions chose
   * their gateway (src/presenters/event.ts); default `sandbox`, the variable's own default.
   */
  defaultGateway?: GatewayKind;
}

/** What the queue should do with the message after an attempt: ack it, or retry it after a wait. */
export type DeliveryResult = { retryDelaySeconds: number } | null;

/**
 * Makes one attempt of the delivery `message` names: POSTs the event as
 * `{ id, type, created_at, data }` (src/presenters/event.ts) to the endpoint with
 * {@link postEvent}, signed with `webhook-id` = the event id on every attempt, so receivers can
 * dedupe on it (Standard Webhooks spec, "Idempotency").
 *
 * - Nothing is sent unless the delivery is `pending` (or has no row yet) and its endpoint exists
 *   and is enabled (a delivery whose endpoint is off or gone, or whose event was purged, becomes
 *   `failed`). A delivery's first attempt writes its row, with the outcome, after the POST
 *   (D1 is written once for a delivery that succeeds at once; docs/webhooks.md, Webhooks); every later one
 *   is claimed first ({@link claimAttempt}) when it is due (at most {@link EARLY_TOLERANCE_MS}
 *   early): two copies of one queue message never send a retry at once, a copy that arrives after
 *   a 2xx sends nothing, and one that comes before the scheduled retry is acked, as the retried
 *   message itself will come. Two copies arriving together before the first attempt is recorded
 *   may both send it (at-least-once; the same `webhook-id`), and one row records it.
 * - A 2xx within {@link DELIVERY_TIMEOUT_MS} → `succeeded`. 410 Gone → the endpoint is turned off
 *   (`disabled_reason` `gone`) and the delivery `failed` (Standard Webhooks spec, "Disabling
 *   failing endpoints"). Anything else (another status, a timeout, no answer) is retried after
 *   {@link retryDelaySeconds} (the spec's schedule, honouring `Retry-After` on 429 and 503), or
 *   `failed` after the last attempt; the endpoint is then turned off as `failing` when
 *   {@link disableEndpointIfFailing} finds it failing for {@link FAILING_WINDOW_MS}.
 * - Every attempt is recorded (status or null, duration in ms, the first
 *   {@link RESPONSE_EXCERPT_BYTES} of the body, the error), with the delivery's new state.
 * - The endpoint's secrets are opened from `env` for the signature (secret.ts `withOpenSecrets`).
 *
 * @returns null to ack the queue message, or the delay before the next attempt (whole seconds).
 * @throws on D1 errors, or a secret that does not open (the caller retries the message; the claim
 *   keeps attempts in order).
 */
export async function deliverOnce(
  env: Env,
  db: Db,
  message: DeliverMessage,
  options: DeliveryOptions = {},
): Promise<DeliveryResult> {
  const now = options.now ?? Date.now;
  const key = { endpointId: message.endpointId, eventId: message.eventId };
  const startedAt = now();
  const { attempt: claimed, context } = await claimAttempt(
    db,
    key,
    startedAt,
    EARLY_TOLERANCE_MS,
    startedAt + CLAIM_LEASE_MS,
  );
  const { delivery, endpoint, event } = context;
  // A delivery with no row has had no attempt: this is its first, unclaimed (recordAttempt
  // writes the row).
  const attempt = delivery === null && endpoint?.enabled && event ? 1 : claimed;
  if (attempt === null || !endpoint || !event) {
    // Not claimed: sent already, not due, or a delivery whose endpoint is off or gone or whose
    // event was purged, which cannot succeed.
    if ((delivery === null || delivery.status === "pending") && (!endpoint?.enabled || !event))
      await failPendingDeliveries(db, [key], now());
    return null;
  }

  const answer = await postEvent(
    await withOpenSecrets(env, endpoint),
    event.id,
    JSON.stringify(toEventRecord(event, options.defaultGateway ?? DEFAULT_GATEWAY)),
    startedAt,
    {
      now,
      timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    },
  );
  const finishedAt = startedAt + answer.durationMs;
  const code = answer.statusCode;

  let outcome: DeliveryOutcome;
  let delay: number | null = null;
  if (acknowledged(answer)) outcome = { status: "succeeded", nextAttemptAt: null };
  else if (code === 410) outcome = { status: "failed", nextAttemptAt: null };
  else {
    const retryAfter = code === 429 || code === 503 ? parseRetryAfter(answer.retryAfter, finishedAt) : null;
    delay = retryDelaySeconds(attempt, options.random ?? Math.random, retryAfter);
    outcome =
      delay === null
        ? { status: "failed", nextAttemptAt: null }
        : { status: "pending", nextAttemptAt: finishedAt + delay * 1000 };
  }
  await recordAttempt(
    db,
    key,
    {
      attempt,
      attemptedAt: startedAt,
      statusCode: code,
      durationMs: answer.durationMs,
      responseExcerpt: answer.excerpt,
      error: answer.error,
    },
    outcome,
  );
  if (code === 410) await disableEndpoint(db, endpoint.id, "gone", finishedAt);
  else if (outcome.status !== "succeeded")
    await disableEndpointIfFailing(db, endpoint.id, "failing", FAILING_WINDOW_MS, finishedAt);
  return delay === null ? null : { retryDelaySeconds: delay };
}
