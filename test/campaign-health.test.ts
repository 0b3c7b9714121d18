import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { campaignMessages, command, createCampaign, outboxStates, recipients } from "./campaign-fixtures";
import { call, createAccount, sessionStub, waitFor } from "./helpers";
import { balanceOf, connectedSession, driveAlarmUntil, sandboxReceived } from "./message-fixtures";

// A session the network newly limits (docs/sessions.md, Session health) hands its waiting campaign messages
// to the campaign's other sessions, as failover does; with none to take them, they stay.

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

function setHealth(key: string, id: string, body: Record<string, unknown>) {
  return call("POST", `/sandbox/sessions/${id}/health`, {
    key,
    body: { timelock: null, cap: null, quality: null, ...body },
  });
}

const CAPPED = { cap: { level: "CAPPED", used: 250, total: 250, cycle_end: "2030-01-31T23:59:59Z" } };

describe("campaign messages off a limited session", () => {
  it("a cap reaching CAPPED moves the waiting messages to the other session, recording the move; nothing is charged again", async () => {
    const { key, accountId } = await createAccount(10);
    const a = (await connectedSession(key)).id;
    const b = (await connectedSession(key)).id;
    const draft = await createCampaign(key, {
      chatapp_session_ids: [a, b],
      recipients: recipients(6),
      delay_between: 60_000,
    });
    await command(key, draft.id, "start");
    await waitForPending(a, 2);
    await waitForPending(b, 2);
    const balance = await balanceOf(accountId);

    expect((await setHealth(key, a, CAPPED)).status).toBe(200);
    const moved = (await campaignMessages(draft.id)).filter((m) => m.metadata.includes("failover"));
    expect(moved).toHaveLength(2);
    for (const m of moved) {
      expect(m.chatapp_session_id).toBe(b);
      expect(m.status).toBe("queued");
      expect(JSON.parse(m.metadata).failover).toEqual([
        { from_session_id: a, to_session_id: b, reason: "session_limited", at: expect.any(String) },
      ]);
    }
    expect((await outboxStates(a)).moved).toBe(2);
    await waitForPending(b, 4);
    expect(await balanceOf(accountId)).toBe(balance);

    // The same limit read again moves nothing more.
    await setHealth(key, a, CAPPED);
    expect((await campaignMessages(draft.id)).filter((m) => m.metadata.includes("failover"))).toHaveLength(2);
  });

  it("with the other session limited too, the messages stay where they are, not failed", async () => {
    const { key } = await createAccount(10);
    const a = (await connectedSession(key)).id;
    const b = (await connectedSession(key)).id;
    const draft = await createCampaign(key, {
      chatapp_session_ids: [a, b],
      recipients: recipients(6),
      delay_between: 60_000,
    });
    await command(key, draft.id, "start");
    await waitForPending(a, 2);
    await waitForPending(b, 2);
    await setHealth(key, b, { timelock: { active: true, until: null } });
    // b had nowhere to hand over (a is not limited yet: its 2 move to a).
    await waitForPending(a, 4);
    await setHealth(key, a, { timelock: { active: true, until: null } });
    const messages = await campaignMessages(draft.id);
    expect(messages.filter((m) => m.status === "failed")).toEqual([]);
    expect((await outboxStates(a)).pending).toBe(4);
  });

  it("with nowhere to go, a limited session sends none of its campaign messages until the limit lifts, then sends them at once", async () => {
    const { key } = await createAccount(10);
    const a = (await connectedSession(key)).id;
    await setHealth(key, a, { timelock: { active: true, until: null } });
    const draft = await createCampaign(key, {
      chatapp_session_ids: [a],
      recipients: recipients(3),
      delay_between: 0,
    });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    await waitForPending(a, 3);
    // A run of the dispatcher holds them: deferred by the recheck interval, not sent.
    await runDurableObjectAlarm(sessionStub(a));
    const notBefore = await runInDurableObject(sessionStub(a), (_instance, state) =>
      state.storage.sql.exec<{ not_before: number }>("SELECT not_before FROM outbox").toArray(),
    );
    expect(notBefore).toHaveLength(3);
    for (const row of notBefore) expect(row.not_before).toBeGreaterThan(Date.now() + 30_000);
    expect((await sandboxReceived(a)).size).toBe(0);
    expect((await campaignMessages(draft.id)).map((m) => m.status)).toEqual(["queued", "queued", "queued"]);

    // The reading that lifts the timelock releases them.
    expect((await setHealth(key, a, { timelock: { active: false, until: null } })).status).toBe(200);
    await driveAlarmUntil(a, async () => (await outboxStates(a)).pending === undefined);
    expect((await sandboxReceived(a)).size).toBe(3);
    // Their outcomes reach D1 with the next flush (the `sync` deadline).
    await driveAlarmUntil(a, async () =>
      (await campaignMessages(draft.id)).every((m) => m.status !== "queued"),
    );
    expect((await campaignMessages(draft.id)).filter((m) => m.status === "failed")).toEqual([]);
  });
});
