import type { Db } from "../db/client";
import { findEvent } from "../db/queries/events";
import { createDeliveries } from "../db/queries/webhook-deliveries";
import type { EventMessage } from "../events/queue-message";
import { sendInBatches } from "../lib/queue";
import type { DeliverMessage } from "./queue-messages";

/**
 * Fans one committed event out to its account's endpoints: a `pending` delivery per enabled
 * endpoint subscribed to the event's type ({@link createDeliveries}), and one
 * `{ kind: "deliver", eventId, endpointId }` message per delivery not yet attempted on `queue`
 * (lib/queue.ts `sendInBatches`).
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
  const messages = endpointIds.map(
    (endpointId): DeliverMessage => ({ kind: "deliver", eventId: event.id, endpointId }),
  );
  const { error } = await sendInBatches(queue, messages);
  if (error !== undefined) throw error;
  return endpointIds.length;
}
