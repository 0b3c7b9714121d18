import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { accountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem } from "./helpers";

// The account's own API keys: created with scopes (the secret shown once), listed without
// secrets, refused once expired or revoked, and never more than the creating key holds.

interface Key {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  created_by: string | null;
}

function createKey(key: string, body: Record<string, unknown>) {
  return call<{ data: { key: Key; api_key: string } }>("POST", "/v1/api-keys", { key, body });
}

async function listKeys(key: string): Promise<Key[]> {
  const res = await call<{ data: Key[] }>("GET", "/v1/api-keys", { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/**
 * Makes one request with `key` through the Worker's fetch handler and waits for the work it left
 * running after its answer (`waitUntil`, where the key's use is recorded): whatever the request
 * was going to write is written when this returns.
 */
async function useKeySettled(key: string): Promise<void> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request("http://localhost/v1/api-keys", { headers: { Authorization: `Bearer ${key}` } }),
    env,
    ctx,
  );
  expect(res.status).toBe(200);
  await waitOnExecutionContext(ctx);
}

const inOneHour = () => new Date(Date.now() + 3_600_000).toISOString();

describe("POST /v1/api-keys", () => {
  it("creates a scoped key whose secret is shown once, and which can do only what its scopes allow", async () => {
    const { key } = await createAccount();
    const res = await createKey(key, { name: "sender", scopes: ["messages:send"] });
    expect(res.status, res.text).toBe(201);
    const { key: created, api_key } = res.body.data;
    expect(created).toEqual({
      id: expect.any(String),
      name: "sender",
      prefix: api_key.slice(0, 11),
      scopes: ["messages:send"],
      created_at: expect.any(String),
      expires_at: null,
      last_used_at: null,
      created_by: expect.any(String),
    });
    const listed = await listKeys(key);
    expect(listed.map((k) => k.name)).toEqual(["sender", "default"]);
    expect(JSON.stringify(listed)).not.toContain(api_key);

    const refused = await call("GET", "/v1/chatapp/sessions", { key: api_key });
    expect(expectProblem(refused, 403, "insufficient_scope")).toMatchObject({ scope: "sessions:read" });
    // Past the scope check: validation answers.
    const send = await call("POST", "/v1/chatapp/messages", { key: api_key, body: {} });
    expect(send.status).toBe(422);
  });

  it("refuses scopes beyond the creating key's own, naming them", async () => {
    const { key } = await createAccount();
    const limited = (await createKey(key, { name: "limited", scopes: ["keys:write", "otp:send"] })).body.data
      .api_key;
    const beyond = await createKey(limited, { name: "more", scopes: ["otp:send", "sessions:read", "*"] });
    expect(expectProblem(beyond, 403, "insufficient_scope").detail).toBe(
      "This key cannot grant `sessions:read`, `*`: a key creates keys only within its own scopes.",
    );
    const within = await createKey(limited, { name: "within", scopes: ["otp:read"] });
    expect(within.status, within.text).toBe(201);
    expect((await listKeys(key)).map((k) => k.name)).toEqual(["within", "limited", "default"]);
  });

  it("gives a key made by an expiring key that key's expiry, and refuses one that would outlive it", async () => {
    const { key } = await createAccount();
    const expires = inOneHour();
    const parent = (await createKey(key, { name: "parent", scopes: ["keys:write"], expires_at: expires }))
      .body.data.api_key;
    const child = await createKey(parent, { name: "child", scopes: ["keys:read"] });
    expect(child.status, child.text).toBe(201);
    expect(Date.parse(child.body.data.key.expires_at ?? "")).toBe(Date.parse(expires));
    const later = new Date(Date.parse(expires) + 60_000).toISOString();
    const outliving = await createKey(parent, { name: "later", scopes: ["keys:read"], expires_at: later });
    expectProblem(outliving, 403, "insufficient_scope");
  });

  it("refuses bad bodies with 422 naming the field", async () => {
    const { key } = await createAccount();
    const cases: [Record<string, unknown>, string][] = [
      [{ scopes: ["messages:send"] }, "name"],
      [{ name: "x", scopes: [] }, "scopes"],
      [{ name: "x", scopes: ["messages:delete"] }, "scopes.0"],
      [{ name: "x", scopes: ["otp:send", "otp:send"] }, "scopes"],
      [{ name: "x", scopes: ["otp:send"], expires_at: "2020-01-01T00:00:00Z" }, "expires_at"],
      [{ name: "x", scopes: ["otp:send"], expires_at: "tomorrow" }, "expires_at"],
    ];
    for (const [body, field] of cases) {
      const res = await createKey(key, body);
      const problem = expectProblem(res, 422, "validation_failed");
      expect(Object.keys(problem.errors as object), JSON.stringify(body)).toEqual([field]);
    }
    expect(await listKeys(key)).toHaveLength(1);
  });
});

describe("a key's life", () => {
  it("records last_used_at on first use, and not again within the minute", async () => {
    const { key } = await createAccount();
    const reader = (await createKey(key, { name: "reader", scopes: ["keys:read"] })).body.data.api_key;
    const lastUsed = async () => (await listKeys(key)).find((k) => k.name === "reader")?.last_used_at;
    expect(await lastUsed()).toBeNull();
    await useKeySettled(reader);
    const first = await lastUsed();
    expect(first).toEqual(expect.any(String));
    await useKeySettled(reader);
    expect(await lastUsed()).toBe(first);
  });

  it("refuses a key whose expiry has passed with 401, like a revoked one", async () => {
    const { key, accountId } = await createAccount();
    const res = await createKey(key, { name: "short", scopes: ["keys:read"], expires_at: inOneHour() });
    const short = res.body.data.api_key;
    expect((await call("GET", "/v1/api-keys", { key: short })).status).toBe(200);
    // The hour passes: the test moves the key's expiry into the past rather than waiting.
    await (await accountD1(accountId))
      .prepare("UPDATE api_keys SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, res.body.data.key.id)
      .run();
    const refused = await call("GET", "/v1/api-keys", { key: short });
    expect(expectProblem(refused, 401, "unauthenticated").detail).toBe(
      "The API key is unknown, revoked or expired.",
    );
  });

  it("revokes a key at once; another account's key is not found and keeps working", async () => {
    const { key } = await createAccount();
    const other = await createAccount();
    const victim = (await createKey(key, { name: "victim", scopes: ["keys:read"] })).body.data;
    const othersKey = (await listKeys(other.key))[0];
    expect((await call("DELETE", `/v1/api-keys/${othersKey?.id}`, { key })).status).toBe(404);
    expect((await call("GET", "/v1/api-keys", { key: other.key })).status).toBe(200);

    expect((await call("DELETE", `/v1/api-keys/${victim.key.id}`, { key })).status).toBe(204);
    expectProblem(await call("GET", "/v1/api-keys", { key: victim.api_key }), 401, "unauthenticated");
    expectProblem(await call("DELETE", `/v1/api-keys/${victim.key.id}`, { key }), 404, "not_found");
    expect((await listKeys(key)).map((k) => k.name)).toEqual(["default"]);
  });
});

/** Whether `key` still authenticates (200 on a route its scopes allow, 401 once revoked). */
async function works(key: string): Promise<boolean> {
  const res = await call("GET", "/v1/account", { key });
  if (res.status === 401) {
    expectProblem(res, 401, "unauthenticated");
    return false;
  }
  return true;
}

describe("created_by", () => {
  it("records the creating key's id, shown on create and in the list; null for the admin API's keys", async () => {
    const { accountId, key } = await createAccount();
    const [root] = await listKeys(key);
    expect(root?.created_by).toBeNull();
    const parent = (await createKey(key, { name: "parent", scopes: ["keys:write", "account:read"] })).body
      .data;
    expect(parent.key.created_by).toBe(root?.id);
    const child = (await createKey(parent.api_key, { name: "child", scopes: ["account:read"] })).body.data;
    expect(child.key.created_by).toBe(parent.key.id);
    const admin = await call<{ data: { key: Key } }>("POST", `/admin/accounts/${accountId}/keys`, {
      key: ADMIN_TOKEN,
      body: { name: "admin-made" },
    });
    expect(admin.body.data.key.created_by).toBeNull();
    expect(Object.fromEntries((await listKeys(key)).map((k) => [k.name, k.created_by]))).toEqual({
      "admin-made": null,
      child: parent.key.id,
      parent: root?.id,
      default: null,
    });
  });
});

describe("DELETE /v1/api-keys/{id}: only keys within the caller's scopes", () => {
  it("refuses a send-only keys:write key revoking the * key with 403, and the * key keeps working", async () => {
    const { key } = await createAccount();
    const [root] = await listKeys(key);
    const limited = (await createKey(key, { name: "limited", scopes: ["keys:write", "messages:send"] })).body
      .data.api_key;
    for (const query of ["", "?cascade=true"]) {
      const res = await call("DELETE", `/v1/api-keys/${root?.id}${query}`, { key: limited });
      expect(expectProblem(res, 403, "insufficient_scope").detail).toBe(
        `This key cannot revoke key ${root?.id}, which holds \`*\`: a key revokes only keys within its own scopes.`,
      );
    }
    expect(await works(key)).toBe(true);
    expect((await listKeys(key)).map((k) => k.name)).toEqual(["limited", "default"]);
  });

  it("refuses a key holding one scope the caller lacks, and revokes one within its scopes", async () => {
    const { key } = await createAccount();
    const limited = (await createKey(key, { name: "limited", scopes: ["keys:write", "account:write"] })).body
      .data.api_key;
    const wider = (await createKey(key, { name: "wider", scopes: ["account:read", "sessions:read"] })).body
      .data;
    const within = (await createKey(key, { name: "within", scopes: ["account:read", "keys:read"] })).body
      .data;
    const refused = await call("DELETE", `/v1/api-keys/${wider.key.id}`, { key: limited });
    expect(expectProblem(refused, 403, "insufficient_scope").detail).toContain("`sessions:read`");
    expect(await works(wider.api_key)).toBe(true);
    expect((await call("DELETE", `/v1/api-keys/${within.key.id}`, { key: limited })).status).toBe(204);
    expect(await works(within.api_key)).toBe(false);
  });
});

describe("DELETE /v1/api-keys/{id}?cascade=true", () => {
  /**
   * default ─┬─ a ─┬─ b ── d
   *          │     └─ c
   *          └─ e
   */
  async function tree() {
    const { key } = await createAccount();
    const scopes = ["keys:write", "account:read"];
    const make = async (by: string, name: string) => (await createKey(by, { name, scopes })).body.data;
    const a = await make(key, "a");
    const b = await make(a.api_key, "b");
    const c = await make(a.api_key, "c");
    const d = await make(b.api_key, "d");
    const e = await make(key, "e");
    return { key, a, b, c, d, e };
  }

  it("revokes the key and every key under it, and only those, answering the ids revoked", async () => {
    const { key, a, b, c, d, e } = await tree();
    const res = await call<{ success: boolean; data: { revoked: string[] } }>(
      "DELETE",
      `/v1/api-keys/${a.key.id}?cascade=true`,
      { key },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { revoked: [a.key.id, b.key.id, c.key.id, d.key.id], disabled_webhook_endpoints: [] },
    });
    for (const revoked of [a, b, c, d]) expect(await works(revoked.api_key), revoked.key.name).toBe(false);
    expect(await works(e.api_key)).toBe(true);
    expect(await works(key)).toBe(true);
    expect((await listKeys(key)).map((k) => k.name)).toEqual(["e", "default"]);
  });

  it("follows the tree through a key revoked before, listing only the keys it revoked", async () => {
    const { key, a, b, c, d } = await tree();
    // Without cascade, only the key goes: the keys it made keep working.
    expect((await call("DELETE", `/v1/api-keys/${b.key.id}`, { key })).status).toBe(204);
    expect(await works(d.api_key)).toBe(true);
    const res = await call<{ data: { revoked: string[] } }>(
      "DELETE",
      `/v1/api-keys/${a.key.id}?cascade=true`,
      {
        key,
      },
    );
    expect(res.body.data.revoked).toEqual([a.key.id, c.key.id, d.key.id]);
    expect(await works(d.api_key)).toBe(false);
  });

  it("lets a key revoke itself and its own keys", async () => {
    const { key, a, b, c, d } = await tree();
    const res = await call<{ data: { revoked: string[] } }>(
      "DELETE",
      `/v1/api-keys/${b.key.id}?cascade=true`,
      {
        key: b.api_key,
      },
    );
    expect(res.body.data.revoked).toEqual([b.key.id, d.key.id]);
    expect([await works(a.api_key), await works(c.api_key), await works(key)]).toEqual([true, true, true]);
  });

  it("answers 404 for a revoked or another account's key, and 422 for a bad cascade value", async () => {
    const { key, a } = await tree();
    const other = await createAccount();
    expect((await call("DELETE", `/v1/api-keys/${a.key.id}?cascade=true`, { key: other.key })).status).toBe(
      404,
    );
    expect(await works(a.api_key)).toBe(true);
    const bad = await call("DELETE", `/v1/api-keys/${a.key.id}?cascade=yes`, { key });
    expect(Object.keys(expectProblem(bad, 422, "validation_failed").errors as object)).toEqual(["cascade"]);
    expect(await works(a.api_key)).toBe(true);
    expect((await call("DELETE", `/v1/api-keys/${a.key.id}?cascade=false`, { key })).status).toBe(204);
    expectProblem(await call("DELETE", `/v1/api-keys/${a.key.id}?cascade=true`, { key }), 404, "not_found");
  });
});
