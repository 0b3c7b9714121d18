import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { materialise, materialiseStep, resumeStalledCampaigns } from "../src/campaigns/materialise";
import { startCampaign } from "../src/campaigns/start";
import { applyFailMoves } from "../src/moves/apply";
import { completeFinishedCampaigns } from "../src/moves/campaign";
import { failMoves } from "../src/moves/message";
import {
  campaignMessages,
  command,
  createCampaign,
  heldCampaignQueue,
  number,
  outboxStates,
  recipients,
  recount,
  showCampaign,
  waitForCampaign,
} from "./campaign-fixtures";
import { accountDb } from "./databases";
import { call, createAccount, expectProblem, waitFor } from "./helpers";
import { balanceOf, connectedSession, ledgerOf } from "./message-fixtures";

// Running campaigns: start (atomic charge, opt-outs skipped), the fan-out over several sessions,
// completion with statistics equal to a recount, every state move, pause and resume, cancel with
// refunds, and events.

async function account(balance = 1_000, sessions = 1) {
  const { key, accountId } = await createAccount(balance);
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) ids.push((await connectedSession(key)).id);
  return { key, accountId, sessionIds: ids };
}

describe("starting and running a campaign", () => {
  it("charges once, skips opted-out recipients, spreads the rest round-robin with delays in range, and completes with statistics equal to a recount", async () => {
    const { key, accountId, sessionIds } = await account(1_000, 2);
    await call("POST", "/v1/opt-outs", { key, body: { to_number: number(1) } });
    const draft = await createCampaign(key, {
      chatapp_session_ids: sessionIds,
      recipients: recipients(6),
      delay_range: { min_ms: 10, max_ms: 40 },
    });

    const started = await command(key, draft.id, "start");
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({
      status: "running",
      cost: 0.05,
      refunded: 0,
      stats: { total: 6, queued: 5, skipped: 1, sent: 0, failed: 0 },
    });
    expect(started.body.data.started_at).not.toBeNull();
    expect(await balanceOf(accountId)).toBe(999.95);
    expect((await ledgerOf(accountId)).at(-1)).toEqual({
      kind: "charge",
      amount: -5,
      balance_after: 99_995,
      message_count: 5,
    });

    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    expect(done.completed_at).not.toBeNull();
    expect(done.eta).toBeNull();
    const messages = await campaignMessages(draft.id);
    expect(messages.map((m) => m.send_index)).toEqual([1, 3, 4, 5, 6]);
    for (const m of messages) {
      // Recipient n (seq) goes to session (n − 1) mod 2; its template filled with its variables.
      expect(m.chatapp_session_id).toBe(sessionIds[(m.send_index - 1) % 2]);
      expect(m.content).toBe(`Hi R${m.send_index}`);
      expect(m.to_number).toBe(number(m.send_index - 1));
      expect(m.delay_between).toBeGreaterThanOrEqual(10);
      expect(m.delay_between).toBeLessThanOrEqual(40);
      expect(["sent", "delivered", "read"]).toContain(m.status);
    }
    const page = await call<{
      data: { seq: number; status: string; reason: string | null; message_id: string | null }[];
    }>("GET", `/v1/chatapp/campaigns/${draft.id}/recipients`, { key });
    const skipped = page.body.data.find((r) => r.seq === 2);
    expect(skipped).toMatchObject({ status: "skipped", reason: "recipient_opted_out", message_id: null });
    expect(
      page.body.data
        .filter((r) => r.message_id !== null)
        .map((r) => r.status)
        .sort(),
    ).toEqual(messages.map((m) => m.status).sort());
    // Once the receipts are in, the counters still equal a recount of the rows.
    const read = await waitForCampaign(key, draft.id, (c) => c.stats.read === 5);
    expect(read.stats).toEqual(await recount(draft.id));
    expect(read.stats).toMatchObject({
      total: 6,
      queued: 0,
      sent: 0,
      delivered: 0,
      read: 5,
      failed: 0,
      skipped: 1,
    });

    const events = await call<{ data: { type: string; data: { id: string; status: string } }[] }>(
      "GET",
      "/v1/events?filter[type]=campaign.started,campaign.completed",
      { key },
    );
    expect(events.body.data.map((e) => [e.type, e.data.id, e.data.status]).sort()).toEqual([
      ["campaign.completed", draft.id, "completed"],
      ["campaign.started", draft.id, "running"],
    ]);
  });

  it("answers 402 when the balance does not cover the campaign, and changes nothing", async () => {
    const { key, accountId, sessionIds } = await account(0.02);
    const draft = await createCampaign(key, { chatapp_session_ids: sessionIds, recipients: recipients(3) });
    expectProblem(await command(key, draft.id, "start"), 402, "insufficient_balance");
    expect(await showCampaign(key, draft.id)).toMatchObject({
      status: "draft",
      cost: 0,
      stats: { queued: 0 },
    });
    expect(await balanceOf(accountId)).toBe(0.02);
    expect((await ledgerOf(accountId)).map((e) => e.kind)).toEqual(["credit"]);
    expect(await campaignMessages(draft.id)).toEqual([]);
  });

  it("charges once when two starts race, and answers the loser 409", async () => {
    const { key, accountId, sessionIds } = await account(10);
    const draft = await createCampaign(key, { chatapp_session_ids: sessionIds, recipients: recipients(4) });
    const results = await Promise.all([command(key, draft.id, "start"), command(key, draft.id, "start")]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await ledgerOf(accountId)).filter((e) => e.kind === "charge")).toEqual([
      { kind: "charge", amount: -4, balance_after: 996, message_count: 4 },
    ]);
    expect(await balanceOf(accountId)).toBe(9.96);
  });

  it("makes each recipient's message once when two steps of the same campaign race", async () => {
    const { key, accountId, sessionIds } = await account(10);
    const draft = await createCampaign(key, { chatapp_session_ids: sessionIds, recipients: recipients(5) });
    const { env: held } = heldCampaignQueue();
    await startCampaign(held, await accountDb(accountId), accountId, draft.id);
    await Promise.all([
      materialiseStep(env, await accountDb(accountId), draft.id),
      materialiseStep(env, await accountDb(accountId), draft.id),
      materialiseStep(env, await accountDb(accountId), draft.id),
    ]);
    const messages = await campaignMessages(draft.id);
    expect(messages.map((m) => m.send_index)).toEqual([1, 2, 3, 4, 5]);
    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    expect(done.stats).toEqual(await recount(draft.id));
    expect(await balanceOf(accountId)).toBe(9.95);
  });

  it("charges nothing and completes at once when every recipient opted out", async () => {
    const { key, accountId, sessionIds } = await account();
    await call("POST", "/v1/opt-outs", { key, body: { to_number: number(0) } });
    const draft = await createCampaign(key, { chatapp_session_ids: sessionIds, recipients: recipients(1) });
    const started = await command(key, draft.id, "start");
    expect(started.body.data).toMatchObject({
      status: "completed",
      cost: 0,
      stats: { skipped: 1, queued: 0 },
    });
    expect(await balanceOf(accountId)).toBe(1_000);
  });

  it("replies from a recipient count once in replied", async () => {
    const { key, sessionIds } = await account();
    const draft = await createCampaign(key, {
      chatapp_session_ids: sessionIds,
      recipients: recipients(2),
      delay_between: 0,
    });
    await command(key, draft.id, "start");
    await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    for (const content of ["Thanks!", "See you"]) {
      const res = await call("POST", `/sandbox/sessions/${sessionIds[0]}/inbound`, {
        key,
        body: { from_number: number(0), type: "text", content },
      });
      expect(res.status).toBe(201);
    }
    const campaign = await showCampaign(key, draft.id);
    expect(campaign.stats.replied).toBe(1);
    expect(campaign.stats).toEqual(await recount(draft.id));
  });
});

