import { describe, expect, it } from "vitest";
import { call, createAccount } from "./helpers";
import {
  balanceOf,
  connectedSession,
  firstAttempts,
  getMessage,
  ledgerOf,
  sandboxReceived,
  sendText,
  settleAll,
} from "./message-fixtures";

// Exactly once at the last mile, on the sandbox gateway: a send whose answer is lost is `unknown`,
// and the session settles it by asking the gateway (ChatGateway.lookup) before anything else
// happens to it: found → sent; absent → sent again; unanswerable → failed `outcome_unknown` only
// once OUTCOME_SETTLE_HOURS have passed. The sandbox's numbers choose the fault (src/gateways/
// sandbox.ts): …0003 answer lost after the phone got it, …0004 a 500 before it did, …0006 a
// timeout before it did, …0005 unknown and never answerable (area code 212 only). Tests own the clock: the session's
// alarm is run (runDurableObjectAlarm runs it at the time it was armed for), never waited for.

/** A valid US number in area code 212 (the sandbox's fault numbers), exchange `200 + i`, ending `suffix`. */
const numberOf = (i: number, suffix: string) => `+1212${200 + i}${suffix}`;

describe("a send whose outcome is unknown", () => {
  it("is settled by a lookup when the answer was lost: sent once, settled_by lookup, charged once", async () => {
    const { accountId, key } = await createAccount(10);
    const session = await connectedSession(key);
    const sent = await sendText(key, session.id, [numberOf(0, "0003")]);
    expect(sent.status).toBe(201);
    const id = sent.body.data.messages[0]?.id ?? "";
    await firstAttempts([id]);

    // The first attempt's answer is lost: the message waits, queued, with its outcome unknown.
    const waiting = [await getMessage(key, id)];
    expect(waiting[0]).toMatchObject({ status: "queued", metadata: { outcome: "unknown", attempts: 1 } });
    expect(waiting[0]?.metadata.send_attempts).toEqual([
      { at: expect.any(String), outcome: "unknown", reason: "sandbox_answer_lost" },
    ]);

    const [settled] = await settleAll(key, session.id, [id]);
    expect(settled?.status).not.toBe("queued");
    expect(settled?.status).not.toBe("failed");
    expect(settled?.metadata).toMatchObject({ attempts: 1, settled_by: "lookup" });
    expect(settled?.metadata).not.toHaveProperty("outcome");
    expect(settled?.provider_message_id).toBe(`sandbox.${id}`);
    expect((await sandboxReceived(session.id)).get(id)).toBe(1);
    expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);
    expect((await ledgerOf(accountId)).map((entry) => entry.kind)).toEqual(["credit", "charge"]);
  });

  it("is sent again with the same client id when the gateway answers that it does not hold it", async () => {
    const { accountId, key } = await createAccount(10);
    const session = await connectedSession(key);
    const sent = await sendText(key, session.id, [numberOf(1, "0004"), numberOf(2, "0006")]);
    const ids = sent.body.data.messages.map((m) => m.id);
    await firstAttempts(ids);
    const settled = await settleAll(key, session.id, ids);
    for (const message of settled) {
      expect(message.status).toMatch(/^(sent|delivered|read)$/);
      expect(message.metadata).toMatchObject({ attempts: 2, settled_by: "answer" });
      expect((message.metadata.send_attempts as { outcome: string }[]).map((a) => a.outcome)).toEqual([
        "unknown",
        "absent",
      ]);
    }
    const delivered = await sandboxReceived(session.id);
    expect(ids.map((id) => delivered.get(id))).toEqual([1, 1]);
    expect(await balanceOf(accountId)).toBeCloseTo(9.98, 2);
  });

  it("fails outcome_unknown, refunded, only when OUTCOME_SETTLE_HOURS end unanswered", async () => {
    const { accountId, key } = await createAccount(10);
    const session = await connectedSession(key);
    const sent = await sendText(key, session.id, [numberOf(3, "0005")]);
    const id = sent.body.data.messages[0]?.id ?? "";
    await firstAttempts([id]);
    // The alarm is armed for each next question: 30 s after the call, then as long again as it
    // has been unknown, at most 15 min apart. 50 questions cover less than 13 hours.
    const asked = await settleAll(key, session.id, [id], 50);
    expect(asked[0]).toMatchObject({ status: "queued", metadata: { outcome: "unknown" } });
    expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);

    const [failed] = await settleAll(key, session.id, [id], 200);
    expect(failed).toMatchObject({
      status: "failed",
      reason: "outcome_unknown",
      metadata: { outcome: "unknown" },
    });
    const attempts = failed?.metadata.send_attempts as { outcome: string }[];
    expect(attempts[0]?.outcome).toBe("unknown");
    expect(attempts.at(-1)?.outcome).toBe("unreachable");
    expect((await sandboxReceived(session.id)).get(id)).toBeUndefined();
    expect(await balanceOf(accountId)).toBeCloseTo(10, 2);
    expect((await ledgerOf(accountId)).map((entry) => entry.kind)).toEqual(["credit", "charge", "refund"]);
  });
});

describe("the fault mix (issue: 20% 500, 10% hang, 5% answers lost)", () => {
  it("sends 150 messages each exactly once: none stuck, none twice, none refunded while held, money exact", async () => {
    const { accountId, key } = await createAccount(10);
    const session = await connectedSession(key);
    const to = Array.from({ length: 150 }, (_, i) =>
      numberOf(i, i < 30 ? "0004" : i < 45 ? "0006" : i < 53 ? "0003" : "0007"),
    );
    const sent = await sendText(key, session.id, to, { delay_between: 0 });
    expect(sent.status).toBe(201);
    const ids = sent.body.data.messages.map((m) => m.id);
    await firstAttempts(ids);
    const settled = await settleAll(key, session.id, ids, 400);

    const stuck = settled.filter((m) => m.status === "queued");
    const failed = settled.filter((m) => m.status === "failed");
    expect(stuck.map((m) => m.to_number)).toEqual([]);
    expect(failed.map((m) => m.to_number)).toEqual([]);
    const delivered = await sandboxReceived(session.id);
    expect(ids.filter((id) => delivered.get(id) !== 1)).toEqual([]);
    const byLookup = settled.filter((m) => m.metadata.settled_by === "lookup").map((m) => m.to_number);
    expect(byLookup.sort()).toEqual(to.slice(45, 53).sort());
    expect(await balanceOf(accountId)).toBeCloseTo(10 - 1.5, 2);
    expect((await ledgerOf(accountId)).map((entry) => entry.kind)).toEqual(["credit", "charge"]);
    const refunded = await call<{ data: unknown[] }>("GET", "/v1/account/ledger?filter[kind]=refund", {
      key,
    });
    expect(refunded.body.data).toEqual([]);
  }, 120_000);
});
