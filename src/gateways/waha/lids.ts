import { z } from "zod";
import type { ContactIdentity } from "../../lib/contact-identity";
import { type GatewayHttp, gatewayRequest } from "../http";
import { lidOfJid, phoneOfJid } from "../jid";

/*
 * Mapping a LID to the user's phone number through WAHA. Sources: WAHA's docs, "Contacts → API -
 * Lids → Get Phone Number by LID" (https://waha.devlike.pro/docs/how-to/contacts/#api---lids,
 * devlikeapro/waha-docs content/docs/how-to/contacts/index.md) and its OpenAPI document
 * (static/swagger/openapi.json there, WAHA 2026.7.1: `GET /api/{session}/lids/{lid}`,
 * `LidsController_findPNByLid`, answering `LidToPhoneNumber`).
 */

/**
 * `LidToPhoneNumber`: `{ lid: "1111111@lid", pn: "3333333@c.us" }`, `pn` null when WAHA does not
 * know the number ("Response (Not Found)").
 */
const LidToPhoneNumber = z.looseObject({ lid: z.string().nullish(), pn: z.string().nullish() });

/**
 * The phone number behind LID `userId` (`<digits>@lid`) as session `sessionId` knows it: `GET
 * /api/{session}/lids/{lid}` with the `@` escaped (`%40`), as the docs ask. Answers `{ userId,
 * phoneNumber }` (E.164, from `pn`, a `<digits>@c.us` chat id) when WAHA knows it, else null: `pn`
 * null (the user did not share their number with the account: "Lids FAQ"), a `pn` that is not a
 * phone chat id, or a `userId` that is not a LID (no call is made).
 * @throws GatewayError for a failed call (unreachable, a timeout, an error status, another shape).
 */
export async function phoneOfLid(
  http: GatewayHttp,
  sessionId: string,
  userId: string,
): Promise<ContactIdentity | null> {
  const lid = lidOfJid(userId);
  if (!lid) return null;
  const mapping = await gatewayRequest(http, {
    method: "GET",
    path: `/api/${encodeURIComponent(sessionId)}/lids/${encodeURIComponent(lid)}`,
    schema: LidToPhoneNumber,
  });
  const phoneNumber = mapping.pn ? phoneOfJid(mapping.pn) : null;
  return phoneNumber ? { userId: lid, phoneNumber } : null;
}
