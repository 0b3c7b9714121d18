import { toE164 } from "../lib/phone";

/**
 * WhatsApp-style chat ids ("JIDs"): `<digits>@c.us` (WAHA) or `<digits>@s.whatsapp.net`
 * (Evolution API, Baileys), where the digits are the E.164 number without `+`. A linked device's
 * own id may carry a device suffix (`<digits>:12@s.whatsapp.net`). A user may also be addressed by
 * a LID, `<digits>@lid`, "a hidden user ID" that is not a phone number (WAHA's docs, "Receive
 * messages → chatId, from, to, participant", devlikeapro/waha-docs
 * content/docs/how-to/receive-messages/-chat-ids.md).
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

/**
 * A LID chat id (`<digits>@lid`, with or without a device part `<digits>:<device>@lid`) → the
 * user's LID `<digits>@lid` (src/lib/contact-identity.ts `LID_PATTERN`), or null for any other
 * id. The device part is dropped as WAHA does itself (WAHA changelog 2026.4.1, "strip device part
 * from LID JID": https://waha.devlike.pro/docs/overview/changelog/).
 */
export function lidOfJid(jid: string): string | null {
  const match = jid.match(/^(\d{1,32})(?::\d+)?@lid$/);
  return match?.[1] ? `${match[1]}@lid` : null;
}
