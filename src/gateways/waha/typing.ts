import type { TypingOutcome } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { digitsOf } from "../jid";
import { typingCall } from "../typing";

/**
 * Starts or stops "typing…" in session `sessionId`'s chat with E.164 `to`: `POST /api/startTyping`
 * or `POST /api/stopTyping` with `{ session, chatId }` (WAHA's "Chatting" API, `ChatRequest`; the
 * answer's body is not read). The chat id is `<digits>@c.us`, WAHA's form, without the lookup the
 * send makes (a number whose chat id differs, as some Brazilian ones do, may show nothing).
 * Never throws: a failed call is `shown: false` with the `GatewayError` message.
 */
export function wahaTyping(
  http: GatewayHttp,
  sessionId: string,
  to: string,
  state: "start" | "stop",
): Promise<TypingOutcome> {
  return typingCall(() =>
    gatewayRequest(http, {
      method: "POST",
      path: state === "start" ? "/api/startTyping" : "/api/stopTyping",
      body: { session: sessionId, chatId: `${digitsOf(to)}@c.us` },
    }),
  );
}
