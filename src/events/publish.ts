import type { RecordedEvent } from "./record";

/** The queue message that asks for an event's webhook fan-out (see src/webhooks). */
export interface EventPublished {
  kind: "event";
  eventId: string;
  accountId: string;
}

/** Largest batch `Queue.sendBatch` takes (Cloudflare Queues limit: 100 messages). */
const QUEUE_BATCH = 100;

/**
 * Puts one `{ kind: "event" }` message per event on the webhook queue, once its change has
 * committed, so the event reaches the account's webhook endpoints. A send that fails is logged
 * and left to the hourly sweep, which finds events without deliveries: the event itself is safe in
 * D1 (and listed by `GET /v1/events`) whatever happens here.
 */
export async function publishEvents(env: { WEBHOOK_QUEUE: Queue }, events: RecordedEvent[]): Promise<void> {
  try {
    for (let i = 0; i < events.length; i += QUEUE_BATCH) {
      const chunk = events.slice(i, i + QUEUE_BATCH);
      await env.WEBHOOK_QUEUE.sendBatch(
        chunk.map((event) => ({
          body: { kind: "event", eventId: event.id, accountId: event.accountId } satisfies EventPublished,
          contentType: "json" as const,
        })),
      );
    }
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "event_publish_failed", error: String(error) }));
  }
}
