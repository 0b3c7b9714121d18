import { z } from "zod";

// The webhook queue's `event` message is produced here (publish.ts) and consumed by the webhook
// fan-out (src/webhooks/fan-out.ts), whose queue-messages.ts adds it to the queue's union.

/** An event id as src/events/record.ts makes them: `evt_` and 32 lower-case hex digits. */
export const EventId = z.string().regex(/^evt_[0-9a-f]{32}$/);

/** A committed event to fan out to the account's subscribed endpoints. */
export const EventMessageSchema = z.object({
  kind: z.literal("event"),
  eventId: EventId,
  accountId: z.uuid(),
});
export type EventMessage = z.infer<typeof EventMessageSchema>;
