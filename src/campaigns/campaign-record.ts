import type { CampaignRecipientRow, CampaignRow } from "../db/schema";
import { fromMinor } from "../lib/money";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";

/** A campaign row as the API shows it (`Campaign` in the OpenAPI document); money in major units. */
export function toCampaignRecord(row: CampaignRow) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    chatapp_session_ids: row.sessionIds,
    type: row.type,
    content: row.content,
    media_url: row.mediaUrl,
    delay_range: { min_ms: row.delayMinMs, max_ms: row.delayMaxMs },
    scheduled_at: formatNullableTimestamp(row.scheduledAt),
    send_window: row.sendWindow,
    stats: {
      total: row.total,
      queued: row.queued,
      sent: row.sent,
      delivered: row.delivered,
      read: row.read,
      failed: row.failed,
      replied: row.replied,
      skipped: row.skipped,
    },
    cost: fromMinor(row.cost),
    refunded: fromMinor(row.refunded),
    started_at: formatNullableTimestamp(row.startedAt),
    completed_at: formatNullableTimestamp(row.completedAt),
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

/** A recipient row as the API shows it (`CampaignRecipient`). */
export function toRecipientRecord(row: CampaignRecipientRow) {
  return {
    seq: row.seq,
    to_number: row.toNumber,
    variables: row.variables,
    status: row.status,
    reason: row.reason,
    message_id: row.messageId,
  };
}
