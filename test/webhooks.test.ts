import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import { EVENT_TYPES } from "../src/events/catalogue";
import { webhookRoutes } from "../src/routes/webhooks/webhooks.index";
import { withOpenSecrets } from "../src/webhooks/secret";
import { accountD1, everyAccountD1 } from "./databases";
import { type ApiResponse, call, createAccount, expectProblem, TIMESTAMP } from "./helpers";

/** Standard Webhooks: `whsec_` + base64 of 32 bytes (43 characters and one `=` of padding). */
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";

interface Endpoint {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  events: string[] | null;
  enabled: boolean;
  disabled_reason: string | null;
  secret_prefix: string;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  url_set_by: string | null;
}

type EndpointWithSecret = Endpoint & { secret: string };

interface Row {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  events: string | null;
  enabled: number;
  disabled_reason: string | null;
  secret: string;
  secret_prefix: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  created_at: number;
  updated_at: number;
  created_by: string | null;
  url_set_by: string | null;
  /** The small number its deliveries are keyed by (src/db/schema/events.ts). */
  number: number;
}

let key: string;
let accountId: string;

beforeEach(async () => {
  ({ key, accountId } = await createAccount());
});

function post(body: unknown, apiKey = key, headers: Record<string, string> = {}) {
  return call<{ success: boolean; data: EndpointWithSecret }>("POST", "/v1/webhooks", {
    key: apiKey,
    body,
    headers,
  });
}

async function create(body: Record<string, unknown> = {}, apiKey = key): Promise<EndpointWithSecret> {
  const res = await post({ url: "https://example.com/hooks", ...body }, apiKey);
  expect(res.status).toBe(201);
  return res.body.data;
}

function show(id: string, apiKey = key) {
  return call<{ success: boolean; data: Endpoint }>("GET", `/v1/webhooks/${id}`, { key: apiKey });
}

function patch(id: string, body: unknown, apiKey = key) {
  return call<{ success: boolean; data: Endpoint }>("PATCH", `/v1/webhooks/${id}`, { key: apiKey, body });
}

function rotate(id: string, body?: unknown, apiKey = key) {
  return call<{ success: boolean; data: EndpointWithSecret }>("POST", `/v1/webhooks/${id}/rotate-secret`, {
    key: apiKey,
    body,
  });
}

/** The id of the account's first key (`key`, made with the account). */
async function defaultKeyId(): Promise<string | undefined> {
  const found = await (await accountD1(accountId))
    .prepare("SELECT id FROM api_keys WHERE account_id = ? AND name = 'default'")
    .bind(accountId)
    .first<{ id: string }>();
  return found?.id;
}

/** Endpoint `id`'s row as D1 stores it (in account `owner`'s database): its secrets sealed. */
async function storedRow(id: string, owner = accountId): Promise<Row | null> {
  return (await accountD1(owner))
    .prepare("SELECT * FROM webhook_endpoints WHERE id = ?")
    .bind(id)
    .first<Row>();
}

/** Endpoint `id`'s row with its secrets opened (src/webhooks/secret.ts), as signing reads them. */
async function row(id: string, owner = accountId): Promise<Row | null> {
  const stored = await storedRow(id, owner);
  if (!stored) return null;
  const opened = await withOpenSecrets(env, { ...stored, previousSecret: stored.previous_secret });
  return { ...stored, secret: opened.secret, previous_secret: opened.previousSecret };
}

/** Asserts a 422 `validation_failed` whose `errors` has exactly these keys; returns `errors`. */
function expectFieldErrors(res: ApiResponse<unknown>, fields: string[]): Record<string, string[]> {
  const problem = expectProblem(res, 422, "validation_failed");
  const errors = problem.errors as Record<string, string[]>;
  expect(Object.keys(errors).sort()).toEqual([...fields].sort());
  return errors;
}

