import { ApiError } from "../errors";
import { countryOfNumber } from "../lib/phone";

/**
 * The geographic rule of an app's codes (README, One-time codes; modelled on Twilio Verify's geo
 * permissions, https://www.twilio.com/docs/verify/preventing-toll-fraud/verify-geo-permissions):
 * with `allowed_countries` set, a code goes only to numbers of those countries, which stops SMS
 * pumping to premium ranges elsewhere. The check reads nothing and writes nothing, so a refused
 * send has charged, stored and queued nothing.
 *
 * @param allowed upper-case ISO 3166-1 alpha-2 codes, or null for every country.
 * @param toNumber the recipient, E.164; its country comes from {@link countryOfNumber}.
 * @throws ApiError `otp_country_not_allowed` (422) when the number's country is not in `allowed`,
 *   or cannot be determined (a non-geographic number such as `+800…`) while `allowed` is set.
 */
export function assertCountryAllowed(allowed: readonly string[] | null, toNumber: string): void {
  if (allowed === null) return;
  const country = countryOfNumber(toNumber);
  if (country !== null && allowed.includes(country)) return;
  const list = allowed.join(", ");
  throw new ApiError(
    "otp_country_not_allowed",
    country === null
      ? `The number belongs to no single country (a non-geographic number), and this app sends codes only to numbers of its allowed_countries: ${list}.`
      : `The number is in ${country}, and this app sends codes only to numbers of its allowed_countries: ${list}.`,
  );
}
