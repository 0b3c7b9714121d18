import { formatTimestamp } from "../lib/time";
import type { NumberCheck } from "../number-checks/check";

/** A number check as the API shows it (`NumberCheck`): `{ number, on_chatapp, checked_at }`. */
export function toNumberCheckRecord(check: NumberCheck) {
  return {
    number: check.number,
    on_chatapp: check.onChatapp,
    checked_at: formatTimestamp(check.checkedAt),
  };
}
