import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem, TIMESTAMP } from "./helpers";

interface Account {
  id: string;
  name: string;
  balance: number;
  remaining_messages: Record<"text" | "image" | "video" | "audio" | "document", number>;
  low_balance_threshold: number | null;
  prices: Record<string, number>;
  created_at: string;
  updated_at: string;
}

interface AccountBody {
  success: true;
  data: Account;
}

const PRICES = {
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
};

const patch = (key: string, body: unknown) => call<AccountBody>("PATCH", "/v1/account", { key, body });

describe("GET /v1/account", () => {
  it("shows the key's own account: balance, the messages of each type it covers, the prices and the alert", async () => {
    const { accountId, key } = await createAccount(2.5);
    const res = await call<AccountBody>("GET", "/v1/account", { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        id: accountId,
        name: "Test account",
        balance: 2.5,
        remaining_messages: {
          text: 250,
          image: 125,
          video: 83,
          audio: 125,
          document: 125,
          template: 250,
          location: 250,
          interactive: 250,
          contacts: 250,
          sticker: 250,
          poll: 250,
        },
        low_balance_threshold: null,
        prices: PRICES,
        message_retention_days: 90,
        limits: {
          max_sessions: { max: 50, current: 0 },
          max_draft_recipients: { max: 1_000_000, current: 0 },
        },
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
      },
    });
  });

  it("follows the balance: a credit shows at once, and a part-message rounds down", async () => {
    const { accountId, key } = await createAccount(0);
    const before = await call<AccountBody>("GET", "/v1/account", { key });
    expect(before.body.data).toMatchObject({
      balance: 0,
      remaining_messages: { text: 0, image: 0, video: 0, audio: 0, document: 0 },
    });
    const credited = await call("POST", `/admin/accounts/${accountId}/credits`, {
      key: ADMIN_TOKEN,
      body: { amount: 0.05 },
    });
    expect(credited.status).toBe(200);
    const after = await call<AccountBody>("GET", "/v1/account", { key });
    expect(after.body.data).toMatchObject({
      balance: 0.05,
      remaining_messages: { text: 5, image: 2, video: 1, audio: 2, document: 2 },
    });
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

describe("PATCH /v1/account", () => {
  it("renames the account and sets the low-balance threshold, keeping what it is not given", async () => {
    const { accountId, key } = await createAccount(10);
    const before = (await call<AccountBody>("GET", "/v1/account", { key })).body.data;

    const renamed = await patch(key, { name: "  Acme Ltd  " });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toEqual({
      ...before,
      name: "Acme Ltd",
      updated_at: expect.stringMatching(TIMESTAMP),
    });

    const alerted = await patch(key, { low_balance_threshold: 2.5 });
    expect(alerted.body.data).toMatchObject({ name: "Acme Ltd", low_balance_threshold: 2.5, balance: 10 });
    const row = await (await accountD1(accountId))
      .prepare("SELECT name, low_balance_threshold FROM accounts WHERE id = ?")
      .bind(accountId)
      .first();
    expect(row).toEqual({ name: "Acme Ltd", low_balance_threshold: 250 });
    expect((await call<AccountBody>("GET", "/v1/account", { key })).body.data).toEqual(alerted.body.data);

    const off = await patch(key, { low_balance_threshold: null });
    expect(off.body.data).toMatchObject({ name: "Acme Ltd", low_balance_threshold: null });
    const both = await patch(key, { name: "Acme", low_balance_threshold: 0 });
    expect(both.body.data).toMatchObject({ name: "Acme", low_balance_threshold: 0 });
    const nothing = await patch(key, {});
    expect(nothing.body.data).toMatchObject({ name: "Acme", low_balance_threshold: 0, balance: 10 });
  });

  it("refuses bad fields with 422 per field, and changes nothing", async () => {
    const { accountId, key } = await createAccount(10);
    const cases: [unknown, string, string][] = [
      [{ name: "" }, "name", "Too small"],
      [{ name: "   " }, "name", "Too small"],
      [{ name: "x".repeat(101) }, "name", "Too big"],
      [{ name: 7 }, "name", "Invalid input"],
      [{ low_balance_threshold: -0.01 }, "low_balance_threshold", "Too small"],
      [{ low_balance_threshold: 1.005 }, "low_balance_threshold", "at most 2 decimal places"],
      [{ low_balance_threshold: "5" }, "low_balance_threshold", "Invalid input"],
      [{ low_balance_threshold: 1_000_000_001 }, "low_balance_threshold", "Too big"],
      [{ balance: 1000 }, "balance", "unknown field"],
    ];
    for (const [body, field, message] of cases) {
      const problem = expectProblem(await patch(key, body), 422, "validation_failed");
      const errors = problem.errors as Record<string, string[]>;
      expect(Object.keys(errors)).toEqual([field]);
      expect(errors[field]?.[0]).toContain(message);
    }
    const row = await (await accountD1(accountId))
      .prepare("SELECT name, balance, low_balance_threshold FROM accounts WHERE id = ?")
      .bind(accountId)
      .first();
    expect(row).toEqual({ name: "Test account", balance: 1000, low_balance_threshold: null });
  });

  it("changes only the caller's account", async () => {
    const mine = await createAccount(1);
    const theirs = await createAccount(1);
    expect((await patch(mine.key, { name: "Mine", low_balance_threshold: 0.5 })).status).toBe(200);
    const other = await call<AccountBody>("GET", "/v1/account", { key: theirs.key });
    expect(other.body.data).toMatchObject({
      id: theirs.accountId,
      name: "Test account",
      low_balance_threshold: null,
    });
  });
});
