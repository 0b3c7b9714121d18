import { z } from "zod";
import { GatewayError, type ReadReceipt } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { failureReason } from "./events";
import { graphErrorOf } from "./graph";
import { SEND_ERRORS } from "./send";

/*
 * Read receipts on the Cloud API: `POST /{Version}/{Phone-Number-ID}/messages` with the document's
 * `MarkMessageRequestPayload` (`{ messaging_product: "whatsapp", status: "read", message_id }`),
 * answered `MarkMessageResponsePayload` (`{ success: true }`); Meta's OpenAPI document,
 * business-messaging-api_v23.0.yaml, and its guide "Mark messages as read"
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read/). The
 * typing indicator (typing.ts) is the same call with `typing_indicator`.
 */

/** `MarkMessageResponsePayload`: `{ success: true }` (anything else is an answer we cannot read). */
const MarkMessageResponse = z.looseObject({ success: z.literal(true) });

/**
 * Posts a read receipt from number `phoneNumberId` for `messageId`, the wamid of a message a
 * contact sent it (the `messages[].id` of its webhook): the body is `{ messaging_product:
 * "whatsapp", status: "read", message_id }`, with `typing_indicator: { type: "text" }` when
 * `typingIndicator` (the document's example "Send typing indicator and read receipt"). Meta marks
 * the chat's earlier messages read with it ("Mark messages as read").
 * @throws GatewayError as `gatewayRequest` (permanent for a 4xx other than 408 and 429;
 *   `gateway_bad_response` for an answer other than `{ success: true }`).
 */
export async function postReadReceipt(
  http: GatewayHttp,
  phoneNumberId: string,
  messageId: string,
  typingIndicator: boolean,
): Promise<void> {
  await gatewayRequest(http, {
    method: "POST",
    path: `/${encodeURIComponent(phoneNumberId)}/messages`,
    body: {
      messaging_product: "whatsapp",
      status: "read",
      message_id: messageId,
      ...(typingIndicator ? { typing_indicator: { type: "text" } } : {}),
    },
    schema: MarkMessageResponse,
  });
}

/**
 * Marks the contact's message `read.providerMessageId` read from number `phoneNumberId`
 * ({@link postReadReceipt} without the indicator). Meta names the chat by the message alone, so
 * `read.chat` is not sent. A refusal Meta explains (`GraphAPIError`) becomes a GatewayError whose
 * reason is events.ts `failureReason` of its code (`token_invalid` for 190, `throttled` for
 * 130429, else `meta_error_<code>`) and whose detail is Meta's message: permanent as the HTTP
 * status says (a 4xx), except Meta's throttling codes (send.ts `SEND_ERRORS`, `retryable`), which
 * a later receipt may pass. Other failures are `gatewayRequest`'s.
 * @throws GatewayError as above.
 */
export async function markRead(http: GatewayHttp, phoneNumberId: string, read: ReadReceipt): Promise<void> {
  try {
    await postReadReceipt(http, phoneNumberId, read.providerMessageId, false);
  } catch (error) {
    const graph = graphErrorOf(error);
    if (!graph || !(error instanceof GatewayError)) throw error;
    const detail = graph.details ? `${graph.message} (${graph.details})` : graph.message;
    const permanent = error.permanent && SEND_ERRORS[graph.code]?.retryable !== true;
    throw new GatewayError(failureReason(graph.code), permanent, error.status, detail, error.body);
  }
}
