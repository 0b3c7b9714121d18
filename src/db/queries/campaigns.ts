import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import { batchSql, type Db } from "../client";
import {
  type CampaignRecipientRow,
  type CampaignRow,
  campaignRecipients,
  campaigns,
  messages,
} from "../schema";
import { accountNumberOf } from "./accounts";
import { beyond, pageOf, readOrder } from "./keyset";
import { refundCountStatements, refundedBy } from "./ledger";
import {
  draftRecipientCount,
  insertWhere,
  type LimitUsage,
  maxDraftRecipients,
  newRecipientCount,
} from "./limits";

/** A recipient to add: an E.164 number and the values of the campaign template's placeholders. */
export interface NewRecipient {
  toNumber: string;
  variables: Record<string, string> | null;
}

/** How an add of recipients went: new recipients, repeats of a number already there, the total after. */
export interface AddedRecipients {
  added: number;
  duplicates: number;
  total: number;
}

/**
 * The statements that add `recipients` to the account's campaign `campaignId` while it is a
 * `draft` and the account stays within its `max_draft_recipients`, in the order given: each
 * number once per campaign (a repeat, in the list or of a recipient already there, is ignored),
 * `seq` continuing after the last, then `total` recounted (and `updated_at` moved when it
 * changed). The list travels as one JSON parameter (D1 binds at most 100 per statement), so one
 * add of 10,000 recipients is a few statements.
 *
 * The first statement reads the limit's use as the insert will find it (one transaction): the
 * recipients the account's drafts hold, the new ones this add would create, and the limit. The
 * insert runs only when the two together stay within the limit (or it creates none), all or none
 * of them.
 */
function addRecipientStatements(
  accountId: string,
  campaignId: string,
  recipients: NewRecipient[],
  now: number,
): { usage: SQL; within: SQL; statements: SQL[] } {
  const list = JSON.stringify(recipients.map((r) => ({ n: r.toNumber, v: r.variables })));
  const adding = newRecipientCount(campaignId, list);
  // An add that creates no recipient (none given, or only numbers already there) always fits.
  const within = sql`(SELECT a = 0 OR a + ${draftRecipientCount(accountId)} <= ${maxDraftRecipients(accountId)}
    FROM (SELECT ${adding} AS a))`;
  const total = sql`(SELECT count(*) FROM campaign_recipients WHERE campaign_id = ${campaignId})`;
  return {
    usage: sql`SELECT ${draftRecipientCount(accountId)} AS current, ${adding} AS adding,
      ${maxDraftRecipients(accountId)} AS max`,
    within,
    statements: [
      sql`INSERT OR IGNORE INTO campaign_recipients (campaign_id, seq, to_number, variables, status)
      SELECT ${campaignId},
        (SELECT coalesce(max(seq), 0) FROM campaign_recipients WHERE campaign_id = ${campaignId}) + j.key + 1,
        json_extract(j.value, '$.n'), json_extract(j.value, '$.v'), 'pending'
      FROM json_each(${list}) j
      WHERE EXISTS (SELECT 1 FROM campaigns WHERE id = ${campaignId} AND account_id = ${accountId} AND status = 'draft')
        AND ${within}`,
      sql`UPDATE campaigns SET total = ${total},
        updated_at = CASE WHEN total = ${total} THEN updated_at ELSE max(${now}, updated_at) END
      WHERE id = ${campaignId} AND account_id = ${accountId} AND status = 'draft'
      RETURNING total`,
    ],
  };
}

/** What the usage statement of {@link addRecipientStatements} reads. */
type DraftUsage = { current: number; adding: number; max: number | null };

/** The `max_draft_recipients` an add would exceed, from its usage row, or null when it fits. */
function overLimit(usage: DraftUsage | undefined): (LimitUsage & { adding: number }) | null {
  if (!usage || usage.adding === 0 || usage.current + usage.adding <= (usage.max ?? 0)) return null;
  return { limit: "max_draft_recipients", max: usage.max ?? 0, current: usage.current, adding: usage.adding };
}

/**
 * Inserts a `draft` campaign with its first `recipients`, in one D1 batch, if the account's drafts
 * can hold them ({@link addRecipientStatements}); otherwise nothing is stored.
 * @returns the campaign as stored and how the recipients went, or the limit the recipients would
 *   exceed (with `adding`, the new recipients of the request).
 */
export async function insertCampaign(
  db: Db,
  row: CampaignRow,
  recipients: NewRecipient[],
): Promise<
  | { campaign: CampaignRow; recipients: AddedRecipients; refused: null }
  | { refused: LimitUsage & { adding: number } }
