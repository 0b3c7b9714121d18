import type { Db } from "../db/client";
import { writeDeleted } from "../messages/edits";
import { parseMessageMetadata } from "../messages/metadata";
import { unwrap } from "../sessions/result";
import { sessionStub } from "../sessions/stub";
import { type FoundMessage, requireWithin, sentMessageOf } from "./sent";

/**
 * How long after it was sent a message can be deleted for everyone: 48 hours. WhatsApp allows
 * "about 2 days" (WhatsApp Help Center, "How to delete messages",
 * https://faq.whatsapp.com/1060116227732958); the service stops at the safe end of it.
 */
export const DELETE_WINDOW_MS = 48 * 3600 * 1000;

/**
 * Deletes for everyone the account's sent message `messageId` (`DELETE /v1/chatapp/messages/{id}`;
 * docs/messages.md, Chat actions): the session object asks the gateway (src/gateways/gateway.ts
 * `ChatGateway.deleteMessage`), then the message gets `metadata.deleted_at` and a
 * `message.deleted` event, in one batch (src/messages/edits.ts `writeDeleted`). Its content stays:
 * the account's record of what it sent.
 *
 * Lost answers: a message already deleted answers as it is, with no gateway call and no second
 * event; one whose answer was lost before the batch is deleted again at the gateway (a no-op
 * there) and then recorded once.
 * @returns the message as it now stands, or null when the account has no such message.
 * @throws ApiError as src/chat-actions/sent.ts `sentMessageOf`; `message_too_old` (409) past
 *   {@link DELETE_WINDOW_MS}; `not_supported_by_gateway` (409; the Cloud API), `session_not_connected`
 *   (409), `gateway_rejected` (502), `gateway_unavailable` (503) from the session object.
 */
export async function deleteMessage(
  env: Env,
  db: Db,
  accountId: string,
  messageId: string,
  now: number,
): Promise<FoundMessage | null> {
  const sent = await sentMessageOf(db, accountId, messageId);
  if (!sent) return null;
  if (parseMessageMetadata(sent.row.metadata).deleted_at) return sent.row;
  requireWithin(sent, DELETE_WINDOW_MS, now, "deleted for everyone");
  unwrap(await sessionStub(env, sent.sessionId).deleteMessage(sent.target));
  return (await writeDeleted(env, db, sent.row, now, now)).row;
}
