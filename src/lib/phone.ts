import { parsePhoneNumberFromString } from "libphonenumber-js/max";

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
