import { readConfig } from "../config";
import type { Db, Statement } from "../db/client";
import { outsideWindowStatement, recipientsOutsideWindow } from "../db/queries/campaigns";
import type { CampaignRow, sessions as sessionsTable } from "../db/schema";
import { ApiError } from "../errors";
import { allowedOutsideWindow, hasServiceWindow, SERVICE_WINDOW_MS } from "../messages/service-window";

/*
 * The customer service window for campaigns (docs/campaigns.md, Campaigns; src/messages/service-window.ts for
 * the rule itself, Meta's "Customer service windows"): a campaign that is not a template campaign
 * and has a Cloud API session starts only when every recipient it will send to is inside the
 * window of every Cloud API session of the campaign. The strict rule, since a recipient's session
 * is decided when its message is made (round-robin, and failover may move it to another).
 */

/** Most recipients a refusal lists in `outside`; `outside_count` gives how many there are. */
export const MAX_OUTSIDE_LISTED = 100;

/**
 * The query that finds campaign `campaignId`'s recipients outside the window at `since`
 * (src/db/queries/campaigns.ts `outsideWindowStatement`), listing at most {@link MAX_OUTSIDE_LISTED}:
 * what {@link requireCampaignWindow} runs, exported so a test can read its plan.
 */
export function outsideWindowQuery(
  campaignId: string,
  accountId: string,
  sessionIds: string[],
  since: number,
): Statement {
  return outsideWindowStatement(campaignId, accountId, sessionIds, since, MAX_OUTSIDE_LISTED);
}

/**
 * Refuses to start campaign `campaign` when it sends free-form messages (any type but a template)
 * on Cloud API sessions and any recipient is outside the window of any of them at `now` (epoch
 * ms), before anything is charged. Sessions on other gateways have no window; with none on the
 * Cloud API this reads nothing.
 * A recipient known by a user id is found by it as a number is (docs/contacts.md, Contacts).
 * @throws ApiError `outside_service_window` (422) with extension members `outside` (the first
 *   {@link MAX_OUTSIDE_LISTED} recipients outside, E.164 numbers and user ids, in the order they
 *   were added) and `outside_count` (how many are outside).
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
  const rows = await recipientsOutsideWindow(
    db,
    campaign.id,
    campaign.accountId,
    windowed,
    now - SERVICE_WINDOW_MS,
    MAX_OUTSIDE_LISTED,
  );
  if (rows.length === 0) return;
  const count = rows[0]?.outside_count ?? rows.length;
  throw new ApiError(
    "outside_service_window",
    `${count} recipient(s) have not written to the campaign's Cloud API sessions in the last 24 hours; outside the customer service window only a template may be sent.`,
    { extra: { outside: rows.map((row) => row.to_number), outside_count: count } },
  );
}