describe("campaign state moves", () => {
  it("refuses every illegal move with its code, and allows the legal ones", async () => {
    const { key, sessionIds } = await account();
    const empty = await createCampaign(key, { chatapp_session_ids: sessionIds });
    expectProblem(await command(key, empty.id, "start"), 409, "campaign_empty");
    expectProblem(await command(key, empty.id, "pause"), 409, "campaign_not_running");
    expectProblem(await command(key, empty.id, "resume"), 409, "campaign_not_paused");
    expect((await command(key, empty.id, "cancel")).body.data.status).toBe("cancelled");
    expectProblem(await command(key, empty.id, "cancel"), 409, "campaign_finished");
    expectProblem(await command(key, empty.id, "start"), 409, "campaign_not_draft");

    const draft = await createCampaign(key, {
      chatapp_session_ids: sessionIds,
      recipients: recipients(3),
      delay_between: 60_000,
    });
    expect((await command(key, draft.id, "start")).body.data.status).toBe("running");
    expectProblem(await command(key, draft.id, "start"), 409, "campaign_not_draft");
    expectProblem(await command(key, draft.id, "resume"), 409, "campaign_not_paused");
    expect((await command(key, draft.id, "pause")).body.data.status).toBe("paused");
    expectProblem(await command(key, draft.id, "pause"), 409, "campaign_not_running");
    expect((await command(key, draft.id, "resume")).body.data.status).toBe("running");
    expect((await command(key, draft.id, "cancel")).body.data.status).toBe("cancelled");
    for (const name of ["start", "pause", "resume", "cancel"] as const) {
      expect((await command(key, draft.id, name)).status).toBe(409);
    }
  });

  it("answers 404 for another account's campaign and leaves it as it was", async () => {
    const mine = await account();
    const theirs = await account();
    const draft = await createCampaign(theirs.key, {
      chatapp_session_ids: theirs.sessionIds,
      recipients: recipients(1),
    });
    for (const name of ["start", "pause", "resume", "cancel"] as const) {
      expectProblem(await command(mine.key, draft.id, name), 404, "not_found");
    }
    expect((await showCampaign(theirs.key, draft.id)).status).toBe("draft");
  });

  it("a scheduled campaign waits, then runs when its time comes", async () => {
    const { key, sessionIds } = await account();
    const at = new Date(Date.now() + 1_500).toISOString();
    const draft = await createCampaign(key, {
      chatapp_session_ids: sessionIds,
      recipients: recipients(2),
      scheduled_at: at,
      delay_between: 0,
    });
    const started = await command(key, draft.id, "start");
    expect(started.body.data).toMatchObject({ status: "scheduled", started_at: null });
    const messages = await waitFor(
      async () => {
        const rows = await campaignMessages(draft.id);
        if (rows.length < 2) throw new Error("not made yet");
        return rows;
      },
      { reason: "the campaign queue's job to make both messages", timeoutMs: 5_000, intervalMs: 50 },
    );
    expect(messages.every((m) => m.status === "scheduled" || Date.now() >= Date.parse(at))).toBe(true);
    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    expect(Date.parse(done.started_at ?? "")).toBeGreaterThanOrEqual(Date.parse(at));
  });
});