> {
  const add = addRecipientStatements(row.accountId, row.id, recipients, row.createdAt);
  const [usage] = await batchSql<DraftUsage>(db, [
    add.usage,
    insertWhere(db, campaigns, row, add.within),
    ...add.statements,
  ]);
  const refused = overLimit(usage?.results[0]);
  if (refused) return { refused };
  const campaign = await findCampaign(db, row.accountId, row.id);
  if (!campaign) throw new Error(`campaign ${row.id} not found after insert`);
  return {
    campaign,
    recipients: {
      added: campaign.total,
      duplicates: recipients.length - campaign.total,
      total: campaign.total,
    },
    refused: null,
  };
}

/**
 * Adds `recipients` to the account's draft campaign (see addRecipientStatements).
 * @returns how they went; the limit they would exceed (nothing is added); or null when the
 *   campaign is not the account's or not a `draft`.
 */
export async function addRecipients(
  db: Db,
  accountId: string,
  campaignId: string,
  recipients: NewRecipient[],
  now: number,
): Promise<AddedRecipients | { refused: LimitUsage & { adding: number } } | null> {
  const before = await findCampaign(db, accountId, campaignId);
  if (before?.status !== "draft") return null;
  const add = addRecipientStatements(accountId, campaignId, recipients, now);
  const [usage, , updated] = await batchSql<DraftUsage & { total: number }>(db, [
    add.usage,
    ...add.statements,
  ]);
  const total = updated?.results[0]?.total;
  if (total === undefined) return null;
  const refused = overLimit(usage?.results[0]);
  if (refused) return { refused };
  const added = total - before.total;
  return { added, duplicates: recipients.length - added, total };
}

/** The account's campaign with this id, or null. */
export async function findCampaign(db: Db, accountId: string, id: string): Promise<CampaignRow | null> {
  const [row] = await db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.id, id), eq(campaigns.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

/** One page of the account's campaigns, newest first, by keyset on `(created_at, id)`. */
export async function listCampaigns(
  db: Db,
  accountId: string,
  page: { limit: number; cursor: Cursor | null },
): Promise<{ rows: CampaignRow[]; more: boolean }> {
  const where: (SQL | undefined)[] = [eq(campaigns.accountId, accountId)];
  if (page.cursor) where.push(beyond(campaigns, page.cursor));
  const rows = await db
    .select()
    .from(campaigns)
    .where(and(...where))
    .orderBy(...readOrder(campaigns, page.cursor))
    .limit(page.limit + 1);
  return pageOf([rows], page.limit, page.cursor);
}

/**
 * Deletes the account's campaign `id` with its recipients if it is a `draft`.
 * @returns the deleted draft's stored media copy (`mediaKey`, its `MEDIA` key, or null), or null
 *   when nothing was deleted (not the account's, or not a draft).
 */
export async function deleteDraftCampaign(
  db: Db,
  accountId: string,
  id: string,
): Promise<{ mediaKey: string | null } | null> {
  const [deleted] = await db
    .delete(campaigns)
    .where(and(eq(campaigns.id, id), eq(campaigns.accountId, accountId), eq(campaigns.status, "draft")))
    .returning({ mediaKey: campaigns.mediaKey });
  return deleted ?? null;
}

// Recipients page by `seq`; the keyset's second column is the campaign id, the same on every row.
const recipientKeyset = { createdAt: campaignRecipients.seq, id: campaignRecipients.campaignId };

/** A recipient with its message's status and reason (null before it has a message). */
export type RecipientWithMessage = CampaignRecipientRow & {
  messageStatus: string | null;
  messageReason: string | null;
};

/**
 * One page of a campaign's recipients, the most recently added first, by keyset on `seq`, each
 * with its message's current status. The caller has checked that the campaign is the account's.
 * @returns rows with `createdAt` = `seq` and `id` = the campaign id, for the page's cursors.
 */
export async function listRecipients(
  db: Db,
  campaignId: string,
  page: { limit: number; cursor: Cursor | null },
): Promise<{ rows: (RecipientWithMessage & { createdAt: number; id: string })[]; more: boolean }> {
  const where: (SQL | undefined)[] = [eq(campaignRecipients.campaignId, campaignId)];
  if (page.cursor) where.push(beyond(recipientKeyset, page.cursor));
  const rows = await db
    .select({
      ...getTableColumns(campaignRecipients),
      messageStatus: messages.status,
      messageReason: messages.reason,
    })
    .from(campaignRecipients)
    .leftJoin(messages, eq(messages.id, campaignRecipients.messageId))
    .where(and(...where))
    .orderBy(...readOrder(recipientKeyset, page.cursor))
    .limit(page.limit + 1);
  return pageOf(
    [rows.map((row) => ({ ...row, createdAt: row.seq, id: row.campaignId }))],
    page.limit,
    page.cursor,
  );
}

/** The send windows of campaigns `ids` (any account: the caller holds their messages), by id. */
export async function sendWindowsOf(db: Db, ids: string[]): Promise<Map<string, CampaignRow["sendWindow"]>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: campaigns.id, sendWindow: campaigns.sendWindow })
    .from(campaigns)
    .where(sql`${campaigns.id} IN (SELECT value FROM json_each(${JSON.stringify([...new Set(ids)])}))`);
  return new Map(rows.map((row) => [row.id, row.sendWindow]));
}

