import type { Db } from "../db/client";
import { findEvent } from "../db/queries/events";
import { createDeliveries } from "../db/queries/webhook-deliveries";
import type { DeliverMessage, EventMessage } from "./queue-messages";

/** Most messages one `Queue.sendBatch` call takes (Cloudflare Queues limits). */
export const SEND_BATCH_LIMIT = 100;

/**
 * Fans one committed event out to its account's endpoints: a `pending` delivery per enabled
 * endpoint subscribed to the event's type ({@link createDeliveries}), and one
 * `{ kind: "deliver", eventId, endpointId }` message per delivery not yet attempted on `queue`,
 * sent {@link SEND_BATCH_LIMIT} at a time (https://developers.cloudflare.com/queues/platform/limits/).
 * Running it again for the same event creates no second delivery; it re-sends the messages of
 * deliveries still unattempted, whose copies the claim of src/webhooks/deliver.ts makes harmless.
 *
 * @returns how many deliver messages were sent (0 also when the event is gone).
 * @throws on D1 or Queue errors (the caller retries the message).
 */
export async function fanOutEvent(db: Db, queue: Queue, message: EventMessage, now: number): Promise<number> {
  const event = await findEvent(db, message.accountId, message.eventId);
  if (!event) return 0;
  const endpointIds = await createDeliveries(db, event.accountId, event.id, event.type, now);
  for (let i = 0; i < endpointIds.length; i += SEND_BATCH_LIMIT) {
    await queue.sendBatch(
      endpointIds.slice(i, i + SEND_BATCH_LIMIT).map((endpointId) => ({
        body: { kind: "deliver", eventId: event.id, endpointId } satisfies DeliverMessage,
        contentType: "json" as const,
      })),
    );
  }
  return endpointIds.length;
}
