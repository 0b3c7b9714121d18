import { LEDGER_MESSAGE_IDS, type LedgerListRow } from "../db/queries/ledger";
import { fromMinor } from "../lib/money";
import { formatTimestamp } from "../lib/time";

/**
 * A ledger entry as `GET /v1/account/ledger` shows it (`LedgerEntry` in the OpenAPI document):
 * money in major units, and `source`, what caused it. Its `type` is `admin` for a credit (only the
 * admin API credits), else `campaign` or `otp` when the entry names one, else `messages`; its
 * `message_ids` are the first {@link LEDGER_MESSAGE_IDS} of the messages whose `charge_id` or
 * `refund_id` is the entry, in send order, and `message_ids_truncated` says whether there are more.
 */
export function toLedgerRecord(row: LedgerListRow) {
  const ids = JSON.parse(row.messageIds) as string[];
  const type = row.kind === "credit" ? "admin" : row.campaignId ? "campaign" : row.otpId ? "otp" : "messages";
  return {
    id: row.id,
    kind: row.kind,
    amount: fromMinor(row.amount),
    balance_after: fromMinor(row.balanceAfter),
    message_count: row.messageCount,
    source: {
      type: type as "admin" | "campaign" | "otp" | "messages",
      message_ids: ids.slice(0, LEDGER_MESSAGE_IDS),
      message_ids_truncated: ids.length > LEDGER_MESSAGE_IDS,
      campaign_id: row.campaignId,
      otp_id: row.otpId,
      description: row.description,
    },
    created_at: formatTimestamp(row.createdAt),
  };
}
