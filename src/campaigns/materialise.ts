import { z } from "zod";
import { batchSql, both, type Db } from "../db/client";
import { databaseFor, PLACE_TTL_MS } from "../db/databases";
import {
  advanceMaterialisedStatement,
  campaignStillIn,
  campaignWhere,
  materialisedTo,
  queueRecipientsStatement,
  recipientStillPending,
  recipientsAfter,
  stalledCampaigns,
} from "../db/queries/campaign-steps";
import { insertOutgoingStatements, type NewMessages, outgoingRows } from "../db/queries/messages";
import { findSessions } from "../db/queries/sessions";
import type { CampaignPayload, CampaignRow } from "../db/schema";
import { publishEvents } from "../events/publish";
import { recordedIn } from "../events/record";
import { contactCardsLabel } from "../lib/contact-cards";
import { locationLabel } from "../lib/location";
import { log } from "../lib/log";
import { dropPoison, redeliveryDelaySeconds, sendInBatches } from "../lib/queue";
import { fillTemplate } from "../lib/template";
import { dispatchRequestOf, LANE } from "../messages/dispatch-request";
import { metadataText } from "../messages/metadata";
import { campaignFrom, completeCampaignStatements } from "../moves/campaign";
import { recipientsNotOnChatapp, skipNotOnChatappStatements } from "./number-checks";
import { failRemainderStatements } from "./remainder";
import { fillCampaignTemplate } from "./template";

/**
 * Recipients of each session per step. The step's messages reach the queue grouped by session, so
 * a session object takes this many in one hand-over and writes their outcomes in one flush: D1's
 * statements per message stay as low with twenty sessions as with one.
 */
export const STEP_PER_SESSION = 100;
/** Fewest and most recipients one step makes into messages (one D1 batch of three statements). */
export const STEP_MIN = 500;
export const STEP_MAX = 2_000;
/**
 * Most bytes of message JSON one step writes: D1 takes a bound string of up to 2 MB, so a step of
 * long personalised contents is cut short and the next step goes on from there.
 */
export const STEP_BYTES = 1_000_000;
/** Steps one queue message runs before it hands over to the next (a Worker invocation stays short). */
const STEPS_PER_JOB = 20;
/**
 * Milliseconds of steps after which a job hands over to the next even before {@link STEPS_PER_JOB}:
 * a `check_numbers` campaign's step waits for the gateway (WAHA answers one number per call). No
 * longer than an isolate keeps an account's place (src/db/databases.ts `PLACE_TTL_MS`): the job
 * writes to the database it found at its start, and a move of the account holds off its copy for
 * a few of those (src/account-moves/move.ts `ACCOUNT_MOVE_HOLD_MS`), so no job still writes to the
 * old database then.
 */
const JOB_BUDGET_MS = PLACE_TTL_MS;
/** Session statuses that can still send a campaign's messages (a disconnected one later). */
const USABLE = new Set(["connected", "disconnected", "pending"]);

/** Name of the campaign queue (wrangler.toml). */
export const CAMPAIGN_QUEUE_NAME = "chatapp-campaigns";
/** A campaign with recipients waiting and no step for this long may have lost its job. */
const STALLED_AFTER_MS = 15 * 60_000;

/**
 * A campaign queue message: make the next messages of campaign `campaignId` of account
 * `accountId`. A job queued before jobs named their account (a deployment of one database) has
 * none: it runs on the first account database (src/db/databases.ts `databaseFor` of an unknown
 * account).
 */
export interface MaterialiseJob {
  campaignId: string;
  accountId?: string | undefined;
}

const JobSchema = z.object({
  campaignId: z.uuid(),
  accountId: z.uuid().optional(),
}) satisfies z.ZodType<MaterialiseJob>;

/** Puts a job for campaign `campaignId` on the campaign queue (see {@link handleCampaignBatch}). */
export async function queueMaterialise(env: Env, accountId: string, campaignId: string): Promise<void> {
  await env.CAMPAIGN_QUEUE.send({ campaignId, accountId } satisfies MaterialiseJob);
}

/**
 * Campaign queue consumer: runs up to {@link STEPS_PER_JOB} steps of each campaign's job, then
 * queues the next job while recipients wait. A step that fails is retried with backoff; a job
 * queued twice is harmless (see {@link materialiseStep}).
 */
export async function handleCampaignBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of dropPoison(batch, JobSchema)) {
    const { campaignId } = message.body;
    try {
      const db = await databaseFor(env, message.body.accountId ?? "");
      const accountId =
        message.body.accountId ?? (await campaignWhere(db, campaignId, campaignFrom("complete")))?.accountId;
      if (accountId && (await materialise(env, db, campaignId)))
        await queueMaterialise(env, accountId, campaignId);
      message.ack();
    } catch (error) {
      log.error("materialise_failed", { error });
      message.retry({ delaySeconds: redeliveryDelaySeconds(message.attempts) });
    }
  }
}

