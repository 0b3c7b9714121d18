/**
 * The opt-out keywords: a contact whose whole message is one of these is added to the account's
 * suppression list (src/messages/receive.ts), and bulk campaigns then skip the number.
 *
 * The list follows carrier STOP handling: the CTIA Messaging Principles and Best Practices ask
 * that a consumer can opt out by replying STOP or a similar word, and Twilio's default opt-out
 * keywords ("Twilio support for opt-out keywords (SMS STOP filtering)",
 * https://help.twilio.com/articles/223134027) are STOP, STOPALL, UNSUBSCRIBE, CANCEL, END and
 * QUIT; the default here is three of them. Matching follows Twilio:
 * only a message that is the keyword alone counts, trimmed and in any case (`stop`, ` Stop `),
 * never a keyword inside a longer text (`stop it please`).
 */
export const DEFAULT_OPT_OUT_KEYWORDS = ["STOP", "UNSUBSCRIBE", "CANCEL"] as const;

/**
 * The opt-out keyword that `text` is, upper case as listed in `keywords`, or null when the text is
 * anything else (also null, empty or only whitespace). `keywords` must be upper case.
 */
export function optOutKeyword(
  text: string | null,
  keywords: readonly string[] = DEFAULT_OPT_OUT_KEYWORDS,
): string | null {
  if (text === null) return null;
  const candidate = text.trim().toUpperCase();
  return keywords.includes(candidate) ? candidate : null;
}
