import type { Db } from "../db/client";
import { ApiError } from "../errors";
import { writeEdit } from "../messages/edits";
import { parseMessageMetadata } from "../messages/metadata";
import { unwrap } from "../sessions/result";
import { sessionStub } from "../sessions/stub";
import { type FoundMessage, requireWithin, sentMessageOf } from "./sent";

/**
 * How long after it was sent a text can be edited: 15 minutes (WhatsApp Help Center, "How to edit
 * messages", https://faq.whatsapp.com/550651040350788: "up to 15 minutes after sending").
 */
export const EDIT_WINDOW_MS = 15 * 60 * 1000;

/**
 * Edits the account's sent text `messageId` to `content` (`PATCH /v1/chatapp/messages/{id}`;
 * docs/messages.md, Chat actions): the session object asks the gateway (src/gateways/gateway.ts
 * `ChatGateway.editMessage`), then the message's `content` becomes `content`, its
 * `metadata.edits` gains `{ content, at }` (the text replaced) and `metadata.edited_at` is set,
 * with a `message.edited` event `{ message_id, session_id, content, previous_content, edited_at }`,
 * in one batch (src/messages/edits.ts `writeEdit`). A message's earlier events show its content as
 * it now is (events point at it); `edits` keeps what it said before.
 *
 * Lost answers: the same text again answers the message as it is, with no call and no event; an
 * edit whose answer was lost before the batch is made again at the gateway (the same text: the
 * message reads as one edit made it) and recorded once.
 * @returns the message as it now stands, or null when the account has no such message.
 * @throws ApiError as src/chat-actions/sent.ts `sentMessageOf`; `message_not_editable` (422) for
 *   a message that is not a text or was deleted; `message_too_old` (409) past
 *   {@link EDIT_WINDOW_MS}; from the session object as src/chat-actions/delete.ts `deleteMessage`.
 */
export async function editMessage(
  env: Env,
  db: Db,
  accountId: string,
  messageId: string,
  content: string,
  now: number,
): Promise<FoundMessage | null> {
  const sent = await sentMessageOf(db, accountId, messageId);
  if (!sent) return null;
  if (sent.row.type !== "text")
    throw new ApiError(
      "message_not_editable",
      `Only a text can be edited; this message is a ${sent.row.type}.`,
    );
  if (parseMessageMetadata(sent.row.metadata).deleted_at)
    throw new ApiError("message_not_editable", "The message was deleted for everyone.");
  if (sent.row.content === content) return sent.row;
  requireWithin(sent, EDIT_WINDOW_MS, now, "edited");
  unwrap(await sessionStub(env, sent.sessionId).editMessage(sent.target, content));
  return (await writeEdit(env, db, sent.row, { sessionId: sent.sessionId, content, at: now }, now)).row;
}
