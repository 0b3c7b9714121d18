import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { materialise } from "../src/campaigns/materialise";
import { startCampaign } from "../src/campaigns/start";
import { directoryOf } from "../src/db/databases";
import { accountPlaceOf } from "../src/db/queries/directory";
import { STALE_AFTER_MS } from "../src/delivery/reconcile";
import { EVENT_RETENTION_MS } from "../src/events/record";
import worker from "../src/index";
import { applyFailMoves } from "../src/moves/apply";
import { failMoves } from "../src/moves/message";
import {
  campaignMessages,
  createCampaign,
  heldCampaignQueue,
  recipients,
  showCampaign,
} from "./campaign-fixtures";
import { refuse, restoreD1 } from "./d1-outage";
import { accountD1, accountDb } from "./databases";
import { backdateEvent, EVENTS } from "./event-fixtures";
import { call, createAccount } from "./helpers";
import { connectedSession, seedMessages, waitForMessages } from "./message-fixtures";

// The hourly cron runs its housekeeping jobs each on its own: one that throws is logged with its
// name and error, and the others still run. Jobs fail for real here: D1 refuses a statement (a
// trigger that aborts it, dropped after the test), or the campaign queue refuses a message.

const HOUR_CRON = "17 * * * *";

async function runCron(workerEnv: Env = env): Promise<void> {
  await worker.scheduled(createScheduledController({ cron: HOUR_CRON }), workerEnv);
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** The `cron_job_failed` lines logged on `console.error` while `spy` watched it. */
function failedJobs(spy: { mock: { calls: unknown[][] } }): Record<string, unknown>[] {
  return spy.mock.calls
    .map(([line]) => (typeof line === "string" && line.startsWith("{") ? JSON.parse(line) : null))
    .filter((entry): entry is Record<string, unknown> => entry?.event === "cron_job_failed");
}

/** The binding name of the database that holds account `accountId`: where its jobs run and fail. */
async function databaseOf(accountId: string): Promise<string | null> {
  return (await accountPlaceOf(directoryOf(env), accountId))?.database ?? null;
}

/** An idempotency key of `accountId` that expired a minute ago; @returns its key. */
async function expiredIdempotencyKey(accountId: string): Promise<string> {
  const key = `expired-${crypto.randomUUID()}`;
  const at = Date.now() - 25 * 3_600_000;
  await (await accountD1(accountId))
    .prepare(
      `INSERT INTO idempotency_keys (account_id, key, request_hash, status, response_status, response_body, created_at, expires_at)
     VALUES (?, ?, 'hash', 'done', 200, '{}', ?, ?)`,
    )
    .bind(accountId, key, at, Date.now() - 60_000)
    .run();
  return key;
}

async function idempotencyKeyExists(accountId: string, key: string): Promise<boolean> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT 1 AS found FROM idempotency_keys WHERE account_id = ? AND key = ?")
    .bind(accountId, key)
    .first();
  return row !== null;
}

/** The account's event ids in D1, oldest first. */
async function eventIdsOf(accountId: string): Promise<string[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(`SELECT id FROM ${EVENTS} WHERE account_id = ? ORDER BY created_at, id`)
    .bind(accountId)
    .all<{ id: string }>();
  return results.map((row) => row.id);
}

/**
 * A started campaign whose step job was lost (held, never run), and its step time an hour back:
 * the cron's `resume_stalled_campaigns` queues its job again.
 */
async function stalledCampaign(key: string, accountId: string, sessionId: string): Promise<string> {
  const draft = await createCampaign(key, { chatapp_session_ids: [sessionId], recipients: recipients(2) });
  await startCampaign(heldCampaignQueue().env, await accountDb(accountId), accountId, draft.id);
  await (await accountD1(accountId))
    .prepare("UPDATE campaigns SET updated_at = ? WHERE id = ?")
    .bind(Date.now() - 3_600_000, draft.id)
    .run();
  return draft.id;
}

/**
 * A running campaign with nothing left to send whose completion was lost: its messages made,
 * then failed by a path that names no campaign. The cron's `complete_finished_campaigns` ends it.
 */
async function finishedCampaign(key: string, accountId: string, sessionId: string): Promise<string> {
  const draft = await createCampaign(key, { chatapp_session_ids: [sessionId], recipients: recipients(2) });
  await startCampaign(heldCampaignQueue().env, await accountDb(accountId), accountId, draft.id);
  const quiet = { ...env, OUTBOUND_QUEUE: { sendBatch: async () => undefined } as unknown as Queue };
  expect(await materialise(quiet, await accountDb(accountId), draft.id)).toBe(false);
  const ids = (await campaignMessages(draft.id)).map((m) => ({ id: m.id, accountId }));
  expect(ids).toHaveLength(2);
  await applyFailMoves(env, failMoves(ids, "dispatch_failed", Date.now()));
  expect((await showCampaign(key, draft.id)).status).toBe("running");
  return draft.id;
}

