import type { ErasureRow } from "../db/schema";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";

/**
 * An erasure as the API shows it and its `contact.erased` event carries it (docs/contacts.md, Erasure):
 * `{ id, address, status, counts, created_at, completed_at }`, the address only as its
 * keyed hash (`erased:…`), the counts summed over its runs.
 */
export function toErasureRecord(row: ErasureRow) {
  return {
    id: row.id,
    address: row.address,
    status: row.status,
    counts: {
      messages: row.messages,
      media_objects: row.mediaObjects,
      otps: row.otps,
      campaign_recipients: row.campaignRecipients,
      contacts: row.contacts,
      opt_outs: row.optOuts,
      events: row.events,
      archived_messages: row.archivedMessages,
      archived_otps: row.archivedOtps,
      archived_campaign_recipients: row.archivedCampaignRecipients,
    },
    created_at: formatTimestamp(row.createdAt),
    completed_at: formatNullableTimestamp(row.completedAt),
  };
}
