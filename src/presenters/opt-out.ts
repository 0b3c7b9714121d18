import type { OptOutRow } from "../db/schema";
import { shownAsNumber } from "../lib/contact-identity";
import { formatTimestamp } from "../lib/time";

/**
 * An opt-out as the API shows it: `{ to_number, user_id, source, keyword, created_at }`. The row's
 * address is a number (`to_number`) or, for a contact who opted out by a user id, that id
 * (`user_id`; docs/contacts.md, Contacts). An erased contact's opt-out shows its address's keyed hash,
 * `erased:…`, as `to_number` (docs/contacts.md, Erasure).
 */
export function toOptOutRecord(row: OptOutRow) {
  const phone = shownAsNumber(row.toNumber);
  return {
    to_number: phone ? row.toNumber : null,
    user_id: phone ? null : row.toNumber,
    source: row.source,
    keyword: row.keyword,
    created_at: formatTimestamp(row.createdAt),
  };
}
