import { batchSql } from "../db/client";
import { databaseFor } from "../db/databases";
import { messageOfId, messageOfProviderIds, metadataIs, swapMetadataStatement } from "../db/queries/messages";
import { publishEvents } from "../events/publish";
import { insertKeyedEventStatement, newEventId, recordedIn } from "../events/record";
import { log } from "../lib/log";
import { type PollVote, pollCounts, votedOptions } from "../lib/poll";
import { formatTimestamp } from "../lib/time";
import { metadataObject, metadataText, parseMessageMetadata } from "./metadata";

/*
 * Contacts' votes on the session's polls (docs/messages.md, Sending messages → Polls): the one home of a
 * poll message's `metadata.poll_votes`, `metadata.poll_votes_removed` and `metadata.poll_counts`,
 * written with one `poll.voted` event per change. A gateway's `poll_vote` event
 * (src/gateways/gateway.ts `GatewayEvent`) and the sandbox's inbound route both write through here.
 */

/** A contact's vote as a gateway reported it; `at` is epoch ms by the gateway's clock. */
export interface IncomingPollVote {
  accountId: string;
  sessionId: string;
  /** The gateway's id of the poll (or ours, `byId`: the sandbox's inbound route). */
  providerMessageId: string;
  /** The voter: their E.164 number, or their user id when the network gives no number. */
  from: string;
  /** Every option they now pick, by its text; [] takes their vote back. */
  options: string[];
  at: number;
}

/** Attempts at the compare-and-set of a message's metadata before giving up (a concurrent change). */
const MAX_TRIES = 3;

/**
 * Records a contact's vote on the session's poll it names, with its `poll.voted` event `{
 * message_id, session_id, from, options, at }`, in one D1 batch, then publishes the event. The
 * message's metadata changes as {@link withPollVote} says: one vote state per contact, the latest
 * `at` winning, so a vote older than the contact's last (a late webhook), a redelivered one or one
 * that names none of the poll's options changes nothing and records no event. The write is a
 * compare-and-set on the metadata (a concurrent change, a receipt, makes it read again), and the
 * event's dedupe key names the change (`poll.voted:<message>:<from>:<at>:<option indexes>`), so two
 * deliveries racing record it once. A message the session does not hold, or one that is not a poll,
 * is ignored (logged `poll_vote_unknown_message`).
 * `byId`: `providerMessageId` is our message id (the sandbox's inbound route).
 * @returns our id of the poll, and whether this call changed its votes; null for an unknown message.
 * @throws Error when the metadata changed on every try.
 */
export async function receivePollVote(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  vote: IncomingPollVote,
  options: { byId?: boolean } = {},
): Promise<{ messageId: string; changed: boolean } | null> {
  const db = await databaseFor(env, vote.accountId);
  for (let tries = 0; tries < MAX_TRIES; tries += 1) {
    const target = options.byId
      ? await messageOfId(db, vote, vote.providerMessageId)
      : await messageOfProviderIds(db, vote, [vote.providerMessageId]);
    const poll = target ? parseMessageMetadata(target.metadata).poll : undefined;
    if (!target || !poll) {
      log.warn("poll_vote_unknown_message", {
        session_id: vote.sessionId,
        provider_message_id: vote.providerMessageId,
        message_id: target?.id ?? null,
      });
      return null;
    }
    const next = withPollVote(target.metadata, vote);
    if (next === null) return { messageId: target.id, changed: false };
    const chosen = votedOptions(poll, vote.options);
    const event = {
      id: newEventId(),
      accountId: target.accountId,
      type: "poll.voted" as const,
      snapshot: JSON.stringify({
        message_id: target.id,
        session_id: vote.sessionId,
        from: vote.from,
        options: chosen,
        at: formatTimestamp(vote.at),
      }),
      createdAt: Date.now(),
    };
    const indexes = chosen.map((option) => poll.options.indexOf(option)).join(",");
    const results = await batchSql(db, [
      swapMetadataStatement(target.id, target.metadata, next, Date.now()),
      insertKeyedEventStatement(
        event,
        `poll.voted:${target.id}:${vote.from}:${vote.at}:${indexes}`,
        metadataIs(target.id, next),
      ),
    ]);
    if ((results[0]?.meta.changes ?? 0) > 0) {
      await publishEvents(env, recordedIn(results, [1]));
      return { messageId: target.id, changed: true };
    }
  }
  throw new Error(`the votes of a poll changed ${MAX_TRIES} times while one was recorded`);
}

/** Epoch ms of an API timestamp (`2026-11-21T09:30:12.345000Z`: the clock's milliseconds and three zeros). */
function msOf(timestamp: string): number {
  return Date.parse(`${timestamp.slice(0, 23)}Z`);
}

/**
 * A poll message's `metadata` (JSON) with `vote` applied, or null when it changes nothing. The
 * vote keeps the poll's options it names ({@link votedOptions}); then:
 * - one that names options, none of them the poll's, is no vote: null;
 * - one older than the voter's last vote or taking back (`at` before theirs) is late: null;
 * - an empty one takes the voter's vote back: their entry leaves `poll_votes` and
 *   `poll_votes_removed[voter]` keeps `{ at }`, so an older vote cannot come back (null when they
 *   had none);
 * - else it replaces the voter's entry in `poll_votes` (`{ options, at }`) and clears their
 *   `poll_votes_removed` (null when they picked the same options already: a redelivery).
 * `poll_counts` is counted again from `poll_votes` (lib/poll.ts `pollCounts`). Null too for
 * metadata without a `poll`. Its other keys are kept as stored, in their order.
 */
export function withPollVote(
  metadata: string,
  vote: Pick<IncomingPollVote, "from" | "options" | "at">,
): string | null {
  const { poll, poll_votes: votes = {}, poll_votes_removed: removed = {} } = parseMessageMetadata(metadata);
  if (!poll) return null;
  const chosen = votedOptions(poll, vote.options);
  if (vote.options.length > 0 && chosen.length === 0) return null;
  const current = Object.hasOwn(votes, vote.from) ? votes[vote.from] : undefined;
  const taken = Object.hasOwn(removed, vote.from) ? removed[vote.from] : undefined;
  const last = Math.max(current ? msOf(current.at) : -1, taken ? msOf(taken.at) : -1);
  if (vote.at < last) return null;
  const at = formatTimestamp(vote.at);
  const others = Object.fromEntries(Object.entries(votes).filter(([voter]) => voter !== vote.from));
  const othersRemoved = Object.fromEntries(Object.entries(removed).filter(([voter]) => voter !== vote.from));
  let nextVotes: Record<string, PollVote>;
  let nextRemoved: Record<string, { at: string }>;
  if (chosen.length === 0) {
    if (!current) return null;
    nextVotes = others;
    nextRemoved = { ...othersRemoved, [vote.from]: { at } };
  } else {
    if (current && sameOptions(current.options, chosen)) return null;
    nextVotes = { ...others, [vote.from]: { options: chosen, at } };
    nextRemoved = othersRemoved;
  }
  const next: Record<string, unknown> = {
    ...metadataObject(metadata),
    poll_votes: nextVotes,
    poll_counts: pollCounts(poll, nextVotes),
  };
  if (Object.keys(nextRemoved).length > 0) next.poll_votes_removed = nextRemoved;
  else delete next.poll_votes_removed;
  return metadataText(next);
}

/** Whether `a` and `b` hold the same options in the same order. */
function sameOptions(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((option, i) => option === b[i]);
}
