import type { MessageArchiveRow } from "../db/schema";
import { formatTimestamp } from "../lib/time";

/** An archive as the API shows it (the `Archive` schema of openapi.json). */
export function toArchiveRecord(row: MessageArchiveRow) {
  return {
    id: row.id,
    day: row.day,
    message_count: row.messageCount,
    bytes: row.bytes,
    created_at: formatTimestamp(row.createdAt),
  };
}
