import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { ChatSession } from "../src/sessions/chat-session";
import { campaignMessages, command, createCampaign, outboxStates, recipients } from "./campaign-fixtures";
import { refuse, restoreD1 } from "./d1-outage";
import { createAccount, expectProblem, sessionStub, waitFor } from "./helpers";
import {
  balanceOf,
  connectedSession,
  deliverBatch,
  getMessage,
  ledgerOf,
  queueBodyOf,
  sandboxReceived,
  seedMessages,
  sendText,
  sessionStorage,
  waitForMessages,
} from "./message-fixtures";

// The money paths of docs/exactly-once.md, Exactly once ("a"–"e"; c and d are in enqueue-outcome.test.ts and
// idempotency.test.ts): a message the network got is never failed and refunded, and one that was
// failed and refunded never reaches the network. D1 refuses writes for real (d1-outage.ts); the
// session's alarm is run by the test (runDurableObjectAlarm), never waited for.

describe("a. cancelling a campaign while its session holds outcomes D1 does not have yet", () => {
  it("answers 503 and fails nothing while D1 refuses them; once D1 takes them, the sent message ends sent", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    // D1 refuses sent outcomes: the session keeps its first message's `sent` unsynced.
    await refuse("messages", "UPDATE", { accountId, when: "NEW.status = 'sent'" });
    vi.spyOn(console, "error").mockImplementation(() => {});
    const draft = await createCampaign(key, {
      chatapp_session_ids: [session],
      recipients: recipients(3),
      delay_between: 60_000,
    });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    await waitFor(
      async () => {
        const { outbox } = await sessionStorage(session);
        if (outbox.filter((e) => e.state === "sent" && e.synced === 0).length !== 1)
          throw new Error(JSON.stringify(outbox));
        return true;
      },
      {
        reason: "one send the session owes D1 (the outbound queue hands it over)",
        timeoutMs: 8_000,
        intervalMs: 50,
      },
    );
    const sentId = (await sessionStorage(session)).outbox.find((e) => e.state === "sent")?.id ?? "";
    expect((await sandboxReceived(session)).get(sentId)).toBe(1);

    const refused = await command(key, draft.id, "cancel");
    expectProblem(refused, 503, "service_unavailable");
    expect((await campaignMessages(draft.id)).map((m) => m.status)).toEqual(["queued", "queued", "queued"]);
    expect(await balanceOf(accountId)).toBe(9.97);

    await restoreD1();
    const cancelled = await command(key, draft.id, "cancel");
    expect(cancelled.status, cancelled.text).toBe(200);
    const messages = await campaignMessages(draft.id);
    expect(messages.find((m) => m.id === sentId)?.status).toMatch(/^(sent|delivered|read)$/);
    expect(messages.filter((m) => m.id !== sentId).map((m) => [m.status, m.reason])).toEqual([
      ["failed", "campaign_cancelled"],
      ["failed", "campaign_cancelled"],
    ]);
    expect(await balanceOf(accountId)).toBe(9.99);
    expect(await outboxStates(session)).toEqual({ sent: 1, failed: 2 });
    expect((await sessionStorage(session)).outbox.every((e) => e.synced === 1)).toBe(true);
  });

  it("leaves a message whose outcome is unknown to its settlement: found → sent, confirmed absent → failed campaign_cancelled", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    // The sandbox's fault numbers (src/gateways/sandbox.ts): …0003 the phone got it and the
    // answer was lost; …0004 a 500 before it did.
    const lost = "+12122000003";
    const refusedBefore = "+12122010004";
    const draft = await createCampaign(key, {
      chatapp_session_ids: [session],
      content: "Hi",
      recipients: [{ to_number: lost }, { to_number: refusedBefore }],
      delay_between: 0,
    });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    await waitFor(
      async () => {
        const states = await outboxStates(session);
        if (states.unknown !== 2) throw new Error(JSON.stringify(states));
        return true;
      },
      {
        reason: "two sends of unknown outcome (the outbound queue hands them over)",
        timeoutMs: 8_000,
        intervalMs: 50,
      },
    );

    expect((await command(key, draft.id, "cancel")).status).toBe(200);
    // Nothing is refunded on a guess: both stay queued, their outcome unknown.
    const waiting = await campaignMessages(draft.id);
    expect(waiting.map((m) => m.status)).toEqual(["queued", "queued"]);
    expect(await balanceOf(accountId)).toBe(9.98);

    // The settlement asks the sandbox (runDurableObjectAlarm runs the alarm at the time it was set for).
    for (let i = 0; i < 5 && ((await outboxStates(session)).unknown ?? 0) > 0; i++) {
      await runDurableObjectAlarm(sessionStub(session));
    }
    const settled = await campaignMessages(draft.id);
    const byNumber = new Map(settled.map((m) => [m.to_number, m]));
    expect(byNumber.get(lost)?.status).toMatch(/^(sent|delivered|read)$/);
    expect(byNumber.get(refusedBefore)).toMatchObject({ status: "failed", reason: "campaign_cancelled" });
    expect(await balanceOf(accountId)).toBe(9.99);
    const received = await sandboxReceived(session);
    expect([...received.values()]).toEqual([1]);
    expect(received.get(byNumber.get(lost)?.id ?? "")).toBe(1);
  });
});

