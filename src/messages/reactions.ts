import { batchSql } from "../db/client";
import { databaseFor } from "../db/databases";
import { messageOfId, messageOfProviderIds, metadataIs, swapMetadataStatement } from "../db/queries/messages";
import { publishEvents } from "../events/publish";
import { insertKeyedEventStatement, newEventId, recordedIn } from "../events/record";
import { log } from "../lib/log";
import { formatTimestamp } from "../lib/time";
import { metadataObject, metadataText, parseMessageMetadata } from "./metadata";

/*
 * Incoming replies and reactions (docs/messages.md, Replies and reactions): which of the session's messages
 * a gateway's id names, and a contact's reaction recorded on the message it names.
 */

/** A contact's reaction as a gateway reported it; `at` is epoch ms by the gateway's clock. */
export interface IncomingReaction {
  accountId: string;
  sessionId: string;
  /** The gateway's id of the message reacted to (or ours, `byId`: the sandbox's inbound route). */
  providerMessageId: string;
  /** E.164 number of the contact. */
  from: string;
  /** The emoji; "" takes the contact's reaction off. */
  emoji: string;
  at: number;
}

/** Attempts at the compare-and-set of a message's metadata before giving up (a concurrent change). */
const MAX_TRIES = 3;

/**
 * Records a contact's reaction on the session's message it names, with its `message.reaction`
 * event `{ message_id, session_id, from, emoji, at }`, in one D1 batch, then publishes the event.
 * The message's `metadata.reactions` holds one entry per contact, `{ from, emoji, at }`: a new
 * emoji replaces the contact's entry, an empty one takes it off (and is kept in
 * `metadata.reactions_removed` as `{ from, at }`). The latest `at` wins: a reaction older than the
 * contact's last one changes nothing, and neither does one that changes nothing (a redelivered
 * webhook), so each change records one event. The write is a compare-and-set on the metadata (a
 * concurrent change makes it read again), and the event's dedupe key names the change
 * (`message.reaction:<message>:<from>:<at>:<emoji>`), so two deliveries racing record it once.
 * A message the session does not hold is ignored (logged `reaction_unknown_message`).
 * `byId`: `providerMessageId` is our message id (the sandbox's inbound route).
 * @returns our id of the message reacted to, and whether this call changed its reactions; null
 *   for an unknown message.
 */
export async function receiveReaction(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  reaction: IncomingReaction,
  options: { byId?: boolean } = {},
): Promise<{ messageId: string; changed: boolean } | null> {
  const db = await databaseFor(env, reaction.accountId);
  for (let tries = 0; tries < MAX_TRIES; tries += 1) {
    const target = options.byId
      ? await messageOfId(db, reaction, reaction.providerMessageId)
      : await messageOfProviderIds(db, reaction, [reaction.providerMessageId]);
    if (!target) {
      log.warn("reaction_unknown_message", {
        session_id: reaction.sessionId,
        provider_message_id: reaction.providerMessageId,
      });
      return null;
    }
    const next = withReaction(target.metadata, reaction);
    if (next === null) return { messageId: target.id, changed: false };
    const at = formatTimestamp(reaction.at);
    const event = {
      id: newEventId(),
      accountId: target.accountId,
      type: "message.reaction" as const,
      snapshot: JSON.stringify({
        message_id: target.id,
        session_id: reaction.sessionId,
        from: reaction.from,
        emoji: reaction.emoji,
        at,
      }),
      createdAt: Date.now(),
    };
    const results = await batchSql(db, [
      swapMetadataStatement(target.id, target.metadata, next, Date.now()),
      insertKeyedEventStatement(
        event,
        `message.reaction:${target.id}:${reaction.from}:${reaction.at}:${reaction.emoji}`,
        metadataIs(target.id, next),
      ),
    ]);
    if ((results[0]?.meta.changes ?? 0) > 0) {
      await publishEvents(env, recordedIn(results, [1]));
      return { messageId: target.id, changed: true };
    }
  }
  throw new Error(`the reactions of a message changed ${MAX_TRIES} times while one was recorded`);
}

/** Epoch ms of an API timestamp (`2026-11-21T09:30:12.345000Z`: the clock's milliseconds and three zeros). */
function msOf(timestamp: string): number {
  return Date.parse(`${timestamp.slice(0, 23)}Z`);
}

/**
 * `metadata` (JSON) with `reaction` applied (see {@link receiveReaction}), or null when it
 * changes nothing: older than the contact's last reaction or removal, the emoji the contact has
 * already set, or a removal of a reaction the contact has not set. Its other keys are kept as
 * stored, in their order.
 */
export function withReaction(
  metadata: string,
  reaction: Pick<IncomingReaction, "from" | "emoji" | "at">,
): string | null {
  const { reactions = [], reactions_removed: removed = [] } = parseMessageMetadata(metadata);
  const parsed = metadataObject(metadata);
  const current = reactions.find((entry) => entry.from === reaction.from);
  const taken = removed.find((entry) => entry.from === reaction.from);
  const last = Math.max(current ? msOf(current.at) : -1, taken ? msOf(taken.at) : -1);
  if (reaction.at < last) return null;
  const others = reactions.filter((entry) => entry.from !== reaction.from);
  const othersRemoved = removed.filter((entry) => entry.from !== reaction.from);
  const at = formatTimestamp(reaction.at);
  if (reaction.emoji === "") {
    if (!current) return null;
    return metadataText({
      ...parsed,
      reactions: others,
      reactions_removed: [...othersRemoved, { from: reaction.from, at }],
    });
  }
  if (current?.emoji === reaction.emoji) return null;
  const next: Record<string, unknown> = {
    ...parsed,
    reactions: [...others, { from: reaction.from, emoji: reaction.emoji, at }],
  };
  if (othersRemoved.length > 0) next.reactions_removed = othersRemoved;
  else delete next.reactions_removed;
  return metadataText(next);
}
