import { type SQL, sql } from "drizzle-orm";
import { batchSql, type Db } from "../client";
import { type MessageArchiveRow, messageArchives } from "../schema";
import type { ArchiveRule } from "./archives";
import type { RecipientWithMessage } from "./campaigns";
import { statusIn } from "./status-in";

// Archives of campaign recipients (src/archives/campaign-recipients.ts): a finished campaign's
// recipients leave D1 once none of its messages is left there; the campaign row stays, with its
// counts, and its archives name it (`message_archives.campaign_id`).

/**
 * A recipient as an archive line renders it, with what the job groups it by: its campaign's
 * account and creation (`createdAt`, epoch ms), and `id` `<campaign id>/<seq>`.
 */
export type ArchivableRecipient = RecipientWithMessage & {
  id: string;
  accountId: string;
  createdAt: number;
};

type RawRecipient = {
  campaign_id: string;
  seq: number;
  to_number: string;
  variables: string | null;
  status: string;
  reason: string | null;
  message_id: string | null;
  replied_at: number | null;
  account_id: string;
  created_at: number;
};

/**
 * Up to `limit` recipients of the account's campaigns that `rule` lets go, in the order of their
 * campaign's creation, campaign id and `seq`, after `after` (the last row of the previous call):
 * the recipients of a campaign finished (`rule.finishedCampaign`) before `rule.before` (its
 * `completed_at`, else its last change: a cancel) none of whose messages is left in D1 (they were
 * archived, and gave their recipients their final status and reason). Reads `campaigns_account`,
 * the recipients by primary key, and `messages_campaign` for the messages left.
 */
export async function archivableRecipients(
  db: Db,
  accountId: string,
  rule: ArchiveRule,
  after: ArchivableRecipient | null,
  limit: number,
): Promise<ArchivableRecipient[]> {
  const where: SQL[] = [
    sql`c.account_id = ${accountId}`,
    sql`${statusIn("c.status", rule.finishedCampaign)}`,
    sql`COALESCE(c.completed_at, c.updated_at) < ${rule.before}`,
    sql`NOT EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = c.id)`,
  ];
  if (after)
    where.push(sql`(c.created_at, c.id, r.seq) > (${after.createdAt}, ${after.campaignId}, ${after.seq})`);
  const results = await db.all<RawRecipient>(sql`SELECT r.*, c.account_id, c.created_at
    FROM campaigns c JOIN campaign_recipients r ON r.campaign_id = c.id
    WHERE ${sql.join(where, sql` AND `)}
    ORDER BY c.created_at, c.id, r.seq LIMIT ${limit}`);
  return results.map((row) => ({
    id: `${row.campaign_id}/${row.seq}`,
    accountId: row.account_id,
    createdAt: row.created_at,
    campaignId: row.campaign_id,
    seq: row.seq,
    toNumber: row.to_number,
    variables: row.variables === null ? null : (JSON.parse(row.variables) as Record<string, string>),
    status: row.status,
    reason: row.reason,
    messageId: row.message_id,
    repliedAt: row.replied_at,
    messageStatus: null,
    messageReason: null,
  }));
}

/**
 * Records archive `archive` (of kind `campaign_recipients`, its `campaignId` set) and deletes its
 * recipients, in one D1 batch: those of `versions` (ids `<campaign id>/<seq>`) whose row still
 * holds the address it was read with (an erasure that hashed it in between keeps the row, for a
 * later archive of its erased form).
 * @returns the ids deleted.
 */
export async function recordRecipientArchive(
  db: Db,
  archive: Omit<MessageArchiveRow, "seq">,
  versions: ArchivableRecipient[],
): Promise<string[]> {
  const list = JSON.stringify(versions.map((row) => [row.campaignId, row.seq, row.toNumber]));
  const results = await batchSql<{ id: string }>(db, [
    db.insert(messageArchives).values(archive).getSQL(),
    // By primary key, each row as it was read.
    sql`DELETE FROM campaign_recipients AS r WHERE r.rowid IN (SELECT x.rowid FROM json_each(${list}) j
        JOIN campaign_recipients x ON x.campaign_id = j.value ->> 0 AND x.seq = j.value ->> 1 AND x.to_number = j.value ->> 2
        JOIN campaigns c ON c.id = x.campaign_id AND c.account_id = ${archive.accountId})
      RETURNING campaign_id || '/' || seq AS id`,
  ]);
  return (results.at(-1)?.results ?? []).map((row) => row.id);
}

/** The ids of the archives holding campaign `campaignId`'s recipients (of account `accountId`), oldest first. */
export async function recipientArchivesOf(db: Db, accountId: string, campaignId: string): Promise<string[]> {
  const rows = await db.all<{ id: string }>(sql`SELECT id FROM message_archives
    WHERE campaign_id = ${campaignId} AND account_id = ${accountId} ORDER BY created_at, id`);
  return rows.map((row) => row.id);
}
