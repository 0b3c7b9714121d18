import type { Db } from "../db/client";
import { findMessage } from "../db/queries/messages";
import { ApiError } from "../errors";
import type { ChatMessageRef } from "../gateways/gateway";

/** The account's message as {@link findMessage} reads it. */
export type FoundMessage = NonNullable<Awaited<ReturnType<typeof findMessage>>>;

/** A message the session sent, as a delete or edit needs it: the row, its session, its chat and when it was sent. */
export interface SentMessage {
  row: FoundMessage;
  sessionId: string;
  target: ChatMessageRef;
  /** Epoch ms. */
  sentAt: number;
}

/**
 * The account's message `messageId` as a chat action on a sent message needs it (docs/messages.md,
 * Chat actions), or null when the account has no such message.
 * @throws ApiError `message_not_outgoing` (422) for a message a contact sent; `message_not_sent`
 *   (409) for one not on the network (queued, scheduled, failed); `session_not_connected` (409)
 *   for one whose session was deleted.
 */
export async function sentMessageOf(
  db: Db,
  accountId: string,
  messageId: string,
): Promise<SentMessage | null> {
  const row = await findMessage(db, accountId, messageId);
  if (!row) return null;
  if (row.direction !== "outgoing")
    throw new ApiError("message_not_outgoing", "Only a message the session sent can be deleted or edited.");
  if (!row.providerMessageId || row.sentAt === null || row.status === "failed")
    throw new ApiError(
      "message_not_sent",
      `The message is ${row.status} and not on the network: there is nothing to delete or edit yet.`,
    );
  if (!row.chatappSessionId)
    throw new ApiError(
      "session_not_connected",
      "The message's session was deleted: nothing can reach the network.",
    );
  return {
    row,
    sessionId: row.chatappSessionId,
    target: { chat: row.toNumber, providerMessageId: row.providerMessageId },
    sentAt: row.sentAt,
  };
}

/**
 * Refuses a chat action on a message sent longer than `windowMs` before `now` (epoch ms), as
 * WhatsApp does: 409 `message_too_old`, naming the window (`what`, e.g. "deleted for everyone").
 */
export function requireWithin(sent: SentMessage, windowMs: number, now: number, what: string): void {
  if (now - sent.sentAt > windowMs)
    throw new ApiError(
      "message_too_old",
      `WhatsApp lets a message be ${what} for ${Math.round(windowMs / 60_000)} minutes after it was sent; this one was sent ${Math.floor((now - sent.sentAt) / 60_000)} minutes ago.`,
    );
}