describe("pause, resume and cancel", () => {
  it("pause stops dispatch at once; resume sends the rest in order", async () => {
    const { key, sessionIds } = await account();
    const [session] = sessionIds as [string];
    const draft = await createCampaign(key, {
      chatapp_session_ids: sessionIds,
      recipients: recipients(8),
      delay_between: 200,
    });
    await command(key, draft.id, "start");
    await waitFor(
      async () => {
        if (((await outboxStates(session)).sent ?? 0) < 2) throw new Error("fewer than 2 sent");
        return true;
      },
      {
        reason: "the session to send two of the campaign's messages (the outbound queue hands them over)",
        timeoutMs: 8_000,
        intervalMs: 50,
      },
    );
    expect((await command(key, draft.id, "pause")).body.data.status).toBe("paused");
    const atPause = (await outboxStates(session, draft.id)).sent ?? 0;
    // A campaign started after the pause, on the same session: the session sends a lane's
    // messages in the order they were accepted, so this one goes out only once none of the
    // paused campaign's messages could go, and its sent outcome reaches D1 with every one before.
    const later = await createCampaign(key, {
      chatapp_session_ids: sessionIds,
      recipients: recipients(1, 8),
      delay_between: 0,
    });
    expect((await command(key, later.id, "start")).body.data.status).toBe("running");
    await waitForCampaign(key, later.id, (c) => c.status === "completed");
    expect((await outboxStates(session, draft.id)).sent ?? 0).toBe(atPause);
    expect(atPause).toBeLessThan(8);
    const waiting = (await campaignMessages(draft.id)).filter((m) => m.status === "queued");
    expect(waiting.length).toBe(8 - atPause);
    const paused = await showCampaign(key, draft.id);
    expect(paused.eta).toBeNull();

    expect((await command(key, draft.id, "resume")).body.data.status).toBe("running");
    await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    const sent = await campaignMessages(draft.id);
    const times = sent.map((m) => m.sent_at ?? 0);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    for (let i = 1; i < times.length; i++)
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(200);
  });

  it("cancel fails and refunds every message not yet sent, exactly", async () => {
    const { key, accountId, sessionIds } = await account(10);
    const [session] = sessionIds as [string];
    const draft = await createCampaign(key, {
      chatapp_session_ids: sessionIds,
      recipients: recipients(6),
      delay_between: 60_000,
    });
    await command(key, draft.id, "start");
    expect(await balanceOf(accountId)).toBe(9.94);
    await waitFor(
      async () => {
        const states = await outboxStates(session);
        if (states.sent !== 1 || states.pending !== 5) throw new Error(JSON.stringify(states));
        return true;
      },
      {
        reason: "the session to send one and hold five (the outbound queue hands them over)",
        timeoutMs: 8_000,
        intervalMs: 50,
      },
    );
    const cancelled = await command(key, draft.id, "cancel");
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.data.status).toBe("cancelled");
    const messages = await campaignMessages(draft.id);
    const failed = messages.filter((m) => m.status === "failed");
    expect(failed).toHaveLength(5);
    expect(failed.every((m) => m.reason === "campaign_cancelled")).toBe(true);
    expect(await balanceOf(accountId)).toBe(9.99);
    const ledger = await ledgerOf(accountId);
    const refunds = ledger.filter((e) => e.kind === "refund");
    expect(refunds.reduce((sum, e) => sum + e.amount, 0)).toBe(5);
    expect(refunds.reduce((sum, e) => sum + e.message_count, 0)).toBe(5);
    expect(ledger.at(-1)?.balance_after).toBe(999);
    const campaign = await showCampaign(key, draft.id);
    expect(campaign).toMatchObject({ cost: 0.06, refunded: 0.05 });
    expect(campaign.stats).toMatchObject({ failed: 5, queued: 0 });
    expect(campaign.stats).toEqual(await recount(draft.id));
    // Nothing is left in the session's outbox to send.
    expect(await outboxStates(session)).toEqual({ sent: 1, failed: 5 });

    const events = await call<{ data: { type: string; data: { id: string } }[] }>(
      "GET",
      "/v1/events?filter[type]=campaign.cancelled",
      { key },
    );
    expect(events.body.data.map((e) => e.data.id)).toEqual([draft.id]);
  });

  it("cancel refunds recipients whose messages were not made yet, by count", async () => {
    const { key, accountId, sessionIds } = await account(10);
    const draft = await createCampaign(key, { chatapp_session_ids: sessionIds, recipients: recipients(7) });
    // Started with a campaign queue that keeps its jobs: no message is made before the cancel.
    const { env: held, jobs } = heldCampaignQueue();
    await startCampaign(held, await accountDb(accountId), accountId, draft.id);
    expect(jobs).toEqual([{ campaignId: draft.id, accountId }]);
    expect(await balanceOf(accountId)).toBe(9.93);

    const cancelled = await command(key, draft.id, "cancel");
    expect(cancelled.body.data).toMatchObject({
      status: "cancelled",
      cost: 0.07,
      refunded: 0.07,
      stats: { total: 7, queued: 0, failed: 7 },
    });
    expect(cancelled.body.data.stats).toEqual(await recount(draft.id));
    expect(await balanceOf(accountId)).toBe(10);
    expect((await ledgerOf(accountId)).at(-1)).toEqual({
      kind: "refund",
      amount: 7,
      balance_after: 1_000,
      message_count: 7,
    });
    const page = await call<{ data: { status: string; reason: string | null; message_id: string | null }[] }>(
      "GET",
      `/v1/chatapp/campaigns/${draft.id}/recipients`,
      { key },
    );
    expect(page.status, page.text).toBe(200);
    expect(page.body.data.every((r) => r.status === "failed" && r.reason === "campaign_cancelled")).toBe(
      true,
    );
    // The job the queue kept, run now, makes nothing.
    expect(await materialise(env, await accountDb(accountId), draft.id)).toBe(false);
    expect(await campaignMessages(draft.id)).toEqual([]);
  });
});

