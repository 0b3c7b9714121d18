import type { Db } from "../db/client";
import { phoneNumberOfUser } from "../db/queries/contacts";
import { ApiError } from "../errors";
import { isPhoneAddress, userIdKind } from "../lib/contact-identity";
import { countryOfNumber } from "../lib/phone";

/**
 * The country of a code's recipient, as an upper-case ISO 3166-1 alpha-2 code, or null when none
 * can be named. A number's comes from {@link countryOfNumber}; a user id's from their number when
 * one of the account's contacts links it (`knownNumber`), else, for a business-scoped user id,
 * from its prefix, which is the user's country (`US.13491208655302741918`; Meta's "Business-scoped
 * user IDs" page). A LID carries none.
 */
function countryOf(address: string, knownNumber: string | null): string | null {
  if (isPhoneAddress(address)) return countryOfNumber(address);
  if (knownNumber !== null) return countryOfNumber(knownNumber);
  return userIdKind(address) === "bsuid" ? address.slice(0, 2) : null;
}

/**
 * The geographic rule of an app's codes (docs/otp.md, Sending and verifying; modelled on Twilio Verify's geo
 * permissions, https://www.twilio.com/docs/verify/preventing-toll-fraud/verify-geo-permissions):
 * with `allowed_countries` set, a code goes only to recipients of those countries, which stops SMS
 * pumping to premium ranges elsewhere. The check writes nothing (it reads a user id's linked
 * number, only with `allowed_countries` set), so a refused send has charged, stored and queued
 * nothing.
 *
 * @param allowed upper-case ISO 3166-1 alpha-2 codes, or null for every country.
 * @param recipient.to the recipient's address: E.164, or a user id (docs/contacts.md, Contacts), whose
 *   country is {@link countryOf}'s; `recipient.accountId` the account whose contacts may link it.
 * @throws ApiError `otp_country_not_allowed` (422) when the recipient's country is not in
 *   `allowed`, or cannot be determined (a non-geographic number such as `+800…`, a LID whose
 *   number is not known) while `allowed` is set.
 */
export async function assertCountryAllowed(
  db: Db,
  allowed: readonly string[] | null,
  recipient: { accountId: string; to: string },
): Promise<void> {
  if (allowed === null) return;
  const { to } = recipient;
  const knownNumber = isPhoneAddress(to) ? null : await phoneNumberOfUser(db, recipient.accountId, to);
  const country = countryOf(to, knownNumber);
  if (country !== null && allowed.includes(country)) return;
  const list = allowed.join(", ");
  const who = isPhoneAddress(to) ? "The number" : "The user";
  throw new ApiError(
    "otp_country_not_allowed",
    country !== null
      ? `${who} is in ${country}, and this app sends codes only to numbers of its allowed_countries: ${list}.`
      : isPhoneAddress(to)
        ? `The number belongs to no single country (a non-geographic number), and this app sends codes only to numbers of its allowed_countries: ${list}.`
        : `The user's country is not known (no number is linked to ${to} yet), and this app sends codes only to its allowed_countries: ${list}.`,
  );
}
