import { type SQL, sql } from "drizzle-orm";
import { accountNumberOf } from "../db/queries/accounts";
import type { MessageStatus } from "../db/schema";

/**
 * Every move an incoming message's status may make, and the only place that moves it (outgoing
 * messages move by src/moves/message.ts `MESSAGE_TRANSITIONS`). An incoming message is stored
 * `delivered` (src/db/queries/messages.ts `incomingRow`); `marked_read`: the session told the
 * network it read it (docs/messages.md, Chat actions), and `read_at` records when.
 */
export const INCOMING_TRANSITIONS = {
  marked_read: { from: ["delivered"], to: "read" },
} as const satisfies Record<string, { from: readonly MessageStatus[]; to: MessageStatus }>;

/** The incoming message a read receipt names, as the move needs it (a `messages` row's columns). */
export interface ReadMessage {
  accountId: string;
  chatappSessionId: string;
  /** The chat's contact, or null for a message stored without one (then `fromNumber` names the chat). */
  contactId: string | null;
  fromNumber: string | null;
  /** Epoch ms. */
  createdAt: number;
}

/**
 * The UPDATE of a `marked_read` move ({@link INCOMING_TRANSITIONS}): `message` and the chat's
 * earlier incoming messages, as WhatsApp marks them (Meta, "Mark messages as read": "also marks
 * earlier messages in the thread as read"). The chat is the same session's messages from the same
 * contact (by `contact_id`, else by `from_number`), created at or before `message`; only those
 * still `delivered` move, to `read` with `read_at` and `updated_at` set to `at` (epoch ms), so a
 * repeated receipt changes nothing. Read through `messages_account_contact` or
 * `messages_account_from`. @returns the statement; `changes` counts the messages marked.
 */
export function markedReadStatement(message: ReadMessage, at: number): SQL {
  const { from, to } = INCOMING_TRANSITIONS.marked_read;
  const chat =
    message.contactId !== null
      ? sql`contact_id = ${message.contactId}`
      : sql`from_number = ${message.fromNumber ?? ""}`;
  return sql`UPDATE messages SET status = ${to}, read_at = ${at}, updated_at = ${at}
    WHERE account_number = ${accountNumberOf(message.accountId)} AND ${chat}
      AND created_at <= ${message.createdAt} AND chatapp_session_id = ${message.chatappSessionId}
      AND direction = 'incoming' AND status IN ${sql.raw(`(${from.map((s) => `'${s}'`).join(", ")})`)}`;
}
