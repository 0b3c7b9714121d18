import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, type ApiResponse, call, createAccount, createSession, expectProblem } from "./helpers";

const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";
const PROBLEM_KEYS = ["code", "detail", "request_id", "status", "success", "title", "type"];

/** Asserts the full problem shape: exactly the RFC 9457 members we promise (plus `errors` when given). */
function expectShape(res: ApiResponse, status: number, code: string, withErrors = false) {
  const problem = expectProblem(res, status, code);
  expect(Object.keys(problem).sort()).toEqual(withErrors ? [...PROBLEM_KEYS, "errors"].sort() : PROBLEM_KEYS);
  expect(res.text).not.toMatch(/\bat .+:\d+:\d+/); // no stack trace
  return problem;
}

const adminPost = (body: unknown, headers: Record<string, string> = {}) =>
  call("POST", "/admin/accounts", { key: ADMIN_TOKEN, body, headers });

describe("X-Request-Id", () => {
  it("echoes a well-formed incoming id on success and on error", async () => {
    const ok = await call("GET", "/health", { headers: { "X-Request-Id": "req-123.abc:XYZ_9" } });
    expect(ok.headers.get("x-request-id")).toBe("req-123.abc:XYZ_9");
    const problem = await call("GET", "/nowhere", { headers: { "X-Request-Id": "trace-42" } });
    expect(problem.headers.get("x-request-id")).toBe("trace-42");
    expect(expectShape(problem, 404, "not_found").request_id).toBe("trace-42");
  });

  const bad: [string, string][] = [
    ["spaces", "has spaces"],
    ["markup", "<script>alert(1)</script>"],
    ["more than 128 characters", "a".repeat(129)],
    ["quotes", '"quoted"'],
    ["an equals sign", "abc=="],
    ["nothing but a blank", " "],
  ];
  for (const [what, value] of bad) {
    it(`replaces an incoming id with ${what} by a new uuid`, async () => {
      const res = await call("GET", "/nowhere", { headers: { "X-Request-Id": value } });
      const id = res.headers.get("x-request-id");
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(expectShape(res, 404, "not_found").request_id).toBe(id);
    });
  }

  it("echoes an id of exactly 128 characters", async () => {
    const id = `${"a".repeat(64)}.${"B".repeat(62)}:`;
    expect(id).toHaveLength(128);
    const res = await call("GET", "/health", { headers: { "X-Request-Id": id } });
    expect(res.headers.get("x-request-id")).toBe(id);
  });

  it("gives each request its own id", async () => {
    const a = await call("GET", "/health");
    const b = await call("GET", "/health");
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"));
  });
});