/**
 * Part of the hourly sweep: queues a job again for every started campaign with recipients still
 * waiting for their message and no step for {@link STALLED_AFTER_MS} (a job lost, or dead after
 * its retries). A campaign whose job is merely slow gets a second one, which is harmless.
 * @returns how many it queued.
 */
export async function resumeStalledCampaigns(env: Env, db: Db, now: number): Promise<number> {
  const stalled = await stalledCampaigns(db, campaignFrom("complete"), now - STALLED_AFTER_MS);
  for (const { id, accountId } of stalled) await queueMaterialise(env, accountId, id);
  return stalled.length;
}

/**
 * Runs steps of campaign `campaignId` (in its account's database `db`) until it is done, `steps`
 * ran or {@link JOB_BUDGET_MS} passed.
 * @returns whether more wait.
 */
export async function materialise(
  env: Env,
  db: Db,
  campaignId: string,
  steps = STEPS_PER_JOB,
): Promise<boolean> {
  const until = Date.now() + JOB_BUDGET_MS;
  for (let i = 0; i < steps; i++) {
    if (!(await materialiseStep(env, db, campaignId))) return false;
    if (Date.now() >= until) return true;
  }
  return true;
}

/**
 * One step of a started campaign: the next {@link stepSize} recipients (by `seq`; fewer when
 * their messages pass {@link STEP_BYTES}) become messages, in one D1 batch, then go on the
 * outbound Queue.
 *
 * - Content: the template filled with the recipient's `variables` (src/lib/template.ts); a
 *   template campaign's message instead carries the template's name as content and the template,
 *   its values filled for the recipient, in `metadata.template`, as a template send's does
 *   (src/campaigns/template.ts).
 * - Session: the campaign's sessions in turn by `seq` (round-robin), among those that can still
 *   send; with none left, every waiting recipient fails (`no_session_available`) and is refunded.
 * - Pacing: `delay_between` drawn uniformly from the campaign's `delay_range`, per message.
 * - Lane: campaign traffic ({@link LANE}), behind one-time codes and single sends.
 * - A scheduled campaign's messages are `scheduled` for its `scheduled_at`.
 * - Number checks: a `check_numbers` campaign's recipients not on the chat network make no
 *   message; they are `skipped` and refunded in the step's batch (src/campaigns/number-checks.ts).
 *
 * The batch is guarded by `materialised_seq` (a concurrent step of the same campaign makes
 * nothing), a message is made only for a recipient still `pending`, and message ids are derived
 * from (campaign, seq), so no recipient gets two messages, nor a message once skipped.
 * Money was charged at start; the trigger-kept statistics count the message from there.
 *
 * @returns whether more may wait (false once every recipient has its message or the campaign
 *   ended).
 */
export async function materialiseStep(env: Env, db: Db, campaignId: string): Promise<boolean> {
  const campaign = await campaignWhere(db, campaignId, campaignFrom("complete"));
  if (!campaign) return false;
  const { sessionIds, sendWindow } = campaign;
  const usable = new Set(
    (await findSessions(db, campaign.accountId, sessionIds))
      .filter((s) => USABLE.has(s.status))
      .map((s) => s.id),
  );
  const senders = sessionIds.filter((id) => usable.has(id));
  const step = await recipientsAfter(db, campaignId, campaign.materialisedSeq, stepSize(senders.length));
  const now = Date.now();
  if (step.length === 0) {
    await finish(env, db, campaignId, []);
    return false;
  }
  if (senders.length === 0) {
    await finish(
      env,
      db,
      campaignId,
      failRemainderStatements(campaign, "no_session_available", campaignFrom("complete"), now),
    );
    return false;
  }
  const scheduledAt =
    campaign.scheduledAt !== null && campaign.scheduledAt > now ? campaign.scheduledAt : null;
  const notOnChatapp = await recipientsNotOnChatapp(env, db, campaign, step, now);
  const made = await Promise.all(
    step.map(async (r) =>
      r.status !== "pending" || notOnChatapp.has(r.seq)
        ? { seq: r.seq, message: null }
        : {
            seq: r.seq,
            message: {
              id: await campaignMessageId(campaignId, r.seq),
              to: r.to_number,
              sessionId: senders[(r.seq - 1) % senders.length] ?? "",
              ...messageOf(campaign, JSON.parse(r.variables ?? "{}")),
              delayBetween: randomGap(campaign.delayMinMs, campaign.delayMaxMs),
              sendIndex: r.seq,
            },
          },
    ),
  );
  const kept = withinBytes(made, STEP_BYTES);
  // The step's last recipient: `kept` holds at least the first of the step, which is not empty.
  const lastSeq = kept.at(-1)?.seq ?? campaign.materialisedSeq;
  const toSend: NewMessages = {
    accountId: campaign.accountId,
    sessionId: senders[0] ?? "",
    type: campaign.type,
    content: null,
    mediaUrl: campaign.mediaUrl,
    mediaKey: campaign.mediaKey,
    mediaContentType: campaign.mediaContentType,
    delayBetween: campaign.delayMinMs,
    scheduledAt,
    price: campaign.price,
    otpId: null,
    chargeId: campaign.chargeId ?? campaignId,
    campaignId,
    now,
    simulateTyping: campaign.simulateTyping,
    recipients: kept.flatMap((r) => (r.message ? [r.message] : [])),
  };
  const plan = JSON.stringify(toSend.recipients.map((r) => ({ seq: r.sendIndex, id: r.id })));
  const advanced = materialisedTo(campaignId, lastSeq);
  const skipped = kept.flatMap((r) => (notOnChatapp.has(r.seq) ? [r.seq] : []));
  const [moved] = await batchSql(db, [
    advanceMaterialisedStatement(
      campaignId,
      campaign.materialisedSeq,
      lastSeq,
      campaignFrom("complete"),
      now,
    ),
    ...insertOutgoingStatements(toSend, both(advanced, recipientStillPending(campaignId))),
    queueRecipientsStatement(campaignId, plan, advanced),
    ...skipNotOnChatappStatements(
      campaign,
      skipped,
      both(advanced, campaignStillIn(campaignId, campaignFrom("complete"))),
      now,
    ),
  ]);
  // Another step of this campaign made these: look again from where it got to.
  if ((moved?.meta.changes ?? 0) === 0) return true;
  // Grouped by session (in order within each), so that a queue batch hands each session object
  // many messages in one call rather than a few to each of twenty.
  const bySession = outgoingRows(toSend).sort(
    (a, b) => (a.chatappSessionId ?? "").localeCompare(b.chatappSessionId ?? "") || a.sendIndex - b.sendIndex,
  );
  const { error } = await sendInBatches(
    env.OUTBOUND_QUEUE,
    bySession.map((row) => dispatchRequestOf(row, LANE.campaign, { sendWindow })),
  );
  // Messages not queued wait for the reconciliation sweep (`accepted_at` is null).
  if (error) log.error("enqueue_failed", { campaign_id: campaignId });
  return true;
}