/** Asserts that no secret in full (current or previous) appears in a response. */
function expectNoSecret(res: ApiResponse<unknown>, ...secrets: string[]): void {
  expect(res.text).not.toMatch(/"secret"/);
  expect(res.text).not.toMatch(/previous_secret"/);
  for (const secret of secrets) expect(res.text).not.toContain(secret);
}

describe("POST /v1/webhooks", () => {
  it("creates an endpoint for every event type and shows its Standard Webhooks secret once", async () => {
    const before = Date.now();
    const res = await post({ url: "https://example.com/hooks" });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const { secret, ...endpoint } = res.body.data;
    expect(res.body.success).toBe(true);
    expect(secret).toMatch(SECRET);
    expect(atob(secret.slice("whsec_".length))).toHaveLength(32);
    expect(endpoint).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      account_id: accountId,
      url: "https://example.com/hooks",
      description: null,
      events: null,
      enabled: true,
      disabled_reason: null,
      secret_prefix: secret.slice(0, 14),
      previous_secret_expires_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      created_by: await defaultKeyId(),
      url_set_by: await defaultKeyId(),
    });
    expect(endpoint.created_at).toBe(endpoint.updated_at);

    const stored = await row(endpoint.id);
    expect(stored).toEqual({
      id: endpoint.id,
      account_id: accountId,
      url: "https://example.com/hooks",
      description: null,
      events: null,
      enabled: 1,
      disabled_reason: null,
      secret,
      secret_prefix: secret.slice(0, 14),
      previous_secret: null,
      previous_secret_expires_at: null,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      created_by: await defaultKeyId(),
      url_set_by: await defaultKeyId(),
      number: expect.any(Number),
    });
    expect(stored?.created_at).toBeGreaterThanOrEqual(before);
    expect(stored?.created_at).toBeLessThanOrEqual(Date.now());

    // Shown once: every other response has the prefix only.
    const shown = await show(endpoint.id);
    expect(shown.body).toEqual({ success: true, data: endpoint });
    expectNoSecret(shown, secret);
  });

  it("stores the chosen events, description and enabled flag", async () => {
    const created = await create({
      url: "https://hooks.example.com/in?tenant=7",
      events: ["message.read", "session.status_changed"],
      description: "Order service",
      enabled: false,
    });
    expect(created).toMatchObject({
      url: "https://hooks.example.com/in?tenant=7",
      events: ["message.read", "session.status_changed"],
      description: "Order service",
      enabled: false,
      disabled_reason: null,
    });
    const stored = await row(created.id);
    expect(JSON.parse(stored?.events ?? "null")).toEqual(["message.read", "session.status_changed"]);
    expect(stored).toMatchObject({ description: "Order service", enabled: 0 });
  });

  it("makes a different secret for every endpoint", async () => {
    const a = await create();
    const b = await create();
    expect(a.secret).not.toBe(b.secret);
    expect(a.id).not.toBe(b.id);
  });

  it("accepts every catalogue type at once, and a description of 500 characters", async () => {
    const created = await create({ events: [...EVENT_TYPES], description: "d".repeat(500) });
    expect(created.events).toEqual([...EVENT_TYPES]);
    expect(created.description).toHaveLength(500);
  });

  describe("validation", () => {
    it("requires url", async () => {
      expectFieldErrors(await post({}), ["url"]);
      expectFieldErrors(await post({ url: null }), ["url"]);
      expectFieldErrors(await post({ url: 42 }), ["url"]);
    });

    it("refuses an unknown event type, naming its position", async () => {
      const errors = expectFieldErrors(
        await post({ url: "https://example.com/h", events: ["message.read", "message.exploded"] }),
        ["events.1"],
      );
      expect(errors["events.1"]?.[0]).toMatch(/message\.sent/);
    });

    it("refuses webhook.test, which is not an event of the catalogue", async () => {
      expectFieldErrors(await post({ url: "https://example.com/h", events: ["webhook.test"] }), ["events.0"]);
    });

    it("refuses duplicate event types", async () => {
      const errors = expectFieldErrors(
        await post({ url: "https://example.com/h", events: ["message.read", "message.read"] }),
        ["events"],
      );
      expect(errors.events).toEqual(["must not repeat an event type"]);
    });

    it("refuses an empty list, more entries than types, and a string", async () => {
      expectFieldErrors(await post({ url: "https://example.com/h", events: [] }), ["events"]);
      expectFieldErrors(
        await post({ url: "https://example.com/h", events: [...EVENT_TYPES, "message.sent"] }),
        ["events"],
      );
      expectFieldErrors(await post({ url: "https://example.com/h", events: "message.sent" }), ["events"]);
    });

    it("refuses a description over 500 characters, a non-boolean enabled and unknown fields", async () => {
      expectFieldErrors(await post({ url: "https://example.com/h", description: "d".repeat(501) }), [
        "description",
      ]);
      expectFieldErrors(await post({ url: "https://example.com/h", enabled: "yes" }), ["enabled"]);
      expectFieldErrors(await post({ url: "https://example.com/h", secret: "whsec_mine" }), ["secret"]);
    });

    it("reports every bad field at once and stores nothing", async () => {
      expectFieldErrors(await post({ url: "http://example.com/h", events: ["nope"], description: 5 }), [
        "url",
        "events.0",
        "description",
      ]);
      const listed = await call<{ data: unknown[] }>("GET", "/v1/webhooks", { key });
      expect(listed.body.data).toEqual([]);
    });
  });

  describe("url is a public https URL (SSRF)", () => {
    const refused: [string, string][] = [
      ["not a URL", "not a url"],
      ["a relative URL", "/hooks"],
      ["http", "http://example.com/hooks"],
      ["ftp", "ftp://example.com/hooks"],
      ["credentials", "https://user:secret@example.com/hooks"],
      ["a user name only", "https://user@example.com/hooks"],
      ["more than 2,048 characters", `https://example.com/${"a".repeat(2048)}`],
      ["localhost", "https://localhost/hooks"],
      ["localhost with a port", "https://localhost:8443/hooks"],
      ["a .localhost name", "https://api.localhost/hooks"],
      ["127.0.0.1", "https://127.0.0.1/hooks"],
      ["127.1 (short IPv4)", "https://127.1/hooks"],
      ["2130706433 (decimal IPv4)", "https://2130706433/"],
      ["0177.0.0.1 (octal IPv4)", "https://0177.0.0.1/"],
      ["0x7f000001 (hex IPv4)", "https://0x7f000001/"],
      ["0.0.0.0", "https://0.0.0.0/hooks"],
      ["[::1]", "https://[::1]/hooks"],
      ["[::ffff:127.0.0.1] (IPv4-mapped loopback)", "https://[::ffff:127.0.0.1]/hooks"],
      ["10.x", "https://10.1.2.3/hooks"],
      ["172.16.x", "https://172.16.0.1/hooks"],
      ["172.31.x", "https://172.31.255.254/hooks"],
      ["192.168.x", "https://192.168.1.20/hooks"],
      ["100.64.x (carrier-grade NAT)", "https://100.64.0.1/hooks"],
      ["169.254.169.254 (metadata)", "https://169.254.169.254/latest/meta-data/"],
      ["[fd00::1] (unique local, fd00::/8)", "https://[fd00::1]/hooks"],
      ["[fdab:cdef::1] (unique local)", "https://[fdab:cdef::1]/hooks"],
      ["[fe80::1] (link local)", "https://[fe80::1]/hooks"],
      ["metadata.google.internal", "https://metadata.google.internal/computeMetadata/v1/"],
      ["a .internal name", "https://db.corp.internal/hooks"],
      ["a .local name", "https://printer.local/hooks"],
      ["a bare single-label host", "https://intranet/hooks"],
      ["localhost percent-encoded", "https://%6c%6f%63%61%6c%68%6f%73%74/hooks"],
      ["[::] (unspecified)", "https://[::]/hooks"],
      ["NAT64 of loopback", "https://[64:ff9b::7f00:1]/hooks"],
    ];

    it.each(refused)("refuses %s on create", async (_name, url) => {
      expectFieldErrors(await post({ url }), ["url"]);
    });

    it.each(refused)("refuses %s on update, leaving the endpoint as it was", async (_name, url) => {
      const created = await create();
      expectFieldErrors(await patch(created.id, { url }), ["url"]);
      expect((await row(created.id))?.url).toBe("https://example.com/hooks");
    });

    it("says why", async () => {
      expect(expectFieldErrors(await post({ url: "http://example.com/h" }), ["url"]).url).toEqual([
        "must use https",
      ]);
      expect(expectFieldErrors(await post({ url: "https://169.254.169.254/" }), ["url"]).url?.[0]).toMatch(
        /^must not point at a linkLocal address$/,
      );
      expect(expectFieldErrors(await post({ url: "https://u:p@example.com/" }), ["url"]).url).toEqual([
        "must not contain credentials",
      ]);
    });

    it("accepts public hosts, ports, IPs, paths and queries of up to 2,048 characters", async () => {
      for (const url of [
        "https://example.com",
        "https://hooks.example.com:8443/in/v1?token=abc#frag",
        "https://93.184.215.14/hooks",
        "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hooks",
        `https://example.com/${"a".repeat(2048 - "https://example.com/".length)}`,
      ]) {
        expect((await create({ url })).url).toBe(url);
      }
    });

    it("refuses http://localhost and http://127.0.0.1 while WEBHOOK_ALLOW_HTTP_LOCALHOST is off (the default)", async () => {
      for (const url of ["http://localhost:3000/hooks", "http://127.0.0.1:3000/hooks", "http://localhost"]) {
        expect(expectFieldErrors(await post({ url }), ["url"]).url).toEqual(["must use https"]);
      }
    });
  });

  describe("WEBHOOK_ALLOW_HTTP_LOCALHOST", () => {
    /** Calls the app with the test bindings plus `WEBHOOK_ALLOW_HTTP_LOCALHOST`. */
    async function callWith(allow: string, method: string, path: string, body?: unknown) {
      const ctx = createExecutionContext();
      const res = await createApp().request(
        `http://localhost${path}`,
        {
          method,
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        },
        { ...env, WEBHOOK_ALLOW_HTTP_LOCALHOST: allow },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }

    it.each([
      "http://localhost/hooks",
      "http://localhost:3000/hooks",
      "http://127.0.0.1:8080/",
      "http://127.0.0.1",
      "HTTP://LOCALHOST:3000/hooks",
    ])("when true, accepts %s", async (url) => {
      const res = await callWith("true", "POST", "/v1/webhooks", { url });
      expect(res.status).toBe(201);
      const data = res.body.data as EndpointWithSecret;
      expect(data.secret).toMatch(SECRET);
      expect((await row(data.id))?.url).toBe(url);
    });

    it("when true, accepts it on update too", async () => {
      const created = await create();
      const res = await callWith("true", "PATCH", `/v1/webhooks/${created.id}`, {
        url: "http://localhost:3000/in",
      });
      expect(res.status).toBe(200);
      expect((res.body.data as Endpoint).url).toBe("http://localhost:3000/in");
    });

    it.each([
      ["https://localhost/hooks", "https to localhost"],
      ["http://[::1]:3000/", "[::1]"],
      ["http://127.0.0.2:3000/", "another loopback address"],
      ["http://2130706433:3000/", "127.0.0.1 in decimal"],
      ["http://0177.0.0.1/", "127.0.0.1 in octal"],
      ["http://localhost.:3000/", "localhost with a trailing dot"],
      ["http://localhost.example.com/", "a name starting with localhost"],
      ["http://127.0.0.1.nip.io/", "a name starting with 127.0.0.1"],
      ["http://user:pw@localhost:3000/", "credentials"],
      ["http://localhost:3000@example.com/", "localhost as a user name"],
      ["http://10.0.0.1/", "a private address"],
      ["http://example.com/", "a public host over http"],
    ])("when true, still refuses %s (%s)", async (url) => {
      const res = await callWith("true", "POST", "/v1/webhooks", { url });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: "validation_failed", errors: { url: [expect.any(String)] } });
    });

    it("when false, refuses http://localhost", async () => {
      const res = await callWith("false", "POST", "/v1/webhooks", { url: "http://localhost:3000/hooks" });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: "validation_failed", errors: { url: ["must use https"] } });
    });

    it("any other value fails the request as a misconfiguration", async () => {
      const res = await callWith("yes", "GET", "/v1/webhooks");
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ code: "service_misconfigured" });
      expect(String(res.body.detail)).toContain("WEBHOOK_ALLOW_HTTP_LOCALHOST");
    });
  });

  describe("at most 10 endpoints per account", () => {
    it("refuses the 11th with 409 webhook_endpoint_limit, and accepts one again after a delete", async () => {
      const created: EndpointWithSecret[] = [];
      for (let i = 0; i < 10; i++) created.push(await create({ description: `#${i}` }));
      const eleventh = await post({ url: "https://example.com/eleven" });
      const problem = expectProblem(eleventh, 409, "webhook_endpoint_limit");
      expect(problem.title).toBe("Webhook endpoint limit reached");
      expect(problem.detail).toMatch(/at most 10/);
      const count = await (await accountD1(accountId))
        .prepare("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE account_id = ?")
        .bind(accountId)
        .first<{ n: number }>();
      expect(count?.n).toBe(10);

      // The limit is per account.
      const other = await createAccount();
      await create({}, other.key);

      const first = created[0] as EndpointWithSecret;
      expect((await call("DELETE", `/v1/webhooks/${first.id}`, { key })).status).toBe(204);
      expect((await create({ url: "https://example.com/eleven" })).url).toBe("https://example.com/eleven");
    });

    it("holds under concurrent creates", async () => {
      for (let i = 0; i < 8; i++) await create();
      const results = await Promise.all(
        Array.from({ length: 5 }, () => post({ url: "https://example.com/race" })),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(2);
      for (const r of results.filter((r) => r.status !== 201))
        expectProblem(r, 409, "webhook_endpoint_limit");
      const listed = await call<{ data: Endpoint[] }>("GET", "/v1/webhooks", { key });
      expect(listed.body.data).toHaveLength(10);
    });
  });

  describe("Idempotency-Key", () => {
    it("replays the first response, secret included, and creates one endpoint", async () => {
      const body = { url: "https://example.com/once", events: ["otp.verified"] };
      const first = await post(body, key, { "Idempotency-Key": "hook-1" });
      expect(first.status).toBe(201);
      const again = await post(body, key, { "Idempotency-Key": "hook-1" });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      const listed = await call<{ data: Endpoint[] }>("GET", "/v1/webhooks", { key });
      expect(listed.body.data.map((e) => e.id)).toEqual([first.body.data.id]);
    });

    it("refuses the key with another body", async () => {
      await post({ url: "https://example.com/a" }, key, { "Idempotency-Key": "hook-2" });
      expectProblem(
        await post({ url: "https://example.com/b" }, key, { "Idempotency-Key": "hook-2" }),
        422,
        "idempotency_key_reused",
      );
    });

    it("replays a refusal at the limit as well", async () => {
      for (let i = 0; i < 10; i++) await create();
      const body = { url: "https://example.com/full" };
      expectProblem(await post(body, key, { "Idempotency-Key": "hook-3" }), 409, "webhook_endpoint_limit");
      const again = await post(body, key, { "Idempotency-Key": "hook-3" });
      expect(again.status).toBe(409);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toMatchObject({ code: "webhook_endpoint_limit", success: false });
    });
  });
});

