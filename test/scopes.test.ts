import { beforeAll, describe, expect, it } from "vitest";
import { grants, type OperationScope, SCOPES, type Scope } from "../src/keys/scopes";
import { ADMIN_TOKEN, call, createAccount, expectProblem } from "./helpers";

// Every scope on every route, generated from the API document: each operation that takes an API
// key must name one scope, a key without it gets 403 `insufficient_scope` naming it, and a key
// holding only it gets past the check. A new route without a scope fails the first test.

interface Operation {
  method: string;
  path: string;
  operationId: string;
  security?: Record<string, string[]>[];
}

const OPERATION_SCOPES = SCOPES.filter((s): s is OperationScope => s !== "*");
const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";
const PATH_VALUES: Record<string, string> = {
  id: UNKNOWN_ID,
  session_id: UNKNOWN_ID,
  event_id: `evt_${"0".repeat(32)}`,
  to_number: "%2B14155552671",
};

let operations: Operation[] = [];

beforeAll(async () => {
  const doc = await call<{ paths: Record<string, Record<string, Omit<Operation, "method" | "path">>> }>(
    "GET",
    "/openapi.json",
  );
  operations = Object.entries(doc.body.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ ...operation, method, path })),
  );
});

/** The scopes an operation's ApiKey requirement names. */
const scopesOf = (operation: Operation) =>
  (operation.security ?? []).flatMap((requirement) => requirement.ApiKey ?? []);

const keyed = () => operations.filter((operation) => scopesOf(operation).length > 0);

async function keyWith(accountId: string, scopes: Scope[]): Promise<string> {
  const res = await call<{ data: { api_key: string } }>("POST", `/admin/accounts/${accountId}/keys`, {
    key: ADMIN_TOKEN,
    body: { name: "scoped", scopes },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.api_key;
}

function request(operation: Operation, key: string) {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => PATH_VALUES[name] ?? UNKNOWN_ID);
  const body = ["post", "put", "patch"].includes(operation.method) ? {} : undefined;
  return call(operation.method.toUpperCase(), path, { key, body });
}

describe("scopes on every route", () => {
  it("every operation under /v1 and the sandbox's session routes names exactly one known scope", () => {
    const guarded = operations.filter(
      (o) => o.path.startsWith("/v1/") || o.path.startsWith("/sandbox/sessions/"),
    );
    expect(guarded.length).toBeGreaterThan(50);
    const wrong = guarded
      .filter((o) => {
        const scopes = scopesOf(o);
        return scopes.length !== 1 || !OPERATION_SCOPES.includes(scopes[0] as OperationScope);
      })
      .map((o) => `${o.method} ${o.path}: ${JSON.stringify(o.security)}`);
    expect(wrong).toEqual([]);
    // Every scope guards some operation.
    expect(new Set(keyed().flatMap(scopesOf))).toEqual(new Set(OPERATION_SCOPES));
  });

  it("refuses each operation with 403 insufficient_scope to a key holding every other scope", async () => {
    const { accountId } = await createAccount(1);
    const wrong: string[] = [];
    for (const operation of keyed()) {
      const scope = scopesOf(operation)[0] as OperationScope;
      const others = OPERATION_SCOPES.filter((s) => !grants([s], scope));
      const res = await request(operation, await keyWith(accountId, others));
      const body = res.body as { code?: string; scope?: string };
      if (res.status !== 403 || body.code !== "insufficient_scope" || body.scope !== scope)
        wrong.push(`${operation.operationId}: ${res.status} ${res.text.slice(0, 120)}`);
      else expectProblem(res, 403, "insufficient_scope");
      if (res.status === 403 && !res.headers.get("www-authenticate")?.includes('error="insufficient_scope"'))
        wrong.push(`${operation.operationId}: no WWW-Authenticate`);
    }
    expect(wrong).toEqual([]);
  });

  it("lets a key holding only the operation's scope past the check", async () => {
    const { accountId } = await createAccount(1);
    const byScope = new Map<Scope, string>();
    const refused: string[] = [];
    for (const operation of keyed()) {
      const scope = scopesOf(operation)[0] as OperationScope;
      if (!byScope.has(scope)) byScope.set(scope, await keyWith(accountId, [scope]));
      const res = await request(operation, byScope.get(scope) ?? "");
      if (res.status === 403 || res.status === 401) refused.push(`${operation.operationId}: ${res.status}`);
    }
    expect(refused).toEqual([]);
  });

  it("grants read with write, otp:read with otp:send and otp:verify, and nothing with messages:send", () => {
    expect(grants(["sessions:write"], "sessions:read")).toBe(true);
    expect(grants(["sessions:read"], "sessions:write")).toBe(false);
    expect(grants(["otp:verify"], "otp:read")).toBe(true);
    expect(grants(["otp:verify"], "otp:send")).toBe(false);
    expect(grants(["messages:send"], "messages:read")).toBe(false);
    expect(grants(["*"], "keys:write")).toBe(true);
    expect(grants(["keys:write", "sessions:write"], "*")).toBe(false);
  });
});
