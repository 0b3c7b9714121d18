import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createAccount, expectProblem } from "./helpers";

interface AccountBody {
  success: true;
  data: {
    id: string;
    name: string;
    balance: number;
    remaining_messages: number;
    prices: Record<string, number>;
    created_at: string;
    updated_at: string;
  };
}

describe("GET /v1/account", () => {
  it("shows the key's own account: balance, the text messages it covers and the prices", async () => {
    const { accountId, key } = await createAccount(2.5);
    const res = await call<AccountBody>("GET", "/v1/account", { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        id: accountId,
        name: "Test account",
        balance: 2.5,
        remaining_messages: 250,
        prices: { text: 0.01, image: 0.02, video: 0.03, audio: 0.02, document: 0.02 },
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        updated_at: expect.stringMatching(/Z$/),
      },
    });
  });

  it("follows the balance: a credit shows at once, and a part-message rounds down", async () => {
    const { accountId, key } = await createAccount(0);
    const before = await call<AccountBody>("GET", "/v1/account", { key });
    expect(before.body.data).toMatchObject({ balance: 0, remaining_messages: 0 });
    const credited = await call("POST", `/admin/accounts/${accountId}/credits`, {
      key: ADMIN_TOKEN,
      body: { amount: 0.05 },
    });
    expect(credited.status).toBe(200);
    const after = await call<AccountBody>("GET", "/v1/account", { key });
    expect(after.body.data).toMatchObject({ balance: 0.05, remaining_messages: 5 });
  });

  it("shows only the caller's account, whichever account another key belongs to", async () => {
    const first = await createAccount(1);
    const second = await createAccount(3);
    const res = await call<AccountBody>("GET", "/v1/account", { key: second.key });
    expect(res.body.data.id).toBe(second.accountId);
    expect(res.body.data.id).not.toBe(first.accountId);
    expect(res.body.data.balance).toBe(3);
  });

  it("is 401 without a key and with a wrong one", async () => {
    expectProblem(await call("GET", "/v1/account"), 401, "unauthenticated");
    expectProblem(await call("GET", "/v1/account", { key: `sk_${"A".repeat(43)}` }), 401, "unauthenticated");
  });
});
