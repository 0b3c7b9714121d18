import type { TypingOutcome } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { typingCall } from "../typing";
import { numberOf } from "./recipient";

/**
 * Shows "typing…" for `ms` milliseconds in instance `sessionId`'s chat with `to` (E.164, or a LID as
 * it is: recipient.ts `numberOf`): `POST
 * /chat/sendPresence/{instance}` with `{ number, delay, presence: "composing" }`, the fields its
 * `presenceSchema` requires (src/validate/chat.schema.ts of EvolutionAPI/evolution-api). Its
 * Baileys channel (`sendPresence`) sends `composing`, waits `delay` ms, sends `paused`, and only
 * then answers: so the call may take `ms` beyond the usual timeout, and there is nothing to stop.
 * Never throws: a failed call is `shown: false` with the `GatewayError` message.
 */
export function evolutionTyping(
  http: GatewayHttp,
  sessionId: string,
  to: string,
  ms: number,
): Promise<TypingOutcome> {
  return typingCall(() =>
    gatewayRequest(http, {
      method: "POST",
      path: `/chat/sendPresence/${encodeURIComponent(sessionId)}`,
      body: { number: numberOf(to), delay: ms, presence: "composing" },
      timeoutMs: http.timeoutMs + ms,
    }),
  );
}
