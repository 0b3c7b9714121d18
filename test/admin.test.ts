import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import { MIN_ADMIN_TOKEN_LENGTH } from "../src/config";
import { accountD1, everyAccountD1 } from "./databases";
import { ADMIN_TOKEN, type ApiResponse, call, createAccount, expectProblem, TIMESTAMP } from "./helpers";

interface Account {
  id: string;
  name: string;
  balance: number;
  created_at: string;
  updated_at: string;
}
interface AccountEnvelope {
  success: boolean;
  data: { account: Account; api_key?: string };
}
interface KeyEnvelope {
  success: boolean;
  data: { key: { id: string; prefix: string; name: string | null; created_at: string }; api_key: string };
}

const KEY_SHAPE = /^sk_[A-Za-z0-9_-]{43}$/;
const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";

const admin = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
  call<T>(method, path, { key: ADMIN_TOKEN, body });

async function storedBalance(id: string): Promise<unknown> {
  const row = await (await accountD1(id))
    .prepare("SELECT balance FROM accounts WHERE id = ?")
    .bind(id)
    .first<{ balance: unknown }>();
  return row?.balance;
}

async function sessionsStatus(key: string): Promise<number> {
  return (await call("GET", "/v1/chatapp/sessions", { key })).status;
}

/**
 * Every admin route, from the app's OpenAPI registry (the routes that take the admin token), so a
 * new admin route gets the 401 cases below without being listed by hand.
 */
const adminRoutes: [string, string][] = createApp().openAPIRegistry.definitions.flatMap((definition) =>
  definition.type === "route" &&
  (definition.route.security ?? []).some((requirement) => "AdminToken" in requirement)
    ? [[definition.route.method.toUpperCase(), definition.route.path] as [string, string]]
    : [],
);

describe("admin authorization", () => {
  /** Valid bodies, so that only the token fails. */
  const bodies: Record<string, unknown> = {
    "POST /admin/accounts": { name: "x" },
    "PATCH /admin/accounts/{id}": { max_sessions: 1 },
    "POST /admin/accounts/{id}/keys": {},
    "POST /admin/accounts/{id}/credits": { amount: 1 },
    "POST /admin/accounts/{id}/move": { database: "DB_ACCOUNTS_1" },
  };
  const routes: [string, string, unknown?][] = adminRoutes.map(([method, path]) => [
    method,
    path.replace("{id}", UNKNOWN_ID),
    bodies[`${method} ${path}`],
  ]);

  it("covers every admin route", () => {
    expect(adminRoutes.map(([method, path]) => `${method} ${path}`).sort()).toEqual(
      [
        "POST /admin/accounts",
        "PATCH /admin/accounts/{id}",
        "GET /admin/accounts/{id}",
        "POST /admin/accounts/{id}/keys",
        "GET /admin/accounts/{id}/keys",
        "POST /admin/accounts/{id}/credits",
        "POST /admin/accounts/{id}/move",
        "DELETE /admin/keys/{id}",
        "GET /admin/metrics",
        "GET /admin/databases",
        "POST /admin/jobs/{name}",
      ].sort(),
    );
  });

  for (const [method, path, body] of routes) {
    it(`${method} ${path} without a token is 401`, async () => {
      const res = await call(method, path, { body });
      expectProblem(res, 401, "unauthenticated");
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    });

    it(`${method} ${path} with a wrong token is 401`, async () => {
      const res = await call(method, path, { key: "not-the-admin-token", body });
      expectProblem(res, 401, "unauthenticated");
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    });
  }

  it("does not accept an account's API key as the admin token", async () => {
    const { key } = await createAccount();
    const res = await call("POST", "/admin/accounts", { key, body: { name: "sneaky" } });
    expectProblem(res, 401, "unauthenticated");
  });

  it("does not accept a token that only starts with the admin token", async () => {
    const res = await call("POST", "/admin/accounts", { key: `${ADMIN_TOKEN}x`, body: { name: "x" } });
    expectProblem(res, 401, "unauthenticated");
  });
});

