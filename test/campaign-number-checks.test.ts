import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { materialiseStep } from "../src/campaigns/materialise";
import { startCampaign } from "../src/campaigns/start";
import {
  type Campaign,
  campaignMessages,
  command,
  createCampaign,
  heldCampaignQueue,
  number,
  recount,
  showCampaign,
  waitForCampaign,
} from "./campaign-fixtures";
import { accountD1, accountDb } from "./databases";
import { call, createAccount, expectProblem } from "./helpers";
import { balanceOf, connectedSession, ledgerOf } from "./message-fixtures";

// Campaigns with `check_numbers` (docs/sessions.md, Number checks): the start charges every recipient as
// any campaign's does; the campaign queue's step checks the recipients it is about to make
// messages for (the cache, then the sandbox), and those not on the network (…0000) are `skipped`
// with reason `recipient_not_on_chatapp` and refunded in the step's batch, once, with no message;
// those the sandbox cannot tell about (…9999) are sent.

const OFF = "+14155550000";
const UNKNOWN = "+14155559999";

async function account(balance = 10) {
  const { key, accountId } = await createAccount(balance);
  const { id } = await connectedSession(key);
  return { key, accountId, sessionId: id };
}

/** Recipients: number(0..2), then the one not on the network, then the one the sandbox cannot tell about. */
const RECIPIENTS = [number(0), number(1), number(2), OFF, UNKNOWN].map((to_number, i) => ({
  to_number,
  variables: { name: `R${i + 1}` },
}));

async function recipientRows(accountId: string, campaignId: string) {
  const { results } = await (await accountD1(accountId))
    .prepare(
      "SELECT seq, to_number, status, reason, message_id FROM campaign_recipients WHERE campaign_id = ? ORDER BY seq",
    )
    .bind(campaignId)
    .all<{
      seq: number;
      to_number: string;
      status: string;
      reason: string | null;
      message_id: string | null;
    }>();
  return results;
}

async function refundEntries(accountId: string) {
  const { results } = await (await accountD1(accountId))
    .prepare(
      "SELECT amount, message_count, campaign_id FROM ledger_entries WHERE account_id = ? AND kind = 'refund'",
    )
    .bind(accountId)
    .all<{ amount: number; message_count: number; campaign_id: string | null }>();
  return results;
}

