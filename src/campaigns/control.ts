import { batchSql, type Db } from "../db/client";
import { cancelledCampaign, findCampaign, ownedCampaign } from "../db/queries/campaigns";
import { type CampaignRow, campaigns } from "../db/schema";
import type { CampaignHold } from "../delivery/outbox";
import { ApiError } from "../errors";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";
import { applyMoves } from "../moves/apply";
import {
  CAMPAIGN_TRANSITIONS,
  type CampaignMove,
  campaignFrom,
  mayMove,
  moveCampaignStatement,
} from "../moves/campaign";
import { sessionStub } from "../sessions/stub";
import { failRemainderStatements } from "./remainder";

// Pause, resume and cancel (docs/campaigns.md, Campaigns). A campaign's messages wait in its sessions'
// objects, so each command first tells every one of them (an RPC each, in parallel), then moves the
// campaign's status in D1. When an object cannot be reached the command answers 503 and the status
// stays: the command may simply be sent again (holding and releasing twice is harmless).

/** The account's campaign, if it may make move `kind`. @throws ApiError 404, or the move's 409. */
async function movable(db: Db, accountId: string, id: string, kind: CampaignMove): Promise<CampaignRow> {
  const campaign = await findCampaign(db, accountId, id);
  if (!campaign) throw new ApiError("not_found", "No such campaign.");
  const conflict = CAMPAIGN_TRANSITIONS[kind].conflict;
  if (!mayMove(kind, campaign.status) && conflict) {
    throw new ApiError(conflict, `The campaign is ${campaign.status}; it cannot ${kind} now.`);
  }
  return campaign;
}

/**
 * Runs `call` on every session object of the campaign. @throws ApiError 503 if any fails or
 * answers `unsynced` (D1 refused its outcomes).
 */
async function tellSessions(
  env: Env,
  campaign: CampaignRow,
  call: (stub: ReturnType<typeof sessionStub>) => Promise<unknown>,
): Promise<void> {
  const results = await Promise.allSettled(campaign.sessionIds.map((id) => call(sessionStub(env, id))));
  if (results.some((result) => result.status === "rejected" || result.value === "unsynced")) {
    throw new ApiError("service_unavailable", "A session of the campaign could not be reached; try again.");
  }
}

/** Makes move `kind` if the campaign may still make it; else the move's 409. @returns the campaign after. */
async function moveStatus(db: Db, campaign: CampaignRow, kind: CampaignMove): Promise<CampaignRow> {
  const owned = ownedCampaign(campaign.id, campaign.accountId);
  const [moved] = await batchSql(db, [moveCampaignStatement(kind, owned, Date.now())]);
  if ((moved?.meta.changes ?? 0) === 0) return movable(db, campaign.accountId, campaign.id, kind);
  const row = await findCampaign(db, campaign.accountId, campaign.id);
  if (!row) throw new Error(`campaign ${campaign.id} not found after its ${kind}`);
  return row;
}

/**
 * running → paused: no more of its messages are handed to the gateway (one under way finishes);
 * they stay `queued`. @throws ApiError 404, 409 `campaign_not_running`, 503.
 */
export async function pauseCampaign(env: Env, db: Db, accountId: string, id: string): Promise<CampaignRow> {
  const campaign = await movable(db, accountId, id, "pause");
  await tellSessions(env, campaign, (stub) => stub.holdCampaign(id, "paused" satisfies CampaignHold));
  return moveStatus(db, campaign, "pause");
}

/**
 * paused → running: its sessions send its messages again, in order, paced as before.
 * @throws ApiError 404, 409 `campaign_not_paused`, 503.
 */
export async function resumeCampaign(env: Env, db: Db, accountId: string, id: string): Promise<CampaignRow> {
  const campaign = await movable(db, accountId, id, "resume");
  const resumed = await moveStatus(db, campaign, "resume");
  await tellSessions(env, campaign, (stub) => stub.releaseCampaign(id));
  return resumed;
}

/**
 * Anything before the end → cancelled: every message not yet sent fails with reason
 * `campaign_cancelled` and is refunded (those waiting in sessions by the sessions, the rest here),
 * and so is every recipient whose message was not made yet, by count at the campaign's price, in
 * the batch that moves the status. `campaign.cancelled` records it.
 * @throws ApiError 404, 409 `campaign_finished`, 503.
 */
export async function cancelCampaign(env: Env, db: Db, accountId: string, id: string): Promise<CampaignRow> {
  const campaign = await movable(db, accountId, id, "cancel");
  if (campaign.status !== "draft") {
    await tellSessions(env, campaign, (stub) => stub.holdCampaign(id, "cancelled" satisfies CampaignHold));
  }
  // Messages on their way to a session (on the queue, unclaimed) fail here; a session no longer
  // claims them. Those a session claimed are its own to fail (above), or to send once more when
  // it holds their outcome unsettled; it wrote every outcome it held before answering.
  await applyMoves(env, accountId, [
    {
      kind: "fail",
      accountId,
      target: { campaignId: id },
      reason: "campaign_cancelled",
      at: Date.now(),
      unacceptedOnly: true,
    },
  ]);
  const now = Date.now();
  const owned = ownedCampaign(id, accountId);
  const results = await batchSql(db, [
    ...failRemainderStatements(campaign, "campaign_cancelled", campaignFrom("cancel"), now),
    moveCampaignStatement("cancel", owned, now),
    eventsForRows("campaign.cancelled", campaigns, cancelledCampaign(id, accountId)),
  ]);
  if ((results.at(-2)?.meta.changes ?? 0) === 0) return movable(db, accountId, id, "cancel");
  await publishEvents(env, recordedIn(results, [results.length - 1]));
  const cancelled = await findCampaign(db, accountId, id);
  if (!cancelled) throw new Error(`campaign ${id} not found after its cancel`);
  return cancelled;
}