describe("ADMIN_TOKEN strength", () => {
  /** `GET path` with `Bearer token`, against the app on the test bindings with ADMIN_TOKEN `configured`. */
  async function callWith(configured: string | undefined, path: string, token: string): Promise<ApiResponse> {
    const ctx = createExecutionContext();
    const response = await createApp().fetch(
      new Request(`http://localhost${path}`, { headers: { Authorization: `Bearer ${token}` } }),
      { ...env, ADMIN_TOKEN: configured },
      ctx,
    );
    const text = await response.text();
    await waitOnExecutionContext(ctx);
    return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
  }

  const SHORT = "s".repeat(MIN_ADMIN_TOKEN_LENGTH - 1);
  const EXACT = "e".repeat(MIN_ADMIN_TOKEN_LENGTH);

  it("is at least 32 characters in the tests' own configuration", () => {
    expect(MIN_ADMIN_TOKEN_LENGTH).toBe(32);
    expect(ADMIN_TOKEN.length).toBeGreaterThanOrEqual(32);
  });

  it.each(["/admin/metrics", `/admin/accounts/${UNKNOWN_ID}`])(
    "refuses %s under a token of 31 characters, itself included: 500 service_misconfigured naming ADMIN_TOKEN",
    async (path) => {
      for (const token of [SHORT, ADMIN_TOKEN, "wrong"]) {
        const problem = expectProblem(await callWith(SHORT, path, token), 500, "service_misconfigured");
        expect(problem.detail).toBe(
          "The service is misconfigured: ADMIN_TOKEN is shorter than 32 characters.",
        );
        expect(problem.detail).not.toContain(SHORT);
      }
    },
  );

  it("leaves the rest of the service alone", async () => {
    expect((await callWith(SHORT, "/health", "")).body).toEqual({ status: "ok", gateway: "sandbox" });
    const { key } = await createAccount();
    expect((await callWith(SHORT, "/v1/account", key)).status).toBe(200);
  });

  it("serves the admin API under a token of exactly 32 characters", async () => {
    expectProblem(await callWith(EXACT, `/admin/accounts/${UNKNOWN_ID}`, EXACT), 404, "not_found");
    expectProblem(await callWith(EXACT, `/admin/accounts/${UNKNOWN_ID}`, SHORT), 401, "unauthenticated");
  });

  it("without ADMIN_TOKEN the admin API does not exist (404)", async () => {
    for (const configured of [undefined, ""]) {
      expectProblem(await callWith(configured, "/admin/metrics", SHORT), 404, "not_found");
    }
  });
});

