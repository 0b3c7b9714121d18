import {
  type ArchivableRecipient,
  archivableRecipients,
  recordRecipientArchive,
} from "../db/queries/recipient-archives";
import { toRecipientRecord } from "../presenters/campaign";
import type { ArchiveSource } from "./source";

/**
 * Campaign recipients as the job archives them (docs/retention.md, Archives): those of a campaign finished
 * before the account's retention, once all its messages are archived, each campaign's apart (its
 * archives name it); each line a recipient as `GET /v1/chatapp/campaigns/{id}/recipients` showed it
 * (src/db/queries/recipient-archives.ts reads and moves them). Archived after messages, so a
 * campaign whose messages go in a run may lose its recipients in the same run.
 */
export const RECIPIENT_SOURCE: ArchiveSource<ArchivableRecipient> = {
  kind: "campaign_recipients",
  read: archivableRecipients,
  line: (row) => JSON.stringify(toRecipientRecord(row)),
  record: (db, archive, rows) => recordRecipientArchive(db, archive, rows),
  campaignOf: (row) => row.campaignId,
};