describe("GET /v1/webhooks", () => {
  it("lists the account's endpoints newest first, without secrets", async () => {
    const a = await create({ url: "https://a.example.com/" });
    const b = await create({ url: "https://b.example.com/" });
    const c = await create({ url: "https://c.example.com/" });
    const other = await createAccount();
    await create({ url: "https://other.example.com/" }, other.key);

    const res = await call<{ success: boolean; data: Endpoint[] }>("GET", "/v1/webhooks", { key });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const strip = ({ secret: _s, ...endpoint }: EndpointWithSecret): Endpoint => endpoint;
    expect(res.body.data).toEqual([strip(c), strip(b), strip(a)]);
    expectNoSecret(res, a.secret, b.secret, c.secret);
  });

  it("is an empty list for an account without endpoints", async () => {
    const res = await call<{ success: boolean; data: Endpoint[] }>("GET", "/v1/webhooks", { key });
    expect(res.body).toEqual({ success: true, data: [] });
  });
});

describe("GET /v1/webhooks/{id}", () => {
  it("is 404 for an unknown or malformed id", async () => {
    expectProblem(await show(UNKNOWN_ID), 404, "not_found");
    expectProblem(await show("not-a-uuid"), 404, "not_found");
  });
});

describe("PATCH /v1/webhooks/{id}", () => {
  it("changes the given fields only, and moves updated_at", async () => {
    const created = await create({ events: ["message.sent"], description: "first" });
    const res = await patch(created.id, {
      url: "https://new.example.com/in",
      events: ["otp.verified", "otp.failed"],
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const { secret, ...before } = created;
    expect(res.body.data).toEqual({
      ...before,
      url: "https://new.example.com/in",
      events: ["otp.verified", "otp.failed"],
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect(res.body.data.updated_at > created.updated_at).toBe(true);
    expectNoSecret(res, secret);

    const stored = await row(created.id);
    expect(stored).toMatchObject({
      url: "https://new.example.com/in",
      events: JSON.stringify(["otp.verified", "otp.failed"]),
      description: "first",
      enabled: 1,
      secret,
    });
    expect((await show(created.id)).body.data).toEqual(res.body.data);
  });

  it("records as url_set_by the key that points the endpoint elsewhere, and only then", async () => {
    const created = await create({ events: ["message.sent"] });
    const made = await call<{ data: { key: { id: string }; api_key: string } }>("POST", "/v1/api-keys", {
      key,
      body: { name: "hooks", scopes: ["webhooks:write", "messages:read"] },
    });
    const other = made.body.data;
    // The same URL, a description, turning it off and on: not a re-pointing.
    const same = await patch(
      created.id,
      { url: created.url, description: "x", enabled: false },
      other.api_key,
    );
    expect(same.body.data).toMatchObject({ created_by: created.created_by, url_set_by: created.created_by });
    const moved = await patch(created.id, { url: "https://elsewhere.example.com/in" }, other.api_key);
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ created_by: created.created_by, url_set_by: other.key.id });
    expect(await row(created.id)).toMatchObject({ created_by: created.created_by, url_set_by: other.key.id });
  });

  it("clears description and restores every event type with null", async () => {
    const created = await create({ events: ["message.sent"], description: "first" });
    const res = await patch(created.id, { events: null, description: null });
    expect(res.body.data).toMatchObject({ events: null, description: null });
    expect(await row(created.id)).toMatchObject({ events: null, description: null });
  });

  it("turns the endpoint off and on; on clears disabled_reason", async () => {
    const created = await create();
    const off = await patch(created.id, { enabled: false });
    expect(off.body.data).toMatchObject({ enabled: false, disabled_reason: null });

    // As delivery does when an endpoint answers 410 Gone.
    await (await accountD1(accountId))
      .prepare("UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ? WHERE id = ?")
      .bind("endpoint answered 410 Gone", created.id)
      .run();
    expect((await show(created.id)).body.data).toMatchObject({
      enabled: false,
      disabled_reason: "endpoint answered 410 Gone",
    });
    // Another change leaves the reason alone.
    expect((await patch(created.id, { description: "x" })).body.data.disabled_reason).toBe(
      "endpoint answered 410 Gone",
    );

    const on = await patch(created.id, { enabled: true });
    expect(on.body.data).toMatchObject({ enabled: true, disabled_reason: null });
    expect(await row(created.id)).toMatchObject({ enabled: 1, disabled_reason: null });
  });

  it("with an empty body changes only updated_at", async () => {
    const created = await create();
    const res = await patch(created.id, {});
    expect(res.status).toBe(200);
    const { secret: _secret, ...before } = created;
    expect(res.body.data).toEqual({ ...before, updated_at: expect.stringMatching(TIMESTAMP) });
    expect(res.body.data.updated_at > created.updated_at).toBe(true);
  });

  it("validates like create, and refuses the secret and other unknown fields", async () => {
    const created = await create();
    expectFieldErrors(await patch(created.id, { events: ["message.exploded"] }), ["events.0"]);
    expectFieldErrors(await patch(created.id, { events: ["otp.failed", "otp.failed"] }), ["events"]);
    expectFieldErrors(await patch(created.id, { description: "d".repeat(501) }), ["description"]);
    expectFieldErrors(await patch(created.id, { enabled: null }), ["enabled"]);
    expectFieldErrors(await patch(created.id, { url: null }), ["url"]);
    expectFieldErrors(await patch(created.id, { secret: "whsec_mine", disabled_reason: null }), [
      "secret",
      "disabled_reason",
    ]);
    const stored = await row(created.id);
    expect(stored).toMatchObject({ url: "https://example.com/hooks", secret: created.secret, events: null });
  });

  it("is 404 for an unknown id, before looking at the fields", async () => {
    expectProblem(await patch(UNKNOWN_ID, { enabled: true }), 404, "not_found");
    expectProblem(await patch(UNKNOWN_ID, { url: "http://localhost/" }), 404, "not_found");
  });
});

describe("DELETE /v1/webhooks/{id}", () => {
  it("deletes the endpoint for good: 204, then 404 everywhere", async () => {
    const created = await create();
    const res = await call("DELETE", `/v1/webhooks/${created.id}`, { key });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(await row(created.id)).toBeNull();
    expectProblem(await show(created.id), 404, "not_found");
    expectProblem(await call("DELETE", `/v1/webhooks/${created.id}`, { key }), 404, "not_found");
    expect((await call<{ data: Endpoint[] }>("GET", "/v1/webhooks", { key })).body.data).toEqual([]);
  });
});

describe("POST /v1/webhooks/{id}/rotate-secret", () => {
  it("makes a new secret and keeps the old one signing for 24 hours, shown nowhere", async () => {
    const created = await create();
    const before = Date.now();
    const res = await rotate(created.id);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const { secret, ...endpoint } = res.body.data;
    expect(secret).toMatch(SECRET);
    expect(secret).not.toBe(created.secret);
    expect(res.text).not.toContain(created.secret);
    expect(endpoint).toMatchObject({
      id: created.id,
      secret_prefix: secret.slice(0, 14),
      previous_secret_expires_at: expect.stringMatching(TIMESTAMP),
    });
    expect(endpoint.updated_at > created.updated_at).toBe(true);

    const stored = await row(created.id);
    expect(stored).toMatchObject({ secret, previous_secret: created.secret });
    const expiresAt = stored?.previous_secret_expires_at ?? 0;
    expect(expiresAt).toBeGreaterThanOrEqual(before + DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + DAY_MS);
    expect(Date.parse(endpoint.previous_secret_expires_at ?? "")).toBe(expiresAt);

    const shown = await show(created.id);
    expect(shown.body.data).toEqual(endpoint);
    expectNoSecret(shown, secret, created.secret);
    const listed = await call("GET", "/v1/webhooks", { key });
    expectNoSecret(listed, secret, created.secret);
  });

  it("takes expires_in_seconds: the previous secret signs for that long", async () => {
    const created = await create();
    const before = Date.now();
    const res = await rotate(created.id, { expires_in_seconds: 3600 });
    expect(res.status).toBe(200);
    const stored = await row(created.id);
    expect(stored?.previous_secret).toBe(created.secret);
    expect(stored?.previous_secret_expires_at).toBeGreaterThanOrEqual(before + HOUR_MS);
    expect(stored?.previous_secret_expires_at).toBeLessThanOrEqual(Date.now() + HOUR_MS);
  });

  it("with expires_in_seconds 0 revokes the old secret at once", async () => {
    const created = await create();
    await rotate(created.id);
    const res = await rotate(created.id, { expires_in_seconds: 0 });
    expect(res.body.data.previous_secret_expires_at).toBeNull();
    expect(await row(created.id)).toMatchObject({
      secret: res.body.data.secret,
      previous_secret: null,
      previous_secret_expires_at: null,
    });
  });

  it("keeps one previous secret: a second rotation pushes out the first", async () => {
    const created = await create();
    const first = (await rotate(created.id)).body.data.secret;
    const second = (await rotate(created.id)).body.data.secret;
    expect(new Set([created.secret, first, second]).size).toBe(3);
    expect(await row(created.id)).toMatchObject({ secret: second, previous_secret: first });
  });

  it("does not show an expired previous secret's expiry", async () => {
    const created = await create();
    await rotate(created.id);
    await (await accountD1(accountId))
      .prepare("UPDATE webhook_endpoints SET previous_secret_expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, created.id)
      .run();
    expect((await show(created.id)).body.data.previous_secret_expires_at).toBeNull();
  });

  it("refuses expires_in_seconds outside 0–86400 and unknown fields, and rotates nothing", async () => {
    const created = await create();
    for (const value of [-1, 86_401, 1.5, "60", null]) {
      expectFieldErrors(await rotate(created.id, { expires_in_seconds: value }), ["expires_in_seconds"]);
    }
    expectFieldErrors(await rotate(created.id, { secret: "whsec_mine" }), ["secret"]);
    expect(await row(created.id)).toMatchObject({ secret: created.secret, previous_secret: null });
  });

  it("replays a retried rotation with the same Idempotency-Key instead of rotating twice", async () => {
    const created = await create();
    const headers = { "Idempotency-Key": "rotate-1" };
    const path = `/v1/webhooks/${created.id}/rotate-secret`;
    const first = await call<{ data: EndpointWithSecret }>("POST", path, { key, headers });
    const again = await call<{ data: EndpointWithSecret }>("POST", path, { key, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await row(created.id)).toMatchObject({
      secret: first.body.data.secret,
      previous_secret: created.secret,
    });
  });

  it("is 404 for an unknown id", async () => {
    expectProblem(await rotate(UNKNOWN_ID), 404, "not_found");
  });
});

describe("secrets at rest (docs/security.md, Hardening)", () => {
  /** The stored answer of the account's `Idempotency-Key` `key`. */
  async function storedReplay(idempotencyKey: string): Promise<string> {
    const stored = await (await accountD1(accountId))
      .prepare("SELECT response_body FROM idempotency_keys WHERE account_id = ? AND key = ?")
      .bind(accountId, idempotencyKey)
      .first<{ response_body: string }>();
    return stored?.response_body ?? "";
  }

  it("keeps the secret and the previous one only sealed, bound to the endpoint", async () => {
    const created = await create();
    const rotated = (await rotate(created.id)).body.data;
    const stored = await storedRow(created.id);
    const sealed = /^v1\.[A-Za-z0-9+/]+=*\.[A-Za-z0-9+/]+=*$/;
    expect(stored?.secret).toMatch(sealed);
    expect(stored?.previous_secret).toMatch(sealed);
    expect(stored?.secret_prefix).toBe(rotated.secret.slice(0, 14));
    const tables: unknown[] = [];
    for (const d1 of everyAccountD1()) tables.push(await d1.prepare("SELECT * FROM webhook_endpoints").all());
    const everything = JSON.stringify(tables);
    for (const secret of [created.secret, rotated.secret, created.secret.slice(6), rotated.secret.slice(6)])
      expect(everything).not.toContain(secret);
    expect(await row(created.id)).toMatchObject({ secret: rotated.secret, previous_secret: created.secret });

    // Copied onto another endpoint, a sealed secret does not open.
    const other = await create();
    await (await accountD1(accountId))
      .prepare("UPDATE webhook_endpoints SET secret = ? WHERE id = ?")
      .bind(stored?.secret, other.id)
      .run();
    await expect(row(other.id)).rejects.toThrow(/does not open/);
  });

  it("keeps the Idempotency-Key replays of create and rotate sealed, and replays them in clear", async () => {
    const first = await post({ url: "https://example.com/sealed" }, key, {
      "Idempotency-Key": "sealed-create",
    });
    expect(first.status).toBe(201);
    const rotatePath = `/v1/webhooks/${first.body.data.id}/rotate-secret`;
    const headers = { "Idempotency-Key": "sealed-rotate" };
    const rotated = await call<{ data: EndpointWithSecret }>("POST", rotatePath, { key, headers });
    expect(rotated.status).toBe(200);
    for (const [idempotencyKey, secret] of [
      ["sealed-create", first.body.data.secret],
      ["sealed-rotate", rotated.body.data.secret],
    ] as const) {
      const stored = await storedReplay(idempotencyKey);
      expect(stored).toMatch(/^v1\./);
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain(secret.slice(6));
    }
    const again = await post({ url: "https://example.com/sealed" }, key, {
      "Idempotency-Key": "sealed-create",
    });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const rotatedAgain = await call<{ data: EndpointWithSecret }>("POST", rotatePath, { key, headers });
    expect(rotatedAgain.headers.get("idempotent-replayed")).toBe("true");
    expect(rotatedAgain.body).toEqual(rotated.body);
  });

  it("answers create and rotate 500 service_misconfigured naming OTP_SECRET when it is unset, storing nothing", async () => {
    const created = await create();
    const request = async (method: string, path: string) => {
      const ctx = createExecutionContext();
      const res = await createApp().request(
        `http://localhost${path}`,
        {
          method,
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
          body: JSON.stringify(
            method === "POST" && path === "/v1/webhooks" ? { url: "https://example.com/x" } : {},
          ),
        },
        { ...env, OTP_SECRET: "" },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    for (const [method, path] of [
      ["POST", "/v1/webhooks"],
      ["POST", `/v1/webhooks/${created.id}/rotate-secret`],
    ] as const) {
      const res = await request(method, path);
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ code: "service_misconfigured" });
      expect(String(res.body.detail)).toContain("OTP_SECRET");
    }
    const listed = await call<{ data: Endpoint[] }>("GET", "/v1/webhooks", { key });
    expect(listed.body.data.map((e) => e.id)).toEqual([created.id]);
    expect(await row(created.id)).toMatchObject({ secret: created.secret, previous_secret: null });
  });
});

describe("ownership and authentication, for every webhook route", () => {
  // Generated from the router, so that a new route cannot ship without these cases.
  const seen = new Set<string>();
  const routes: [string, string][] = [];
  for (const route of webhookRoutes.routes) {
    const entry = `${route.method} ${route.path}`;
    if (route.method === "ALL" || seen.has(entry)) continue;
    seen.add(entry);
    routes.push([route.method, route.path]);
  }

  const bodies: Record<string, unknown> = {
    "POST /": { url: "https://example.com/hooks" },
    "PATCH /:id": { enabled: false },
    "POST /:id/rotate-secret": {},
    "POST /:id/recover": { since: "2026-01-01T00:00:00Z" },
  };
  /** A path of the route table with its parameters filled in: the endpoint `id`, any event id. */
  const pathOf = (path: string, id: string) =>
    `/v1/webhooks${path.replace(":id", id).replace(":event_id", "evt_00000000000000000000000000000000")}`;

  it("covers the routes of the resource", () => {
    expect(routes.map(([method, path]) => `${method} ${path}`).sort()).toEqual(
      [
        "DELETE /:id",
        "GET /",
        "GET /:id",
        "PATCH /:id",
        "POST /",
        "POST /:id/rotate-secret",
        "GET /:id/deliveries",
        "GET /:id/deliveries/:event_id",
        "POST /:id/deliveries/:event_id/retry",
        "POST /:id/recover",
        "POST /:id/test",
      ].sort(),
    );
  });

  for (const [method, path] of routes.filter(([, path]) => path.includes(":id"))) {
    it(`${method} /v1/webhooks${path}: another account's endpoint is 404 and stays unchanged`, async () => {
      const theirs = await createAccount();
      const endpoint = await create({ events: ["message.sent"] }, theirs.key);
      const stored = await row(endpoint.id, theirs.accountId);
      const res = await call(method, pathOf(path, endpoint.id), {
        key,
        body: bodies[`${method} ${path}`],
      });
      expectProblem(res, 404, "not_found");
      expect(res.text).not.toContain(endpoint.secret);
      expect(await row(endpoint.id, theirs.accountId)).toEqual(stored);
    });

    it(`${method} /v1/webhooks${path}: a malformed id is 404`, async () => {
      const res = await call(method, pathOf(path, "not-a-uuid"), {
        key,
        body: bodies[`${method} ${path}`],
      });
      expectProblem(res, 404, "not_found");
    });
  }

  for (const [method, path] of routes) {
    it(`${method} /v1/webhooks${path} without a key is 401`, async () => {
      const res = await call(method, pathOf(path, UNKNOWN_ID), {
        body: bodies[`${method} ${path}`],
      });
      expectProblem(res, 401, "unauthenticated");
    });
  }

  it("another account's list does not show the endpoint", async () => {
    const theirs = await createAccount();
    await create({}, theirs.key);
    expect((await call<{ data: Endpoint[] }>("GET", "/v1/webhooks", { key })).body.data).toEqual([]);
  });
});

describe("OpenAPI document", () => {
  it("documents every webhook route and field", async () => {
    const res = await call<{
      paths: Record<string, Record<string, { tags: string[]; summary: string }>>;
      components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
    }>("GET", "/openapi.json");
    const paths = res.body.paths;
    expect(Object.keys(paths["/v1/webhooks"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(paths["/v1/webhooks/{id}"] ?? {}).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(paths["/v1/webhooks/{id}/rotate-secret"] ?? {})).toEqual(["post"]);
    for (const operations of [paths["/v1/webhooks"], paths["/v1/webhooks/{id}"]]) {
      for (const operation of Object.values(operations ?? {})) {
        expect(operation.tags).toEqual(["Webhooks"]);
        expect(operation.summary).toEqual(expect.any(String));
      }
    }
    const endpoint = res.body.components.schemas.WebhookEndpoint;
    expect(Object.keys(endpoint?.properties ?? {}).sort()).toEqual(
      [
        "id",
        "account_id",
        "url",
        "description",
        "events",
        "enabled",
        "disabled_reason",
        "secret_prefix",
        "previous_secret_expires_at",
        "created_at",
        "updated_at",
        "created_by",
        "url_set_by",
      ].sort(),
    );
    for (const [name, property] of Object.entries(endpoint?.properties ?? {})) {
      expect(property.description, name).toEqual(expect.any(String));
    }
    // The create and rotate responses: the same record and the secret.
    expect(res.body.components.schemas.WebhookEndpointWithSecret).toEqual({
      allOf: [
        { $ref: "#/components/schemas/WebhookEndpoint" },
        {
          type: "object",
          properties: { secret: expect.objectContaining({ description: expect.any(String) }) },
          required: ["secret"],
        },
      ],
    });
  });
});
