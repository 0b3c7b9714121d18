import type { Db } from "../db/client";
import { type DeliveryKey, reopenDelivery, reopenFailedDeliveries } from "../db/queries/webhook-deliveries";
import { log } from "../lib/log";
import { sendInBatches } from "../lib/queue";
import { type DeliveryOptions, deliverOnce } from "./deliver";
import type { DeliverMessage } from "./queue-messages";

/**
 * Re-sends the account's delivery `key` now, in the caller's request: the delivery is reopened
 * ({@link reopenDelivery}) and one attempt is made at once ({@link deliverOnce}, with its claim, so
 * an attempt already under way is not doubled by a queue copy). When that attempt fails and the
 * schedule has a retry left, the retry's message goes on `queue` with its wait; if that send fails,
 * the hourly sweep (src/webhooks/sweep.ts) sends it once it is overdue.
 * The caller has checked that the endpoint is the account's and enabled.
 *
 * @returns false when the account has no such delivery.
 * @throws on D1 errors.
 */
export async function resendNow(
  env: Env,
  db: Db,
  queue: Queue,
  accountId: string,
  key: DeliveryKey,
  options: DeliveryOptions = {},
): Promise<boolean> {
  const now = options.now ?? Date.now;
  if (!(await reopenDelivery(db, accountId, key, now()))) return false;
  const message: DeliverMessage = { kind: "deliver", ...key, accountId };
  const result = await deliverOnce(env, db, message, options);
  if (result !== null) {
    // If this send fails, the delivery is pending with its next attempt set: the sweep sends it.
    await queue
      .send(message, { contentType: "json", delaySeconds: result.retryDelaySeconds })
      .catch((error: unknown) => log.error("webhook_retry_not_queued", { ...key, error }));
  }
  return true;
}

/** Most failed deliveries one recover call reopens (10,000); a call that reopens this many may be repeated. */
export const RECOVER_LIMIT = 10_000;

/**
 * Re-sends the `failed` deliveries of the account's endpoint `endpointId` whose event came at or
 * after `since` (epoch ms), at most {@link RECOVER_LIMIT} (`limit` in tests), oldest first: each
 * is reopened ({@link reopenFailedDeliveries}) and its deliver message put on `queue`, to be
 * attempted as soon as the consumer takes it. Messages that could not be sent are picked up by the
 * hourly sweep once overdue.
 *
 * @returns how many deliveries were reopened, and whether failed ones may remain (the limit was hit).
 * @throws on D1 errors.
 */
export async function recoverFailed(
  db: Db,
  queue: Queue,
  accountId: string,
  endpointId: string,
  since: number,
  now: number,
  limit = RECOVER_LIMIT,
): Promise<{ count: number; more: boolean }> {
  const eventIds = await reopenFailedDeliveries(db, accountId, endpointId, since, now, limit);
  const { sent, error } = await sendInBatches(
    queue,
    eventIds.map((eventId): DeliverMessage => ({ kind: "deliver", eventId, endpointId, accountId })),
  );
  // The rest are pending with their attempt due: the sweep sends them once overdue.
  if (error !== undefined)
    log.error("webhook_recover_not_queued", {
      endpoint_id: endpointId,
      unsent: eventIds.length - sent,
      error,
    });
  return { count: eventIds.length, more: eventIds.length === limit };
}
