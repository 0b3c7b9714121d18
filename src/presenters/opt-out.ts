import type { OptOutRow } from "../db/schema";
import { formatTimestamp } from "../lib/time";

/** An opt-out as the API shows it: `{ to_number, source, keyword, created_at }`. */
export function toOptOutRecord(row: OptOutRow) {
  return {
    to_number: row.toNumber,
    source: row.source,
    keyword: row.keyword,
    created_at: formatTimestamp(row.createdAt),
  };
}
