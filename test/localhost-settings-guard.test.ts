import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import { ConfigError, readConfig } from "../src/config";
import { ADMIN_TOKEN, createAccount } from "./helpers";

// The local-development settings (MEDIA_ALLOW_HTTP_LOCALHOST, WEBHOOK_ALLOW_HTTP_LOCALHOST) in a
// deployment that is not local: every request answers 503 service_misconfigured (src/config.ts
// `localSettingsProblem`, src/middleware/local-settings.ts). Where the deployment runs is
// PUBLIC_URL when set, else the request's own host. Each call runs the app with the test
// bindings plus the variables given, as test/webhooks.test.ts does for one setting.

const SETTINGS = ["MEDIA_ALLOW_HTTP_LOCALHOST", "WEBHOOK_ALLOW_HTTP_LOCALHOST"] as const;

interface Answer {
  status: number;
  type: string | null;
  requestId: string | null;
  body: Record<string, unknown>;
}

/** `method url` on a fresh app with `vars` over the test bindings. */
async function callWith(
  vars: Record<string, string>,
  url: string,
  token?: string,
  method = "GET",
): Promise<Answer> {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { "CF-Connecting-IP": "2001:db8::53" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await createApp().request(url, { method, headers }, { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    requestId: res.headers.get("x-request-id"),
    body: /json/.test(res.headers.get("content-type") ?? "") ? JSON.parse(text) : { text },
  };
}

/** Asserts the 503 problem, whose detail names `settings` and `where`. */
function expectRefused(answer: Answer, settings: string, where: string): void {
  expect(answer.status).toBe(503);
  expect(answer.type).toBe("application/problem+json");
  expect(answer.body).toEqual({
    type: "tag:chatapp-otp-api,2026:problems/service_misconfigured",
    title: "Service misconfigured",
    status: 503,
    code: "service_misconfigured",
    success: false,
    request_id: answer.requestId,
    detail: `The service is misconfigured: ${settings} ${settings.includes(" and ") ? "are" : "is"} true, which is for local development only; ${where} not localhost or 127.0.0.1.`,
  });
}

describe("a local-development setting where PUBLIC_URL is not local", () => {
  const publicUrl = { PUBLIC_URL: "https://api.example.com" };

  it.each(SETTINGS)("with %s=true refuses /v1, /admin, /sandbox and pages with 503", async (setting) => {
    const { key, accountId } = await createAccount();
    const vars = { ...publicUrl, [setting]: "true" };
    const where = "PUBLIC_URL https://api.example.com is";
    expectRefused(await callWith(vars, "http://localhost/v1/account", key), setting, where);
    expectRefused(
      await callWith(vars, `http://localhost/admin/accounts/${accountId}`, ADMIN_TOKEN),
      setting,
      where,
    );
    expectRefused(
      await callWith(
        vars,
        "http://localhost/sandbox/sessions/0f8fad5b-d9cb-469f-a165-70867728950e/received",
        key,
      ),
      setting,
      where,
    );
    expectRefused(await callWith(vars, "http://localhost/v1/account"), setting, where);
    expectRefused(await callWith(vars, "http://localhost/docs"), setting, where);
    expectRefused(await callWith(vars, "http://localhost/openapi.json"), setting, where);
    expectRefused(await callWith(vars, "http://localhost/link/some-token"), setting, where);
    expectRefused(await callWith(vars, "http://localhost/no/such/path"), setting, where);
  });

  it("names both settings when both are true", async () => {
    const { key } = await createAccount();
    const vars = { ...publicUrl, MEDIA_ALLOW_HTTP_LOCALHOST: "true", WEBHOOK_ALLOW_HTTP_LOCALHOST: "true" };
    expectRefused(
      await callWith(vars, "http://localhost/v1/account", key),
      "MEDIA_ALLOW_HTTP_LOCALHOST and WEBHOOK_ALLOW_HTTP_LOCALHOST",
      "PUBLIC_URL https://api.example.com is",
    );
  });

  it("answers GET /health 503 unavailable in its own shape", async () => {
    const res = await callWith(
      { ...publicUrl, WEBHOOK_ALLOW_HTTP_LOCALHOST: "true" },
      "http://localhost/health",
    );
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: "unavailable",
      code: "service_misconfigured",
      reason:
        "The service is misconfigured: WEBHOOK_ALLOW_HTTP_LOCALHOST is true, which is for local development only; PUBLIC_URL https://api.example.com is not localhost or 127.0.0.1.",
    });
  });

  it("makes readConfig itself refuse, so queue batches, cron runs and alarms refuse too", () => {
    const vars = { ...env, ...publicUrl, MEDIA_ALLOW_HTTP_LOCALHOST: "true" };
    expect(() => readConfig(vars)).toThrow(ConfigError);
    try {
      readConfig(vars);
    } catch (error) {
      expect(error).toMatchObject({ variable: "MEDIA_ALLOW_HTTP_LOCALHOST", status: 503, gateway: false });
    }
  });

  it("serves as usual with both settings false", async () => {
    const { key, accountId } = await createAccount(7);
    const res = await callWith(
      { ...publicUrl, MEDIA_ALLOW_HTTP_LOCALHOST: "false", WEBHOOK_ALLOW_HTTP_LOCALHOST: "false" },
      "https://api.example.com/v1/account",
      key,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { id: accountId, balance: 7 } });
  });
});