describe("POST /admin/accounts", () => {
  it("creates an account with a decimal balance, stored as minor units, and a working key", async () => {
    const res = await admin<AccountEnvelope>("POST", "/admin/accounts", {
      name: "  Acme Ltd  ",
      balance: 12.5,
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const { account, api_key } = res.body.data;
    expect(account).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "Acme Ltd",
      balance: 12.5,
      max_sessions: 50,
      max_draft_recipients: 1_000_000,
      message_retention_days: 90,
      database: expect.stringMatching(/^DB_ACCOUNTS_[01]$/),
      move: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: account.created_at,
    });
    expect(api_key).toMatch(KEY_SHAPE);
    expect(await storedBalance(account.id)).toBe(1250);
    expect(await sessionsStatus(api_key as string)).toBe(200);
  });

  it("defaults the balance to 0", async () => {
    const res = await admin<AccountEnvelope>("POST", "/admin/accounts", { name: "Zero" });
    expect(res.status).toBe(201);
    expect(res.body.data.account.balance).toBe(0);
    expect(await storedBalance(res.body.data.account.id)).toBe(0);
  });

  it("keeps only the key's hash, never the plaintext", async () => {
    const res = await admin<AccountEnvelope>("POST", "/admin/accounts", { name: "Hashing" });
    const plaintext = res.body.data.api_key as string;
    const rows = await (await accountD1(res.body.data.account.id))
      .prepare("SELECT * FROM api_keys WHERE account_id = ?")
      .bind(res.body.data.account.id)
      .all<Record<string, unknown>>();
    expect(rows.results).toHaveLength(1);
    const row = rows.results[0] as Record<string, unknown>;
    expect(Object.values(row)).not.toContain(plaintext);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(plaintext));
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    expect(row.key_hash).toBe(hex);
    expect(plaintext.startsWith(row.prefix as string)).toBe(true);
  });

  const invalid: [string, unknown, string][] = [
    ["a missing name", { balance: 1 }, "name"],
    ["an empty name", { name: "   " }, "name"],
    ["a name of the wrong type", { name: 42 }, "name"],
    ["a name over 100 characters", { name: "x".repeat(101) }, "name"],
    ["a negative balance", { name: "x", balance: -1 }, "balance"],
    ["a balance with 3 decimals", { name: "x", balance: 1.005 }, "balance"],
    ["a balance given as a string", { name: "x", balance: "10" }, "balance"],
    ["an unknown field", { name: "x", admin: true }, "admin"],
  ];
  for (const [what, body, field] of invalid) {
    it(`refuses ${what} with 422 and errors.${field}`, async () => {
      const res = await admin("POST", "/admin/accounts", body);
      const problem = expectProblem(res, 422, "validation_failed");
      expect(problem.errors).toMatchObject({ [field]: [expect.any(String)] });
    });
  }

  it("refuses a body that is not an object", async () => {
    const res = await admin("POST", "/admin/accounts", [{ name: "x" }]);
    const problem = expectProblem(res, 422, "validation_failed");
    expect(Object.keys(problem.errors as object).length).toBeGreaterThan(0);
  });
});

