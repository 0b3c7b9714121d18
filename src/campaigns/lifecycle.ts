import { type SQL, sql } from "drizzle-orm";
import { batchSql, createDb } from "../db/client";
import { type CampaignRow, campaigns } from "../db/schema";
import type { ErrorCode } from "../errors";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";

export type CampaignStatus = CampaignRow["status"];

/**
 * Every move a campaign's status may make, and the only place that decides them (README,
 * Campaigns): `draft → running` (or `scheduled` until `scheduled_at`) on start, `scheduled →
 * running` when its first message is due, `running ⇄ paused`, anything before the end →
 * `cancelled`, and `completed` once nothing is left to send. A command whose campaign is in a
 * status it may not start from answers 409 with the move's `conflict` code.
 */
export const CAMPAIGN_TRANSITIONS = {
  start: { from: ["draft"], conflict: "campaign_not_draft" },
  begin: { from: ["scheduled"], conflict: null },
  pause: { from: ["running"], conflict: "campaign_not_running" },
  resume: { from: ["paused"], conflict: "campaign_not_paused" },
  cancel: { from: ["draft", "scheduled", "running", "paused"], conflict: "campaign_finished" },
  complete: { from: ["scheduled", "running", "paused"], conflict: null },
} as const satisfies Record<string, { from: readonly CampaignStatus[]; conflict: ErrorCode | null }>;

export type CampaignMove = keyof typeof CAMPAIGN_TRANSITIONS;

/** Whether a campaign in `status` may make move `kind`. */
export function mayMove(kind: CampaignMove, status: CampaignStatus): boolean {
  return (CAMPAIGN_TRANSITIONS[kind].from as readonly CampaignStatus[]).includes(status);
}

/** `status IN (…)`: the statuses move `kind` may start from, for a statement's WHERE. */
export function campaignFrom(kind: CampaignMove): SQL {
  return sql.raw(`status IN (${CAMPAIGN_TRANSITIONS[kind].from.map((status) => `'${status}'`).join(", ")})`);
}

/**
 * The statements that move the scheduled campaigns among `ids` (a SELECT of campaign ids) to
 * `running` at `at` (epoch ms), with their `campaign.started` events.
 */
export function beginCampaignStatements(ids: SQL, at: number): SQL[] {
  return [
    sql`UPDATE campaigns SET status = 'running', started_at = ${at}, updated_at = ${at}
      WHERE id IN (${ids}) AND ${campaignFrom("begin")}`,
    eventsForRows("campaign.started", campaigns, sql`id IN (${ids}) AND status = 'running'`),
  ];
}

/**
 * Whether the campaign row in scope has nothing left to send: no recipient waits for its message
 * (every one has it, or was skipped or failed) and no message waits (`queued` counts both).
 */
const FINISHED = sql`queued = 0 AND NOT EXISTS (SELECT 1 FROM campaign_recipients r
  WHERE r.campaign_id = campaigns.id AND r.seq > campaigns.materialised_seq AND r.status = 'pending')`;

/**
 * The statements that complete the campaigns among `ids` that have nothing left to send, at `at`
 * (epoch ms), with their `campaign.completed` events. Applying them again changes nothing.
 */
export function completeCampaignStatements(ids: string[], at: number): SQL[] {
  const among = sql`id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
  return [
    sql`UPDATE campaigns SET status = 'completed', completed_at = ${at}, updated_at = ${at}
      WHERE ${among} AND ${campaignFrom("complete")} AND ${FINISHED}`,
    eventsForRows("campaign.completed", campaigns, sql`${among} AND status = 'completed'`),
  ];
}

/**
 * The hourly safety net: completes every active campaign with nothing left to send (its last
 * message failed on a path that does not name its campaign, such as the dead-letter queue).
 * @returns how many it completed.
 */
export async function completeFinishedCampaigns(env: {
  DB: D1Database;
  WEBHOOK_QUEUE: Queue;
}): Promise<number> {
  const db = createDb(env.DB);
  const rows = await db.all<{ id: string }>(
    sql`SELECT id FROM campaigns WHERE ${campaignFrom("complete")} AND ${FINISHED}`,
  );
  if (rows.length === 0) return 0;
  const results = await batchSql(
    db,
    completeCampaignStatements(
      rows.map((row) => row.id),
      Date.now(),
    ),
  );
  await publishEvents(env, recordedIn(results, [1]));
  return results[0]?.meta.changes ?? 0;
}
