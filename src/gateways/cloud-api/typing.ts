import type { TypingOutcome } from "../gateway";
import type { GatewayHttp } from "../http";
import { typingCall } from "../typing";
import { postReadReceipt } from "./read";

/** Why the Cloud API showed no typing: the contact never wrote to the number (Meta needs a message id). */
export const NO_INCOMING_MESSAGE = "no_incoming_message";

/**
 * Shows "typing…" from number `phoneNumberId` in reply to `messageId`, the id of a message the
 * contact sent it (null: nothing is called, `shown: false`, {@link NO_INCOMING_MESSAGE}): a read
 * receipt with the indicator (read.ts `postReadReceipt`: `{ messaging_product: "whatsapp", status:
 * "read", message_id, typing_indicator: { type: "text" } }`, the body of the example "Send typing
 * indicator and read receipt" of Meta's OpenAPI document, business-messaging-api_v23.0.yaml; it
 * marks that message read too). Meta dismisses the indicator when the number sends its message,
 * or after 25 s (Meta, "Typing indicators"). Never throws: a refusal is `shown: false` with its
 * message.
 */
export function cloudApiTyping(
  http: GatewayHttp,
  phoneNumberId: string,
  messageId: string | null,
): Promise<TypingOutcome> {
  if (messageId === null) return Promise.resolve({ shown: false, reason: NO_INCOMING_MESSAGE });
  return typingCall(() => postReadReceipt(http, phoneNumberId, messageId, true));
}
