import { type SQL, sql } from "drizzle-orm";
import { refundCountStatements, refundedBy } from "../billing/ledger";

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