/**
 * The statement that marks the account's campaign recipients at `senders` (the addresses a reply
 * came from: its number and its user id, each as a campaign stores a recipient's address) replied
 * (at `at`, epoch ms) when their campaign message was sent before it; once (the
 * `campaign_recipients_replied` trigger keeps the campaign's counter). At least one sender.
 */
export function noteReplyStatement(accountId: string, senders: readonly string[], at: number): SQL {
  return sql`UPDATE campaign_recipients SET replied_at = ${at}
      WHERE replied_at IS NULL AND message_id IN (SELECT id FROM messages WHERE account_number = ${accountNumberOf(accountId)}
        AND to_number IN (SELECT value FROM json_each(${JSON.stringify(senders)})) AND campaign_id IS NOT NULL
        AND direction = 'outgoing' AND status IN ('sent', 'delivered', 'read') AND sent_at <= ${at})`;
}

/**
 * The query that finds campaign `campaignId`'s recipients outside the window at `since` (epoch ms;
 * a contact is inside when it last wrote at or after it) of any of `sessionIds`, the contact found
 * by the recipient's address, a number or a user id (docs/contacts.md, Contacts), leaving out those
 * on account `accountId`'s opt-out list (they are skipped, not sent): the first
 * `limit` by `seq`, each row carrying `outside_count`, how many there are in all.
 * One statement: the list walks the campaign's recipients in `seq` order by their primary key
 * (campaign_id, seq) and stops at the limit; the count, an uncorrelated subquery SQLite runs once,
 * walks them all. Per recipient, a primary-key lookup in opt_outs and one in contact_windows per
 * session: no scan, no sort (test/cloud-api/campaign-window.test.ts reads the plan, through src/campaigns/service-window.ts).
 */
export function outsideWindowStatement(
  campaignId: string,
  accountId: string,
  sessionIds: string[],
  since: number,
  limit: number,
): SQL {
  const outside = (r: SQL) => sql`${r}.campaign_id = ${campaignId}
    AND NOT EXISTS (SELECT 1 FROM opt_outs o WHERE o.account_id = ${accountId} AND o.to_number = ${r}.to_number)
    AND EXISTS (SELECT 1 FROM json_each(${JSON.stringify(sessionIds)}) s
      LEFT JOIN contact_identifiers ci ON ci.chatapp_session_id = s.value
        AND ci.kind IN ('phone_number', 'user_id') AND ci.value = ${r}.to_number
      LEFT JOIN contacts w ON w.id = ci.contact_id
      WHERE w.last_message_at IS NULL OR w.last_message_at < ${since})`;
  return sql`SELECT r.to_number AS to_number,
      (SELECT count(*) FROM campaign_recipients c WHERE ${outside(sql.raw("c"))}) AS outside_count
    FROM campaign_recipients r WHERE ${outside(sql.raw("r"))}
    ORDER BY r.seq LIMIT ${limit}`;
}

/**
 * The rows of {@link outsideWindowStatement} (same arguments): each number outside, the first
 * `limit` of them, and how many there are in all.
 */
export async function recipientsOutsideWindow(
  db: Db,
  campaignId: string,
  accountId: string,
  sessionIds: string[],
  since: number,
  limit: number,
): Promise<{ to_number: string; outside_count: number }[]> {
  return db.all<{ to_number: string; outside_count: number }>(
    outsideWindowStatement(campaignId, accountId, sessionIds, since, limit),
  );
}

/**
 * Campaign `campaignId`'s recipients whose address matches one of `globs` (SQLite `GLOB`
 * patterns, e.g. lib/contact-identity.ts `USER_ID_GLOB`): the first `limit` by `seq`, and how
 * many match in all (`count`). Reads nothing for no pattern. One statement, each walk of the
 * recipients by their primary key (campaign_id, seq); the caller has checked that the campaign is
 * the account's.
 */
