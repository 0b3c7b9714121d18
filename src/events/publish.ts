import { log } from "../lib/log";
import { sendInBatches } from "../lib/queue";
import type { EventMessage } from "./queue-message";
import type { RecordedEvent } from "./record";

/**
 * Puts one `{ kind: "event" }` message per event on the webhook queue, once its change has
 * committed, so the event reaches the account's webhook endpoints (src/webhooks/fan-out.ts). A
 * send that fails is logged and left to the hourly sweep (src/events/sweep.ts), which finds
 * events without deliveries: the event itself is safe in D1, and listed by `GET /v1/events`,
 * whatever happens here.
 */
export async function publishEvents(env: { WEBHOOK_QUEUE: Queue }, events: RecordedEvent[]): Promise<void> {
  const messages = events.map(
    (event): EventMessage => ({ kind: "event", eventId: event.id, accountId: event.accountId }),
  );
  const { error } = await sendInBatches(env.WEBHOOK_QUEUE, messages);
  if (error !== undefined) {
    log.error("event_publish_failed", { error });
  }
}
