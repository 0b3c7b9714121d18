import type { MessageRow, MessageType } from "../messages/message-record";

/**
 * One recipient's message on the outbound Queue: everything the session object needs to send
 * it, so the fan-out reads nothing back from D1.
 */
export interface DispatchRequest {
  id: string;
  accountId: string;
  sessionId: string;
  to: string;
  type: MessageType;
  content: string | null;
  mediaUrl: string | null;
  /** Milliseconds the session waits after its previous gateway call before sending this one. */
  delayBetween: number;
  /** Creation time (epoch ms), then `sendRef`, then `sendIndex`: the order of acceptance. */
  acceptedAt: number;
  /** Identifies the send request (its charge's ledger id): keeps concurrent sends apart. */
  sendRef: string;
  sendIndex: number;
  /** Epoch ms before which it must not be sent (`scheduled_at`), or null. */
  notBefore: number | null;
  /** Dispatch lane: 0 for one-time codes, 1 for bulk. Lower goes first (README, One-time codes). */
  priority: 0 | 1;
}

/**
 * Builds the queue message of a created message row. `content` replaces the row's (a one-time
 * code's message carries its code here only; the row holds it masked).
 */
export function dispatchRequestOf(row: MessageRow, priority: 0 | 1, content = row.content): DispatchRequest {
  return {
    id: row.id,
    accountId: row.accountId,
    sessionId: row.chatappSessionId ?? "",
    to: row.toNumber,
    type: row.type,
    content,
    mediaUrl: row.mediaUrl,
    delayBetween: row.delayBetween,
    acceptedAt: row.createdAt,
    sendRef: row.chargeId ?? row.id,
    sendIndex: row.sendIndex,
    notBefore: row.scheduledAt,
    priority,
  };
}
