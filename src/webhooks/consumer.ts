import { readConfig } from "../config";
import { databaseFor } from "../db/databases";
import { failPendingDeliveries } from "../db/queries/webhook-deliveries";
import { log } from "../lib/log";
import { dropPoison, redeliveryDelaySeconds } from "../lib/queue";
import { type DeliveryOptions, deliverOnce } from "./deliver";
import { fanOutEvent } from "./fan-out";
import { WEBHOOK_DEAD_LETTER_QUEUE, WEBHOOK_QUEUE_NAME, WebhookQueueMessageSchema } from "./queue-messages";

/** Whether `queue` is one of the webhook queues that {@link handleWebhookBatch} consumes. */
export function isWebhookQueue(queue: string): boolean {
  return queue === WEBHOOK_QUEUE_NAME || queue === WEBHOOK_DEAD_LETTER_QUEUE;
}

/**
 * Webhook Queue consumer, one message at a time and all of a batch's messages concurrently, so a
 * slow endpoint holds back only its own messages:
 * - `{ kind: "event", eventId, accountId }` → {@link fanOutEvent}, then ack;
 * - `{ kind: "deliver", eventId, endpointId }` → one attempt ({@link deliverOnce}), then ack, or
 *   `retry({ delaySeconds })` with the wait of the Standard Webhooks schedule
 *   (https://developers.cloudflare.com/queues/configuration/batching-retries/#delay-messages).
 * A message whose handling throws (D1 or the Queue unavailable) is retried with the outbound
 * consumer's exponential backoff; after `max_retries` the queue moves it to the dead-letter queue,
 * whose messages mark their deliveries `failed` (an event message there is logged: the hourly
 * sweep finds its undelivered endpoints). Poison messages are acked and logged.
 * `options` stand in for the clock, the jitter and the 15 s timeout in tests.
 */
export async function handleWebhookBatch(
  batch: MessageBatch<unknown>,
  env: Env,
  options: DeliveryOptions = {},
): Promise<void> {
  const valid = dropPoison(batch, WebhookQueueMessageSchema);
  // A message that names no account was queued when there was one database: the first.
  const databaseOf = (body: { accountId?: string | undefined }) => databaseFor(env, body.accountId ?? "");
  if (batch.queue === WEBHOOK_DEAD_LETTER_QUEUE) {
    const now = (options.now ?? Date.now)();
    for (const body of valid.map((m) => m.body)) {
      if (body.kind !== "deliver") continue;
      await failPendingDeliveries(
        await databaseOf(body),
        [{ endpointId: body.endpointId, eventId: body.eventId }],
        now,
      );
    }
    for (const m of valid) {
      if (m.body.kind === "event") log.error("webhook_fan_out_dead", { event_id: m.body.eventId });
      m.ack();
    }
    return;
  }
  await Promise.all(
    valid.map(async (m) => {
      try {
        const body = m.body;
        const db = await databaseOf(body);
        if (body.kind === "event") {
          await fanOutEvent(db, env.WEBHOOK_QUEUE, body);
          m.ack();
          return;
        }
        const result = await deliverOnce(env, db, body, {
          defaultGateway: readConfig(env).CHATAPP_GATEWAY,
          ...options,
        });
        if (result === null) m.ack();
        else m.retry({ delaySeconds: result.retryDelaySeconds });
      } catch (error) {
        log.error("webhook_message_failed", { message_id: m.id, kind: m.body.kind, error });
        m.retry({ delaySeconds: redeliveryDelaySeconds(m.attempts) });
      }
    }),
  );
}