export async function recipientsMatching(
  db: Db,
  campaignId: string,
  globs: readonly string[],
  limit: number,
): Promise<{ addresses: string[]; count: number }> {
  if (globs.length === 0) return { addresses: [], count: 0 };
  const matches = (r: SQL) =>
    sql`${r}.campaign_id = ${campaignId} AND (${sql.join(
      globs.map((glob) => sql`${r}.to_number GLOB ${glob}`),
      sql` OR `,
    )})`;
  const rows = await db.all<{ to_number: string; count: number }>(
    sql`SELECT r.to_number AS to_number,
        (SELECT count(*) FROM campaign_recipients c WHERE ${matches(sql.raw("c"))}) AS count
      FROM campaign_recipients r WHERE ${matches(sql.raw("r"))}
      ORDER BY r.seq LIMIT ${limit}`,
  );
  return { addresses: rows.map((row) => row.to_number), count: rows[0]?.count ?? 0 };
}

/**
 * The statements that settle recipients of campaign `campaign` whose message will never be made:
 * those still `pending` that `which` (a condition on `campaign_recipients`) selects become
 * `outcome.status` with `outcome.reason`, and are refunded: one `refund` ledger entry of their
 * count × the campaign's price, and the campaign's `refunded` and `failed` or `skipped` up and
 * `queued` down by as much. Only while `holds` (a condition standing on its own, e.g. an EXISTS on
 * the campaign row) holds; nothing is written when none is pending, so a batch run twice refunds
 * once. Put them before any statement of the batch that makes `holds` false.
 */
export function settleRecipientsStatements(
  campaign: { id: string; accountId: string },
  which: SQL,
  holds: SQL,
  outcome: { status: "failed" | "skipped"; reason: string },
  now: number,
): SQL[] {
  const refundId = crypto.randomUUID();
  const these = sql`campaign_id = ${campaign.id} AND status = 'pending' AND ${which}`;
  const count = sql`(SELECT count(*) FROM campaign_recipients WHERE ${these} AND ${holds})`;
  const price = sql`(SELECT price FROM campaigns WHERE id = ${campaign.id})`;
  const refunded = refundedBy(refundId);
  const made = sql`EXISTS (SELECT 1 FROM ledger_entries WHERE id = ${refundId})`;
  // The campaign's counter of that outcome (a fixed column name, not input).
  const counter = sql.raw(outcome.status);
  return [
    ...refundCountStatements(
      campaign.accountId,
      refundId,
      { amount: sql`${count} * ${price}`, count, cause: { campaignId: campaign.id } },
      now,
    ),
    sql`UPDATE campaign_recipients SET status = ${outcome.status}, reason = ${outcome.reason} WHERE ${these} AND ${made}`,
    sql`UPDATE campaigns SET refunded = refunded + ${refunded.amount}, queued = queued - ${refunded.count},
        ${counter} = ${counter} + ${refunded.count}, updated_at = MAX(updated_at, ${now})
      WHERE id = ${campaign.id} AND ${made}`,
  ];
}

/**
 * The statements that fail every recipient of campaign `campaign` still waiting for its message
 * (not yet made into one by src/campaigns/materialise.ts) with `reason`, and refund them
 * ({@link settleRecipientsStatements}). Only while `active` (a condition on the campaign row, e.g.
 * its status) holds. Put them before any statement of the batch that makes `active` false.
 */
export function failRemainderStatements(
  campaign: { id: string; accountId: string },
  reason: string,
  active: SQL,
  now: number,
): SQL[] {
  return settleRecipientsStatements(
    campaign,
    sql`seq > (SELECT materialised_seq FROM campaigns WHERE id = ${campaign.id})`,
    sql`EXISTS (SELECT 1 FROM campaigns WHERE id = ${campaign.id} AND ${active})`,
    { status: "failed", reason },
    now,
  );
}

/** The condition selecting the campaign recipients whose `seq` is one of `seqs`. */
export function recipientSeqIn(seqs: number[]): SQL {
  return sql`seq IN (SELECT value FROM json_each(${JSON.stringify(seqs)}))`;
}

/** The condition selecting campaign `id` of account `accountId` (its row, by id and owner). */
export function ownedCampaign(id: string, accountId: string): SQL {
  return sql`id = ${id} AND account_id = ${accountId}`;
}

/** The condition that campaign `id` of account `accountId` is cancelled at this point of the batch. */
export function cancelledCampaign(id: string, accountId: string): SQL {
  return sql`${ownedCampaign(id, accountId)} AND status = 'cancelled'`;
}
