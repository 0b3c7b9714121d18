import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RATE_LIMITS } from "../src/middleware/rate-limit";
import { ADMIN_TOKEN, type ApiResponse, call, createAccount, createSession, expectProblem } from "./helpers";

// Rate limits with Workers Rate Limiting (real bindings, counting in fixed windows): per key for
// the API and, tighter, for sends; per client IP for the public routes. Each test runs requests
// until the limit answers: at least the limit passes first (more when a window ends meanwhile).

/**
 * Calls `send` until it answers 429 (or `max` calls), `concurrency` calls at a time; returns the
 * first 429 and how many calls passed before it was seen.
 */
async function untilLimited(send: () => Promise<ApiResponse>, max: number, concurrency = 1) {
  // Three windows' worth: a run slower than a window still meets the limit in one of them. Calls
  // in parallel fit a large limit into one window on a loaded machine too.
  let passed = 0;
  for (let sent = 0; sent < max; sent += concurrency) {
    const answers = await Promise.all(Array.from({ length: Math.min(concurrency, max - sent) }, send));
    const limited = answers.find((res) => res.status === 429);
    if (limited) return { res: limited, passed: passed + answers.filter((res) => res.status !== 429).length };
    passed += answers.length;
  }
  throw new Error(`no 429 in ${max} requests`);
}

function expectLimited(res: ApiResponse, name: keyof typeof RATE_LIMITS) {
  const { limit, period } = RATE_LIMITS[name];
  const problem = expectProblem(res, 429, "rate_limited");
  expect(problem.detail).toBe(
    `More than ${limit} requests in ${period} s (the \`${name}\` limit). Try again in at most ${period} s.`,
  );
  expect(res.headers.get("retry-after")).toBe(String(period));
  expect(res.headers.get("ratelimit")).toBe(`"${name}";r=0;t=${period}`);
  expect(res.headers.get("ratelimit-policy")).toContain(`"${name}";q=${limit};w=${period}`);
}

describe("rate limits", () => {
  it("states the limits of wrangler.toml", () => {
    const declared = Object.fromEntries(env.TEST_RATE_LIMITS.map((r) => [r.name, r.simple]));
    for (const { binding, limit, period } of Object.values(RATE_LIMITS))
      expect(declared[binding], binding).toEqual({ limit, period });
    expect(env.TEST_RATE_LIMITS).toHaveLength(Object.keys(RATE_LIMITS).length);
  });

  it("names the API limit on every answer, and a send's limits on a send", async () => {
    const { key } = await createAccount();
    const listed = await call("GET", "/v1/chatapp/sessions", { key });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("ratelimit-policy")).toBe('"api";q=1000;w=10');
    const refused = await call("POST", "/v1/chatapp/messages", { key, body: {} });
    expect(refused.status).toBe(422);
    expect(refused.headers.get("ratelimit-policy")).toBe('"send";q=100;w=10, "api";q=1000;w=10');
  });

  it("limits sends per key, and leaves the key's other calls and other keys alone", async () => {
    const { key } = await createAccount();
    const other = await createAccount();
    const { session } = await createSession(key);
    const send = () =>
      call("POST", "/v1/chatapp/messages", {
        key,
        body: { chatapp_session_id: session.id, to_number: ["+14155552671"], type: "text", content: "x" },
      });
    const { res, passed } = await untilLimited(send, 3 * RATE_LIMITS.send.limit);
    expect(passed).toBeGreaterThanOrEqual(RATE_LIMITS.send.limit);
    expectLimited(res, "send");
    expect((await call("GET", `/v1/chatapp/sessions/${session.id}`, { key })).status).toBe(200);
    const othersSend = await call("POST", "/v1/chatapp/messages", { key: other.key, body: {} });
    expect(othersSend.status).toBe(422);
  });

  it("limits every call per key", async () => {
    const { key } = await createAccount();
    const { res, passed } = await untilLimited(
      () => call("GET", "/v1/account", { key }),
      3 * RATE_LIMITS.api.limit,
      100,
    );
    expect(passed).toBeGreaterThanOrEqual(RATE_LIMITS.api.limit);
    expectLimited(res, "api");
  });

  it("limits the public routes per client IP", async () => {
    const from = (ip: string) => () =>
      call("GET", `/link/${"x".repeat(43)}/session`, { headers: { "CF-Connecting-IP": ip } });
    expect((await from("203.0.113.7")()).status).toBe(404);
    const { res, passed } = await untilLimited(from("203.0.113.7"), 3 * RATE_LIMITS.public.limit);
    expect(passed).toBeGreaterThanOrEqual(RATE_LIMITS.public.limit - 1);
    expectLimited(res, "public");
    expect((await from("203.0.113.8")()).status).toBe(404);
  });

  it("limits the admin API per client IP, counting before the token is checked", async () => {
    const from = (ip: string, key: string) => () =>
      call("GET", "/admin/metrics", { key, headers: { "CF-Connecting-IP": ip } });
    const guess = from("198.51.100.7", "not-the-admin-token");
    const first = await guess();
    expectProblem(first, 401, "unauthenticated");
    expect(first.headers.get("ratelimit-policy")).toBe('"admin";q=30;w=10');
    const { res, passed } = await untilLimited(guess, 3 * RATE_LIMITS.admin.limit);
    expect(passed).toBeGreaterThanOrEqual(RATE_LIMITS.admin.limit - 1);
    expectLimited(res, "admin");
    // The right token from that address is held back too; from another address it is served.
    const right = await untilLimited(from("198.51.100.7", ADMIN_TOKEN), 3 * RATE_LIMITS.admin.limit);
    expectLimited(right.res, "admin");
    const other = await from("198.51.100.8", ADMIN_TOKEN)();
    expect(other.status).toBe(200);
    expect(other.headers.get("ratelimit-policy")).toBe('"admin";q=30;w=10');
  });
});
