import { userIdKind } from "../../lib/contact-identity";
import { type ChatMessageRef, GatewayError } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { digitsOf } from "../jid";

/*
 * Chat actions through WAHA (docs/messages.md, Chat actions), by WAHA's OpenAPI document (2026.7.1,
 * devlikeapro/waha-docs static/swagger/openapi.json): read receipts (`POST /api/sendSeen`,
 * `SendSeenRequest`), and deleting (`DELETE`) or editing (`PUT`, `EditMessageRequest`) a message
 * by `/api/{session}/chats/{chatId}/messages/{messageId}`. Each throws GatewayError as
 * http.ts `gatewayRequest` does (a 4xx permanent; a 5xx, timeout or lost connection not).
 */

/**
 * The chat id of the message `ref` names: the `{chatId}` part of WAHA's serialised message id
 * (`{fromMe}_{chatId}_{id}`, `MessageIdProperty`: the form acks and `message` events carry, which
 * events.ts stores for an incoming message and send.ts for a sent one), which is the chat the
 * message is in whatever the contact's address became since (a LID chat whose number WAHA told
 * later, a Brazilian number whose chat id lacks a digit); else the address as a chat id, as
 * send.ts `chatIdOf` forms one without a lookup: a LID as it is, a number (E.164) as
 * `<digits>@c.us`.
 * @throws GatewayError `recipient_not_supported` (permanent) for a BSUID address: WAHA has no
 *   chat id for one.
 */
export function chatIdOfMessage(ref: ChatMessageRef): string {
  const parts = ref.providerMessageId.split("_");
  if (parts.length >= 3 && (parts[0] === "true" || parts[0] === "false") && parts[1]) return parts[1];
  const kind = userIdKind(ref.chat);
  if (kind === "lid") return ref.chat;
  if (kind === "bsuid")
    throw new GatewayError("recipient_not_supported", true, null, "WAHA has no BSUID chats");
  return `${digitsOf(ref.chat)}@c.us`;
}

/**
 * Marks the contact's message `read` read (and with it the chat's earlier ones): `POST
 * /api/sendSeen` `{ session, chatId, messageIds: [id] }` (`SendSeenRequest`: `chatId` and `session`
 * required; `messageIds` the serialised ids, "In NOWEB and GOWS you can control what messages to
 * read by using `messagesIds`"; other engines read every unread message of the chat: "Send
 * messages → Send seen"). The deprecated `messageId` and `participant` (NOWEB, groups only) are
 * not sent. WAHA answers 201 with an object, which is not read.
 * @throws GatewayError as `gatewayRequest`, or as {@link chatIdOfMessage}.
 */
export async function markRead(http: GatewayHttp, sessionId: string, read: ChatMessageRef): Promise<void> {
  await gatewayRequest(http, {
    method: "POST",
    path: "/api/sendSeen",
    body: { session: sessionId, chatId: chatIdOfMessage(read), messageIds: [read.providerMessageId] },
  });
}

/** The path of message `ref` of session `sessionId`, its parts URL-encoded (`@` as `%40`). */
function messagePath(sessionId: string, ref: ChatMessageRef): string {
  return `/api/${encodeURIComponent(sessionId)}/chats/${encodeURIComponent(chatIdOfMessage(ref))}/messages/${encodeURIComponent(ref.providerMessageId)}`;
}

/** Deletes the session's message `target` for everyone: `DELETE /api/{session}/chats/{chatId}/messages/{messageId}`. */
export async function deleteMessage(
  http: GatewayHttp,
  sessionId: string,
  target: ChatMessageRef,
): Promise<void> {
  await gatewayRequest(http, { method: "DELETE", path: messagePath(sessionId, target) });
}

/**
 * Edits the session's text `target` to `text`: `PUT /api/{session}/chats/{chatId}/messages/{messageId}`
 * `{ text }` (`EditMessageRequest`; `linkPreview` left to WAHA's default).
 */
export async function editMessage(
  http: GatewayHttp,
  sessionId: string,
  target: ChatMessageRef,
  text: string,
): Promise<void> {
  await gatewayRequest(http, { method: "PUT", path: messagePath(sessionId, target), body: { text } });
}
