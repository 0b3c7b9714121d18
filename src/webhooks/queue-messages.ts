import { z } from "zod";

/** The webhook queue (wrangler.toml, binding `WEBHOOK_QUEUE`). */
export const WEBHOOK_QUEUE_NAME = "chatapp-webhooks";
/** Its dead-letter queue: messages whose queue deliveries all failed (`max_retries`). */
export const WEBHOOK_DEAD_LETTER_QUEUE = "chatapp-webhooks-dlq";

/** An event id as src/events/record.ts makes them: `evt_` and 32 lower-case hex digits. */
const EventId = z.string().regex(/^evt_[0-9a-f]{32}$/);

/** A committed event to fan out to the account's subscribed endpoints. */
export const EventMessageSchema = z.object({
  kind: z.literal("event"),
  eventId: EventId,
  accountId: z.uuid(),
});
export type EventMessage = z.infer<typeof EventMessageSchema>;

/** One attempt of one event's delivery to one endpoint. */
export const DeliverMessageSchema = z.object({
  kind: z.literal("deliver"),
  eventId: EventId,
  endpointId: z.uuid(),
});
export type DeliverMessage = z.infer<typeof DeliverMessageSchema>;

/** Every message the webhook queue carries; anything else is a poison message. */
export const WebhookQueueMessageSchema = z.discriminatedUnion("kind", [
  EventMessageSchema,
  DeliverMessageSchema,
]);
export type WebhookQueueMessage = z.infer<typeof WebhookQueueMessageSchema>;
