import type { z } from "zod";
import { log } from "./log";

// What the service's Queue producers and consumers share (Cloudflare Queues:
// https://developers.cloudflare.com/queues/platform/limits/ and
// https://developers.cloudflare.com/queues/configuration/batching-retries/).

/** Largest batch `Queue.sendBatch` takes: 100 messages. */
export const QUEUE_SEND_BATCH = 100;
/**
 * Most bytes of JSON bodies put in one `Queue.sendBatch` call: the platform takes 256 KB per batch
 * (and 128 KB per message); the rest is left for each message's own overhead.
 */
export const QUEUE_SEND_BATCH_BYTES = 200_000;

/**
 * Puts `bodies` on `queue` as JSON messages, in order, in as few `sendBatch` calls as the limits
 * allow: at most {@link QUEUE_SEND_BATCH} messages and {@link QUEUE_SEND_BATCH_BYTES} bytes of
 * JSON per call (long message contents make smaller batches). Never throws.
 * @returns how many were sent before a failure (all of them when `error` is absent).
 */
export async function sendInBatches(
  queue: Queue,
  bodies: unknown[],
): Promise<{ sent: number; error?: unknown }> {
  let sent = 0;
  try {
    for (const chunk of queueBatches(bodies)) {
      await queue.sendBatch(chunk.map((body) => ({ body, contentType: "json" as const })));
      sent += chunk.length;
    }
    return { sent };
  } catch (error) {
    return { sent, error };
  }
}

/** `bodies` cut into consecutive `sendBatch` calls within both limits of {@link sendInBatches}. */
export function queueBatches(bodies: unknown[]): unknown[][] {
  const encoder = new TextEncoder();
  const batches: unknown[][] = [];
  let batch: unknown[] = [];
  let bytes = 0;
  for (const body of bodies) {
    const size = encoder.encode(JSON.stringify(body)).length;
    if (batch.length > 0 && (batch.length === QUEUE_SEND_BATCH || bytes + size > QUEUE_SEND_BATCH_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(body);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
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
      log.error("poison_message", { queue: batch.queue, message_id: message.id });
      message.ack();
    }
  }
  return valid;
}