describe("the hourly cron isolates its jobs", () => {
  it("logs a job D1 refuses, with its name and error, and still runs every job after it", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedSession(key);
    const expired = await expiredIdempotencyKey(accountId);
    const finished = await finishedCampaign(key, accountId, session.id);
    // An event past its 30 days (purge_events), and the account's newer ones, which stay.
    const [oldest, ...newer] = await eventIdsOf(accountId);
    expect(newer.length).toBeGreaterThan(0);
    await backdateEvent(oldest!, Date.now() - EVENT_RETENTION_MS - 60_000);
    // A message whose queue message was lost (requeue_stale_messages).
    const [lost] = await seedMessages([
      {
        accountId,
        sessionId: session.id,
        toNumber: "+14155552671",
        createdAt: Date.now() - STALE_AFTER_MS - 60_000,
      },
    ]);
    // The first job's table refuses its DELETE of the account's key, in the account's database.
    await refuse("idempotency_keys", "DELETE", { accountId });
    const errors = vi.spyOn(console, "error");

    await runCron();

    expect(failedJobs(errors)).toEqual([
      {
        level: "error",
        event: "cron_job_failed",
        job: "purge_idempotency_keys",
        database: await databaseOf(accountId),
        error: expect.stringContaining("idempotency_keys"),
        cause: expect.stringContaining("injected outage"),
      },
    ]);
    // The refused job changed nothing.
    expect(await idempotencyKeyExists(accountId, expired)).toBe(true);
    // The jobs after it ran: the old event is gone and only it, the lost message went out once,
    // and the finished campaign is completed.
    expect(await eventIdsOf(accountId)).toEqual(expect.arrayContaining(newer));
    expect(await eventIdsOf(accountId)).not.toContain(oldest);
    const [sent] = await waitForMessages(key, [lost!]);
    expect(sent).toMatchObject({ status: "sent", metadata: { attempts: 1 } });
    expect(await showCampaign(key, finished)).toMatchObject({
      status: "completed",
      stats: { total: 2, failed: 2, queued: 0 },
    });
  });

  it("logs nothing when every job succeeds, and a job that failed does its work on the next run", async () => {
    const { key, accountId } = await createAccount(10);
    const expired = await expiredIdempotencyKey(accountId);
    await refuse("idempotency_keys", "DELETE", { accountId });
    const errors = vi.spyOn(console, "error");
    await runCron();
    expect(failedJobs(errors).map((entry) => entry.job)).toEqual(["purge_idempotency_keys"]);
    expect(await idempotencyKeyExists(accountId, expired)).toBe(true);

    // D1 takes the DELETE again: the next hour's run purges the key, and logs no failure.
    await restoreD1();
    errors.mockClear();
    await runCron();
    expect(failedJobs(errors)).toEqual([]);
    expect(await idempotencyKeyExists(accountId, expired)).toBe(false);
    // The API still answers for the account (the cron left nothing in a broken state).
    expect((await call("GET", "/v1/account", { key })).status).toBe(200);
  });
  it("logs a job whose queue refuses its message, and still runs the jobs before and after it", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedSession(key);
    const expired = await expiredIdempotencyKey(accountId);
    const stalled = await stalledCampaign(key, accountId, session.id);
    const finished = await finishedCampaign(key, accountId, session.id);
    // The campaign queue is down: resume_stalled_campaigns, the last job but one, throws. (Last
    // in this file: the stalled campaign stays so, no later run queues its step for real.)
    const refused: unknown[] = [];
    const down = {
      send: async (body: unknown) => {
        refused.push(body);
        throw new Error("Queue send failed: queue unavailable");
      },
    } as unknown as Queue;
    const errors = vi.spyOn(console, "error");

    await runCron({ ...env, CAMPAIGN_QUEUE: down });

    expect(failedJobs(errors)).toEqual([
      {
        level: "error",
        event: "cron_job_failed",
        job: "resume_stalled_campaigns",
        database: await databaseOf(accountId),
        error: "Error: Queue send failed: queue unavailable",
      },
    ]);
    // It reached the queue for the stalled campaign, which still waits for its next step.
    expect(refused).toContainEqual({ campaignId: stalled, accountId });
    expect(await showCampaign(key, stalled)).toMatchObject({ status: "running", stats: { queued: 2 } });
    // The job before it and the one after it ran.
    expect(await idempotencyKeyExists(accountId, expired)).toBe(false);
    expect(await showCampaign(key, finished)).toMatchObject({ status: "completed", stats: { failed: 2 } });
  });
});
