import { toE164 } from "../lib/phone";

/**
 * WhatsApp-style chat ids ("JIDs"): `<digits>@c.us` (WAHA) or `<digits>@s.whatsapp.net`
 * (Evolution API, Baileys), where the digits are the E.164 number without `+`. A linked device's
 * own id may carry a device suffix (`<digits>:12@s.whatsapp.net`).
 */

/** E.164 → bare digits, the form both gateways take as `number`/`chatId` stem. */
export function digitsOf(e164: string): string {
  return e164.replace(/^\+/, "");
}

/**
 * A chat id (or a bare number) → E.164, or null for ids that are not a phone number (groups
 * `@g.us`, broadcast lists, `@lid` privacy ids, newsletters).
 */
export function phoneOfJid(jid: string): string | null {
  const match = jid.match(/^(\d{6,15})(?::\d+)?(?:@(?:c\.us|s\.whatsapp\.net))?$/);
  return match?.[1] ? toE164(match[1]) : null;
}