/**
 * What differs per recipient in a campaign's message: the content filled with its `variables`; for
 * a template campaign, the template's name as content and `metadata.template` the template filled
 * for it (read by messages/dispatch-request.ts `dispatchRequestOf` when the message is dispatched);
 * for a location, contacts or interactive campaign, the same object for everyone in `metadata`
 * under its key, and its label as content ({@link payloadContent}).
 */
function messageOf(
  campaign: Pick<CampaignRow, "content" | "template" | "payload">,
  variables: Record<string, string>,
): { content: string | null; metadata?: string } {
  if (campaign.template) {
    const template = fillCampaignTemplate(campaign.template, variables);
    return { content: template.name, metadata: metadataText({ template }) };
  }
  if (campaign.payload)
    return { content: payloadContent(campaign.payload), metadata: metadataText(campaign.payload) };
  return { content: campaign.content === null ? null : fillTemplate(campaign.content, variables) };
}

/**
 * The content a location, contacts or interactive campaign's messages store, as a send's would
 * (src/messages/send.ts `storedContent`): a location's name or address, the cards' names, the
 * interactive message's body text.
 */
function payloadContent(payload: CampaignPayload): string | null {
  if ("location" in payload) return locationLabel(payload.location);
  if ("contacts" in payload) return contactCardsLabel(payload.contacts);
  return payload.interactive.body.text;
}

/** Runs `statements` and completes the campaign if nothing is left to send, publishing its events. */
async function finish(
  env: Env,
  db: Db,
  campaignId: string,
  statements: ReturnType<typeof failRemainderStatements>,
) {
  const results = await batchSql(db, [
    ...statements,
    ...completeCampaignStatements([campaignId], Date.now()),
  ]);
  await publishEvents(env, recordedIn(results, [results.length - 1]));
}

/**
 * Recipients per step for a campaign sending through `senders` sessions:
 * {@link STEP_PER_SESSION} each, within [{@link STEP_MIN}, {@link STEP_MAX}].
 */
export function stepSize(senders: number): number {
  return Math.min(STEP_MAX, Math.max(STEP_MIN, STEP_PER_SESSION * senders));
}

/**
 * The longest head of a step whose messages take at most `budget` bytes of JSON, and never less
 * than its first entry (one recipient's message is far below D1's limit).
 */
function withinBytes<T extends { message: unknown }>(made: T[], budget: number): T[] {
  const encoder = new TextEncoder();
  let bytes = 0;
  for (const [index, entry] of made.entries()) {
    bytes += entry.message ? encoder.encode(JSON.stringify(entry.message)).length : 0;
    if (bytes > budget && index > 0) return made.slice(0, index);
  }
  return made;
}

/** A gap drawn uniformly from [min, max] ms (whole ms). */
export function randomGap(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

/**
 * The id of campaign `campaignId`'s message to recipient `seq`: a name-based UUID (RFC 9562
 * version 8, from SHA-256 of the pair), so making the same recipient's message again yields the
 * same id and inserts nothing.
 */
export async function campaignMessageId(campaignId: string, seq: number): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${campaignId}:${seq}`)),
  ).slice(0, 16);
  digest[6] = ((digest[6] ?? 0) & 0x0f) | 0x80;
  digest[8] = ((digest[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
