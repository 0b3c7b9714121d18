import { z } from "zod";
import { type GatewayHttp, gatewayRequest } from "../http";

/*
 * Whether a WhatsApp Business Account holds a business number: `GET /{Version}/{WABA-ID}/phone_numbers`
 * (Meta's OpenAPI document business-messaging-api_v23.0.yaml, operation
 * `getWhatsAppBusinessAccountPhoneNumbers`, answer `WhatsAppBusinessAccountPhoneNumbersConnection`:
 * `data[]` of `WhatsAppBusinessAccountPhoneNumber`, whose `id` is the Phone-Number-ID, and
 * `paging` as `CursorPaging`). The document's phone number node (`PhoneNumberInfo`) has no field
 * naming its WABA, so the WABA's edge is read, with the caller's token: a token that cannot read
 * the WABA is refused by Meta, and one that can finds the number there only if the WABA holds it.
 */

/** One page of the edge: `data[].id`, and `paging` with `cursors.after` and `next` while more follow. */
const PhoneNumberPage = z.looseObject({
  data: z.array(z.looseObject({ id: z.string().min(1) })),
  paging: z
    .looseObject({
      cursors: z.looseObject({ after: z.string().optional() }).optional(),
      next: z.string().optional(),
    })
    .optional(),
});

/** Numbers asked for per page: the document's `limit` goes to 100. */
export const PHONE_NUMBER_PAGE_SIZE = 100;
/** Most pages read (so the first 2,000 numbers of a WABA): a bound on a looping `paging.next`. */
export const MAX_PHONE_NUMBER_PAGES = 20;

/**
 * True when WABA `wabaId` lists number `phoneNumberId` on its `phone_numbers` edge, read with the
 * token of `http` (the document's default fields, {@link PHONE_NUMBER_PAGE_SIZE} a page), page by
 * page while Meta gives a `paging.next`, for at most {@link MAX_PHONE_NUMBER_PAGES} pages; it stops
 * at the page that lists the number. False when no page read lists it.
 * @throws GatewayError as `gatewayRequest` does: Meta's refusal (a WABA the token may not read or
 *   that does not exist: error 100, 200 or 803) is permanent, with Meta's error in its body
 *   (graph.ts `graphErrorOf`).
 */
export async function wabaHoldsNumber(
  http: GatewayHttp,
  wabaId: string,
  phoneNumberId: string,
): Promise<boolean> {
  let after: string | undefined;
  for (let page = 0; page < MAX_PHONE_NUMBER_PAGES; page++) {
    const query = new URLSearchParams({ limit: String(PHONE_NUMBER_PAGE_SIZE) });
    if (after) query.set("after", after);
    const answer = await gatewayRequest(http, {
      method: "GET",
      path: `/${encodeURIComponent(wabaId)}/phone_numbers?${query}`,
      schema: PhoneNumberPage,
    });
    if (answer.data.some((number) => number.id === phoneNumberId)) return true;
    after = answer.paging?.cursors?.after;
    if (!answer.paging?.next || !after) return false;
  }
  return false;
}
