import type { Db } from "../db/client";
import { findMessage } from "../db/queries/messages";
import { ApiError } from "../errors";
import type { QuotedMessage } from "./types";

/*
 * Replies and reactions on the send path (docs/messages.md, Replies and reactions): which message of the
 * account a send may quote or react to, and the emoji a reaction may carry.
 */

/** A message a send quotes or reacts to, as found: our id, the chat's contact and the gateway's view of it. */
export interface QuoteTarget {
  /** Our message id. */
  id: string;
  /**
   * The address the reply goes to: the one the caller gave, else the chat's own (the recipient's
   * address of an outgoing message; the sender's number, or user id, of an incoming one).
   */
  chat: string;
  quoted: QuotedMessage;
}

/**
 * The account's message `messageId` that a send from session `sessionId` quotes (`field`
 * `reply_to`) or reacts to (`reaction`), for a send to `to` (an address: a number or a user id; null when the caller gave
 * no recipient, which only a reaction may do). The message must be one of the session's own chat
 * with that contact: an outgoing message of the session to them, or an incoming one from them.
 * A reaction is not quoted or reacted to (Meta: a reaction to a reaction is not delivered,
 * "Reaction messages" in the Cloud API reference).
 * @throws ApiError `reply_to_not_found` (422) for no such message of the account, or a reaction;
 *   `reply_to_other_chat` (`reaction_other_chat` for a reaction, 422) for another session's
 *   message or another contact's; `reply_to_not_sent` (409) for a message the network has no id
 *   for yet (queued, scheduled, failed before sending).
 */
export async function quoteTarget(
  db: Db,
  input: {
    accountId: string;
    sessionId: string;
    messageId: string;
    to: string | null;
    field: "reply_to" | "reaction";
  },
): Promise<QuoteTarget> {
  const path = input.field === "reaction" ? "reaction.message_id" : "reply_to";
  const row = await findMessage(db, input.accountId, input.messageId);
  if (!row || row.type === "reaction") {
    throw new ApiError(
      "reply_to_not_found",
      row ? "A reaction cannot be quoted or reacted to." : "The account has no such message.",
      { fields: { [path]: [row ? "a reaction cannot be quoted or reacted to" : "no such message"] } },
    );
  }
  const chat = row.direction === "outgoing" ? row.toNumber : (row.fromNumber ?? row.contact?.userId ?? null);
  // The chat's contact answers to each of their identifiers: a reply by user id to a message that
  // came by number (or the other way round) is the same chat (docs/contacts.md, Contacts).
  const known = [chat, row.contact?.phoneNumber, row.contact?.userId].filter((a): a is string => Boolean(a));
  if (row.chatappSessionId !== input.sessionId || !chat || (input.to !== null && !known.includes(input.to))) {
    throw new ApiError(
      input.field === "reaction" ? "reaction_other_chat" : "reply_to_other_chat",
      "The message belongs to another chat: a reply or reaction goes to the chat of the message, on the session that sent or received it.",
      { fields: { [path]: ["another chat's message"] } },
    );
  }
  if (!row.providerMessageId) {
    throw new ApiError(
      "reply_to_not_sent",
      `The message is ${row.status} and has no id on the network yet: reply or react once it is sent.`,
    );
  }
  return {
    id: row.id,
    chat: input.to ?? chat,
    quoted: { providerMessageId: row.providerMessageId, fromMe: row.direction === "outgoing" },
  };
}

/** One user-perceived character (grapheme cluster), by `Intl.Segmenter`. */
const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });

/** A pictographic emoji, a flag's regional indicator or a keycap (`1️⃣`). */
const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u;

/**
 * Whether `value` may be a reaction: "" (takes the reaction off, as WAHA's `reaction`, Evolution
 * API's `reaction` and Meta's `emoji` take it) or exactly one grapheme that is an emoji (WhatsApp
 * shows one emoji per reaction; skin tones, ZWJ sequences, flags and keycaps are one grapheme).
 */
export function isReactionEmoji(value: string): boolean {
  if (value === "") return true;
  const parts = [...graphemes.segment(value)];
  return parts.length === 1 && EMOJI.test(value);
}
