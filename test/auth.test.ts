import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, type ApiResponse, call, createAccount, createSession, expectProblem } from "./helpers";

const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";
/** Well formed (`sk_` + 43 base64url characters) but never issued. */
const UNKNOWN_KEY = `sk_${"A".repeat(43)}`;

function expectUnauthenticated(res: ApiResponse): void {
  const problem = expectProblem(res, 401, "unauthenticated");
  expect(problem.title).toBe("Unauthenticated");
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer( |$)/);
  expect(Object.keys(problem).sort()).toEqual(
    ["code", "detail", "request_id", "status", "success", "title", "type"].sort(),
  );
}

/** Every authenticated route family: the /v1 session routes and the sandbox's script routes. */
const protectedRoutes: [string, string][] = [
  ["GET", "/v1/chatapp/sessions"],
  ["POST", "/v1/chatapp/sessions"],
  ["GET", `/v1/chatapp/sessions/${UNKNOWN_ID}`],
  ["GET", `/v1/chatapp/sessions/${UNKNOWN_ID}/qr-code`],
  ["PATCH", `/v1/chatapp/sessions/${UNKNOWN_ID}/disconnect`],
  ["PATCH", `/v1/chatapp/sessions/${UNKNOWN_ID}/reconnect`],
  ["DELETE", `/v1/chatapp/sessions/${UNKNOWN_ID}`],
  ["POST", `/sandbox/sessions/${UNKNOWN_ID}/scan`],
  ["POST", `/sandbox/sessions/${UNKNOWN_ID}/drop`],
  ["POST", `/sandbox/sessions/${UNKNOWN_ID}/ban`],
];

describe("bearer API keys", () => {
  for (const [method, path] of protectedRoutes) {
    it(`${method} ${path} without Authorization is 401`, async () => {
      expectUnauthenticated(await call(method, path));
    });
  }

  const malformed: [string, string][] = [
    ["another scheme", "Basic dXNlcjpwYXNz"],
    ["the scheme alone", "Bearer"],
    ["the scheme and blanks", "Bearer    "],
    ["a key of the wrong shape", "Bearer not-a-key"],
    ["a truncated key", `Bearer ${UNKNOWN_KEY.slice(0, -1)}`],
    ["two tokens", `Bearer ${UNKNOWN_KEY} ${UNKNOWN_KEY}`],
    ["a key without the scheme", UNKNOWN_KEY],
  ];
  for (const [what, header] of malformed) {
    it(`refuses ${what} with 401`, async () => {
      const res = await call("GET", "/v1/chatapp/sessions", { headers: { Authorization: header } });
      expectUnauthenticated(res);
    });
  }

  it("refuses a well-formed key that was never issued", async () => {
    expectUnauthenticated(await call("GET", "/v1/chatapp/sessions", { key: UNKNOWN_KEY }));
  });

  it("refuses the admin token on /v1", async () => {
    expectUnauthenticated(await call("GET", "/v1/chatapp/sessions", { key: ADMIN_TOKEN }));
  });

  it("refuses a revoked key at once, on every route", async () => {
    const { accountId } = await createAccount();
    const issued = await call<{ data: { key: { id: string }; api_key: string } }>(
      "POST",
      `/admin/accounts/${accountId}/keys`,
      { key: ADMIN_TOKEN, body: {} },
    );
    const key = issued.body.data.api_key;
    const { session } = await createSession(key);
    expect(
      (await call("DELETE", `/admin/keys/${issued.body.data.key.id}`, { key: ADMIN_TOKEN })).status,
    ).toBe(204);
    expectUnauthenticated(await call("GET", "/v1/chatapp/sessions", { key }));
    expectUnauthenticated(await call("GET", `/v1/chatapp/sessions/${session.id}`, { key }));
    expectUnauthenticated(await call("POST", `/sandbox/sessions/${session.id}/scan`, { key }));
  });

  it("checks the key before the route: an unknown /v1 path without a key is 401", async () => {
    expectUnauthenticated(await call("GET", "/v1/nothing-here"));
  });

  it("accepts a live key, with the scheme in any case", async () => {
    const { key } = await createAccount();
    const res = await call<{ success: boolean; sessions: unknown[] }>("GET", "/v1/chatapp/sessions", {
      headers: { Authorization: `bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, sessions: [] });
  });

  it("records when a key was last used", async () => {
    const { accountId, key } = await createAccount();
    expect((await call("GET", "/v1/chatapp/sessions", { key })).status).toBe(200);
    // The touch runs in waitUntil; poll the row briefly.
    let lastUsed: number | null = null;
    for (let i = 0; i < 50 && lastUsed === null; i++) {
      const row = await env.DB.prepare("SELECT last_used_at FROM api_keys WHERE account_id = ?")
        .bind(accountId)
        .first<{ last_used_at: number | null }>();
      lastUsed = row?.last_used_at ?? null;
      if (lastUsed === null) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lastUsed).toEqual(expect.any(Number));
  });
});
