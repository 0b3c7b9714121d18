import { databaseFor } from "../db/databases";
import { findCampaign } from "../db/queries/campaigns";
import { moveToSessions } from "../db/queries/messages";
import { findSessions } from "../db/queries/sessions";
import { sendInBatches } from "../lib/queue";
import { coldContactLimit } from "../lib/session-health";
import { formatTimestamp } from "../lib/time";
import { type DispatchSource, dispatchRequestOf, LANE } from "../messages/dispatch-request";

/** A waiting campaign message of the session that can no longer send. */
export interface StrandedMessage {
  id: string;
  campaign_id: string | null;
}

/**
 * Campaign failover (docs/campaigns.md, Campaigns): a session of a running campaign became `banned` or
 * `failed`, was deleted, or the network limits its new chats (`reason`), so its waiting campaign
 * messages move to the campaign's other `connected` sessions that the network does not limit
 * (lib/session-health.ts `coldContactLimit`), spread round-robin, and go on the outbound Queue for them. Each
 * moved message's `metadata.failover` records the move (`from_session_id`, `to_session_id`,
 * `reason`, `at`). Only messages still `queued` or `scheduled` on `from` move, so running it twice
 * moves nothing twice; a queue message lost after the move is caught by the reconciliation sweep
 * (the move clears `accepted_at`).
 *
 * @returns the ids that moved; the others (no campaign, or no connected session left) are the
 *   caller's to fail and refund.
 */
export async function failover(
  env: Env,
  from: { id: string; accountId: string },
  stranded: StrandedMessage[],
  reason: string,
): Promise<string[]> {
  const db = await databaseFor(env, from.accountId);
  const byCampaign = new Map<string, string[]>();
  for (const m of stranded) {
    if (m.campaign_id) byCampaign.set(m.campaign_id, [...(byCampaign.get(m.campaign_id) ?? []), m.id]);
  }
  const moved: string[] = [];
  for (const [campaignId, ids] of byCampaign) {
    const campaign = await findCampaign(db, from.accountId, campaignId);
    if (!campaign) continue;
    const others = campaign.sessionIds.filter((id) => id !== from.id);
    const now = Date.now();
    // Connected, and not limited by the network for new chats (docs/sessions.md, Session health).
    const connected = new Set(
      (await findSessions(db, from.accountId, others))
        .filter((s) => s.status === "connected" && coldContactLimit(s.health, now) === null)
        .map((s) => s.id),
    );
    const targets = others.filter((id) => connected.has(id));
    if (targets.length === 0) continue;
    const plan = JSON.stringify(ids.map((id, i) => ({ id, to: targets[i % targets.length] })));
    const rows = await moveToSessions<DispatchSource>(db, {
      accountId: from.accountId,
      fromSessionId: from.id,
      plan,
      reason,
      now,
      at: formatTimestamp(now),
    });
    await sendInBatches(
      env.OUTBOUND_QUEUE,
      rows.map((row) => dispatchRequestOf(row, LANE.campaign, { sendWindow: campaign.sendWindow })),
    );
    moved.push(...rows.map((row) => row.id));
  }
  return moved;
}
