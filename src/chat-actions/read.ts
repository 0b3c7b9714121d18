import type { Db } from "../db/client";
import { batchSql } from "../db/client";
import { findMessage } from "../db/queries/messages";
import { ApiError } from "../errors";
import { markedReadStatement } from "../moves/incoming-read";
import { unwrap } from "../sessions/result";
import { sessionStub } from "../sessions/stub";

/** What {@link markRead} did: the message as it now stands, and how many of the chat's messages moved to `read`. */
export interface MarkReadResult {
  message: NonNullable<Awaited<ReturnType<typeof findMessage>>>;
  marked: number;
}

/**
 * Marks the account's incoming message `messageId` read at the gateway, and with it the chat's
 * earlier ones (`POST /v1/chatapp/messages/{id}/read`; docs/messages.md, Chat actions): the session object
 * sends the read receipt (src/gateways/gateway.ts `ChatGateway.markRead`), then the stored
 * messages still `delivered` move to `read` with `read_at` (src/moves/incoming-read.ts).
 *
 * Lost answers: a receipt is idempotent at the network (a second one for the same message changes
 * nothing there) and the move changes only messages not yet read, so a caller that lost the answer
 * asks again; the receipt goes out again and nothing moves twice. A message already `read` still
 * sends its receipt (the network may not have had it) and moves nothing.
 * @returns null when the account has no such message (the route tells an archived one apart).
 * @throws ApiError `message_not_incoming` (422) for a message the session sent,
 *   `session_not_connected` (409; also for a message whose session was deleted),
 *   `gateway_rejected` (502) or `gateway_unavailable` (503) from the gateway.
 */
export async function markRead(
  env: Env,
  db: Db,
  accountId: string,
  messageId: string,
  now: number,
): Promise<MarkReadResult | null> {
  const row = await findMessage(db, accountId, messageId);
  if (!row) return null;
  if (row.direction !== "incoming")
    throw new ApiError("message_not_incoming", "Only a message a contact sent can be marked read.");
  const sessionId = row.chatappSessionId;
  if (!sessionId)
    throw new ApiError(
      "session_not_connected",
      "The message's session was deleted: nothing can tell the network.",
    );
  const chat = row.fromNumber ?? row.contact?.userId ?? null;
  // A message the gateway gave no id (none today) has no receipt to send: it is marked here alone.
  if (row.providerMessageId && chat)
    unwrap(await sessionStub(env, sessionId).markRead({ chat, providerMessageId: row.providerMessageId }));
  const [result] = await batchSql(db, [markedReadStatement({ ...row, chatappSessionId: sessionId }, now)]);
  const message = (await findMessage(db, accountId, messageId)) ?? row;
  return { message, marked: result?.meta.changes ?? 0 };
}
