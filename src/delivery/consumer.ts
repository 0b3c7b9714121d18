import { createDb } from "../db/client";
import { failAndRefund } from "../db/queries/messages";
import type { DispatchRequest } from "./dispatch-request";

/** Name of the dead-letter queue (wrangler.toml): messages that exhausted their deliveries. */
export const DEAD_LETTER_QUEUE = "chatapp-outbound-dlq";

/** Queue redelivery backoff: 2^attempts seconds, capped at 10 minutes. */
function redeliveryDelaySeconds(attempts: number): number {
  return Math.min(2 ** attempts, 600);
}

/**
 * Outbound Queue consumer: hands each session's messages to that session's Durable Object in one
 * call and acks them; the object keys them by message id, so a redelivered batch is harmless. A
 * failed hand-over retries the messages with exponential `delaySeconds`; after `max_retries`
 * they go to the dead-letter queue, whose consumer fails and refunds them, so none is lost.
 */
export async function handleOutboundBatch(batch: MessageBatch<DispatchRequest>, env: Env): Promise<void> {
  if (batch.queue === DEAD_LETTER_QUEUE) return handleDeadLetters(batch, env);
  const bySession = new Map<string, Message<DispatchRequest>[]>();
  for (const message of batch.messages) {
    bySession.set(message.body.sessionId, [...(bySession.get(message.body.sessionId) ?? []), message]);
  }
  await Promise.all(
    [...bySession].map(async ([sessionId, messages]) => {
      try {
        const stub = env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(sessionId));
        await stub.enqueue(messages.map((m) => m.body));
        for (const m of messages) m.ack();
      } catch (error) {
        console.error(JSON.stringify({ level: "error", event: "dispatch_handover_failed", session_id: sessionId, error: String(error) }));
        for (const m of messages) m.retry({ delaySeconds: redeliveryDelaySeconds(m.attempts) });
      }
    }),
  );
}

/** Messages the queue gave up on: fail them with reason `dispatch_failed` and refund them. */
async function handleDeadLetters(batch: MessageBatch<DispatchRequest>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  const byAccount = new Map<string, string[]>();
  for (const m of batch.messages) byAccount.set(m.body.accountId, [...(byAccount.get(m.body.accountId) ?? []), m.body.id]);
  const now = Date.now();
  for (const [accountId, ids] of byAccount) await failAndRefund(db, accountId, ids, "dispatch_failed", now);
  batch.ackAll();
}
