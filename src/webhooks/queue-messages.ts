import { z } from "zod";
import { EventId, EventMessageSchema } from "../events/queue-message";

/** The webhook queue (wrangler.toml, binding `WEBHOOK_QUEUE`). */
export const WEBHOOK_QUEUE_NAME = "chatapp-webhooks";
/** Its dead-letter queue: messages whose queue deliveries all failed (`max_retries`). */
export const WEBHOOK_DEAD_LETTER_QUEUE = "chatapp-webhooks-dlq";

/** One attempt of one event's delivery to one endpoint. */
const DeliverMessageSchema = z.object({
  kind: z.literal("deliver"),
  eventId: EventId,
  endpointId: z.uuid(),
  /**
   * The endpoint's account, whose database holds the delivery; absent from messages queued before
   * messages named it (a deployment of one database: src/db/databases.ts `databaseFor`).
   */
  accountId: z.uuid().optional(),
});
export type DeliverMessage = z.infer<typeof DeliverMessageSchema>;

/** Every message the webhook queue carries; anything else is a poison message. */
export const WebhookQueueMessageSchema = z.discriminatedUnion("kind", [
  EventMessageSchema,
  DeliverMessageSchema,
]);
