import { describe, expect, it } from "vitest";
import { EVENT_RETENTION_MS, newEventId } from "../src/events/record";
import { HOURLY_JOBS } from "../src/jobs/hourly";
import { accountD1 } from "./databases";
import { EVENTS, insertEvent } from "./event-fixtures";
import { ADMIN_TOKEN, call, createAccount, expectProblem, TIMESTAMP } from "./helpers";

// POST /admin/jobs/{name} (docs/retention.md, Hourly jobs): one hourly job, now, as the cron
// trigger runs it; what operators use after changing a retention, and developers under
// `wrangler dev`, which runs no cron.

interface JobRun {
  name: string;
  started_at: string;
  finished_at: string;
  duration_ms: number;
  result: unknown;
}

async function seedEvent(accountId: string, createdAt: number): Promise<string> {
  const id = newEventId();
  await insertEvent({ id, accountId, type: "account.balance_low", snapshot: "{}", createdAt });
  return id;
}

/** Whether event `id` of account `accountId` is stored in the account's database. */
async function eventExists(accountId: string, id: string): Promise<boolean> {
  const d1 = await accountD1(accountId);
  return (await d1.prepare(`SELECT 1 AS x FROM ${EVENTS} WHERE id = ?`).bind(id).first()) !== null;
}

describe("POST /admin/jobs/{name}", () => {
  it("runs purge_events now: events past their 30 days go, newer ones stay", async () => {
    const { accountId } = await createAccount();
    const now = Date.now();
    const old = await seedEvent(accountId, now - EVENT_RETENTION_MS - 60_000);
    const recent = await seedEvent(accountId, now - EVENT_RETENTION_MS + 60_000);
    const res = await call<{ data: JobRun }>("POST", "/admin/jobs/purge_events", { key: ADMIN_TOKEN });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ name: "purge_events", result: null });
    expect(res.body.data.started_at).toMatch(TIMESTAMP);
    expect(res.body.data.finished_at).toMatch(TIMESTAMP);
    expect(res.body.data.duration_ms).toBe(
      Date.parse(res.body.data.finished_at) - Date.parse(res.body.data.started_at),
    );
    expect(await eventExists(accountId, old)).toBe(false);
    expect(await eventExists(accountId, recent)).toBe(true);
  });

  it("knows every hourly job by name, and answers 404 for another", async () => {
    expect(HOURLY_JOBS.map((job) => job.name)).toContain("purge_delivery_history");
    const unknown = expectProblem(
      await call("POST", "/admin/jobs/purge_everything", { key: ADMIN_TOKEN }),
      404,
      "not_found",
    );
    expect(unknown.detail).toBe("No hourly job is named purge_everything.");
  });

  it("needs the admin token", async () => {
    expectProblem(await call("POST", "/admin/jobs/purge_events"), 401, "unauthenticated");
    const { key } = await createAccount();
    expectProblem(await call("POST", "/admin/jobs/purge_events", { key }), 401, "unauthenticated");
  });
});
