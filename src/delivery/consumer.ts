import { z } from "zod";
import { log } from "../lib/log";
import { dropPoison, redeliveryDelaySeconds } from "../lib/queue";
import type { DispatchRequest } from "../messages/dispatch-request";
import { STORED_TYPES } from "../messages/types";
import { TYPING_MAX_MS } from "../messages/typing";
import { applyFailMoves } from "../moves/apply";
import { failMoves } from "../moves/message";

/** Name of the dead-letter queue (wrangler.toml): messages that exhausted their deliveries. */
export const DEAD_LETTER_QUEUE = "chatapp-outbound-dlq";

/** The shape every queue message must have; anything else is a poison message. */
const DispatchRequestSchema = z.object({
  id: z.uuid(),
  accountId: z.uuid(),
  sessionId: z.uuid(),
  to: z.string(),
  type: z.enum(STORED_TYPES),
  content: z.string().nullable(),
  mediaUrl: z.string().nullable(),
  // Absent from queue messages sent before media were stored.
  mediaKey: z.string().nullable().default(null),
  mediaContentType: z.string().nullable().default(null),
  delayBetween: z.int().min(0),
  acceptedAt: z.int(),
  sendRef: z.string(),
  sendIndex: z.int().min(0),
  notBefore: z.int().nullable(),
  priority: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  // Absent from queue messages sent before campaigns existed.
  campaignId: z.uuid().nullable().default(null),
  sendWindow: z
    .object({ start: z.string(), end: z.string(), time_zone: z.string() })
    .nullable()
    .default(null),
  // Absent from queue messages sent before typing existed: none.
  typingMs: z.int().min(0).max(TYPING_MAX_MS).default(0),
  // Absent from queue messages sent before replies and reactions existed.
  quoted: z.object({ providerMessageId: z.string(), fromMe: z.boolean() }).nullable().default(null),
}) satisfies z.ZodType<DispatchRequest, unknown>;

/**
 * Outbound Queue consumer: hands each session's messages to that session's Durable Object in one
 * call and acks them; the object keys them by message id, so a redelivered batch is harmless. A
 * failed hand-over retries the messages with exponential `delaySeconds`; after `max_retries`
 * they go to the dead-letter queue, whose consumer fails and refunds them, so none is lost.
 */
export async function handleOutboundBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const valid = dropPoison(batch, DispatchRequestSchema);
  if (batch.queue === DEAD_LETTER_QUEUE) return handleDeadLetters(valid, env);
  const bySession = new Map<string, Message<DispatchRequest>[]>();
  for (const message of valid) {
    bySession.set(message.body.sessionId, [...(bySession.get(message.body.sessionId) ?? []), message]);
  }
  await Promise.all(
    [...bySession].map(async ([sessionId, messages]) => {
      try {
        const stub = env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(sessionId));
        await stub.enqueue(messages.map((m) => m.body));
        for (const m of messages) m.ack();
      } catch (error) {
        log.error("dispatch_handover_failed", { session_id: sessionId, error });
        for (const m of messages) m.retry({ delaySeconds: redeliveryDelaySeconds(m.attempts) });
      }
    }),
  );
}

/**
 * Messages the queue gave up on: those no session object claimed fail with reason
 * `dispatch_failed` and are refunded. An object claims a message in D1 before it takes it into
 * its outbox and never takes one that is no longer waiting (claimMessages), so no object holds
 * or sends a message failed here. A claimed message is the object's to send or fail (the
 * hand-over may have failed after the claim), so it is left alone, as is one already sent.
 */
async function handleDeadLetters(messages: Message<DispatchRequest>[], env: Env): Promise<void> {
  const failed = messages.map((m) => ({ id: m.body.id, accountId: m.body.accountId }));
  await applyFailMoves(env, failMoves(failed, "dispatch_failed", Date.now(), { unacceptedOnly: true }));
  for (const m of messages) m.ack();
}
