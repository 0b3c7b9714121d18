import type { ContactRow, IdentifierKind } from "../db/schema";
import { isErasedAddress, isPhoneAddress } from "../lib/contact-identity";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";
import { SERVICE_WINDOW_MS } from "../messages/service-window";

/**
 * A message's contact as the API shows it (`Message.contact`): who is on the other side of the
 * chat, `{ id, phone_number, user_id, parent_user_id, username, name }`, nulls where unknown
 * (docs/contacts.md, Contacts).
 */
export function toContactRef(row: ContactRow) {
  return {
    id: row.id,
    phone_number: row.phoneNumber,
    user_id: row.userId,
    parent_user_id: row.parentUserId,
    username: row.username,
    name: row.name,
  };
}

/**
 * {@link toContactRef} of a message whose contact the service does not keep (one sent to an
 * address no contact is known by yet, or stored before contacts were kept): the address alone,
 * `id` null; null without an address, or for an erased one (docs/contacts.md, Erasure).
 */
export function contactOfAddress(
  address: string | null,
): (Omit<ReturnType<typeof toContactRef>, "id"> & { id: null }) | null {
  if (address === null || isErasedAddress(address)) return null;
  const phone = isPhoneAddress(address);
  return {
    id: null,
    phone_number: phone ? address : null,
    user_id: phone ? null : address,
    parent_user_id: null,
    username: null,
    name: null,
  };
}

/**
 * A contact as `GET /v1/contacts` lists it and its events carry it: {@link toContactRef}'s fields,
 * the session, the first and last message the contact sent, and `window_open_until`: the end of
 * the customer service window their last message opened (24 hours, Meta's "Customer service
 * windows"; src/messages/service-window.ts), whether or not it has passed; null before any.
 */
export function toContactRecord(row: ContactRow) {
  return {
    ...toContactRef(row),
    chatapp_session_id: row.chatappSessionId,
    first_message_at: formatNullableTimestamp(row.firstMessageAt),
    last_message_at: formatNullableTimestamp(row.lastMessageAt),
    window_open_until: formatNullableTimestamp(
      row.lastMessageAt === null ? null : row.lastMessageAt + SERVICE_WINDOW_MS,
    ),
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

/**
 * A contact as `GET /v1/contacts/{id}` shows it: {@link toContactRecord}, every identifier it was
 * ever known by (`since`: when the service learnt it; an older BSUID stays listed), and whether
 * the account's opt-out list holds it.
 */
export function toContactDetail(
  row: ContactRow,
  identifiers: { kind: IdentifierKind; value: string; createdAt: number }[],
  optedOut: boolean,
) {
  return {
    ...toContactRecord(row),
    identifiers: identifiers.map((identifier) => ({
      kind: identifier.kind,
      value: identifier.value,
      since: formatTimestamp(identifier.createdAt),
    })),
    opted_out: optedOut,
  };
}
