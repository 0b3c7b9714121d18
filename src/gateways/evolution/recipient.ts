import { userIdKind } from "../../lib/contact-identity";
import { digitsOf } from "../jid";

/*
 * A recipient as Evolution API's bodies name it. Sources, by path in
 * evolution-foundation/evolution-api (tags 2.3.6 and 2.4.0-rc2): src/utils/createJid.ts
 * (`createJid`, which every send, presence and lookup `number` goes through: a value holding
 * `@lid`, `@s.whatsapp.net` or `@g.us` is the JID as it is, a device suffix `:<n>` dropped;
 * anything else is read as digits and becomes `<digits>@s.whatsapp.net`), and `whatsappNumber`
 * and `sendMessageWithTyping` of src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts
 * (a `@lid` JID is sent to without asking the network whether it is on WhatsApp: one Evolution's
 * number cache does not hold "is considered valid", and 2.4.0-rc never refuses one).
 */

/**
 * The `number` of a send or presence body for `to` (OutboundMessage.to): a LID
 * (src/lib/contact-identity.ts `userIdKind` `lid`, `<digits>@lid`) as it is, which `createJid`
 * keeps; an E.164 number as its digits.
 */
export function numberOf(to: string): string {
  return userIdKind(to) === "lid" ? to : digitsOf(to);
}

/**
 * The chat's JID for `to`, as a message key's `remoteJid` holds it: a LID as it is, an E.164
 * number as `<digits>@s.whatsapp.net` (`createJid`).
 */
export function chatJidOf(to: string): string {
  return userIdKind(to) === "lid" ? to : `${digitsOf(to)}@s.whatsapp.net`;
}
