import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  campaignMessages,
  command,
  createCampaign,
  number,
  outboxStates,
  recipients,
  recount,
  showCampaign,
} from "./campaign-fixtures";
import { call, createAccount, sessionStub, waitFor } from "./helpers";
import { balanceOf, connectedSession, sendText } from "./message-fixtures";

// A campaign's messages outlive the session they were given to: a ban, a failure or a delete
// moves them to the campaign's other connected sessions; only with none left do they fail, with
// a refund. And a campaign never holds up a single send on its sessions.

/** Waits until the session's object holds `pending` entries waiting to be sent. */
async function waitForPending(sessionId: string, pending: number) {
  await waitFor(
    async () => {
      const states = await outboxStates(sessionId);
      if ((states.pending ?? 0) !== pending) throw new Error(JSON.stringify(states));
      return true;
    },
    {
      reason: `the session to hold ${pending} campaign messages (the outbound queue hands them over)`,
      timeoutMs: 8_000,
      intervalMs: 50,
    },
  );
}

describe("campaign failover", () => {
  it("moves a banned session's waiting messages to the campaign's other session, recording the move; with none left they fail and are refunded", async () => {
    const { key, accountId } = await createAccount(10);
    const a = (await connectedSession(key)).id;
    const b = (await connectedSession(key)).id;
    const draft = await createCampaign(key, {
      chatapp_session_ids: [a, b],
      recipients: recipients(6),
      delay_between: 60_000,
    });
    await command(key, draft.id, "start");
    // Each session sends its first message at once and holds the other two for a minute.
    await waitForPending(a, 2);
    await waitForPending(b, 2);

    const banned = await call("POST", `/sandbox/sessions/${a}/ban`, { key, body: {} });
    expect(banned.status).toBe(200);
    const movedIds = (await campaignMessages(draft.id))
      .filter((m) => m.metadata.includes("failover"))
      .map((m) => m.id);
    expect(movedIds).toHaveLength(2);
    for (const m of (await campaignMessages(draft.id)).filter((row) => movedIds.includes(row.id))) {
      expect(m.chatapp_session_id).toBe(b);
      expect(m.status).toBe("queued");
      expect(JSON.parse(m.metadata).failover).toEqual([
        { from_session_id: a, to_session_id: b, reason: "session_banned", at: expect.any(String) },
      ]);
    }
    expect((await outboxStates(a)).moved).toBe(2);
    await waitForPending(b, 4);
    expect(await balanceOf(accountId)).toBe(9.94);

    // The last session goes too: nothing is left to send from, so its messages fail and are refunded.
    await call("POST", `/sandbox/sessions/${b}/ban`, { key, body: {} });
    const messages = await campaignMessages(draft.id);
    const failed = messages.filter((m) => m.status === "failed");
    expect(failed).toHaveLength(4);
    expect(failed.every((m) => m.reason === "session_banned")).toBe(true);
    expect(await balanceOf(accountId)).toBe(9.98);
    const campaign = await showCampaign(key, draft.id);
    expect(campaign).toMatchObject({ status: "completed", refunded: 0.04 });
    expect(campaign.stats).toEqual(await recount(draft.id));
  });

  it("moves a deleted session's waiting messages to the other session", async () => {
    const { key } = await createAccount(10);
    const a = (await connectedSession(key)).id;
    const b = (await connectedSession(key)).id;
    const draft = await createCampaign(key, {
      chatapp_session_ids: [a, b],
      recipients: recipients(4),
      delay_between: 60_000,
    });
    await command(key, draft.id, "start");
    await waitForPending(a, 1);
    expect((await call("DELETE", `/v1/chatapp/sessions/${a}`, { key })).status).toBe(200);
    const moved = (await campaignMessages(draft.id)).filter((m) => m.metadata.includes("failover"));
    expect(
      moved.map((m) => [m.chatapp_session_id, m.status, JSON.parse(m.metadata).failover[0].reason]),
    ).toEqual([[b, "queued", "session_deleted"]]);
    await waitForPending(b, 2);
  });
});

describe("dispatch lanes", () => {
  it("sends a single send ahead of a waiting campaign on the same session (one-time codes go ahead of both)", async () => {
    const { key } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const draft = await createCampaign(key, {
      chatapp_session_ids: [session],
      recipients: recipients(3),
      delay_between: 3_000,
    });
    await command(key, draft.id, "start");
    await waitForPending(session, 2);
    const single = await sendText(key, session, ["+14155559871"], { delay_between: 0 });
    expect(single.status).toBe(201);
    const order = await waitFor(
      async () => {
        const rows = await runInDurableObject(sessionStub(session), async (_instance, state) =>
          state.storage.sql
            .exec<{ to_number: string; done_at: number }>(
              "SELECT to_number, done_at FROM outbox WHERE state = 'sent' ORDER BY done_at",
            )
            .toArray(),
        );
        if (rows.length < 3) throw new Error(`${rows.length} sent`);
        return rows.map((row) => row.to_number);
      },
      { reason: "the session's three sends (paced on the real clock)", timeoutMs: 10_000, intervalMs: 100 },
    );
    // The campaign's first, then the single send, then the campaign's second.
    expect(order.slice(0, 3)).toEqual([number(0), "+14155559871", number(1)]);
  });
});
