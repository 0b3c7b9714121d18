import type { Db } from "../db/client";
import { overdueDeliveries } from "../db/queries/webhook-deliveries";
import { sendInBatches } from "../lib/queue";
import type { DeliverMessage } from "./queue-messages";

/**
 * A `pending` delivery this overdue (1 hour) has lost its queue message: a retry's wait is carried
 * by its message, which comes within seconds of `next_attempt_at` unless the queue is far behind.
 */
export const OVERDUE_AFTER_MS = 3_600_000;
/** Most deliveries one sweep sends again. */
const SWEEP_LIMIT = 1000;

/**
 * The hourly sweep's part for deliveries: sends a deliver message again for every `pending`
 * delivery whose next attempt is more than {@link OVERDUE_AFTER_MS} overdue at `now` (epoch ms),
 * so a lost retry message or a reopened delivery whose message was never sent is still attempted.
 * A message for a delivery that is in fact under way is harmless: its claim
 * (src/db/queries/webhook-deliveries.ts `claimAttempt`) lets one attempt through.
 *
 * @returns how many deliver messages it sent.
 * @throws the Queue's error when a send fails (the next sweep tries again).
 */
export async function requeueOverdueDeliveries(
  env: { WEBHOOK_QUEUE: Queue },
  db: Db,
  now: number,
): Promise<number> {
  const keys = await overdueDeliveries(db, now - OVERDUE_AFTER_MS, SWEEP_LIMIT);
  const messages = keys.map((key): DeliverMessage => ({ kind: "deliver", ...key }));
  const { error } = await sendInBatches(env.WEBHOOK_QUEUE, messages);
  if (error !== undefined) throw error;
  return messages.length;
}
