import type { UserIdKind } from "./gateway-kinds";

/**
 * Who is on the other side of a chat, as an event or a request names them (docs/contacts.md, Contacts): any
 * of a phone number and the network's ids, with the names the user shows. A gateway gives what
 * its webhook carries; at least one of `phoneNumber` and `userId` is set.
 *
 * - `phoneNumber`: E.164 (`+14155552671`).
 * - `userId`: the network's own id for the user when it is not a phone number: a business-scoped
 *   user id (BSUID) on the Cloud API (`US.13491208655302741918`: an ISO 3166 alpha-2 code, a dot,
 *   up to 128 alphanumerics; Meta, "Business-scoped user IDs"), a LID on linked devices
 *   (`<digits>@lid`, as WAHA and Evolution API give it).
 * - `parentUserId`: the Cloud API's parent BSUID (`US.ENT.…`), when the business enabled them.
 * - `username`, `name`: the user's username and profile name; display only, they change.
 * - `previousUserId`: see below.
 */
export interface ContactIdentity {
  phoneNumber?: string | null;
  userId?: string | null;
  parentUserId?: string | null;
  username?: string | null;
  name?: string | null;
  /**
   * A user id the user was known by before `userId` (Meta's `user_id_update` webhook: a BSUID that
   * changed with the user's number): it finds the contact, stays linked, and is not current.
   */
  previousUserId?: string | null;
}

/** A Cloud API business-scoped user id or parent id (Meta, "Business-scoped user IDs"). */
export const BSUID_PATTERN = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;

/** A linked-device id as WAHA and Evolution API write it: digits and `@lid`. */
export const LID_PATTERN = /^\d{1,32}@lid$/;

/** The problem a request's user id that is neither a BSUID nor a LID is told (`to_user_id`). */
export const INVALID_USER_ID =
  "invalid user id (a business-scoped user id such as US.13491208655302741918, or <digits>@lid)";

/** Whether `identity` names someone: a phone number or a user id. */
export function namesSomeone(identity: ContactIdentity): boolean {
  return Boolean(identity.phoneNumber || identity.userId);
}

/** Which kind of user id `value` is (src/lib/gateway-kinds.ts `sendsToUserIds`), or null for neither. */
export function userIdKind(value: string): UserIdKind | null {
  if (BSUID_PATTERN.test(value)) return "bsuid";
  if (LID_PATTERN.test(value)) return "lid";
  return null;
}

/**
 * SQLite `GLOB` patterns that tell a stored address's kind of user id, for a query that picks
 * recipients by kind in the database (src/db/queries/campaigns.ts `recipientsMatching`). A stored
 * address passed {@link userIdKind} (or is a number, `+…`), so its shape's edge tells it: a BSUID
 * starts with two capitals and a dot, a LID ends with `@lid` (test/campaign-user-ids.test.ts
 * checks that they agree with the patterns above).
 */
export const USER_ID_GLOB: Readonly<Record<UserIdKind, string>> = { bsuid: "[A-Z][A-Z].*", lid: "*@lid" };

/**
 * Whether a recipient address (a message's `to_number` column: the recipient as the network was
 * asked to reach them) is a phone number (E.164, `+…`) rather than a user id.
 */
export function isPhoneAddress(address: string): boolean {
  return address.startsWith("+");
}

/** The identity an address names: its phone number or its user id. */
export function identityOfAddress(address: string): ContactIdentity {
  return isPhoneAddress(address) ? { phoneNumber: address } : { userId: address };
}

/**
 * What an erased address starts with: `erased:` and 64 hex digits, the keyed hash that stands
 * where a contact's number or user id stood once the contact was erased (src/erasures/address.ts;
 * docs/contacts.md, Erasure). Neither a phone number (`+…`) nor a user id ({@link userIdKind}).
 */
export const ERASED_PREFIX = "erased:";

/** Whether a stored address is an erased one ({@link ERASED_PREFIX}). */
export function isErasedAddress(address: string): boolean {
  return address.startsWith(ERASED_PREFIX);
}

/**
 * Whether the API shows a stored address in a number field (`to_number`, `from_number`): a phone
 * number, or an erased address, which stands for the number or user id it replaced.
 */
export function shownAsNumber(address: string): boolean {
  return isPhoneAddress(address) || isErasedAddress(address);
}