describe("routing errors", () => {
  it("is 404 not_found for an unknown route", async () => {
    expectShape(await call("GET", "/nowhere"), 404, "not_found");
    expectShape(await call("POST", "/v2/chatapp/sessions", { body: {} }), 404, "not_found");
  });

  it("is 404 not_found for an unknown /v1 route with a valid key", async () => {
    const { key } = await createAccount();
    expectShape(await call("GET", "/v1/chatapp/nothing", { key }), 404, "not_found");
  });

  // Allow lists HEAD wherever GET is routed: Hono answers HEAD with the GET route, headers only.
  it("is 405 method_not_allowed with Allow for a known path and a wrong method", async () => {
    const { key } = await createAccount();
    const res = await call("PUT", "/v1/chatapp/sessions", { key, body: {} });
    const problem = expectShape(res, 405, "method_not_allowed");
    expect(problem.detail).toBe("PUT is not allowed here.");
    expect(res.headers.get("allow")?.split(/,\s*/).sort()).toEqual(["GET", "HEAD", "POST"]);
  });

  it("answers HEAD where GET is routed, as Allow says", async () => {
    const { key } = await createAccount();
    const res = await call("HEAD", "/v1/chatapp/sessions", { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.text).toBe("");
  });

  it("lists the methods of a parameterised path in Allow", async () => {
    const { key } = await createAccount();
    const res = await call("POST", `/v1/chatapp/sessions/${UNKNOWN_ID}/disconnect`, { key });
    expectShape(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("PATCH");
    const item = await call("PATCH", `/v1/chatapp/sessions/${UNKNOWN_ID}`, { key });
    expectShape(item, 405, "method_not_allowed");
    expect(item.headers.get("allow")?.split(/,\s*/).sort()).toEqual(["DELETE", "GET", "HEAD"]);
  });

  it("keeps a route's own 404 a 404, never a 405", async () => {
    const { key } = await createAccount();
    for (const method of ["GET", "DELETE"]) {
      const res = await call(method, `/v1/chatapp/sessions/${UNKNOWN_ID}`, { key });
      expectShape(res, 404, "not_found");
      expect(res.headers.get("allow")).toBeNull();
    }
  });

  it("is 404, without Allow, for a path that no method serves", async () => {
    const res = await call("DELETE", "/nowhere");
    expectShape(res, 404, "not_found");
    expect(res.headers.get("allow")).toBeNull();
  });

  it("is 405 on an admin path too, for HEAD as for GET", async () => {
    const res = await call("GET", "/admin/accounts", { key: ADMIN_TOKEN });
    expectShape(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("POST");
    const head = await call("HEAD", "/admin/accounts", { key: ADMIN_TOKEN });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("POST");
    expect(head.headers.get("content-type")).toBe("application/problem+json");
  });

  // A trailing slash names the same resource as the path without it (routes/router.ts): never a
  // 405 whose Allow lists the method that was used.
  it("routes a path with a trailing slash as the path without it", async () => {
    const { key } = await createAccount();
    const created = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions/", { key });
    expect(created.status).toBe(201);
    const id = created.body.session.id;
    const listed = await call<{ sessions: { id: string }[] }>("GET", "/v1/chatapp/sessions/", { key });
    expect(listed.status).toBe(200);
    expect(listed.body.sessions.map((s) => s.id)).toEqual([id]);
    const shown = await call<{ session: { id: string } }>("GET", `/v1/chatapp/sessions/${id}/`, { key });
    expect(shown.body.session.id).toBe(id);
    const qr = await call<{ qr_code: string }>("GET", `/v1/chatapp/sessions/${id}/qr-code/`, { key });
    expect(qr.body.qr_code).toMatch(/^data:image\/png;base64,/);
    const health = await call("GET", "/health/");
    expect(health.body).toEqual({ status: "ok", gateway: "sandbox" });
    const account = await call("POST", "/admin/accounts/", { key: ADMIN_TOKEN, body: { name: "Slash" } });
    expect(account.status).toBe(201);
  });

  it("answers a wrong method on a trailing-slash path as on the path without it", async () => {
    const { key } = await createAccount();
    for (const path of ["/v1/chatapp/sessions/", `/v1/chatapp/sessions/${UNKNOWN_ID}/disconnect/`]) {
      const res = await call("PUT", path, { key, body: {} });
      expectShape(res, 405, "method_not_allowed");
      expect(res.headers.get("allow")?.split(/,\s*/), path).not.toContain("PUT");
    }
    expectShape(await call("GET", "/admin/accounts/", { key: ADMIN_TOKEN }), 405, "method_not_allowed");
  });

  it("never answers 405 with an Allow that lists the method used", async () => {
    const { key } = await createAccount();
    for (const [method, path] of [
      ["GET", "/v1/chatapp/sessions//"],
      ["POST", "/v1/chatapp/sessions//"],
      ["GET", "/v1/events//"],
      ["GET", `/v1/chatapp/sessions/${UNKNOWN_ID}//`],
    ] as const) {
      const res = await call(method, path, { key, body: method === "POST" ? {} : undefined });
      const allow = res.headers.get("allow")?.split(/,\s*/) ?? [];
      expect(allow, `${method} ${path}`).not.toContain(method);
      expect(res.status, `${method} ${path}`).not.toBe(405);
    }
  });

  it("is 404 not_found for a malformed uuid in a path, never 422 or 500", async () => {
    const { key } = await createAccount();
    for (const id of [
      "not-a-uuid",
      "1",
      "00000000-0000-4000-8000-00000000000g",
      "%27%20OR%201%3D1",
      "x".repeat(5000),
    ]) {
      expectShape(await call("GET", `/v1/chatapp/sessions/${id}`, { key }), 404, "not_found");
      expectShape(await call("GET", `/v1/chatapp/sessions/${id}/qr-code`, { key }), 404, "not_found");
      expectShape(await call("DELETE", `/v1/chatapp/sessions/${id}`, { key }), 404, "not_found");
    }
  });
});

describe("request bodies", () => {
  it("is 415 unsupported_media_type for a body that is not JSON", async () => {
    const res = await adminPost("name=Acme", { "Content-Type": "application/x-www-form-urlencoded" });
    expectShape(res, 415, "unsupported_media_type");
    const text = await adminPost('{"name":"Acme"}', { "Content-Type": "text/plain" });
    expectShape(text, 415, "unsupported_media_type");
  });

  it("is 415 for a body without a Content-Type", async () => {
    const res = await exports.default.fetch(
      new Request("http://localhost/admin/accounts", {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        body: new TextEncoder().encode('{"name":"Acme"}'),
      }),
    );
    const text = await res.text();
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(text)).toMatchObject({ code: "unsupported_media_type", success: false });
  });

  it("accepts a JSON Content-Type with parameters or a +json suffix", async () => {
    const res = await adminPost('{"name":"Acme"}', { "Content-Type": "application/json; charset=utf-8" });
    expect(res.status).toBe(201);
  });

  for (const body of ['{"name":', "{name: 'x'}", "undefined", '{"name":"x"}}']) {
    it(`is 400 invalid_json for ${JSON.stringify(body)}`, async () => {
      expectShape(await adminPost(body), 400, "invalid_json");
    });
  }

  it("is 400 invalid_json on /v1 routes too", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await call("POST", `/sandbox/sessions/${session.id}/scan`, { key, body: "{oops" });
    expectShape(res, 400, "invalid_json");
  });

  it("is 413 payload_too_large for a body over 1 MiB", async () => {
    const big = JSON.stringify({ name: "x".repeat(1024 * 1024) });
    expectShape(await adminPost(big), 413, "payload_too_large");
  });

  it("is 413 for an oversized body streamed without Content-Length", async () => {
    const chunk = new TextEncoder().encode(`"${"y".repeat(64 * 1024)}`);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20) return controller.close();
        sent++;
        controller.enqueue(chunk);
      },
    });
    const res = await exports.default.fetch(
      new Request("http://localhost/admin/accounts", {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body: stream,
      }),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: "payload_too_large", success: false });
  });

  it("passes a streamed body under 1 MiB to the route intact", async () => {
    const name = `Streamed ${"z".repeat(90)}`;
    const bytes = new TextEncoder().encode(JSON.stringify({ name, balance: 3 }));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        // Several chunks, so the limit counts across them.
        for (let i = 0; i < bytes.length; i += 16) controller.enqueue(bytes.slice(i, i + 16));
        controller.close();
      },
    });
    const res = await exports.default.fetch(
      new Request("http://localhost/admin/accounts", {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body: stream,
      }),
    );
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ data: { account: { name, balance: 3 } } });
  });

  it("is 413 before it is 415: an oversized body of another type", async () => {
    const res = await adminPost("x".repeat(1024 * 1024 + 1), { "Content-Type": "text/plain" });
    const problem = expectShape(res, 413, "payload_too_large");
    expect(problem.detail).toBe("Request bodies are limited to 1048576 bytes.");
  });

  it("accepts a body just under 1 MiB (then validates it)", async () => {
    const res = await adminPost({ name: "x".repeat(1000 * 1000) });
    const problem = expectShape(res, 422, "validation_failed", true);
    expect(problem.errors).toMatchObject({ name: [expect.any(String)] });
  });

  it("is 422 validation_failed with errors for unknown fields and wrong types", async () => {
    const res = await adminPost({ name: 7, balance: "lots", owner: "me", nested: { a: 1 } });
    const problem = expectShape(res, 422, "validation_failed", true);
    expect(problem.errors).toEqual({
      name: [expect.any(String)],
      balance: [expect.any(String)],
      owner: ["unknown field"],
      nested: ["unknown field"],
    });
  });

  it("is 422 for JSON that is not an object, reported under `body`", async () => {
    for (const body of ["null", "[]", "42", '"text"', "true"]) {
      const problem = expectShape(await adminPost(body), 422, "validation_failed", true);
      expect(problem.errors).toMatchObject({ body: [expect.any(String)] });
    }
  });

  it("is 422 for a required body that is missing, with or without a JSON Content-Type", async () => {
    for (const res of [
      await call("POST", "/admin/accounts", { key: ADMIN_TOKEN }),
      await adminPost(""),
      await adminPost("  \n"),
    ]) {
      const problem = expectShape(res, 422, "validation_failed", true);
      expect(problem.errors).toMatchObject({ name: [expect.any(String)] });
    }
  });

  it("reports a `__proto__` field as an unknown field, not a 500", async () => {
    const res = await adminPost('{"name":"x","__proto__":{"admin":true}}');
    const problem = expectShape(res, 422, "validation_failed", true);
    const errors = problem.errors as Record<string, unknown>;
    expect(Object.keys(errors)).toEqual(["__proto__"]);
    expect(Object.getOwnPropertyDescriptor(errors, "__proto__")?.value).toEqual(["unknown field"]);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe("odd input never yields a 500 or a non-JSON body", () => {
  it("answers odd query strings normally", async () => {
    const { key } = await createAccount();
    for (const query of [
      "?%zz=1",
      "?a=%E0%A4%A",
      "?filter[status][]=x&&&=&",
      "?limit=-1&limit=abc",
      `?q=${"z".repeat(8000)}`,
      "?%00=%00",
    ]) {
      const res = await call<{ success: boolean; sessions: unknown[] }>(
        "GET",
        `/v1/chatapp/sessions${query}`,
        { key },
      );
      // `limit` is the list's page size: a bad one is a validation failure like any other.
      if (query.startsWith("?limit=")) {
        expectProblem(res, 422, "validation_failed");
        continue;
      }
      expect(res.status, query).toBe(200);
      expect(res.body).toMatchObject({ success: true, sessions: [] });
    }
  });

  it("answers odd paths with problem+json", async () => {
    const { key } = await createAccount();
    for (const path of [
      "/v1/chatapp/sessions/%zz",
      "/v1/chatapp/sessions//qr-code",
      "/v1/%00",
      "/admin/%ff%fe",
    ]) {
      const res = await call("GET", path, { key: path.startsWith("/admin") ? ADMIN_TOKEN : key });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expect(res.headers.get("content-type"), path).toBe("application/problem+json");
      expect(res.body, path).toMatchObject({ success: false, status: res.status });
    }
  });

  it("survives huge strings and deep nesting in a body", async () => {
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    for (const body of [
      { name: "x".repeat(500_000) },
      `{"name":"x","balance":${deep}}`,
      { name: "x", balance: 1e308 },
      { name: "\u0000\uffff\ud800" },
    ]) {
      const res = await adminPost(body);
      expect(res.status).toBeLessThan(500);
      expect(res.headers.get("content-type")).toMatch(/json/);
    }
  });
});

describe("API reference", () => {
  it("serves an OpenAPI 3.1 document listing every public route", async () => {
    const res = await call<{
      openapi: string;
      info: { title: string };
      paths: Record<string, Record<string, unknown>>;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    }>("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.info.title).toEqual(expect.any(String));
    const paths = res.body.paths;
    const methods = (path: string) => Object.keys(paths[path] ?? {}).sort();
    expect(methods("/v1/chatapp/sessions")).toEqual(["get", "post"]);
    expect(methods("/v1/chatapp/sessions/{id}")).toEqual(["delete", "get"]);
    expect(methods("/v1/chatapp/sessions/{id}/qr-code")).toEqual(["get"]);
    expect(methods("/v1/chatapp/sessions/{id}/disconnect")).toEqual(["patch"]);
    expect(methods("/v1/chatapp/sessions/{id}/reconnect")).toEqual(["patch"]);
    expect(methods("/v1/chatapp/sessions/{id}/pairing-code")).toEqual(["post"]);
    expect(methods("/v1/chatapp/sessions/{id}/gateway")).toEqual(["get"]);
    expect(methods("/gateway/waha/events")).toEqual(["post"]);
    expect(methods("/gateway/evolution/events")).toEqual(["post"]);
    expect(methods("/admin/accounts")).toEqual(["post"]);
    expect(methods("/admin/accounts/{id}")).toEqual(["get", "patch"]);
    expect(methods("/admin/accounts/{id}/keys")).toEqual(["get", "post"]);
    expect(methods("/admin/accounts/{id}/credits")).toEqual(["post"]);
    expect(methods("/admin/keys/{id}")).toEqual(["delete"]);
    expect(methods("/sandbox/sessions/{id}/scan")).toEqual(["post"]);
    expect(methods("/sandbox/sessions/{id}/drop")).toEqual(["post"]);
    expect(methods("/sandbox/sessions/{id}/ban")).toEqual(["post"]);
    expect(methods("/sandbox/pair/{token}")).toEqual(["get", "post"]);
    expect(methods("/v1/chatapp/sessions/{id}/live")).toEqual(["get"]);
    expect(methods("/v1/chatapp/sessions/{id}/link-url")).toEqual(["delete", "post"]);
    expect(methods("/link/{token}")).toEqual(["get"]);
    expect(methods("/link/{token}/session")).toEqual(["get"]);
    expect(methods("/link/{token}/pairing-code")).toEqual(["post"]);
    expect(methods("/link/{token}/reconnect")).toEqual(["post"]);
    expect(Object.keys(res.body.components.securitySchemes).sort()).toEqual([
      "AdminToken",
      "ApiKey",
      "LinkToken",
      "WebhookSignature",
    ]);
    expect(res.body.components.schemas).toHaveProperty("Session");
    expect(res.body.components.schemas).toHaveProperty("Problem");
  });

  it("serves an HTML reference at /docs", async () => {
    const res = await call("GET", "/docs", { headers: { Accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.text).toMatch(/<html/i);
    expect(res.text).toContain("/openapi.json");
  });

  it("loads the reference's script from this service, and nothing from another host", async () => {
    const res = await call("GET", "/docs", { headers: { Accept: "text/html" } });
    const scripts = [...res.text.matchAll(/<script\b[^>]*\bsrc="([^"]*)"/g)].map((m) => m[1]);
    expect(scripts).toEqual([expect.stringMatching(/^\/vendor\/scalar\/api-reference-[\d.]+\.js$/)]);
    // No absolute or protocol-relative URL anywhere in the page: a CDN, a font host, an import.
    expect(res.text).not.toMatch(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    expect(res.text).not.toMatch(/\bimport\b/);
    expect(res.text).toContain('"withDefaultFonts": false');
    expect(res.text).toContain('"telemetry": false');
  });

  it("sends a Content-Security-Policy whose scripts need this response's nonce, and forbids framing", async () => {
    const res = await call("GET", "/docs", { headers: { Accept: "text/html" } });
    const policy = res.headers.get("content-security-policy") ?? "";
    const directives = Object.fromEntries(
      policy.split(";").map((directive) => {
        const [name = "", ...values] = directive.trim().split(/\s+/);
        return [name, values.join(" ")];
      }),
    );
    const nonce = /'nonce-([A-Za-z0-9+/=_-]{16,})'/.exec(directives["script-src"] ?? "")?.[1];
    expect(nonce).toBeDefined();
    expect(directives).toEqual({
      "default-src": "'none'",
      "script-src": `'nonce-${nonce}'`,
      "style-src": "'self' 'unsafe-inline'",
      "img-src": "'self' data:",
      "font-src": "'self' data:",
      "connect-src": "'self'",
      "form-action": "'none'",
      "base-uri": "'none'",
      "frame-ancestors": "'none'",
    });
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    // Every script tag carries the nonce, and no other response gets the same one.
    const scripts = [...res.text.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts).toHaveLength(2);
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    const again = await call("GET", "/docs", { headers: { Accept: "text/html" } });
    expect(again.headers.get("content-security-policy")).not.toContain(nonce);
  });
});
