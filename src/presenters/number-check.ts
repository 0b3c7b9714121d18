import type { NumberCheck } from "../contacts/check";
import { formatTimestamp } from "../lib/time";

/** A number check as the API shows it (`NumberCheck`): `{ number, on_chatapp, checked_at }`. */
export function toNumberCheckRecord(check: NumberCheck) {
  return {
    number: check.number,
    on_chatapp: check.onChatapp,
    checked_at: formatTimestamp(check.checkedAt),
  };
}
