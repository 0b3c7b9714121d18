import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { materialiseStep, STEP_BYTES, stepSize } from "../src/campaigns/materialise";
import { startCampaign } from "../src/campaigns/start";
import { QUEUE_SEND_BATCH, QUEUE_SEND_BATCH_BYTES, queueBatches } from "../src/lib/queue";
import {
  campaignMessages,
  createCampaign,
  heldCampaignQueue,
  number,
  recipients,
  recount,
  waitForCampaign,
} from "./campaign-fixtures";
import { accountDb } from "./databases";
import { call, createAccount } from "./helpers";
import { balanceOf, connectedSession } from "./message-fixtures";

// How a started campaign is cut into steps: a hundred recipients per session (so each session
// object takes its share in one hand-over and writes it in one flush), and shorter steps when
// personalised contents are long, within D1's and the queue's size limits.

describe("campaign steps", () => {
  it("sizes a step at 100 recipients per session, within 500 to 2,000", () => {
    expect([1, 5, 7, 10, 20].map(stepSize)).toEqual([500, 500, 700, 1_000, 2_000]);
  });

  it("hands each of 20 sessions its 100 messages of a step in one queue batch", async () => {
    const { key, accountId } = await createAccount(100);
    const sessionIds: string[] = [];
    for (let i = 0; i < 20; i++) sessionIds.push((await connectedSession(key)).id);
    const draft = await createCampaign(key, {
      chatapp_session_ids: sessionIds,
      recipients: recipients(2_100),
      delay_between: 0,
    });
    const { env: held } = heldCampaignQueue();
    await startCampaign(held, await accountDb(accountId), accountId, draft.id);
    const batches: { sessionId: string }[][] = [];
    const outbound = {
      sendBatch: async (messages: { body: { sessionId: string } }[]) =>
        void batches.push(messages.map((m) => m.body)),
    } as unknown as Queue;

    expect(
      await materialiseStep({ ...held, OUTBOUND_QUEUE: outbound }, await accountDb(accountId), draft.id),
    ).toBe(true);
    const made = await campaignMessages(draft.id);
    expect(made).toHaveLength(2_000);
    expect(batches).toHaveLength(20);
    const sessionsOfBatches = batches.map((batch) => [...new Set(batch.map((m) => m.sessionId))]);
    expect(sessionsOfBatches.every((ids) => ids.length === 1)).toBe(true);
    expect(new Set(sessionsOfBatches.flat())).toEqual(new Set(sessionIds));
    expect(batches.every((batch) => batch.length === 100)).toBe(true);
  });

  it("cuts a step of long contents short, and still sends every recipient once", async () => {
    const { key, accountId } = await createAccount(10);
    const { id: sessionId } = await connectedSession(key);
    // 4,000 three-byte characters per message: some 12 kB each, 80 to a megabyte.
    const chunk = "€".repeat(1_000);
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      content: "{{a}}{{b}}{{c}}{{d}}",
      delay_between: 0,
    });
    const count = 240;
    for (let from = 0; from < count; from += 60) {
      const added = await call("POST", `/v1/chatapp/campaigns/${draft.id}/recipients`, {
        key,
        body: {
          recipients: Array.from({ length: 60 }, (_, i) => ({
            to_number: number(from + i),
            variables: { a: chunk, b: chunk, c: chunk, d: chunk },
          })),
        },
      });
      expect(added.status, added.text).toBe(200);
    }
    const { env: held } = heldCampaignQueue();
    await startCampaign(held, await accountDb(accountId), accountId, draft.id);

    expect(await materialiseStep(env, await accountDb(accountId), draft.id)).toBe(true);
    const first = (await campaignMessages(draft.id)).length;
    expect(first).toBeGreaterThanOrEqual(75);
    expect(first * 12_000).toBeLessThanOrEqual(STEP_BYTES);

    // The rest, through the real queues: 12 kB messages make queue batches of 16, not 100.
    while (await materialiseStep(env, await accountDb(accountId), draft.id));
    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed", 30_000);
    expect(done.stats).toMatchObject({ total: count, queued: 0, failed: 0 });
    expect(done.stats.sent + done.stats.delivered + done.stats.read).toBe(count);
    expect(done.stats).toEqual(await recount(draft.id));
    const messages = await campaignMessages(draft.id);
    expect(messages.map((m) => m.send_index)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    expect(await balanceOf(accountId)).toBe(7.6);
  });

  it("cuts queue batches at 100 messages or 200 kB, whichever comes first", () => {
    const small = Array.from({ length: 250 }, (_, i) => ({ i }));
    expect(queueBatches(small).map((b) => b.length)).toEqual([100, 100, 50]);
    const large = Array.from({ length: 40 }, () => ({ content: "€".repeat(4_000) }));
    const sizes = queueBatches(large).map((b) => b.length);
    expect(sizes).toEqual([16, 16, 8]);
    expect(sizes.every((n) => n <= QUEUE_SEND_BATCH && n * 12_000 <= QUEUE_SEND_BATCH_BYTES)).toBe(true);
  });
});
