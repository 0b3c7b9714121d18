import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { type CampaignRow, campaignRecipients, campaigns } from "../schema";

// The statements of a campaign's steps once it is a draft no more: its start (src/campaigns/start.ts)
// and the making of its messages (src/campaigns/materialise.ts). The campaign's own rows, its
// recipients and its control are in campaigns.ts.

// Starting a campaign (src/campaigns/start.ts): one charge whose effects skip the opted-out
// recipients and move the campaign, guarded by the draft as priced.

/** The account's opt-out list, as a condition on a campaign recipient's `to_number`. */
function onOptOutList(accountId: string): SQL {
  return sql`to_number IN (SELECT to_number FROM opt_outs WHERE account_id = ${accountId})`;
}

/** How many of campaign `campaignId`'s recipients are on account `accountId`'s opt-out list (SQL). */
function optedOutCount(campaignId: string, accountId: string): SQL {
  return sql`(SELECT count(*) FROM campaign_recipients WHERE campaign_id = ${campaignId} AND ${onOptOutList(accountId)})`;
}

/** How many of campaign `campaignId`'s recipients are on account `accountId`'s opt-out list. */
export async function countOptedOut(db: Db, campaignId: string, accountId: string): Promise<number> {
  const [counted] = await db.all<{ n: number }>(sql`SELECT ${optedOutCount(campaignId, accountId)} AS n`);
  return counted?.n ?? 0;
}

/**
 * The guard of a campaign's start charge: the account's campaign `id` may still make the move
 * (`from`, src/moves/campaign.ts `campaignFrom("start")`), with `total` recipients of which
 * `skipped` are on the opt-out list, as it was priced.
 */
export function draftAsPriced(id: string, accountId: string, from: SQL, total: number, skipped: number): SQL {
  return sql`EXISTS (SELECT 1 FROM campaigns WHERE id = ${id} AND account_id = ${accountId}
          AND ${from} AND total = ${total}) AND ${optedOutCount(id, accountId)} = ${skipped}`;
}

/** The statement that skips campaign `id`'s recipients on the opt-out list, once `made` holds. */
export function skipOptedOutStatement(id: string, accountId: string, made: SQL): SQL {
  return sql`UPDATE campaign_recipients SET status = 'skipped', reason = 'recipient_opted_out'
          WHERE campaign_id = ${id} AND ${onOptOutList(accountId)} AND ${made}`;
}

/** The condition selecting campaign `id` once `made` holds. */
export function campaignOnceMade(id: string, made: SQL): SQL {
  return sql`id = ${id} AND ${made}`;
}

/** The columns a start sets (price and charge; `startedAt`, epoch ms, when it starts at once). */
export function startPriceSet(
  start: { price: number; chargeId: string; cost: number; skipped: number; queued: number },
  startedAt: number | null,
): SQL {
  return sql`price = ${start.price}, charge_id = ${start.chargeId}, cost = ${start.cost}, skipped = ${start.skipped},
            queued = ${start.queued}${startedAt !== null ? sql`, started_at = ${startedAt}` : sql``}`;
}

/** The condition selecting campaign `id` started at `now`, once `made` holds. */
export function campaignStartedAt(id: string, now: number, made: SQL): SQL {
  return sql`id = ${id} AND started_at = ${now} AND ${made}`;
}

/** The condition selecting campaign `id` completed, once `made` holds. */
export function campaignCompletedOnceMade(id: string, made: SQL): SQL {
  return sql`id = ${id} AND status = 'completed' AND ${made}`;
}

// Making a started campaign's messages (src/campaigns/materialise.ts), one step at a time.

/**
 * The campaigns that may still move (`active`, src/moves/campaign.ts `campaignFrom("complete")`),
 * last changed before `before` (epoch ms), with recipients still waiting for their message.
 */
export async function stalledCampaigns(
  db: Db,
  active: SQL,
  before: number,
): Promise<{ id: string; accountId: string }[]> {
  return db.all<{ id: string; accountId: string }>(sql`SELECT id, account_id AS accountId FROM campaigns c
    WHERE ${active} AND updated_at < ${before}
      AND EXISTS (SELECT 1 FROM campaign_recipients r WHERE r.campaign_id = c.id AND r.seq > c.materialised_seq
        AND r.status = 'pending')`);
}

/** Campaign `id` while `condition` holds of it, or null. */
export async function campaignWhere(db: Db, id: string, condition: SQL): Promise<CampaignRow | null> {
  const [campaign] = await db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.id, id), condition));
  return campaign ?? null;
}

/** Campaign `campaignId`'s first `limit` recipients after `seq`, in `seq` order. */
export async function recipientsAfter(
  db: Db,
  campaignId: string,
  seq: number,
  limit: number,
): Promise<{ seq: number; to_number: string; variables: string | null; status: string }[]> {
  return db.all<{
    seq: number;
    to_number: string;
    variables: string | null;
    status: string;
  }>(
    sql`SELECT seq, to_number, variables, status FROM ${campaignRecipients}
      WHERE campaign_id = ${campaignId} AND seq > ${seq} ORDER BY seq
      LIMIT ${limit}`,
  );
}

/** The condition that campaign `campaignId`'s messages are made up to recipient `lastSeq`. */
export function materialisedTo(campaignId: string, lastSeq: number): SQL {
  return sql`EXISTS (SELECT 1 FROM campaigns WHERE id = ${campaignId} AND materialised_seq >= ${lastSeq})`;
}

/**
 * Per message of an INSERT over a `json_each` list (src/db/queries/messages.ts
 * `insertOutgoingStatements`): its recipient still waits (a racing step of this campaign may have
 * skipped it).
 */
export function recipientStillPending(campaignId: string): SQL {
  return sql`EXISTS (SELECT 1 FROM campaign_recipients r WHERE r.campaign_id = ${campaignId}
    AND r.seq = json_extract(value, '$.sendIndex') AND r.status = 'pending')`;
}

/**
 * The statement that moves campaign `campaignId`'s `materialised_seq` from `fromSeq` to `lastSeq`
 * while `active` holds; it changes nothing when another step moved it first.
 */
export function advanceMaterialisedStatement(
  campaignId: string,
  fromSeq: number,
  lastSeq: number,
  active: SQL,
  now: number,
): SQL {
  return sql`UPDATE campaigns SET materialised_seq = ${lastSeq}, updated_at = MAX(updated_at, ${now})
      WHERE id = ${campaignId} AND materialised_seq = ${fromSeq} AND ${active}`;
}

/**
 * The statement that marks the recipients of `plan` (JSON `[{ seq, id }]`: each recipient and its
 * message) `queued` with their message, those still `pending`, once `advanced` holds.
 */
export function queueRecipientsStatement(campaignId: string, plan: string, advanced: SQL): SQL {
  // MATERIALIZED: the step's list drives the join, one primary-key lookup per recipient.
  // Without it SQLite walks every recipient of the campaign and scans the list for each
  // (quadratic: some 23 s per step at 100,000 recipients).
  return sql`WITH p AS MATERIALIZED (SELECT json_extract(value, '$.seq') AS pseq, json_extract(value, '$.id') AS mid
        FROM json_each(${plan}))
      UPDATE campaign_recipients SET status = 'queued', message_id = p.mid FROM p
      WHERE campaign_id = ${campaignId} AND seq = p.pseq AND status = 'pending' AND ${advanced}`;
}

/** The condition that campaign `campaignId` is still as `active` says at this point of the batch. */
export function campaignStillIn(campaignId: string, active: SQL): SQL {
  return sql`EXISTS (SELECT 1 FROM campaigns WHERE id = ${campaignId} AND ${active})`;
}
