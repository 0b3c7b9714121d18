import type { z } from "zod";

// What the service's Queue producers and consumers share (Cloudflare Queues:
// https://developers.cloudflare.com/queues/platform/limits/ and
// https://developers.cloudflare.com/queues/configuration/batching-retries/).

/** Largest batch `Queue.sendBatch` takes: 100 messages. */
export const QUEUE_SEND_BATCH = 100;

/**
 * Puts `bodies` on `queue` as JSON messages, {@link QUEUE_SEND_BATCH} per call, in order.
 * Never throws.
 * @returns how many were sent before a failure (all of them when `error` is absent).
 */
export async function sendInBatches(
  queue: Queue,
  bodies: unknown[],
): Promise<{ sent: number; error?: unknown }> {
  let sent = 0;
  try {
    for (let i = 0; i < bodies.length; i += QUEUE_SEND_BATCH) {
      const chunk = bodies.slice(i, i + QUEUE_SEND_BATCH);
      await queue.sendBatch(chunk.map((body) => ({ body, contentType: "json" as const })));
      sent += chunk.length;
    }
    return { sent };
  } catch (error) {
    return { sent, error };
  }
}

/** Redelivery backoff of a message whose handling failed: 2^attempts seconds, at most 10 minutes. */
export function redeliveryDelaySeconds(attempts: number): number {
  return Math.min(2 ** attempts, 600);
}

/**
 * The messages of `batch` whose body has `schema`'s shape; the others are poison (retrying cannot
 * mend them), so they are acked and logged.
 */
export function dropPoison<T>(batch: MessageBatch<unknown>, schema: z.ZodType<T>): Message<T>[] {
  const valid: Message<T>[] = [];
  for (const message of batch.messages) {
    if (schema.safeParse(message.body).success) valid.push(message as Message<T>);
    else {
      console.error(
        JSON.stringify({
          level: "error",
          event: "poison_message",
          queue: batch.queue,
          message_id: message.id,
        }),
      );
      message.ack();
    }
  }
  return valid;
}
