import { type SQL, sql } from "drizzle-orm";
import { refundCountStatements, refundedBy } from "../billing/ledger";

/**
 * The statements that fail every recipient of campaign `campaign` still waiting for its message
 * (not yet made into one by src/campaigns/materialise.ts) with `reason`, and refund them: one
 * `refund` ledger entry of their count × the campaign's price, `refunded`, `queued` and `failed`
 * of the campaign adjusted to match. Only while `active` (a condition on the campaign row, e.g.
 * its status) holds; nothing is written when no recipient waits. Put them before any statement
 * of the batch that makes `active` false.
 */
export function failRemainderStatements(
  campaign: { id: string; accountId: string },
  reason: string,
  active: SQL,
  now: number,
): SQL[] {
  const refundId = crypto.randomUUID();
  const waiting = sql`campaign_id = ${campaign.id} AND status = 'pending'
    AND seq > (SELECT materialised_seq FROM campaigns WHERE id = ${campaign.id})`;
  const count = sql`(SELECT count(*) FROM campaign_recipients WHERE ${waiting}
    AND EXISTS (SELECT 1 FROM campaigns WHERE id = ${campaign.id} AND ${active}))`;
  const price = sql`(SELECT price FROM campaigns WHERE id = ${campaign.id})`;
  const refunded = refundedBy(refundId);
  const made = sql`EXISTS (SELECT 1 FROM ledger_entries WHERE id = ${refundId})`;
  return [
    ...refundCountStatements(
      campaign.accountId,
      refundId,
      { amount: sql`${count} * ${price}`, count, cause: { campaignId: campaign.id } },
      now,
    ),
    sql`UPDATE campaign_recipients SET status = 'failed', reason = ${reason} WHERE ${waiting} AND ${made}`,
    sql`UPDATE campaigns SET refunded = refunded + ${refunded.amount}, queued = queued - ${refunded.count},
        failed = failed + ${refunded.count}, updated_at = ${now}
      WHERE id = ${campaign.id} AND ${made}`,
  ];
}
