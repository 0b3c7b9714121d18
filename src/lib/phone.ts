import { isSupportedCountry, parsePhoneNumberFromString } from "libphonenumber-js/max";

/**
 * Parses a phone number in international format and returns it as E.164 (`+447700900123`), or
 * null when it is not a valid number. Spaces, dashes, dots and brackets are allowed; a leading
 * `+` is assumed when missing (`447700900123`), since chat networks address numbers
 * internationally. Validity follows libphonenumber's full metadata (`libphonenumber-js/max`).
 */
export function toE164(input: string): string | null {
  const trimmed = input.trim();
  if (trimmed.length === 0 || trimmed.length > 32) return null;
  const international = trimmed.startsWith("+") ? trimmed : `+${trimmed}`;
  const parsed = parsePhoneNumberFromString(international);
  return parsed?.isValid() ? parsed.number : null;
}

/**
 * Whether `code` is a country that phone numbers belong to: an upper-case ISO 3166-1 alpha-2 code
 * (`GB`) that libphonenumber's metadata has a numbering plan for, so that {@link countryOfNumber}
 * can return it. That is 245 codes: ISO's assigned codes with phone numbers, plus `XK` (Kosovo,
 * user-assigned in ISO) and `AC`/`TA` (Ascension, Tristan da Cunha, exceptionally reserved), which
 * have numbering plans of their own. Case-sensitive: `gb` is false.
 */
export function isPhoneCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

/**
 * The country an E.164 number belongs to, as an upper-case ISO 3166-1 alpha-2 code (`+1 613…` →
 * `CA`, `+1 415…` → `US`: numbers sharing a calling code are told apart by libphonenumber's
 * full metadata). Null when no single country can be named: a non-geographic number (`+800`
 * freephone, `+882`/`+883` international networks) or input that does not parse.
 */
export function countryOfNumber(e164: string): string | null {
  return parsePhoneNumberFromString(e164)?.country ?? null;
}
