import { userIdKind } from "../../lib/contact-identity";
import type { TypingOutcome } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { digitsOf } from "../jid";
import { typingCall } from "../typing";

/**
 * Starts or stops "typing…" in session `sessionId`'s chat with `to`: `POST /api/startTyping`
 * or `POST /api/stopTyping` with `{ session, chatId }` (WAHA's "Chatting" API, `ChatRequest`; the
 * answer's body is not read). The chat id of an E.164 `to` is `<digits>@c.us`, WAHA's form, without
 * the lookup the send makes (a number whose chat id differs, as some Brazilian ones do, may show
 * nothing); a LID `to` (`<digits>@lid`) is a chat id as it is (send.ts `chatIdOf`).
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
      body: { session: sessionId, chatId: userIdKind(to) === "lid" ? to : `${digitsOf(to)}@c.us` },
    }),
  );
}
