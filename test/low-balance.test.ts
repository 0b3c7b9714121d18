import { describe, expect, it } from "vitest";
import { sendMessages } from "../src/messages/send";
import { accountDb } from "./databases";
import { ADMIN_TOKEN, call, createAccount, TIMESTAMP } from "./helpers";
import { connectedSession, sendText, waitForMessages } from "./message-fixtures";
import { recordingEnv } from "./webhook-fixtures";

// `account.balance_low`: recorded by the charge that takes the balance from at least the
// account's threshold to below it, once per crossing (src/billing/ledger.ts).

interface BalanceLowEvent {
  id: string;
  type: "account.balance_low";
  created_at: string;
  data: {
    id: string;
    balance: number;
    low_balance_threshold: number | null;
    remaining_messages: Record<string, number>;
    prices: Record<string, number>;
  };
}

/** An account with `balance`, a connected session and, unless null, the threshold set through the API. */
async function alerted(balance: number, threshold: number | null) {
  const { key, accountId } = await createAccount(balance);
  const session = (await connectedSession(key)).id;
  if (threshold !== null) {
    const res = await call("PATCH", "/v1/account", { key, body: { low_balance_threshold: threshold } });
    expect(res.status).toBe(200);
  }
  let n = 0;
  /** Sends `count` texts (fresh numbers); asserts 201 and returns the message ids. */
  const send = async (count: number) => {
    const to = Array.from({ length: count }, () => `+1415555${String(3000 + n++).padStart(4, "0")}`);
    const res = await sendText(key, session, to, { delay_between: 0 });
    expect(res.status).toBe(201);
    return res.body.data.messages.map((m) => m.id);
  };
  return { key, accountId, session, send };
}

async function lowEvents(key: string): Promise<BalanceLowEvent[]> {
  const res = await call<{ data: BalanceLowEvent[] }>("GET", "/v1/events?filter[type]=account.balance_low", {
    key,
  });
  expect(res.status).toBe(200);
  return res.body.data.reverse();
}

const credit = async (accountId: string, amount: number) =>
  expect(
    (await call("POST", `/admin/accounts/${accountId}/credits`, { key: ADMIN_TOKEN, body: { amount } }))
      .status,
  ).toBe(200);

