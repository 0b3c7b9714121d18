import { type SQL, sql } from "drizzle-orm";
import { readConfig } from "../config";
import type { Db } from "../db/client";
import type { CampaignRow, sessions as sessionsTable } from "../db/schema";
import { ApiError } from "../errors";
import { allowedOutsideWindow, hasServiceWindow, SERVICE_WINDOW_MS } from "../messages/service-window";

/*
 * The customer service window for campaigns (README, Campaigns; src/messages/service-window.ts for
 * the rule itself, Meta's "Customer service windows"): a campaign that is not a template campaign
 * and has a Cloud API session starts only when every recipient it will send to is inside the
 * window of every Cloud API session of the campaign. The strict rule, since a recipient's session
 * is decided when its message is made (round-robin, and failover may move it to another).
 */

/** Most numbers a refusal lists in `outside`; `outside_count` gives how many there are. */
export const MAX_OUTSIDE_LISTED = 100;

/**
 * The query that finds campaign `campaignId`'s recipients outside the window at `since` (epoch ms;
 * a contact is inside when it last wrote at or after it) of any of `sessionIds`, leaving out those
 * on account `accountId`'s opt-out list (they are skipped, not sent): the first
 * {@link MAX_OUTSIDE_LISTED} by `seq`, each row carrying `outside_count`, how many there are in all.
 * One statement: the list walks the campaign's recipients in `seq` order by their primary key
 * (campaign_id, seq) and stops at the limit; the count, an uncorrelated subquery SQLite runs once,
 * walks them all. Per recipient, a primary-key lookup in opt_outs and one in contact_windows per
 * session: no scan, no sort (test/cloud-api/campaign-window.test.ts reads the plan).
 */
export function outsideWindowQuery(
  campaignId: string,
  accountId: string,
  sessionIds: string[],
  since: number,
): SQL {
  const outside = (r: SQL) => sql`${r}.campaign_id = ${campaignId}
    AND NOT EXISTS (SELECT 1 FROM opt_outs o WHERE o.account_id = ${accountId} AND o.to_number = ${r}.to_number)
    AND EXISTS (SELECT 1 FROM json_each(${JSON.stringify(sessionIds)}) s
      LEFT JOIN contact_windows w ON w.session_id = s.value AND w.contact_number = ${r}.to_number
      WHERE w.last_incoming_at IS NULL OR w.last_incoming_at < ${since})`;
  return sql`SELECT r.to_number AS to_number,
      (SELECT count(*) FROM campaign_recipients c WHERE ${outside(sql.raw("c"))}) AS outside_count
    FROM campaign_recipients r WHERE ${outside(sql.raw("r"))}
    ORDER BY r.seq LIMIT ${MAX_OUTSIDE_LISTED}`;
}

/**
 * Refuses to start campaign `campaign` when it sends free-form messages (any type but a template)
 * on Cloud API sessions and any recipient is outside the window of any of them at `now` (epoch
 * ms), before anything is charged. Sessions on other gateways have no window; with none on the
 * Cloud API this reads nothing.
 * @throws ApiError `outside_service_window` (422) with extension members `outside` (the first
 *   {@link MAX_OUTSIDE_LISTED} numbers outside, E.164, in the order they were added) and
 *   `outside_count` (how many are outside).
 */
export async function requireCampaignWindow(
  env: Env,
  db: Db,
  campaign: Pick<CampaignRow, "id" | "accountId" | "type">,
  sessions: Pick<typeof sessionsTable.$inferSelect, "id" | "gateway">[],
  now: number,
): Promise<void> {
  if (allowedOutsideWindow(campaign.type)) return;
  const fallback = readConfig(env).CHATAPP_GATEWAY;
  const windowed = sessions.filter((s) => hasServiceWindow(s.gateway ?? fallback)).map((s) => s.id);
  if (windowed.length === 0) return;
  const rows = await db.all<{ to_number: string; outside_count: number }>(
    outsideWindowQuery(campaign.id, campaign.accountId, windowed, now - SERVICE_WINDOW_MS),
  );
  if (rows.length === 0) return;
  const count = rows[0]?.outside_count ?? rows.length;
  throw new ApiError(
    "outside_service_window",
    `${count} recipient(s) have not written to the campaign's Cloud API sessions in the last 24 hours; outside the customer service window only a template may be sent.`,
    { extra: { outside: rows.map((row) => row.to_number), outside_count: count } },
  );
}
