import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createAccount, expectProblem } from "./helpers";
import { balanceOf, connectedSession, ledgerOf, sendText } from "./message-fixtures";

describe("charging", () => {
  it("charges the whole send in one ledger entry and reports cost, balance and remaining messages", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await call<{ data: Record<string, unknown> }>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_number: ["+14155552671", "+14155552672", "+14155552673"],
        type: "image",
        media_url: "https://cdn.example.test/cat.png",
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      count: 3,
      total_cost: 0.06,
      new_balance: 0.94,
      remaining_messages: 47,
    });
    expect(await balanceOf(accountId)).toBe(0.94);
    expect(await ledgerOf(accountId)).toEqual([
      { kind: "credit", amount: 100, balance_after: 100, message_count: 0 },
      { kind: "charge", amount: -6, balance_after: 94, message_count: 3 },
    ]);
  });

  it("refuses a send the balance does not cover with 402 and creates nothing", async () => {
    const { key, accountId } = await createAccount(0.02);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155552671", "+14155552672", "+14155552673"]);
    expectProblem(res, 402, "insufficient_balance");
    expect(await balanceOf(accountId)).toBe(0.02);
    const list = await call<{ data: unknown[] }>("GET", "/v1/chatapp/messages", { key });
    expect(list.body.data).toEqual([]);
    expect((await ledgerOf(accountId)).map((e) => e.kind)).toEqual(["credit"]);
  });

  it("never takes the balance below zero under concurrent sends", async () => {
    const { key, accountId } = await createAccount(0.05);
    const session = (await connectedSession(key)).id;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        sendText(key, session, [`+1415555${2700 + i}`], { delay_between: 0 }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 402, 402, 402, 402, 402]);
    expect(await balanceOf(accountId)).toBe(0);
    const charges = (await ledgerOf(accountId)).filter((e) => e.kind === "charge");
    expect(charges).toHaveLength(5);
    expect(charges.map((e) => e.balance_after).sort((a, b) => b - a)).toEqual([4, 3, 2, 1, 0]);
    const list = await call<{ data: unknown[] }>("GET", "/v1/chatapp/messages?limit=100", { key });
    expect(list.body.data).toHaveLength(5);
  });

  it("credits through the admin API appear in the ledger with the balance after them", async () => {
    const { accountId } = await createAccount(1);
    const credited = await call<{ data: { account: { balance: number } } }>(
      "POST",
      `/admin/accounts/${accountId}/credits`,
      {
        key: ADMIN_TOKEN,
        body: { amount: 2.5 },
      },
    );
    expect(credited.body.data.account.balance).toBe(3.5);
    expect(await ledgerOf(accountId)).toEqual([
      { kind: "credit", amount: 100, balance_after: 100, message_count: 0 },
      { kind: "credit", amount: 250, balance_after: 350, message_count: 0 },
    ]);
  });
});