describe("a local-development setting where PUBLIC_URL is local", () => {
  it.each([
    ["http://localhost:8787", "MEDIA_ALLOW_HTTP_LOCALHOST"],
    ["http://127.0.0.1:9000", "WEBHOOK_ALLOW_HTTP_LOCALHOST"],
    ["http://LOCALHOST:8787/", "MEDIA_ALLOW_HTTP_LOCALHOST"],
  ])("PUBLIC_URL %s with %s=true: requests work", async (url, setting) => {
    const { key, accountId } = await createAccount(7);
    const vars = {
      PUBLIC_URL: url,
      MEDIA_ALLOW_HTTP_LOCALHOST: "true",
      WEBHOOK_ALLOW_HTTP_LOCALHOST: "false",
      [setting]: "true",
    };
    const account = await callWith(vars, "http://localhost/v1/account", key);
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({ success: true, data: { id: accountId, balance: 7 } });
    const admin = await callWith(vars, `http://localhost/admin/accounts/${accountId}`, ADMIN_TOKEN);
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ data: { account: { id: accountId, balance: 7 } } });
    const health = await callWith(vars, "http://localhost/health");
    expect(health.body).toEqual({ status: "ok", gateway: "sandbox" });
  });
});

describe("a local-development setting without PUBLIC_URL: the request's host decides", () => {
  it.each([
    ["https://chatapp.example.workers.dev/v1/account", "chatapp.example.workers.dev"],
    ["https://api.example.com/v1/account", "api.example.com"],
    ["http://[::1]:8787/v1/account", "[::1]"],
  ])("refuses a request to %s", async (url, host) => {
    const { key } = await createAccount();
    expectRefused(
      await callWith({ WEBHOOK_ALLOW_HTTP_LOCALHOST: "true" }, url, key),
      "WEBHOOK_ALLOW_HTTP_LOCALHOST",
      `PUBLIC_URL is unset and this request's host ${host} is`,
    );
  });

  it.each(["http://localhost:8787/v1/account", "http://127.0.0.1:8787/v1/account"])(
    "serves a request to %s",
    async (url) => {
      const { key, accountId } = await createAccount(7);
      const res = await callWith(
        { MEDIA_ALLOW_HTTP_LOCALHOST: "true", WEBHOOK_ALLOW_HTTP_LOCALHOST: "true" },
        url,
        key,
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, data: { id: accountId, balance: 7 } });
    },
  );
});
