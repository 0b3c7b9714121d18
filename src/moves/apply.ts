import type { SQL } from "drizzle-orm";
import { batchSql } from "../db/client";
import { databaseFor } from "../db/databases";
import { publishEvents } from "../events/publish";
import { recordedIn } from "../events/record";
import { type FailMove, type MessageMove, moveStatement, type SentMove, sentStatements } from "./message";
import { batchReactions, reactionsOf } from "./reactions";

/**
 * Applies message moves of account `accountId` in one D1 batch of its database (one transaction), in order: each move's UPDATE
 * (src/moves/message.ts) followed by its reactions (src/moves/reactions.ts: events, refunds, a
 * scheduled campaign's start), then the batch's reactions (the sent events, the completion of the
 * campaigns named in `campaignIds`). Each UPDATE matches only messages in a status its move may
 * start from, so applying the same moves twice changes nothing the second time, and a refund
 * covers exactly the messages its move failed.
 *
 * All `sent` moves of a batch are one count, one UPDATE and one event statement, first in the
 * batch (so a batch must not also move its sent messages further); a move by ids is one statement
 * however many ids it holds. D1 is one writer for the whole deployment, so a batch costs few statements
 * whatever its size.
 *
 * Stage times never run backwards whatever the gateway's clock says: `delivered_at` is at least
 * `sent_at`, and `read_at` at least `delivered_at`; the gateway's own time is kept in the
 * receipt's `metadata.events` entry.
 *
 * Once the batch has committed, its new events are published for webhook delivery.
 *
 * @returns per move, whether it moved any message (every `sent` move gives the answer of their
 *   shared statement). Not a count: D1's `meta.changes` is the rows a statement wrote, those its
 *   triggers wrote included, so it is 0 exactly when the move changed nothing.
 */
export async function applyMoves(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  accountId: string,
  moves: MessageMove[],
  options: { campaignIds?: string[] } = {},
): Promise<boolean[]> {
  if (moves.length === 0) return [];
  const statements: SQL[] = [];
  const firstOf: number[] = [];
  const sent = moves.filter((move): move is SentMove => move.kind === "sent");
  if (sent.length > 0) statements.push(...sentStatements(sent));
  const sentAt = statements.length - 1;
  for (const move of moves) {
    if (move.kind === "sent") {
      firstOf.push(sentAt);
      continue;
    }
    firstOf.push(statements.length);
    const refundId = crypto.randomUUID();
    statements.push(moveStatement(move, refundId), ...reactionsOf({ move, refundId }));
  }
  statements.push(...batchReactions(sent, [...new Set(options.campaignIds ?? [])], Date.now()));
  const results = await batchSql(await databaseFor(env, accountId), statements);
  // Only the event statements of a moves batch return rows.
  await publishEvents(env, recordedIn(results, [...results.keys()]));
  return firstOf.map((index) => (results[index]?.meta.changes ?? 0) > 0);
}

/**
 * Applies `fail` moves of possibly several accounts (src/moves/message.ts `failMoves`): each
 * account's in its own batch, in its own database.
 */
export async function applyFailMoves(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  moves: FailMove[],
): Promise<void> {
  for (const move of moves) await applyMoves(env, move.accountId, [move]);
}
