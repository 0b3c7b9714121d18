import { z } from "zod";
import { log } from "../../lib/log";
import { unknownNumbers } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { digitsOf } from "../jid";

/*
 * Asking Evolution API whether numbers are on WhatsApp. Sources, by path in
 * evolution-foundation/evolution-api (2.3.7): src/api/routes/chat.router.ts (`POST
 * /chat/whatsappNumbers/{instance}`, validated by `whatsappNumberSchema` of
 * src/validate/chat.schema.ts: `{ numbers: string[] }`, at least one, unique), `whatsappNumber` of
 * src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts (Baileys' `onWhatsApp`, behind
 * Evolution's own cache of numbers found), answering an `OnWhatsAppDto` per number
 * (src/api/dto/chat.dto.ts: `{ jid, exists, number, name?, lid? }`, `number` as it was asked).
 * The router answers any failure 400, a closed connection included.
 */

/** `OnWhatsAppDto` fields used here: whether the number exists, and the number as asked. */
const OnWhatsApp = z.looseObject({ exists: z.boolean(), number: z.string() });

/**
 * Whether each of `numbers` (E.164) is on WhatsApp, in one call for them all: each asked as its
 * digits, and answered by the entry whose `number` is those digits (`exists`; a Brazilian,
 * Mexican or Argentinian number may come back under another `jid`, still under the number
 * asked). A number the answer does not name is null; so is every number when the call fails (an
 * error status, a timeout, an answer of another shape). Never throws.
 */
export async function checkNumbers(
  http: GatewayHttp,
  sessionId: string,
  numbers: string[],
): Promise<Map<string, boolean | null>> {
  const answers = unknownNumbers(numbers);
  if (numbers.length === 0) return answers;
  let found: z.output<typeof OnWhatsApp>[];
  try {
    found = await gatewayRequest(http, {
      method: "POST",
      path: `/chat/whatsappNumbers/${sessionId}`,
      body: { numbers: numbers.map(digitsOf) },
      schema: z.array(OnWhatsApp),
    });
  } catch (error) {
    log.warn("number_check_failed", { gateway: "evolution", error });
    return answers;
  }
  const byDigits = new Map(numbers.map((number) => [digitsOf(number), number]));
  for (const entry of found) {
    const number = byDigits.get(entry.number);
    if (number) answers.set(number, entry.exists);
  }
  return answers;
}
