import { log } from "../../lib/log";
import { unknownNumbers } from "../gateway";
import type { GatewayHttp } from "../http";
import { chatIdOf } from "./send";

/*
 * Asking WAHA whether numbers are on the network. WAHA's OpenAPI document (devlikeapro/waha-docs,
 * static/swagger/openapi.json, WAHA 2026.7.1): `GET /api/contacts/check-exists?phone=&session=`
 * ("Check phone number is registered in WhatsApp") answers `WANumberExistResult`, `{ numberExists
 * (required), chatId }`, for one phone per call; send.ts `chatIdOf` makes that call.
 */

/** Calls under way at once: WAHA takes one phone per call, and the linked phone asks the network for each. */
const CONCURRENCY = 4;

/**
 * Whether each of `numbers` (E.164) is on the network, by one `check-exists` call per number,
 * {@link CONCURRENCY} at a time: `numberExists` as answered. The first call that fails (WAHA
 * unreachable, a timeout, an error status, an answer of another shape) ends the checks: that
 * number and every one not asked yet are null, so a gateway in trouble is not asked a hundred
 * times over. Never throws.
 */
export async function checkNumbers(
  http: GatewayHttp,
  sessionId: string,
  numbers: string[],
): Promise<Map<string, boolean | null>> {
  const answers = unknownNumbers(numbers);
  const waiting = [...numbers];
  let failed = false;
  const worker = async () => {
    for (let number = waiting.shift(); number !== undefined && !failed; number = waiting.shift()) {
      try {
        answers.set(number, (await chatIdOf(http, sessionId, number)) !== null);
      } catch (error) {
        failed = true;
        log.warn("number_check_failed", { gateway: "waha", error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, numbers.length) }, worker));
  return answers;
}
