import { z } from "zod";
import { userIdKind } from "../../lib/contact-identity";
import { type ChatMessageRef, GatewayError } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { errorMessages, statusOf } from "./errors";
import { chatJidOf, numberOf } from "./recipient";

/*
 * Deleting a sent message for everyone and editing a sent text through Evolution API v2 (docs/messages.md,
 * Chat actions). Sources, by path in EvolutionAPI/evolution-api (`develop`, 2.4.0-rc):
 * src/api/routes/chat.router.ts (`DELETE /chat/deleteMessageForEveryone/{instance}`, answered
 * 201; `POST /chat/updateMessage/{instance}`, answered 200), `deleteMessageSchema` and
 * `updateMessageSchema` of src/validate/chat.schema.ts with `DeleteMessage` and
 * `UpdateMessageDto` of src/api/dto/chat.dto.ts (the bodies), and the Baileys channel's
 * `deleteMessage`, `formatUpdateMessage` and `updateMessage`
 * (src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts), which hand Baileys'
 * `sendMessage` a `{ delete: key }` or `{ text, edit: key }` and answer the protocol message
 * Baileys sent (https://github.com/WhiskeySockets/Baileys, src/Utils/messages.ts at v7.0.0-rc.6,
 * the release Evolution's package.json names: a `protocolMessage` of type `REVOKE`, or of type
 * `MESSAGE_EDIT` with the new text as `editedMessage`).
 */

/** The `protocolMessage` Baileys sent: it names the message it deletes or edits by its key. */
const ProtocolMessage = z.looseObject({ key: z.looseObject({ id: z.string() }) });

/** `deleteMessage`'s answer: the revoke Baileys sent, `{ key, message: { protocolMessage }, … }`. */
const DeleteAnswer = z.looseObject({ message: z.looseObject({ protocolMessage: ProtocolMessage }) });

/**
 * `updateMessage`'s answer: the edit Baileys sent, its `protocolMessage` at `message` or, as the
 * channel also reads it, under `message.editedMessage.message`.
 */
const EditAnswer = z.looseObject({
  message: z.union([
    z.looseObject({ protocolMessage: ProtocolMessage }),
    z.looseObject({
      editedMessage: z.looseObject({ message: z.looseObject({ protocolMessage: ProtocolMessage }) }),
    }),
  ]),
});

/**
 * The Baileys key of the session's message `ref`: `{ id, remoteJid, fromMe: true }`, `id` its
 * `key.id` (send.ts stores it as the provider message id), `remoteJid` the chat's JID for
 * `ref.chat` (recipient.ts `chatJidOf`: `<digits>@s.whatsapp.net` for an E.164 number, a LID as
 * it is), the form a reply's `quoted.key` takes too (send.ts).
 * @throws GatewayError `recipient_not_supported` (permanent) for a chat that is a business-scoped
 *   user id, which Evolution's network addresses do not include (as read.ts `markRead`).
 */
function sentKeyOf(ref: ChatMessageRef): { id: string; remoteJid: string; fromMe: true } {
  if (userIdKind(ref.chat) === "bsuid") {
    throw new GatewayError("recipient_not_supported", true, null, "Evolution API has no BSUID chats");
  }
  return { id: ref.providerMessageId, remoteJid: chatJidOf(ref.chat), fromMe: true };
}

/**
 * Deletes for everyone the message `target` instance `sessionId` sent: `DELETE
 * /chat/deleteMessageForEveryone/{instance}` with the JSON body `{ id, remoteJid, fromMe: true }`
 * (`deleteMessageSchema`: `id` and `remoteJid` strings and `fromMe` a boolean, all three required;
 * `participant`, a group member's JID, is not sent: the session's chats are one-to-one), the
 * message's key ({@link sentKeyOf}). The channel's `deleteMessage` hands it to Baileys as
 * `{ delete: key }` without looking the message up, so a message deleted already, or one
 * Evolution does not hold, is deleted again as a no-op on the network; it answers 201 with the
 * revoke Baileys sent.
 * @throws GatewayError as {@link sentKeyOf} (no call); otherwise as `gatewayRequest`: transient
 *   for the 500 "Error while deleting message for everyone" of a Baileys failure (a closed
 *   connection), permanent for a 4xx (the instance unknown, 404); `gateway_bad_response`
 *   (transient) for an answer without the revoke's `message.protocolMessage`.
 */