describe("account.balance_low", () => {
  it("is recorded once when charges cross the threshold, carrying the account as GET /v1/account shows it", async () => {
    const { key, accountId, send } = await alerted(0.1, 0.05);
    for (let i = 0; i < 5; i++) await send(1); // 0.09 … 0.05: still at the threshold
    expect(await lowEvents(key)).toEqual([]);
    await send(1); // 0.04: crossed
    await send(1); // 0.03
    await send(2); // 0.01
    const events = await lowEvents(key);
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: "account.balance_low",
      created_at: expect.stringMatching(TIMESTAMP),
      data: {
        id: accountId,
        name: "Test account",
        balance: 0.04,
        remaining_messages: {
          text: 4,
          image: 2,
          video: 1,
          audio: 2,
          document: 2,
          template: 4,
          location: 4,
          interactive: 4,
          contacts: 4,
          sticker: 4,
          poll: 4,
        },
        low_balance_threshold: 0.05,
        prices: {
          text: 0.01,
          image: 0.02,
          video: 0.03,
          audio: 0.02,
          document: 0.02,
          template: 0.01,
          location: 0.01,
          interactive: 0.01,
          contacts: 0.01,
          sticker: 0.01,
          poll: 0.01,
        },
        message_retention_days: 90,
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: events[0]?.created_at,
      },
    });
    const account = await call<{ data: { balance: number } }>("GET", "/v1/account", { key });
    expect(account.body.data.balance).toBe(0.01);
  });

  it("is recorded once under concurrent charges (D1 runs each charge's batch alone)", async () => {
    const { key, send } = await alerted(0.1, 0.05);
    await Promise.all(Array.from({ length: 10 }, () => send(1)));
    const events = await lowEvents(key);
    expect(events.map((e) => e.data.balance)).toEqual([0.04]);
    const account = await call<{ data: { balance: number } }>("GET", "/v1/account", { key });
    expect(account.body.data.balance).toBe(0);
  });

  it("is recorded again only after a credit lifts the balance back to the threshold and a charge crosses it again", async () => {
    const { key, accountId, send } = await alerted(0.06, 0.05);
    await send(2); // 0.04: crossed
    await credit(accountId, 0.01); // 0.05: back at the threshold
    await send(1); // 0.04: crossed again
    await send(1); // 0.03
    await credit(accountId, 0.01); // 0.04: still below
    await send(1); // 0.03: no crossing
    await credit(accountId, 0.1); // 0.13
    await send(10); // 0.03: one charge from above to below
    expect((await lowEvents(key)).map((e) => e.data.balance)).toEqual([0.04, 0.04, 0.03]);
  });

  it("is recorded again after a refund of failed messages lifts the balance back", async () => {
    const { key, session, send } = await alerted(0.06, 0.05);
    await send(1); // 0.05
    // The sandbox refuses …0000 for good: the message fails and is refunded.
    const failing = await sendText(key, session, ["+14155550000"], { delay_between: 0 }); // 0.04: crossed
    expect(failing.status).toBe(201);
    await waitForMessages(key, [failing.body.data.messages[0]?.id ?? ""], (m) => m.status === "failed");
    const account = await call<{ data: { balance: number } }>("GET", "/v1/account", { key });
    expect(account.body.data.balance).toBe(0.05); // refunded: back at the threshold
    await send(1); // 0.04: crossed again
    expect((await lowEvents(key)).map((e) => e.data.balance)).toEqual([0.04, 0.04]);
  });

  it("is not recorded while the balance stays at or above the threshold, nor without a threshold", async () => {
    const above = await alerted(1, 0.5);
    await above.send(10);
    await above.send(40); // 0.50: at the threshold, not below it
    expect(await lowEvents(above.key)).toEqual([]);

    const off = await alerted(0.1, null);
    await off.send(5);
    await off.send(5); // 0.00
    expect(await lowEvents(off.key)).toEqual([]);

    const switchedOff = await alerted(0.1, 0.05);
    expect(
      (await call("PATCH", "/v1/account", { key: switchedOff.key, body: { low_balance_threshold: null } }))
        .status,
    ).toBe(200);
    await switchedOff.send(8);
    expect(await lowEvents(switchedOff.key)).toEqual([]);
  });

  it("is not recorded by a threshold set above the balance, only by a later crossing", async () => {
    const { key, accountId, send } = await alerted(0.1, 0.5);
    await send(1);
    expect(await lowEvents(key)).toEqual([]);
    await credit(accountId, 0.5); // 0.59
    await send(10); // 0.49
    expect((await lowEvents(key)).map((e) => e.data.balance)).toEqual([0.49]);
  });

  it("is published for webhook delivery once the charge commits", async () => {
    const { key, accountId, session } = await alerted(0.03, 0.02);
    const hook = await call("POST", "/v1/webhooks", {
      key,
      body: { url: "https://receiver.example/low", events: ["account.balance_low"] },
    });
    expect(hook.status).toBe(201);
    const recording = recordingEnv();
    await sendMessages(recording.env, await accountDb(accountId), {
      accountId,
      sessionId: session,
      recipients: ["+14155553001", "+14155553002"],
      type: "text",
      content: "hi",
      mediaUrl: null,
      delayBetween: 0,
      scheduledAt: null,
    });
    const [event] = await lowEvents(key);
    expect(event?.data.balance).toBe(0.01);
    expect(recording.sent).toContainEqual({ kind: "event", eventId: event?.id, accountId });
    expect(recording.sent.filter((m) => (m as { kind?: string }).kind === "event")).toHaveLength(1);
  });
});