describe("the hourly sweep's campaign safety nets", () => {
  it("queues a stalled campaign's next step again, and completes a campaign left with nothing to send", async () => {
    const { key, accountId, sessionIds } = await account(10);
    const draft = await createCampaign(key, { chatapp_session_ids: sessionIds, recipients: recipients(3) });
    const { env: held, jobs } = heldCampaignQueue();
    const db = await accountDb(accountId);
    await startCampaign(held, db, accountId, draft.id);
    expect(jobs).toHaveLength(1);
    // Just started: not stalled.
    expect(await resumeStalledCampaigns(held, db, Date.now())).toBe(0);
    expect(await resumeStalledCampaigns(held, db, Date.now() + 16 * 60_000)).toBeGreaterThanOrEqual(1);
    expect(jobs).toContainEqual({ campaignId: draft.id, accountId });

    // Its messages made, then failed by a path that names no campaign (the dead-letter queue's).
    const quiet = { ...env, OUTBOUND_QUEUE: { sendBatch: async () => undefined } as unknown as Queue };
    expect(await materialise(quiet, db, draft.id)).toBe(false);
    const ids = (await campaignMessages(draft.id)).map((m) => ({ id: m.id, accountId }));
    await applyFailMoves(env, failMoves(ids, "dispatch_failed", Date.now()));
    expect((await showCampaign(key, draft.id)).status).toBe("running");
    expect(await completeFinishedCampaigns(env, db)).toBeGreaterThanOrEqual(1);
    const done = await showCampaign(key, draft.id);
    expect(done).toMatchObject({ status: "completed", refunded: 0.03, stats: { failed: 3, queued: 0 } });
    expect(done.stats).toEqual(await recount(draft.id));
    expect(await balanceOf(accountId)).toBe(10);
  });
});