describe("GET /admin/accounts/{id}", () => {
  it("shows the account with its decimal balance and no key", async () => {
    const created = await admin<AccountEnvelope>("POST", "/admin/accounts", { name: "Shown", balance: 0.3 });
    const res = await admin<AccountEnvelope>("GET", `/admin/accounts/${created.body.data.account.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { account: created.body.data.account } });
    expect(res.text).not.toContain(created.body.data.api_key as string);
    expect(res.text).not.toContain("api_key");
  });

  it("is 404 for an unknown account", async () => {
    expectProblem(await admin("GET", `/admin/accounts/${UNKNOWN_ID}`), 404, "not_found");
  });

  it("is 404 for a malformed id", async () => {
    expectProblem(await admin("GET", "/admin/accounts/not-a-uuid"), 404, "not_found");
  });
});

describe("POST /admin/accounts/{id}/credits", () => {
  it("adds the amount to the balance, in responses and in storage", async () => {
    const { accountId } = await createAccount(12.5);
    const first = await admin<AccountEnvelope>("POST", `/admin/accounts/${accountId}/credits`, {
      amount: 10.25,
    });
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(true);
    expect(first.body.data.account).toMatchObject({ id: accountId, balance: 22.75 });
    const second = await admin<AccountEnvelope>("POST", `/admin/accounts/${accountId}/credits`, {
      amount: 0.05,
    });
    expect(second.body.data.account.balance).toBe(22.8);
    expect(second.body.data.account.updated_at).toMatch(TIMESTAMP);
    expect(await storedBalance(accountId)).toBe(2280);
    const shown = await admin<AccountEnvelope>("GET", `/admin/accounts/${accountId}`);
    expect(shown.body.data.account.balance).toBe(22.8);
  });

  it("records each credit in the ledger with the balance after it", async () => {
    const { accountId } = await createAccount(1);
    await admin("POST", `/admin/accounts/${accountId}/credits`, { amount: 2 });
    const ledger = await (await accountD1(accountId))
      .prepare(
        "SELECT kind, amount, balance_after FROM ledger_entries WHERE account_id = ? ORDER BY balance_after",
      )
      .bind(accountId)
      .all();
    expect(ledger.results).toEqual([
      { kind: "credit", amount: 100, balance_after: 100 },
      { kind: "credit", amount: 200, balance_after: 300 },
    ]);
  });

  it("credits once when retried with the same Idempotency-Key, replaying the first response", async () => {
    const { accountId } = await createAccount(1);
    const key = `credit-${crypto.randomUUID()}`;
    const credit = (amount: number, idempotencyKey = key) =>
      call<AccountEnvelope>("POST", `/admin/accounts/${accountId}/credits`, {
        key: ADMIN_TOKEN,
        body: { amount },
        headers: { "Idempotency-Key": idempotencyKey },
      });
    const first = await credit(5);
    const retry = await credit(5);
    expect(first.status).toBe(200);
    expect(first.body.data.account.balance).toBe(6);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.text).toBe(first.text);
    expect(await storedBalance(accountId)).toBe(600);
    const credits = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM ledger_entries WHERE account_id = ? AND kind = 'credit'")
      .bind(accountId)
      .first<{ n: number }>();
    expect(credits?.n).toBe(2); // the opening balance and one credit

    expectProblem(await credit(7), 422, "idempotency_key_reused");
    expect(await storedBalance(accountId)).toBe(600);
    expect((await credit(5, `${key}-other`)).body.data.account.balance).toBe(11);
  });

  it("keeps admin Idempotency-Keys apart from an account's own", async () => {
    const { accountId, key: apiKey } = await createAccount(1);
    const shared = `shared-${crypto.randomUUID()}`;
    const app = await call("POST", "/v1/apps", {
      key: apiKey,
      body: { name: "Acme", sender_id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8" },
      headers: { "Idempotency-Key": shared },
    });
    expect(app.status).toBe(201);
    const credit = await call<AccountEnvelope>("POST", `/admin/accounts/${accountId}/credits`, {
      key: ADMIN_TOKEN,
      body: { amount: 1 },
      headers: { "Idempotency-Key": shared },
    });
    expect(credit.status).toBe(200);
    expect(credit.headers.get("idempotent-replayed")).toBeNull();
    expect(credit.body.data.account.balance).toBe(2);
  });

  it("is 404 for an unknown account and writes nothing", async () => {
    expectProblem(
      await admin("POST", `/admin/accounts/${UNKNOWN_ID}/credits`, { amount: 5 }),
      404,
      "not_found",
    );
    // An unknown account has no database: none of them holds a row of it.
    let ledger = 0;
    for (const d1 of everyAccountD1()) {
      const row = await d1
        .prepare("SELECT COUNT(*) AS n FROM ledger_entries WHERE account_id = ?")
        .bind(UNKNOWN_ID)
        .first<{ n: number }>();
      ledger += row?.n ?? 0;
    }
    expect(ledger).toBe(0);
  });

  it("is 404 for a malformed id", async () => {
    expectProblem(await admin("POST", "/admin/accounts/123/credits", { amount: 5 }), 404, "not_found");
  });

  const invalid: [string, unknown][] = [
    ["a missing amount", {}],
    ["a zero amount", { amount: 0 }],
    ["a negative amount", { amount: -5 }],
    ["an amount with 3 decimals", { amount: 1.005 }],
    ["an amount given as a string", { amount: "5" }],
    ["an absurdly large amount", { amount: 1e12 }],
  ];
  for (const [what, body] of invalid) {
    it(`refuses ${what} with 422 and leaves the balance alone`, async () => {
      const { accountId } = await createAccount(3);
      const res = await admin("POST", `/admin/accounts/${accountId}/credits`, body);
      const problem = expectProblem(res, 422, "validation_failed");
      expect(problem.errors).toMatchObject({ amount: [expect.any(String)] });
      expect(await storedBalance(accountId)).toBe(300);
    });
  }

  it("refuses unknown fields", async () => {
    const { accountId } = await createAccount();
    const res = await admin("POST", `/admin/accounts/${accountId}/credits`, { amount: 1, balance: 1e6 });
    const problem = expectProblem(res, 422, "validation_failed");
    expect(problem.errors).toEqual({ balance: ["unknown field"] });
  });
});

describe("POST /admin/accounts/{id}/keys", () => {
  it("issues a named key whose prefix starts its plaintext and which works at once", async () => {
    const { accountId } = await createAccount();
    const res = await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, { name: "ci" });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const { key, api_key } = res.body.data;
    expect(key).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      prefix: expect.stringMatching(/^sk_/),
      name: "ci",
      scopes: ["*"],
      created_at: expect.stringMatching(TIMESTAMP),
      expires_at: null,
      last_used_at: null,
      created_by: null,
    });
    expect(api_key).toMatch(KEY_SHAPE);
    expect(api_key.startsWith(key.prefix)).toBe(true);
    expect(key.prefix.length).toBeLessThan(api_key.length);
    expect(await sessionsStatus(api_key)).toBe(200);
  });

  it("issues an unnamed key without a body", async () => {
    const { accountId } = await createAccount();
    const res = await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`);
    expect(res.status).toBe(201);
    expect(res.body.data.key.name).toBeNull();
    expect(await sessionsStatus(res.body.data.api_key)).toBe(200);
  });

  it("issues a different key each time, and never shows a key again", async () => {
    const { accountId, key: first } = await createAccount();
    const a = await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, {});
    const b = await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, {});
    expect(new Set([first, a.body.data.api_key, b.body.data.api_key]).size).toBe(3);
    expect(b.text).not.toContain(a.body.data.api_key);
    const shown = await admin("GET", `/admin/accounts/${accountId}`);
    for (const plaintext of [first, a.body.data.api_key, b.body.data.api_key])
      expect(shown.text).not.toContain(plaintext);
  });

  it("lets a key act on its own account only", async () => {
    const { accountId } = await createAccount();
    const issued = await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, {});
    const created = await call<{ session: { account_id: string } }>("POST", "/v1/chatapp/sessions", {
      key: issued.body.data.api_key,
    });
    expect(created.body.session.account_id).toBe(accountId);
  });

  it("is 404 for an unknown account", async () => {
    expectProblem(await admin("POST", `/admin/accounts/${UNKNOWN_ID}/keys`, {}), 404, "not_found");
  });

  it("is 404 for a malformed id", async () => {
    expectProblem(await admin("POST", "/admin/accounts/xyz/keys", {}), 404, "not_found");
  });

  it("refuses an empty name, a wrong type and unknown fields with 422", async () => {
    const { accountId } = await createAccount();
    const empty = await admin("POST", `/admin/accounts/${accountId}/keys`, { name: "" });
    expect(expectProblem(empty, 422, "validation_failed").errors).toMatchObject({
      name: [expect.any(String)],
    });
    const wrongType = await admin("POST", `/admin/accounts/${accountId}/keys`, { name: ["a"] });
    expect(expectProblem(wrongType, 422, "validation_failed").errors).toMatchObject({
      name: [expect.any(String)],
    });
    const unknown = await admin("POST", `/admin/accounts/${accountId}/keys`, { scope: "all" });
    expect(expectProblem(unknown, 422, "validation_failed").errors).toEqual({ scope: ["unknown field"] });
  });
});

