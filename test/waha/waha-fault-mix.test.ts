import { describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { expectedOf, firstSendPlan, MIX_SIZE, mixFaultOf, mixNumber, settledOf } from "../fault-mix";
import { call, createAccount, createSession } from "../helpers";
import { balanceOf, firstAttempts, ledgerOf, sendText, settleAll } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeWaha, postWahaEvent } from "./fake-waha";

// Exactly once through WAHA under the fault mix of test/fault-mix.ts, end to end: the API, the
// queue, the session object, the WAHA gateway and the fake server over HTTP. A hang outlasts the
// gateway's timeout (GATEWAY_TIMEOUT_MS, 500 ms in this project); the session's alarm is run,
// never waited for, so the lookups due OUTCOME_GRACE_SECONDS after a call are asked at once.

useNetwork();

const PHONE = "+14155552671";
const ME = { id: "14155552671@c.us", pushName: "Ada" };

/** A WAHA session linked the way WAHA links one: the phone scans, then `session.status` WORKING. */
async function connectedWahaSession(waha: FakeWaha, key: string) {
  const { session } = await createSession(key);
  waha.link(session.session_id, PHONE, ME.pushName);
  const res = await postWahaEvent(session.session_id, "session.status", { status: "WORKING" }, { me: ME });
  expect(res.body).toEqual({ success: true, ignored: false });
  return session;
}

describe("the fault mix on WAHA (20% 500, 10% hang, 5% answers lost after storing)", () => {
  it("sends 160 messages each exactly once: none stuck, none stored twice, none refunded, money exact", async () => {
    const waha = new FakeWaha().install();
    const { accountId, key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const digitsOf = (body: Record<string, unknown>) => String(body.chatId).replace(/@c\.us$/, "");
    waha.sendFault = firstSendPlan(digitsOf);

    const to = Array.from({ length: MIX_SIZE }, (_, i) => mixNumber(i));
    const sent = await sendText(key, session.id, to, { delay_between: 0 });
    expect(sent.status).toBe(201);
    const ids = sent.body.data.messages.map((m) => m.id);
    await firstAttempts(ids, 60_000);
    // Each unknown outcome is asked about on its own alarm (the calls were apart), and each
    // outcome is written to D1 on the next: about two runs per unknown outcome.
    const settled = await settleAll(key, session.id, ids, 400);

    // None stuck, none failed; every message sent, each as its fault says.
    expect(settled.filter((m) => m.status === "queued").map((m) => m.to_number)).toEqual([]);
    expect(settled.filter((m) => m.status === "failed").map((m) => m.to_number)).toEqual([]);
    expect(settled.map(settledOf)).toEqual(to.map((_, i) => expectedOf(mixFaultOf(i))));

    // WAHA holds each message once, under the id we gave, and was sent none of them twice.
    const chatIds = to.map((number) => `${number.slice(1)}@c.us`);
    const wahaIds = ids.map((id, i) => `true_${chatIds[i]}_${clientMessageIdOf(id)}`);
    expect(waha.sent.map((s) => s.id).sort()).toEqual([...wahaIds].sort());
    expect(waha.relayed.sort()).toEqual([...wahaIds].sort());
    expect(settled.map((m) => m.provider_message_id)).toEqual(wahaIds);
    // The sends the fake answered: two for a 500 or a hang (the second after a lookup), else one.
    const sends = ids.map(
      (id) =>
        waha.bodies.filter(
          (b) => b.call === "POST /api/sendText" && (b.body as { id?: string }).id === clientMessageIdOf(id),
        ).length,
    );
    expect(sends).toEqual(to.map((_, i) => (mixFaultOf(i) === "error" || mixFaultOf(i) === "hang" ? 2 : 1)));

    // The lost answers, and only they, were settled by asking WAHA.
    const byLookup = settled.filter((m) => m.metadata.settled_by === "lookup").map((m) => m.to_number);
    expect(byLookup).toEqual(to.filter((_, i) => mixFaultOf(i) === "lost"));
    expect(byLookup).toHaveLength(8);

    // Charged once each (a cent a text, in minor units in the ledger), refunded never.
    expect(await balanceOf(accountId)).toBeCloseTo(10 - MIX_SIZE * 0.01, 2);
    expect(await ledgerOf(accountId)).toEqual([
      expect.objectContaining({ kind: "credit", amount: 1000, balance_after: 1000 }),
      { kind: "charge", amount: -MIX_SIZE, balance_after: 1000 - MIX_SIZE, message_count: MIX_SIZE },
    ]);
    const refunds = await call<{ data: unknown[] }>("GET", "/v1/account/ledger?filter[kind]=refund", { key });
    expect(refunds.status).toBe(200);
    expect(refunds.body.data).toEqual([]);
  }, 120_000);
});