describe("b. the dead-letter queue and a session object", () => {
  it("a message the object could not claim is not held there: the dead-letter queue fails it, and it is never sent", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const [id] = await seedMessages([
      { accountId, sessionId: session, toNumber: "+14155552671", createdAt: 1 },
    ]);
    const body = await queueBodyOf(accountId, id ?? "");
    // D1 refuses the claim (`accepted_at`): the hand-over fails, as the queue sees it.
    await refuse("messages", "UPDATE", {
      accountId,
      when: "OLD.accepted_at IS NULL AND NEW.accepted_at IS NOT NULL",
    });
    // Called in the object (not over RPC), so the test runner holds the only rejection.
    const handOver = runInDurableObject(sessionStub(session), (instance: ChatSession) =>
      instance.enqueue([body]).then(
        () => "accepted",
        (error: unknown) => String(error),
      ),
    );
    expect(await handOver).toMatch(/Failed query: UPDATE messages SET accepted_at/);
    expect((await sessionStorage(session)).outbox).toEqual([]);
    await restoreD1();

    // The queue gives up: the dead-letter consumer fails and refunds it.
    await deliverBatch("chatapp-outbound-dlq", [body]);
    expect(await getMessage(key, id ?? "")).toMatchObject({ status: "failed", reason: "dispatch_failed" });
    expect(await balanceOf(accountId)).toBe(1.01);

    // A late redelivery is not claimed (the message is no longer waiting): nothing is sent.
    expect(await sessionStub(session).enqueue([body])).toBe(0);
    await runDurableObjectAlarm(sessionStub(session));
    expect(await sandboxReceived(session)).toEqual(new Map());
    expect((await sessionStorage(session)).outbox).toEqual([]);
    expect(await getMessage(key, id ?? "")).toMatchObject({ status: "failed", reason: "dispatch_failed" });
    expect((await ledgerOf(accountId)).map((entry) => entry.kind)).toEqual(["credit", "refund"]);
  });

  it("a message the object claimed is left to it: the dead-letter queue fails nothing, the object sends it once", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const id = (await sendText(key, session, ["+14155552671"])).body.data.messages[0]?.id ?? "";
    await waitFor(
      async () => {
        if ((await sandboxReceived(session)).get(id) !== 1) throw new Error("not sent yet");
        return true;
      },
      {
        reason: "the sandbox phone to receive the message (the outbound queue hands it over)",
        timeoutMs: 8_000,
        intervalMs: 50,
      },
    );
    await deliverBatch("chatapp-outbound-dlq", [await queueBodyOf(accountId, id)]);
    const [message] = await waitForMessages(key, [id]);
    expect(message?.status).toMatch(/^(sent|delivered|read)$/);
    expect(await balanceOf(accountId)).toBe(0.99);
  });
});

describe("e. a D1 error inside the alarm", () => {
  it("leaves the alarm armed and the message scheduled; once D1 takes the write it is sent, once", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const at = new Date(Date.now() + 60_000).toISOString();
    const id =
      (await sendText(key, session, ["+14155552671"], { scheduled_at: at })).body.data.messages[0]?.id ?? "";
    await waitFor(
      async () => {
        if ((await sessionStorage(session)).outbox.length !== 1) throw new Error("not accepted yet");
        return true;
      },
      {
        reason: "the session to hold the message (the outbound queue hands it over)",
        timeoutMs: 8_000,
        intervalMs: 50,
      },
    );
    // D1 refuses the scheduled → queued move the alarm makes when the time comes.
    await refuse("messages", "UPDATE", {
      accountId,
      when: "OLD.status = 'scheduled' AND NEW.status = 'queued'",
    });
    vi.spyOn(console, "error").mockImplementation(() => {});
    await runDurableObjectAlarm(sessionStub(session));

    const { entries, alarm } = await runInDurableObject(
      sessionStub(session),
      async (_i: ChatSession, state) => ({
        entries: state.storage.sql.exec("SELECT id, state, scheduled FROM outbox").toArray(),
        alarm: await state.storage.getAlarm(),
      }),
    );
    expect(entries).toEqual([{ id, state: "pending", scheduled: 1 }]);
    expect((await sessionStorage(session)).deadlines).toContainEqual(
      expect.objectContaining({ kind: "dispatch" }),
    );
    expect(alarm).not.toBeNull();
    expect(await getMessage(key, id)).toMatchObject({ status: "scheduled" });
    expect(await sandboxReceived(session)).toEqual(new Map());

    await restoreD1();
    for (let i = 0; i < 5 && (await sandboxReceived(session)).size === 0; i++) {
      await runDurableObjectAlarm(sessionStub(session));
    }
    expect((await sandboxReceived(session)).get(id)).toBe(1);
    await waitFor(
      async () => {
        expect((await getMessage(key, id)).status).toMatch(/^(sent|delivered|read)$/);
        return true;
      },
      { reason: "the message to be sent once D1 takes writes again", timeoutMs: 8_000, intervalMs: 50 },
    );
    expect(await balanceOf(accountId)).toBe(0.99);
  });
});