describe("GET /admin/accounts/{id}/keys", () => {
  interface ListedKey {
    id: string;
    name: string | null;
    prefix: string;
    scopes: string[];
    created_at: string;
    expires_at: string | null;
    last_used_at: string | null;
    created_by: string | null;
  }
  type KeyPage = {
    success: boolean;
    data: ListedKey[];
    links: Record<string, string | null>;
    meta: Record<string, unknown>;
  };

  it("lists the account's live keys only, newest first, as the API shows keys: never a secret or hash", async () => {
    const { accountId, key } = await createAccount();
    const other = await createAccount();
    const made = await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, {
      name: "ops",
      scopes: ["keys:write", "sessions:read"],
    });
    const child = await call<KeyEnvelope>("POST", "/v1/api-keys", {
      key: made.body.data.api_key,
      body: { name: "child", scopes: ["sessions:read"] },
    });
    const gone = await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, { name: "gone" });
    expect((await admin("DELETE", `/admin/keys/${gone.body.data.key.id}`)).status).toBe(200);

    const res = await admin<KeyPage>("GET", `/admin/accounts/${accountId}/keys`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.map((k) => k.name)).toEqual(["child", "ops", "default"]);
    expect(res.body.data[0]).toEqual({
      id: child.body.data.key.id,
      name: "child",
      prefix: child.body.data.api_key.slice(0, 11),
      scopes: ["sessions:read"],
      created_at: expect.stringMatching(TIMESTAMP),
      expires_at: null,
      last_used_at: null,
      created_by: made.body.data.key.id,
    });
    // The account's own list shows the same keys the same way.
    const own = await call<KeyPage>("GET", "/v1/api-keys", { key });
    // (`last_used_at` aside: the account's own call just used its key.)
    const unused = (keys: ListedKey[]) => keys.map(({ last_used_at: _, ...rest }) => rest);
    expect(unused(res.body.data)).toEqual(unused(own.body.data));
    expect(res.text).not.toContain(made.body.data.api_key);
    expect(res.text).not.toMatch(/key_hash|keyHash|"api_key"/);
    const theirs = await admin<KeyPage>("GET", `/admin/accounts/${other.accountId}/keys`);
    expect(theirs.body.data.map((k) => k.name)).toEqual(["default"]);
  });

  it("pages with limit and cursor like the other lists", async () => {
    const { accountId } = await createAccount();
    await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, { name: "second" });
    const first = await admin<KeyPage>("GET", `/admin/accounts/${accountId}/keys?limit=1`);
    expect(first.body.data.map((k) => k.name)).toEqual(["second"]);
    const next = first.body.meta.next_cursor;
    expect(next).toEqual(expect.any(String));
    const second = await admin<KeyPage>(
      "GET",
      `/admin/accounts/${accountId}/keys?limit=1&cursor=${encodeURIComponent(String(next))}`,
    );
    expect(second.body.data.map((k) => k.name)).toEqual(["default"]);
    expect(second.body.meta.next_cursor).toBeNull();
  });

  it("is 404 for an unknown or malformed account, and 422 for a bad limit", async () => {
    expectProblem(await admin("GET", `/admin/accounts/${UNKNOWN_ID}/keys`), 404, "not_found");
    expectProblem(await admin("GET", "/admin/accounts/not-an-id/keys"), 404, "not_found");
    const { accountId } = await createAccount();
    const bad = await admin("GET", `/admin/accounts/${accountId}/keys?limit=0`);
    expect(Object.keys(expectProblem(bad, 422, "validation_failed").errors as object)).toEqual(["limit"]);
  });
});

