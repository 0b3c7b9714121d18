import { type SQL, sql } from "drizzle-orm";
import { refundTaggedStatements } from "../billing/ledger";
import type { MessageStatus } from "../db/schema";
import { messages } from "../db/schema";
import type { EventType } from "../events/catalogue";
import { eventsForRows } from "../events/record";
import { beginCampaignStatements, completeCampaignStatements } from "./campaign";
import { type MessageMove, type SentMove, targetOf } from "./message";

// The one registry of what hangs off a message move. A move is its UPDATE (src/moves/message.ts)
// and then, in the same D1 batch, the statements its reactions build below, in order. The
// counters that follow a message's status (campaign statistics, the account's usage) are not
// statements here: SQLite triggers keep them inside the UPDATE itself, one row each per message,
// and src/moves/counters.ts defines them (a test holds the migrations' SQL to that definition).

type SingleMove = Exclude<MessageMove, SentMove>;

/** What a reaction knows of its move: the move, and the refund id its UPDATE tagged failures with. */
export interface MoveContext<M extends SingleMove = SingleMove> {
  move: M;
  refundId: string;
}

/** A reaction: the statements that follow a move of one kind, after its UPDATE. */
export type MoveReaction<M extends SingleMove> = (context: MoveContext<M>) => SQL[];

/** The `type` event of every target message now in `status` (the ones the move just reached). */
function eventOfReached<M extends Exclude<SingleMove, { kind: "due" }>>(
  type: EventType,
  status: MessageStatus,
): MoveReaction<M> {
  return ({ move }) => [
    eventsForRows(
      type,
      messages,
      sql`${targetOf(move.target)} AND direction = 'outgoing' AND status = ${status}`,
    ),
  ];
}

/** `message.failed` for exactly the messages the move failed (tagged with its refund id). */
const failedEvent: MoveReaction<Extract<SingleMove, { kind: "fail" | "gateway_failed" }>> = ({
  refundId,
}) => [eventsForRows("message.failed", messages, sql`refund_id = ${refundId}`)];

/** The refund of the messages the move failed, as one ledger entry (src/billing/ledger.ts). */
const refund: MoveReaction<Extract<SingleMove, { kind: "fail" | "gateway_failed" }>> = ({ move, refundId }) =>
  refundTaggedStatements(move.accountId, refundId, move.at);

/** A scheduled campaign runs once its first message is due (src/moves/campaign.ts, `begin`). */
const campaignBegins: MoveReaction<Extract<SingleMove, { kind: "due" }>> = ({ move }) =>
  beginCampaignStatements(
    sql`SELECT campaign_id FROM messages WHERE ${targetOf(move.target)} AND campaign_id IS NOT NULL`,
    move.at,
  );

/**
 * Per move kind, its reactions in order. `sent` has none of its own: a batch's sent moves share one
 * UPDATE and one event statement ({@link batchReactions}).
 */
const MOVE_REACTIONS: { [K in SingleMove["kind"]]: MoveReaction<Extract<SingleMove, { kind: K }>>[] } = {
  due: [campaignBegins],
  delivered: [eventOfReached("message.delivered", "delivered")],
  read: [eventOfReached("message.read", "read")],
  fail: [failedEvent, refund],
  gateway_failed: [failedEvent, refund],
  priced: [],
};

/** The statements of one move's reactions ({@link MOVE_REACTIONS}). */
export function reactionsOf(context: MoveContext): SQL[] {
  const reactions = MOVE_REACTIONS[context.move.kind] as MoveReaction<SingleMove>[];
  return reactions.flatMap((reaction) => reaction(context));
}

/**
 * The reactions to a batch as a whole, after every move's: the `message.sent` events of its sent
 * moves in one statement (an outbox flush sends many), then the completion of the campaigns the
 * batch may have finished (`campaignIds`) at `at` (epoch ms), when nothing of theirs is left to send.
 */
export function batchReactions(sent: SentMove[], campaignIds: string[], at: number): SQL[] {
  const statements: SQL[] = [];
  if (sent.length > 0) {
    const ids = sql`id IN (SELECT value FROM json_each(${JSON.stringify(sent.map((move) => move.id))}))`;
    statements.push(eventsForRows("message.sent", messages, sql`${ids} AND status = 'sent'`));
  }
  if (campaignIds.length > 0) statements.push(...completeCampaignStatements(campaignIds, at));
  return statements;
}
