import { describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { expectedOf, firstSendPlan, MIX_SIZE, mixFaultOf, mixNumber, settledOf } from "../fault-mix";
import { call, createAccount, createSession } from "../helpers";
import { balanceOf, firstAttempts, ledgerOf, sendText, settleAll } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Exactly once through Evolution API under the fault mix of test/fault-mix.ts, end to end: the
// API, the queue, the session object, the Evolution gateway and the fake server over HTTP. A hang
// outlasts the gateway's timeout (GATEWAY_TIMEOUT_MS, 500 ms in this project); the session's
// alarm is run, never waited for, so the lookups due OUTCOME_GRACE_SECONDS after a call are asked
// at once.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";

/** An instance linked the way Evolution links one: the phone scans, then `connection.update` open. */
async function connectedEvolutionSession(evolution: FakeEvolution, key: string) {
  const { session } = await createSession(key);
  const data = evolution.link(session.session_id, PHONE, "Ada");
  const res = await postEvolutionEvent(session.session_id, "connection.update", data, { sender: OWNER_JID });
  expect(res.body).toEqual({ success: true, ignored: false });
  return session;
}

describe("the fault mix on Evolution API (20% 500, 10% hang, 5% answers lost after storing)", () => {
  it("sends 160 messages each exactly once: none stuck, none stored twice, none refunded, money exact", async () => {
    const evolution = new FakeEvolution().install();
    const { accountId, key } = await createAccount(10);
    const session = await connectedEvolutionSession(evolution, key);
    evolution.sendFault = firstSendPlan((body) => String(body.number));

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

    // Evolution holds each message once, under our client id (`key.id`), and relayed none twice.
    const clientIds = ids.map(clientMessageIdOf);
    expect(evolution.sent.map((s) => s.id).sort()).toEqual([...clientIds].sort());
    expect(evolution.relayed.sort()).toEqual([...clientIds].sort());
    expect(settled.map((m) => m.provider_message_id)).toEqual(clientIds);
    // The sends the fake answered: two for a 500 or a hang (the second after a lookup), else one.
    const sends = clientIds.map(
      (id) =>
        evolution.bodies.filter(
          (b) =>
            b.call.startsWith("POST /message/sendText/") &&
            (b.body as { messageId?: string }).messageId === id,
        ).length,
    );
    expect(sends).toEqual(to.map((_, i) => (mixFaultOf(i) === "error" || mixFaultOf(i) === "hang" ? 2 : 1)));

    // The lost answers, and only they, were settled by asking Evolution.
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
