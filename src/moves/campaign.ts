import { type SQL, sql } from "drizzle-orm";
import { batchSql, type Db } from "../db/client";
import { type CampaignRow, campaigns } from "../db/schema";
import type { ErrorCode } from "../errors";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";

export type CampaignStatus = CampaignRow["status"];

/**
 * Every move a campaign's status may make, and the only place that writes it (docs/campaigns.md,
 * Campaigns): a draft starts `running`, or `scheduled` until `scheduled_at`, or `completed` at
 * once when every recipient is skipped; `scheduled → running` when its first message is due;
 * `running ⇄ paused`; anything before the end → `cancelled`; `completed` once nothing is left to
 * send. `stamp` is the time column the move sets to the move's time. A command whose campaign is
 * in a status it may not start from answers 409 with the move's `conflict` code.
 */
export const CAMPAIGN_TRANSITIONS = {
  start: { from: ["draft"], to: "running", stamp: "started_at", conflict: "campaign_not_draft" },
  schedule: { from: ["draft"], to: "scheduled", stamp: null, conflict: "campaign_not_draft" },
  start_empty: { from: ["draft"], to: "completed", stamp: "completed_at", conflict: "campaign_not_draft" },
  begin: { from: ["scheduled"], to: "running", stamp: "started_at", conflict: null },
  pause: { from: ["running"], to: "paused", stamp: null, conflict: "campaign_not_running" },
  resume: { from: ["paused"], to: "running", stamp: null, conflict: "campaign_not_paused" },
  cancel: {
    from: ["draft", "scheduled", "running", "paused"],
    to: "cancelled",
    stamp: null,
    conflict: "campaign_finished",
  },
  complete: {
    from: ["scheduled", "running", "paused"],
    to: "completed",
    stamp: "completed_at",
    conflict: null,
  },
} as const satisfies Record<
  string,
  {
    from: readonly CampaignStatus[];
    to: CampaignStatus;
    stamp: "started_at" | "completed_at" | null;
    conflict: ErrorCode | null;
  }
>;

export type CampaignMove = keyof typeof CAMPAIGN_TRANSITIONS;

/** The campaign statuses no move leaves: it makes and sends nothing more. */
export const FINISHED_CAMPAIGN_STATUSES: readonly CampaignStatus[] = campaigns.status.enumValues.filter(
  (status) =>
    !Object.values(CAMPAIGN_TRANSITIONS).some((move) => (move.from as readonly string[]).includes(status)),
);

/** Whether a campaign in `status` may make move `kind`. */
export function mayMove(kind: CampaignMove, status: CampaignStatus): boolean {
  return (CAMPAIGN_TRANSITIONS[kind].from as readonly CampaignStatus[]).includes(status);
}

/** `status IN (…)`: the statuses move `kind` may start from, for a statement's WHERE. */
export function campaignFrom(kind: CampaignMove): SQL {
  return sql.raw(`status IN (${CAMPAIGN_TRANSITIONS[kind].from.map((status) => `'${status}'`).join(", ")})`);
}

/**
 * The one statement that moves a campaign's status: every campaign `where` selects that may make
 * move `kind` goes to the move's `to`, with `updated_at` and the move's `stamp` column set to
 * `at` (epoch ms). `set` adds assignments the move makes with it (a start's price and charge).
 * Applying it again changes nothing: the moved rows are no longer in a `from` status.
 */
export function moveCampaignStatement(kind: CampaignMove, where: SQL, at: number, set?: SQL): SQL {
  const { to, stamp } = CAMPAIGN_TRANSITIONS[kind];
  const stamped = stamp === null ? sql`` : sql`, ${sql.raw(stamp)} = ${at}`;
  const extra = set === undefined ? sql`` : sql`, ${set}`;
  return sql`UPDATE campaigns SET status = ${to}, updated_at = ${at}${stamped}${extra}
    WHERE (${where}) AND ${campaignFrom(kind)}`;
}

/**
 * The statements that move the scheduled campaigns among `ids` (a SELECT of campaign ids) to
 * `running` at `at` (epoch ms), with their `campaign.started` events.
 */
export function beginCampaignStatements(ids: SQL, at: number): SQL[] {
  return [
    moveCampaignStatement("begin", sql`id IN (${ids})`, at),
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
    moveCampaignStatement("complete", sql`${among} AND ${FINISHED}`, at),
    eventsForRows("campaign.completed", campaigns, sql`${among} AND status = 'completed'`),
  ];
}

/**
 * The hourly safety net, on one account database `db`: completes every active campaign with nothing left to send (its last
 * message failed on a path that does not name its campaign, such as the dead-letter queue).
 * @returns how many it completed.
 */
export async function completeFinishedCampaigns(env: { WEBHOOK_QUEUE: Queue }, db: Db): Promise<number> {
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
