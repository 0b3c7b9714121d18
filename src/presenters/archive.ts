import type { MessageArchiveRow } from "../db/schema";
import { formatTimestamp } from "../lib/time";

/**
 * An archive as the API shows it (the `Archive` schema of openapi.json): `{id, kind, campaign_id, day,
 * count, message_count, bytes, created_at}`.
 */
export function toArchiveRecord(row: MessageArchiveRow) {
  return {
    id: row.id,
    kind: row.kind,
    campaign_id: row.campaignId,
    day: row.day,
    count: row.messageCount,
    // Deprecated (its name predates OTP archives): the messages it holds.
    message_count: row.kind === "messages" ? row.messageCount : 0,
    bytes: row.bytes,
    created_at: formatTimestamp(row.createdAt),
  };
}
