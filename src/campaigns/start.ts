import { charge } from "../billing/ledger";
import { priceOf } from "../billing/prices";
import { readConfig } from "../config";
import type { Db } from "../db/client";
import {
  campaignCompletedOnceMade,
  campaignOnceMade,
  campaignStartedAt,
  countOptedOut,
  draftAsPriced,
  skipOptedOutStatement,
  startPriceSet,
} from "../db/queries/campaign-steps";
import { findCampaign } from "../db/queries/campaigns";
import { findSessions } from "../db/queries/sessions";
import { type CampaignRow, campaigns } from "../db/schema";
import { ApiError } from "../errors";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";
import { campaignFrom, mayMove, moveCampaignStatement } from "../moves/campaign";
import { queueMaterialise } from "./materialise";
import { requireStoredRecipients } from "./recipient-kinds";
import { requireCampaignWindow } from "./service-window";
import { requireCampaignTemplate } from "./template";

/** How often a start is tried again when the draft changed under it (recipients, opt-outs). */
const START_ATTEMPTS = 3;

/**
 * Starts a draft campaign (docs/campaigns.md, Campaigns): in one D1 batch, charges the whole campaign, marks
 * the recipients on the account's opt-out list `skipped` (reason `recipient_opted_out`, not
 * charged), and moves it to `running`, or to `scheduled` while its `scheduled_at` is ahead (with
 * `campaign.started` when it runs; a campaign whose every recipient is skipped completes at once).
 * The charge is guarded by the draft as priced: a recipient or opt-out added meanwhile refuses it,
 * and the start is priced again. Before it, a template campaign's template is checked again on
 * every session (src/campaigns/template.ts), every recipient known by a user id must be of a kind
 * every session (and the template) can send to (src/campaigns/recipient-kinds.ts), and any other
 * campaign with Cloud API sessions must have every recipient inside their 24-hour windows
 * (src/campaigns/service-window.ts). Then the campaign queue makes the messages
 * (src/campaigns/materialise.ts).
 *
 * @returns the campaign after the start.
 * @throws ApiError `not_found` (404), `campaign_not_draft` (409), `campaign_empty` (409, no
 *   recipients), `session_not_connected` (409, none of its sessions is), `template_not_found` (422),
 *   `validation_failed` (422, the template's variables no longer fit it), `recipient_not_supported`
 *   (422), `outside_service_window` (422), `insufficient_balance` (402).
 */
export async function startCampaign(env: Env, db: Db, accountId: string, id: string): Promise<CampaignRow> {
  for (let attempt = 1; ; attempt++) {
    const campaign = await findCampaign(db, accountId, id);
    if (!campaign) throw new ApiError("not_found", "No such campaign.");
    if (!mayMove("start", campaign.status)) {
      throw new ApiError("campaign_not_draft", `The campaign is ${campaign.status}; only a draft can start.`);
    }
    if (campaign.total === 0)
      throw new ApiError("campaign_empty", "Add recipients before starting the campaign.");
    const sessions = await findSessions(db, accountId, campaign.sessionIds);
    if (!sessions.some((session) => session.status === "connected")) {
      throw new ApiError("session_not_connected", "None of the campaign's sessions is connected.");
    }
    if (campaign.template) await requireCampaignTemplate(env, db, accountId, sessions, campaign.template);
    await requireStoredRecipients(env, db, campaign, sessions);
    await requireCampaignWindow(env, db, campaign, sessions, Date.now());
    const skipped = await countOptedOut(db, id, accountId);
    const billable = campaign.total - skipped;
    const price = priceOf(readConfig(env), campaign.type);
    const amount = billable * price;
    const now = Date.now();
    const scheduled = campaign.scheduledAt !== null && campaign.scheduledAt > now;
    const move = billable === 0 ? "start_empty" : scheduled ? "schedule" : "start";
    const chargeId = crypto.randomUUID();
    const charged = await charge(
      env,
      db,
      {
        id: chargeId,
        accountId,
        amount,
        messageCount: billable,
        now,
        cause: { campaignId: id },
        guard: draftAsPriced(id, accountId, campaignFrom("start"), campaign.total, skipped),
      },
      (made) => [
        skipOptedOutStatement(id, accountId, made),
        moveCampaignStatement(
          move,
          campaignOnceMade(id, made),
          now,
          // A campaign that completes at once has started too, unless it was scheduled.
          startPriceSet(
            { price, chargeId, cost: amount, skipped, queued: billable },
            move === "start_empty" && !scheduled ? now : null,
          ),
        ),
        eventsForRows("campaign.started", campaigns, campaignStartedAt(id, now, made)),
        eventsForRows("campaign.completed", campaigns, campaignCompletedOnceMade(id, made)),
      ],
    );
    if (!charged.ok) {
      if (charged.reason === "no_account") throw new ApiError("not_found", "No such account.");
      if (charged.balance >= amount && attempt < START_ATTEMPTS) continue;
      if (charged.balance >= amount) {
        throw new ApiError("service_unavailable", "The campaign kept changing while it started; try again.");
      }
      throw new ApiError(
        "insufficient_balance",
        `This campaign costs ${amount} minor units (${billable} messages), more than the balance (${charged.balance}).`,
      );
    }
    await publishEvents(env, recordedIn(charged.results, [2, 3]));
    if (move !== "start_empty") await queueMaterialise(env, accountId, id);
    const started = await findCampaign(db, accountId, id);
    if (!started) throw new Error(`campaign ${id} not found after its start`);
    return started;
  }
}
