import { z } from "zod";
import { userIdKind } from "../../lib/contact-identity";
import { GatewayError, type ReadReceipt } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { chatJidOf } from "./recipient";

/*
 * Read receipts through Evolution API v2. Sources, by path in evolution-foundation/evolution-api:
 * src/api/routes/chat.router.ts (`POST /chat/markMessageAsRead/{instance}`, answered 201),
 * `readMessageSchema` of src/validate/chat.schema.ts and `ReadMessageDto` of src/api/dto/chat.dto.ts
 * (the body), and the Baileys channel's `markMessageAsRead`
 * (src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts), which hands the keys to
 * Baileys' `readMessages` and answers `{ message: "Read messages", read: "success" }`, or 500
 * "Read messages fail" when Baileys throws (a closed connection).
 */

/** `markMessageAsRead`'s answer: `{ message: "Read messages", read: "success" }`. */
const ReadAnswer = z.looseObject({ read: z.literal("success") });

/**
 * Marks the contact's message `read.providerMessageId` read in instance `sessionId`: `POST
 * /chat/markMessageAsRead/{instance}` with `{ readMessages: [{ remoteJid, fromMe: false, id }] }`,
 * the message's Baileys key (`readMessageSchema`: `readMessages` at least one key, each with `id`
 * and `remoteJid` non-empty strings and `fromMe` a boolean, all three required). `id` is the
 * message's `key.id`, which events.ts stores as an incoming message's provider message id;
 * `remoteJid` is the chat's JID for `read.chat` (recipient.ts `chatJidOf`): `<digits>@s.whatsapp.net`
 * for an E.164 number, a LID (`<digits>@lid`) as it is. `fromMe` is false: the message is the
 * contact's. WhatsApp marks the chat's earlier messages read with it.
 *
 * A LID chat's receipt is sent by Evolution from 2.4.0-rc1 on (`markMessageAsRead` skips only
 * broadcast and newsletter JIDs); releases 2.3.x keep only group and phone JIDs (`isJidGroup ||
 * isPnUser`) and answer success without sending it. A contact known by a number goes by its number.
 * @throws GatewayError `recipient_not_supported` (permanent, no call) for a chat that is a
 *   business-scoped user id, which Evolution's network addresses do not include; otherwise as
 *   `gatewayRequest` (permanent for a 4xx other than 408 and 429, such as the instance unknown;
 *   transient for the 500 of a closed connection; `gateway_bad_response` for an answer without
 *   `read: "success"`).
 */
export async function markRead(http: GatewayHttp, sessionId: string, read: ReadReceipt): Promise<void> {
  if (userIdKind(read.chat) === "bsuid") {
    throw new GatewayError("recipient_not_supported", true, null, "Evolution API has no BSUID chats");
  }
  await gatewayRequest(http, {
    method: "POST",
    path: `/chat/markMessageAsRead/${encodeURIComponent(sessionId)}`,
    body: { readMessages: [{ remoteJid: chatJidOf(read.chat), fromMe: false, id: read.providerMessageId }] },
    schema: ReadAnswer,
  });
}
