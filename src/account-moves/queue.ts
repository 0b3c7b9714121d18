import { z } from "zod";
import { directoryOf } from "../db/databases";
import { moveOf } from "../db/queries/account-moves";
import { log } from "../lib/log";
import { dropPoison, redeliveryDelaySeconds } from "../lib/queue";
import { runMoveStep, unwindAccountMove } from "./move";

/** Name of the move queue (wrangler.toml, binding `MOVE_QUEUE`). */
export const MOVE_QUEUE_NAME = "chatapp-account-moves";

/**
 * Steps one queue message runs before it hands over to the next: each makes at most
 * `COPY_PAGE_ROWS` statements and a few reads (src/account-moves/move.ts), so four stay within
 * D1's 1,000 queries per Worker invocation (https://developers.cloudflare.com/d1/platform/limits/).
 */
const STEPS_PER_MESSAGE = 4;
/** Milliseconds of steps after which a message hands over to the next even before {@link STEPS_PER_MESSAGE}. */
const MESSAGE_BUDGET_MS = 5_000;
/** Failed deliveries of a copying step after which the move unwinds rather than retry again. */
const COPY_ATTEMPTS = 5;

/** A move queue message: run the next steps of account `accountId`'s move. */
export interface MoveJob {
  accountId: string;
}

const MoveJobSchema = z.object({ accountId: z.uuid() }) satisfies z.ZodType<MoveJob>;

/** Puts a job for account `accountId`'s move on the move queue, to run after `delayMs` (rounded up to seconds). */
export async function queueMoveStep(env: Env, accountId: string, delayMs = 0): Promise<void> {
  await env.MOVE_QUEUE.send({ accountId } satisfies MoveJob, { delaySeconds: Math.ceil(delayMs / 1000) });
}

/**
 * Move queue consumer: runs steps of each message's move (src/account-moves/move.ts
 * `runMoveStep`) until it ends, waits (the hold) or {@link STEPS_PER_MESSAGE} ran, then queues the
 * next message while more is left. A step that throws is retried with backoff; one that throws
 * {@link COPY_ATTEMPTS} times while the account is copied unwinds the move, whose error says why.
 * A message run twice is harmless: each step checks where the move stands.
 */
export async function handleMoveBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of dropPoison(batch, MoveJobSchema)) {
    const { accountId } = message.body;
    try {
      const started = Date.now();
      let next = await runMoveStep(env, accountId, started);
      for (let steps = 1; next?.after === 0 && steps < STEPS_PER_MESSAGE; steps++) {
        if (Date.now() - started > MESSAGE_BUDGET_MS) break;
        next = await runMoveStep(env, accountId, Date.now());
      }
      if (next) await queueMoveStep(env, accountId, next.after);
      message.ack();
    } catch (error) {
      log.error("account_move_step_failed", { account_id: accountId, attempts: message.attempts, error });
      const move = message.attempts >= COPY_ATTEMPTS ? await moveOf(directoryOf(env), accountId) : null;
      const why = error instanceof Error ? error.message : String(error);
      if (move && (await unwindAccountMove(env, move, `A copy step kept failing: ${why}`, Date.now()))) {
        await queueMoveStep(env, accountId);
        message.ack();
      } else message.retry({ delaySeconds: redeliveryDelaySeconds(message.attempts) });
    }
  }
}