export async function deleteMessage(
  http: GatewayHttp,
  sessionId: string,
  target: ChatMessageRef,
): Promise<void> {
  await gatewayRequest(http, {
    method: "DELETE",
    path: `/chat/deleteMessageForEveryone/${encodeURIComponent(sessionId)}`,
    body: sentKeyOf(target),
    schema: DeleteAnswer,
  });
}

/**
 * Edits the text `target` instance `sessionId` sent to `text`: `POST
 * /chat/updateMessage/{instance}` `{ number, text, key: { id, remoteJid, fromMe: true } }`
 * (`updateMessageSchema`: `number` and `text` strings, not empty; `key` an object with `id` and
 * `remoteJid` strings and `fromMe` a boolean, all three required). `number` is the send's `number`
 * for the chat (recipient.ts `numberOf`), so Evolution's `createJid` makes of it the JID it made
 * of the send's; `key` as {@link sentKeyOf}. `linkPreview` and the other `Metadata` fields are not
 * sent (the channel uses only these three).
 *
 * With `DATABASE_SAVE_DATA_NEW_MESSAGE=true` (which lookup.ts needs too) the channel first finds
 * the message in its store by `key.id` and checks it ({@link editRefusal}); then it hands Baileys
 * `{ text, edit: key }` and answers 200 with the edit Baileys sent. The same text again is edited
 * again, which leaves the message as one edit did.
 * @throws GatewayError as {@link sentKeyOf} (no call); as {@link editRefusal}; otherwise as
 *   `gatewayRequest` (transient for a 500: Baileys' "Connection Closed"; `gateway_bad_response`
 *   for an answer without the edit's `protocolMessage`).
 */
export async function editMessage(
  http: GatewayHttp,
  sessionId: string,
  target: ChatMessageRef,
  text: string,
): Promise<void> {
  const key = sentKeyOf(target);
  try {
    await gatewayRequest(http, {
      method: "POST",
      path: `/chat/updateMessage/${encodeURIComponent(sessionId)}`,
      body: { number: numberOf(target.chat), text, key },
      schema: EditAnswer,
    });
  } catch (error) {
    throw editRefusal(error);
  }
}

/**
 * Evolution's refusals of an edit (`updateMessage` and `formatUpdateMessage` of the Baileys
 * channel), by the text of `response.message` (errors.ts `errorMessages`), each a permanent
 * GatewayError with a reason of its own:
 * - 400 "Message not compatible": the store holds no text, image or video by `key.id` (a message
 *   it never stored, or one it deleted) → `message_not_found`; so is 404 "Message not found";
 * - 400 "RemoteJid does not match": the stored message's `key.remoteJid` is not the JID
 *   `createJid` makes of `number` (a chat Evolution addressed under another JID) →
 *   `message_other_chat`;
 * - 400 "Message is older than 15 minutes" → `message_too_old` (the channel's check compares
 *   seconds with milliseconds and so does not fire as written; the caller checks WhatsApp's window
 *   first: src/chat-actions/edit.ts `EDIT_WINDOW_MS`);
 * - 400 "You cannot edit deleted messages" / "You cannot edit others messages", which the channel
 *   answers after Baileys sent the edit → `message_deleted` / `message_not_own`.
 * @returns the refusal as such a GatewayError (its status and body kept), or `error` as it is.
 */
function editRefusal(error: unknown): unknown {
  const status = statusOf(error);
  if (status !== 400 && status !== 404) return error;
  const texts = errorMessages(error).filter((item): item is string => typeof item === "string");
  const refusal = EDIT_REFUSALS.find(([pattern]) => texts.some((text) => pattern.test(text)));
  if (!refusal) return error;
  const [, reason, detail] = refusal;
  return new GatewayError(reason, true, status, detail, error instanceof GatewayError ? error.body : null);
}

/** The texts of Evolution's edit refusals, with the reason and detail each becomes ({@link editRefusal}). */
const EDIT_REFUSALS: readonly (readonly [RegExp, string, string])[] = [
  [/^Message not compatible$/i, "message_not_found", "Evolution API holds no text by this id"],
  [/^Message not found$/i, "message_not_found", "Evolution API holds no message by this id"],
  [/^RemoteJid does not match$/i, "message_other_chat", "Evolution API holds the message in another chat"],
  [/older than 15 minutes/i, "message_too_old", "Evolution API refuses edits after 15 minutes"],
  [/cannot edit deleted messages/i, "message_deleted", "the message was deleted"],
  [/cannot edit others messages/i, "message_not_own", "the message is not the session's own"],
];