describe("a campaign with check_numbers", () => {
  it("shows the option, false by default, and refuses a value that is not a boolean", async () => {
    const { key, sessionId } = await account();
    const plain = await createCampaign(key, { chatapp_session_ids: [sessionId] });
    expect((plain as Campaign & { check_numbers: boolean }).check_numbers).toBe(false);
    const checked = await createCampaign(key, { chatapp_session_ids: [sessionId], check_numbers: true });
    expect((checked as Campaign & { check_numbers: boolean }).check_numbers).toBe(true);
    const refused = await call("POST", "/v1/chatapp/campaigns", {
      key,
      body: {
        name: "x",
        type: "text",
        content: "Hi",
        chatapp_session_ids: [sessionId],
        check_numbers: "yes",
      },
    });
    expect(expectProblem(refused, 422, "validation_failed").errors).toHaveProperty("check_numbers");
  });

  it("skips the recipient not on the network at its step and refunds it; sends the one that cannot be told", async () => {
    const { key, accountId, sessionId } = await account(10);
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      recipients: RECIPIENTS,
      delay_between: 0,
      check_numbers: true,
    });
    const { env: held } = heldCampaignQueue();

    // The start charges all five, as any start does: it does not wait for the network.
    await startCampaign(held, await accountDb(accountId), accountId, draft.id);
    expect(await showCampaign(key, draft.id)).toMatchObject({
      cost: 0.05,
      refunded: 0,
      stats: { total: 5, queued: 5, skipped: 0 },
    });
    expect(await balanceOf(accountId)).toBe(9.95);

    // The step checks, skips and refunds the one not on the network, in its batch.
    expect(await materialiseStep(env, await accountDb(accountId), draft.id)).toBe(true);
    const rows = await recipientRows(accountId, draft.id);
    expect(rows.find((r) => r.to_number === OFF)).toEqual({
      seq: 4,
      to_number: OFF,
      status: "skipped",
      reason: "recipient_not_on_chatapp",
      message_id: null,
    });
    expect(rows.filter((r) => r.to_number !== OFF).map((r) => r.status)).toEqual([
      "queued",
      "queued",
      "queued",
      "queued",
    ]);
    expect((await campaignMessages(draft.id)).map((m) => m.to_number)).toEqual([
      number(0),
      number(1),
      number(2),
      UNKNOWN,
    ]);
    expect(await showCampaign(key, draft.id)).toMatchObject({
      cost: 0.05,
      refunded: 0.01,
      stats: { total: 5, queued: 4, skipped: 1 },
    });
    expect(await balanceOf(accountId)).toBe(9.96);
    expect(await ledgerOf(accountId)).toEqual([
      { kind: "credit", amount: 1_000, balance_after: 1_000, message_count: 0 },
      { kind: "charge", amount: -5, balance_after: 995, message_count: 5 },
      { kind: "refund", amount: 1, balance_after: 996, message_count: 1 },
    ]);
    expect(await refundEntries(accountId)).toEqual([{ amount: 1, message_count: 1, campaign_id: draft.id }]);
    // The answers the sandbox gave are the account's cache now; the unknown one is not.
    const { results: cached } = await (await accountD1(accountId))
      .prepare("SELECT number, on_chatapp FROM contact_checks WHERE account_id = ? ORDER BY number")
      .bind(accountId)
      .all<{ number: string; on_chatapp: number }>();
    expect(cached).toEqual(
      [OFF, number(0), number(1), number(2)]
        .sort()
        .map((n) => ({ number: n, on_chatapp: n === OFF ? 0 : 1 })),
    );

    // The rest is sent; nothing else is refunded, and the statistics equal a recount.
    expect(await materialiseStep(env, await accountDb(accountId), draft.id)).toBe(false);
    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed" && c.stats.read === 4);
    expect(done).toMatchObject({
      cost: 0.05,
      refunded: 0.01,
      stats: { total: 5, queued: 0, sent: 0, delivered: 0, read: 4, failed: 0, skipped: 1 },
    });
    expect(done.stats).toEqual(await recount(draft.id));
    expect(await balanceOf(accountId)).toBe(9.96);
    expect((await ledgerOf(accountId)).map((e) => e.kind)).toEqual(["credit", "charge", "refund"]);
  });

  it("refunds once when two steps of the campaign race", async () => {
    const { key, accountId, sessionId } = await account(10);
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      recipients: RECIPIENTS,
      check_numbers: true,
    });
    const { env: held } = heldCampaignQueue();
    await startCampaign(held, await accountDb(accountId), accountId, draft.id);
    await Promise.all([
      materialiseStep(env, await accountDb(accountId), draft.id),
      materialiseStep(env, await accountDb(accountId), draft.id),
    ]);

    expect(await refundEntries(accountId)).toEqual([{ amount: 1, message_count: 1, campaign_id: draft.id }]);
    expect((await campaignMessages(draft.id)).map((m) => m.send_index)).toEqual([1, 2, 3, 5]);
    const campaign = await showCampaign(key, draft.id);
    expect(campaign).toMatchObject({ refunded: 0.01, stats: { skipped: 1 } });
    expect(campaign.stats).toEqual(await recount(draft.id));
    expect(await balanceOf(accountId)).toBe(9.96);
  });

  it("completes, every charge refunded, when no recipient is on the network", async () => {
    const { key, accountId, sessionId } = await account(10);
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      recipients: [{ to_number: OFF }, { to_number: "+14165550000" }].map((r) => ({
        ...r,
        variables: { name: "X" },
      })),
      check_numbers: true,
    });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    expect(done).toMatchObject({
      cost: 0.02,
      refunded: 0.02,
      stats: { total: 2, queued: 0, failed: 0, skipped: 2 },
    });
    expect(await campaignMessages(draft.id)).toEqual([]);
    expect(await balanceOf(accountId)).toBe(10);
  });

  it("without check_numbers, sends to the number not on the network, whose message fails and is refunded", async () => {
    const { key, accountId, sessionId } = await account(10);
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      recipients: [{ to_number: OFF, variables: { name: "X" } }],
    });
    await command(key, draft.id, "start");
    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    expect(done.stats).toMatchObject({ failed: 1, skipped: 0 });
    expect((await campaignMessages(draft.id)).map((m) => m.reason)).toEqual(["recipient_not_on_chatapp"]);
    expect(await balanceOf(accountId)).toBe(10);
    const { results } = await (await accountD1(accountId))
      .prepare("SELECT count(*) AS n FROM contact_checks WHERE account_id = ?")
      .bind(accountId)
      .all<{ n: number }>();
    expect(results[0]?.n).toBe(0);
  });
});