describe("DELETE /admin/keys/{id}", () => {
  /** An admin key that may make keys, a key it made, and one that key made; with the account's default key. */
  async function tree() {
    const { accountId, key: other } = await createAccount();
    const parent = (
      await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, {
        name: "parent",
        scopes: ["keys:write", "sessions:read"],
      })
    ).body.data;
    const make = async (by: string, name: string) =>
      (
        await call<KeyEnvelope>("POST", "/v1/api-keys", {
          key: by,
          body: { name, scopes: ["keys:write", "sessions:read"] },
        })
      ).body.data;
    const child = await make(parent.api_key, "child");
    const grandchild = await make(child.api_key, "grandchild");
    return { accountId, other, parent, child, grandchild };
  }

  it("revokes the key and every key under it by default: 200 with the ids, each refused from then on", async () => {
    const { accountId, other, parent, child, grandchild } = await tree();
    expect(await sessionsStatus(child.api_key)).toBe(200);

    const res = await admin("DELETE", `/admin/keys/${parent.key.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { revoked: [parent.key.id, child.key.id, grandchild.key.id], disabled_webhook_endpoints: [] },
    });
    for (const revoked of [parent, child, grandchild]) {
      const refused = await call("GET", "/v1/chatapp/sessions", { key: revoked.api_key });
      expectProblem(refused, 401, "unauthenticated");
      expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    }
    expect(await sessionsStatus(other)).toBe(200);
    const { results } = await (await accountD1(accountId))
      .prepare("SELECT id, revoked_at FROM api_keys WHERE id IN (?, ?, ?)")
      .bind(parent.key.id, child.key.id, grandchild.key.id)
      .all<{ id: string; revoked_at: number | null }>();
    expect(results.map((row) => row.revoked_at)).toEqual([
      expect.any(Number),
      expect.any(Number),
      expect.any(Number),
    ]);
  });

  it("with cascade=false revokes that key only: 204, and the keys it made keep working", async () => {
    const { other, parent, child, grandchild } = await tree();
    const res = await admin("DELETE", `/admin/keys/${parent.key.id}?cascade=false`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expectProblem(await call("GET", "/v1/chatapp/sessions", { key: parent.api_key }), 401, "unauthenticated");
    for (const kept of [child.api_key, grandchild.api_key, other])
      expect(await sessionsStatus(kept)).toBe(200);
    // A later cascade from the child still finds its own tree.
    const later = await admin("DELETE", `/admin/keys/${child.key.id}?cascade=true`);
    expect(later.body).toEqual({
      success: true,
      data: { revoked: [child.key.id, grandchild.key.id], disabled_webhook_endpoints: [] },
    });
  });

  it("follows the tree through a key revoked before, listing only the keys it revoked", async () => {
    const { parent, child, grandchild } = await tree();
    expect((await admin("DELETE", `/admin/keys/${child.key.id}?cascade=false`)).status).toBe(204);
    expect(await sessionsStatus(grandchild.api_key)).toBe(200);
    const res = await admin<{ data: { revoked: string[] } }>("DELETE", `/admin/keys/${parent.key.id}`);
    expect(res.body.data.revoked).toEqual([parent.key.id, grandchild.key.id]);
    expectProblem(
      await call("GET", "/v1/chatapp/sessions", { key: grandchild.api_key }),
      401,
      "unauthenticated",
    );
  });

  it("is 404 when the key is already revoked", async () => {
    const { accountId } = await createAccount();
    const issued = await admin<KeyEnvelope>("POST", `/admin/accounts/${accountId}/keys`, {});
    expect((await admin("DELETE", `/admin/keys/${issued.body.data.key.id}`)).status).toBe(200);
    expectProblem(await admin("DELETE", `/admin/keys/${issued.body.data.key.id}`), 404, "not_found");
    expectProblem(
      await admin("DELETE", `/admin/keys/${issued.body.data.key.id}?cascade=false`),
      404,
      "not_found",
    );
  });

  it("is 404 for an unknown or malformed key id, and 422 for a bad cascade value", async () => {
    expectProblem(await admin("DELETE", `/admin/keys/${UNKNOWN_ID}`), 404, "not_found");
    expectProblem(await admin("DELETE", "/admin/keys/sk_not-an-id"), 404, "not_found");
    const { parent } = await tree();
    const bad = await admin("DELETE", `/admin/keys/${parent.key.id}?cascade=yes`);
    expect(Object.keys(expectProblem(bad, 422, "validation_failed").errors as object)).toEqual(["cascade"]);
    expect(await sessionsStatus(parent.api_key)).toBe(200);
  });
});
