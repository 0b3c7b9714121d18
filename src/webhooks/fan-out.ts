import type { Db } from "../db/client";
import { findEvent } from "../db/queries/events";
import { endpointsToDeliver } from "../db/queries/webhook-deliveries";
import type { EventMessage } from "../events/queue-message";
import { sendInBatches } from "../lib/queue";
import type { DeliverMessage } from "./queue-messages";

/**
 * Fans one committed event out to its account's endpoints: one `{ kind: "deliver", eventId,
 * endpointId }` message on `queue` (lib/queue.ts `sendInBatches`) per enabled endpoint subscribed
 * to the event's type whose delivery has not been attempted ({@link endpointsToDeliver}); the
 * delivery's row is written by its first attempt (src/webhooks/deliver.ts).
 * Running it again for the same event re-sends the messages of deliveries still unattempted: a
 * copy that comes after the first attempt is recorded finds nothing due; one that comes during it
 * may attempt it too (at-least-once: receivers dedupe on `webhook-id`).
 *
 * @returns how many deliver messages were sent (0 also when the event is gone).
 * @throws on D1 or Queue errors (the caller retries the message).
 */
export async function fanOutEvent(db: Db, queue: Queue, message: EventMessage): Promise<number> {
  const event = await findEvent(db, message.accountId, message.eventId);
  if (!event) return 0;
  const endpointIds = await endpointsToDeliver(db, event.accountId, event.id, event.type);
  const messages = endpointIds.map(
    (endpointId): DeliverMessage => ({
      kind: "deliver",
      eventId: event.id,
      endpointId,
      accountId: event.accountId,
    }),
  );
  const { error } = await sendInBatches(queue, messages);
  if (error !== undefined) throw error;
  return endpointIds.length;
}
