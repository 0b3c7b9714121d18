import { beforeEach, describe, expect, it } from "vitest";
import type { LengthAwarePage, PageLink } from "../src/lib/paginator";
import { accountD1 } from "./databases";
import { type ApiResponse, call, clockMoves, createAccount, expectProblem } from "./helpers";

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const BASE = "http://localhost/v1/apps";
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}000Z$/;

interface App {
  id: string;
  account_id: string;
  name: string;
  message_template: string;
  sender_id: string;
  code_size: number;
  chatapp_session_id?: string;
  expiry_seconds: number;
  allowed_countries: string[] | null;
  deleted_at?: string | null;
  created_at: string;
  updated_at: string;
}

type AppList = LengthAwarePage<App>;

let key: string;
let accountId: string;

beforeEach(async () => {
  ({ key, accountId } = await createAccount());
});

async function createApp(body: Record<string, unknown> = {}, apiKey = key): Promise<App> {
  const res = await call<{ data: App }>("POST", "/v1/apps", {
    key: apiKey,
    body: { name: "Acme", sender_id: SENDER, ...body },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function createSession(apiKey = key): Promise<string> {
  const res = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key: apiKey });
  expect(res.status).toBe(201);
  return res.body.session.id;
}

/** Asserts a 422 `validation_failed` whose `errors` has exactly these keys; returns `errors`. */
function expectFieldErrors(res: ApiResponse, fields: string[]): Record<string, string[]> {
  const problem = expectProblem(res, 422, "validation_failed");
  const errors = problem.errors as Record<string, string[]>;
  expect(Object.keys(errors).sort()).toEqual([...fields].sort());
  return errors;
}

describe("POST /v1/apps", () => {
  it("creates an app with the generated template and code size 6 when both are omitted", async () => {
    const res = await call<{ data: App }>("POST", "/v1/apps", {
      key,
      body: { name: "Acme Shop", sender_id: SENDER },
    });
    expect(res.status).toBe(201);
    const app = res.body.data;
    expect(app).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      account_id: accountId,
      name: "Acme Shop",
      message_template: "{{code}} is your Acme Shop verification code. Do not share it.",
      sender_id: SENDER,
      code_size: 6,
      channels: [],
      failover_after_seconds: 15,
      reverse_price: 0,
      expiry_seconds: 600,
      allowed_countries: null,
      otp_template: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    // The create response has no deleted_at and, without a session, no chatapp_session_id.
    expect(app).not.toHaveProperty("deleted_at");
    expect(app).not.toHaveProperty("chatapp_session_id");
    expect(app.created_at).toBe(app.updated_at);
  });

  it("stores every given field, and the app reads back the same", async () => {
    const session = await createSession();
    const app = await createApp({
      name: "  Acme  ",
      message_template: "Your {app_name} code: { code }",
      code_size: 8,
      expiry_seconds: 120,
      chatapp_session_id: session,
    });
    expect(app).toMatchObject({
      name: "Acme",
      message_template: "Your {app_name} code: { code }",
      code_size: 8,
      expiry_seconds: 120,
      chatapp_session_id: session,
    });
    const shown = await call<{ data: App }>("GET", `/v1/apps/${app.id}`, { key });
    expect(shown.body.data).toEqual({ ...app, deleted_at: null });
  });

  it("defaults each of message_template and code_size on its own", async () => {
    expect(await createApp({ code_size: 4 })).toMatchObject({
      code_size: 4,
      message_template: "{{code}} is your Acme verification code. Do not share it.",
    });
    expect(await createApp({ message_template: "{{code}}" })).toMatchObject({
      code_size: 6,
      message_template: "{{code}}",
    });
  });

  it("keeps braces in the name out of the generated template", async () => {
    const app = await createApp({ name: "Acme {code}" });
    expect(app.name).toBe("Acme {code}");
    expect(app.message_template).toBe("{{code}} is your Acme code verification code. Do not share it.");
  });

  it.each([
    ["{{code}}"],
    ["{code}"],
    ["{{ code }}"],
    ["{ code }"],
    ["{{app_name}}: {{code}}"],
    ["{app_name}: {code}"],
    ["{{ app_name }}: { code }"],
  ])("accepts the template %j", async (template) => {
    expect((await createApp({ message_template: template })).message_template).toBe(template);
  });

  it("requires name and sender_id", async () => {
    const res = await call("POST", "/v1/apps", { key, body: {} });
    expectFieldErrors(res, ["name", "sender_id"]);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ["an empty name", { name: "" }, ["name"]],
    ["a blank name", { name: "   " }, ["name"]],
    ["a 101-character name", { name: "x".repeat(101) }, ["name"]],
    ["a non-string name", { name: 5 }, ["name"]],
    ["a sender_id that is not a uuid", { sender_id: "sender-1" }, ["sender_id"]],
    ["an array sender_id", { sender_id: [SENDER] }, ["sender_id"]],
    ["an empty template", { message_template: "" }, ["message_template"]],
    ["a 1,001-character template", { message_template: `{{code}}${"x".repeat(993)}` }, ["message_template"]],
    ["a template without the code", { message_template: "Welcome to {{app_name}}" }, ["message_template"]],
    ["an unknown placeholder", { message_template: "{{code}} {{otp}}" }, ["message_template"]],
    ["an unknown single-brace placeholder", { message_template: "{code} { name }" }, ["message_template"]],
    ["a malformed placeholder", { message_template: "{{code}" }, ["message_template"]],
    ["code_size 3", { code_size: 3 }, ["code_size"]],
    ["code_size 11", { code_size: 11 }, ["code_size"]],
    ["a fractional code_size", { code_size: 6.5 }, ["code_size"]],
    ["a string code_size", { code_size: "6" }, ["code_size"]],
    ["an array code_size", { code_size: [6] }, ["code_size"]],
    ["expiry_seconds 59", { expiry_seconds: 59 }, ["expiry_seconds"]],
    ["expiry_seconds 3601", { expiry_seconds: 3601 }, ["expiry_seconds"]],
    ["a chatapp_session_id that is not a uuid", { chatapp_session_id: "abc" }, ["chatapp_session_id"]],
    ["an unknown field", { colour: "blue" }, ["colour"]],
  ])("refuses %s (422)", async (_label, fields, errorKeys) => {
    const res = await call("POST", "/v1/apps", { key, body: { name: "Acme", sender_id: SENDER, ...fields } });
    expectFieldErrors(res, errorKeys);
  });

  it("accepts the bounds themselves", async () => {
    const app = await createApp({
      name: "x".repeat(100),
      message_template: `{{code}}${"x".repeat(992)}`,
      code_size: 10,
      expiry_seconds: 3600,
    });
    expect(app.name).toHaveLength(100);
    expect(app.message_template).toHaveLength(1000);
    expect(await createApp({ name: "y", code_size: 4, expiry_seconds: 60 })).toMatchObject({
      name: "y",
      code_size: 4,
      expiry_seconds: 60,
    });
  });

  it("explains template problems in the field error", async () => {
    const res = await call("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: SENDER, message_template: "Hi {{ user }}" },
    });
    expect(expectFieldErrors(res, ["message_template"]).message_template).toEqual([
      "unknown placeholder {{ user }}: use {{code}} or {{app_name}}",
      "must contain the code placeholder {{code}}",
    ]);
  });

  it("refuses a session that does not exist or belongs to another account", async () => {
    const other = await createAccount();
    for (const sessionId of [crypto.randomUUID(), await createSession(other.key)]) {
      const res = await call("POST", "/v1/apps", {
        key,
        body: { name: "Acme", sender_id: SENDER, chatapp_session_id: sessionId },
      });
      expect(expectFieldErrors(res, ["chatapp_session_id"]).chatapp_session_id).toEqual([
        "no such session in this account",
      ]);
    }
    const list = await call<AppList>("GET", "/v1/apps", { key });
    expect(list.body.meta.total).toBe(0);
  });

  it("replays the first response to a retry with the same Idempotency-Key, and creates one app", async () => {
    const headers = { "Idempotency-Key": `app-${crypto.randomUUID()}` };
    const body = { name: "Acme", sender_id: SENDER };
    const first = await call<{ data: App }>("POST", "/v1/apps", { key, body, headers });
    const retry = await call<{ data: App }>("POST", "/v1/apps", { key, body, headers });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    const other = await call("POST", "/v1/apps", { key, body: { ...body, name: "Other" }, headers });
    expectProblem(other, 422, "idempotency_key_reused");
    const list = await call<AppList>("GET", "/v1/apps", { key });
    expect(list.body.data.map((app) => app.id)).toEqual([first.body.data.id]);
  });

  it("requires an API key", async () => {
    expectProblem(
      await call("POST", "/v1/apps", { body: { name: "Acme", sender_id: SENDER } }),
      401,
      "unauthenticated",
    );
  });
});

describe("GET /v1/apps/{id}", () => {
  it("shows the app with deleted_at null", async () => {
    const app = await createApp();
    const res = await call<{ data: App }>("GET", `/v1/apps/${app.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { ...app, deleted_at: null } });
  });

  it("is 404 for an unknown id, a malformed id and another account's app", async () => {
    const other = await createAccount();
    const theirs = await createApp({}, other.key);
    for (const id of [crypto.randomUUID(), "not-a-uuid", theirs.id]) {
      expectProblem(await call("GET", `/v1/apps/${id}`, { key }), 404, "not_found");
    }
    // The owner still sees it.
    expect((await call("GET", `/v1/apps/${theirs.id}`, { key: other.key })).status).toBe(200);
  });
});

describe.each(["PUT", "PATCH"])("%s /v1/apps/{id}", (method) => {
  it("changes only the fields given and moves updated_at", async () => {
    const app = await createApp({ code_size: 5 });
    const res = await call<{ data: App }>(method, `/v1/apps/${app.id}`, { key, body: { name: "Renamed" } });
    expect(res.status).toBe(200);
    const updated = res.body.data;
    expect(updated).toEqual({
      ...app,
      name: "Renamed",
      deleted_at: null,
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect(updated.updated_at > app.updated_at).toBe(true);
    expect(updated.created_at).toBe(app.created_at);
    // The stored template was written for the old name and is kept as it is.
    expect(updated.message_template).toBe("{{code}} is your Acme verification code. Do not share it.");
  });

  it("takes every field at once", async () => {
    const app = await createApp();
    const session = await createSession();
    const sender = crypto.randomUUID();
    const res = await call<{ data: App }>(method, `/v1/apps/${app.id}`, {
      key,
      body: {
        name: "New",
        sender_id: sender,
        message_template: "{ app_name }: {{ code }}",
        code_size: 10,
        expiry_seconds: 60,
        chatapp_session_id: session,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: app.id,
      name: "New",
      sender_id: sender,
      message_template: "{ app_name }: {{ code }}",
      code_size: 10,
      expiry_seconds: 60,
      chatapp_session_id: session,
      deleted_at: null,
    });
    const shown = await call<{ data: App }>("GET", `/v1/apps/${app.id}`, { key });
    expect(shown.body.data).toEqual(res.body.data);
  });

  it("moves updated_at even for an empty body", async () => {
    const app = await createApp();
    const first = await call<{ data: App }>(method, `/v1/apps/${app.id}`, { key, body: {} });
    const second = await call<{ data: App }>(method, `/v1/apps/${app.id}`, { key, body: {} });
    expect(first.status).toBe(200);
    expect(first.body.data.updated_at > app.updated_at).toBe(true);
    expect(second.body.data.updated_at > first.body.data.updated_at).toBe(true);
    expect(second.body.data).toMatchObject({ name: app.name, message_template: app.message_template });
  });

  it("clears the session with chatapp_session_id null", async () => {
    const session = await createSession();
    const app = await createApp({ chatapp_session_id: session });
    const res = await call<{ data: App }>(method, `/v1/apps/${app.id}`, {
      key,
      body: { chatapp_session_id: null },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).not.toHaveProperty("chatapp_session_id");
    const shown = await call<{ data: App }>("GET", `/v1/apps/${app.id}`, { key });
    expect(shown.body.data).not.toHaveProperty("chatapp_session_id");
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ["an empty name", { name: "" }, ["name"]],
    ["a null name", { name: null }, ["name"]],
    ["a 101-character name", { name: "x".repeat(101) }, ["name"]],
    ["a sender_id that is not a uuid", { sender_id: "x" }, ["sender_id"]],
    ["a template without the code", { message_template: "{{app_name}}" }, ["message_template"]],
    ["an unknown placeholder", { message_template: "{{code}} {{ link }}" }, ["message_template"]],
    ["a 1,001-character template", { message_template: `{code}${"x".repeat(995)}` }, ["message_template"]],
    ["code_size 3", { code_size: 3 }, ["code_size"]],
    ["code_size 11", { code_size: 11 }, ["code_size"]],
    ["expiry_seconds 3601", { expiry_seconds: 3601 }, ["expiry_seconds"]],
    ["an unknown field", { deleted_at: null }, ["deleted_at"]],
    ["two bad fields", { code_size: 0, name: "" }, ["code_size", "name"]],
  ])("refuses %s (422) and changes nothing", async (_label, body, errorKeys) => {
    const app = await createApp();
    expectFieldErrors(await call(method, `/v1/apps/${app.id}`, { key, body }), errorKeys);
    const shown = await call<{ data: App }>("GET", `/v1/apps/${app.id}`, { key });
    expect(shown.body.data).toEqual({ ...app, deleted_at: null });
  });

  it("refuses another account's session and an unknown session (422)", async () => {
    const app = await createApp();
    const other = await createAccount();
    for (const sessionId of [await createSession(other.key), crypto.randomUUID()]) {
      const res = await call(method, `/v1/apps/${app.id}`, { key, body: { chatapp_session_id: sessionId } });
      expectFieldErrors(res, ["chatapp_session_id"]);
    }
    const shown = await call<{ data: App }>("GET", `/v1/apps/${app.id}`, { key });
    expect(shown.body.data).not.toHaveProperty("chatapp_session_id");
  });

  it("is 404 for an unknown id, another account's app and a deleted app", async () => {
    const other = await createAccount();
    const theirs = await createApp({}, other.key);
    const deleted = await createApp();
    expect((await call("DELETE", `/v1/apps/${deleted.id}`, { key })).status).toBe(204);
    for (const id of [crypto.randomUUID(), "nope", theirs.id, deleted.id]) {
      expectProblem(await call(method, `/v1/apps/${id}`, { key, body: { name: "Mine" } }), 404, "not_found");
    }
    // Another account's app is 404 even when the body names a session that is not the caller's.
    const session = await createSession(other.key);
    expectProblem(
      await call(method, `/v1/apps/${theirs.id}`, { key, body: { chatapp_session_id: session } }),
      404,
      "not_found",
    );
    const untouched = await call<{ data: App }>("GET", `/v1/apps/${theirs.id}`, { key: other.key });
    expect(untouched.body.data).toEqual({ ...theirs, deleted_at: null });
  });
});

describe("DELETE /v1/apps/{id}", () => {
  it("soft-deletes: 204, then 404 everywhere and absent from the list, while the row keeps deleted_at", async () => {
    const kept = await createApp({ name: "Kept" });
    const app = await createApp({ name: "Gone" });
    const res = await call("DELETE", `/v1/apps/${app.id}`, { key });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");

    expectProblem(await call("GET", `/v1/apps/${app.id}`, { key }), 404, "not_found");
    expectProblem(await call("PATCH", `/v1/apps/${app.id}`, { key, body: {} }), 404, "not_found");
    expectProblem(await call("PUT", `/v1/apps/${app.id}`, { key, body: {} }), 404, "not_found");
    expectProblem(await call("DELETE", `/v1/apps/${app.id}`, { key }), 404, "not_found");

    const list = await call<AppList>("GET", "/v1/apps", { key });
    expect(list.body.data.map((a) => a.id)).toEqual([kept.id]);
    expect(list.body.meta.total).toBe(1);

    const row = await (await accountD1(accountId))
      .prepare("SELECT deleted_at, updated_at FROM apps WHERE id = ?")
      .bind(app.id)
      .first<{ deleted_at: number | null; updated_at: number }>();
    expect(row?.deleted_at).toEqual(expect.any(Number));
    expect(row?.updated_at).toBe(row?.deleted_at);
  });

  it("is 404 for an unknown id and another account's app, which stays", async () => {
    const other = await createAccount();
    const theirs = await createApp({}, other.key);
    for (const id of [crypto.randomUUID(), "x", theirs.id]) {
      expectProblem(await call("DELETE", `/v1/apps/${id}`, { key }), 404, "not_found");
    }
    expect((await call("GET", `/v1/apps/${theirs.id}`, { key: other.key })).status).toBe(200);
  });
});

describe("GET /v1/apps", () => {
  it("answers an empty list in the paginator shape", async () => {
    const res = await call<AppList>("GET", "/v1/apps", { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [],
      links: { first: `${BASE}?page=1`, last: `${BASE}?page=1`, prev: null, next: null },
      meta: {
        current_page: 1,
        from: null,
        last_page: 1,
        links: [
          { url: null, label: "&laquo; Previous", active: false },
          { url: `${BASE}?page=1`, label: "1", active: true },
          { url: null, label: "Next &raquo;", active: false },
        ],
        path: BASE,
        per_page: 10,
        to: null,
        total: 0,
      },
    });
  });

  it("lists newest first, only the caller's apps, with deleted_at null", async () => {
    const other = await createAccount();
    await createApp({ name: "Theirs" }, other.key);
    const older = await createApp({ name: "Older" });
    await clockMoves();
    const newer = await createApp({ name: "Newer" });
    const res = await call<AppList>("GET", "/v1/apps", { key });
    expect(res.body.data).toEqual([
      { ...newer, deleted_at: null },
      { ...older, deleted_at: null },
    ]);
  });

  it("pages 23 apps 10 at a time with Laravel's exact links and meta", async () => {
    const created: string[] = [];
    for (let i = 0; i < 23; i++) created.push((await createApp({ name: `App ${i}` })).id);

    const all = await call<AppList>("GET", "/v1/apps?per_page=100", { key });
    const order = all.body.data.map((a) => a.id);
    expect([...order].sort()).toEqual([...created].sort());
    const sorted = [...all.body.data].sort(
      (a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id),
    );
    expect(order).toEqual(sorted.map((a) => a.id));

    const url = (n: number) => `${BASE}?page=${n}`;
    const pageLinks = (current: number, prev: string | null, next: string | null): PageLink[] => [
      { url: prev, label: "&laquo; Previous", active: false },
      { url: url(1), label: "1", active: current === 1 },
      { url: url(2), label: "2", active: current === 2 },
      { url: url(3), label: "3", active: current === 3 },
      { url: next, label: "Next &raquo;", active: false },
    ];

    const page1 = await call<AppList>("GET", "/v1/apps", { key });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((a) => a.id)).toEqual(order.slice(0, 10));
    expect(page1.body.links).toEqual({ first: url(1), last: url(3), prev: null, next: url(2) });
    expect(page1.body.meta).toEqual({
      current_page: 1,
      from: 1,
      last_page: 3,
      links: pageLinks(1, null, url(2)),
      path: BASE,
      per_page: 10,
      to: 10,
      total: 23,
    });
    expect(Object.keys(page1.body)).toEqual(["data", "links", "meta"]);
    expect(Object.keys(page1.body.meta)).toEqual([
      "current_page",
      "from",
      "last_page",
      "links",
      "path",
      "per_page",
      "to",
      "total",
    ]);

    // Following links.next walks the pages.
    const next = new URL(page1.body.links.next ?? "");
    const page2 = await call<AppList>("GET", `${next.pathname}${next.search}`, { key });
    expect(page2.body.data.map((a) => a.id)).toEqual(order.slice(10, 20));
    expect(page2.body.links).toEqual({ first: url(1), last: url(3), prev: url(1), next: url(3) });
    expect(page2.body.meta).toEqual({
      current_page: 2,
      from: 11,
      last_page: 3,
      links: pageLinks(2, url(1), url(3)),
      path: BASE,
      per_page: 10,
      to: 20,
      total: 23,
    });

    const page3 = await call<AppList>("GET", "/v1/apps?page=3", { key });
    expect(page3.body.data.map((a) => a.id)).toEqual(order.slice(20, 23));
    expect(page3.body.links).toEqual({ first: url(1), last: url(3), prev: url(2), next: null });
    expect(page3.body.meta).toEqual({
      current_page: 3,
      from: 21,
      last_page: 3,
      links: pageLinks(3, url(2), null),
      path: BASE,
      per_page: 10,
      to: 23,
      total: 23,
    });

    const page4 = await call<AppList>("GET", "/v1/apps?page=4", { key });
    expect(page4.status).toBe(200);
    expect(page4.body).toEqual({
      data: [],
      links: { first: url(1), last: url(3), prev: url(3), next: null },
      meta: {
        current_page: 4,
        from: null,
        last_page: 3,
        links: pageLinks(4, url(3), null),
        path: BASE,
        per_page: 10,
        to: null,
        total: 23,
      },
    });
  });

  it("keeps a chosen per_page in the links", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createApp({ name: `App ${i}` })).id);
    const res = await call<AppList>("GET", "/v1/apps?per_page=2&page=2", { key });
    const url = (n: number) => `${BASE}?per_page=2&page=${n}`;
    expect(res.body.data).toHaveLength(2);
    expect(res.body.links).toEqual({ first: url(1), last: url(3), prev: url(1), next: url(3) });
    expect(res.body.meta).toMatchObject({
      current_page: 2,
      from: 3,
      to: 4,
      last_page: 3,
      per_page: 2,
      total: 5,
    });
    expect(res.body.meta.links.map((l) => [l.label, l.url, l.active])).toEqual([
      ["&laquo; Previous", url(1), false],
      ["1", url(1), false],
      ["2", url(2), true],
      ["3", url(3), false],
      ["Next &raquo;", url(3), false],
    ]);
  });

  it("lists every page number beyond 13 pages, with no `...` gaps", async () => {
    for (let i = 0; i < 15; i++) await createApp({ name: `App ${i}` });
    const res = await call<AppList>("GET", "/v1/apps?per_page=1&page=8", { key });
    const url = (n: number) => `${BASE}?per_page=1&page=${n}`;
    expect(res.body.meta.last_page).toBe(15);
    expect(res.body.meta.links).toEqual([
      { url: url(7), label: "&laquo; Previous", active: false },
      ...Array.from({ length: 15 }, (_, i) => ({
        url: url(i + 1),
        label: String(i + 1),
        active: i + 1 === 8,
      })),
      { url: url(9), label: "Next &raquo;", active: false },
    ]);
  });

  it("accepts per_page up to 100", async () => {
    await createApp();
    const res = await call<AppList>("GET", "/v1/apps?per_page=100", { key });
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ per_page: 100, total: 1, from: 1, to: 1 });
  });

  it.each<[string, string[]]>([
    ["page=0", ["page"]],
    ["page=-1", ["page"]],
    ["page=abc", ["page"]],
    ["page=1.5", ["page"]],
    ["page=", ["page"]],
    ["per_page=0", ["per_page"]],
    ["per_page=101", ["per_page"]],
    ["per_page=ten", ["per_page"]],
    ["page=0&per_page=500", ["page", "per_page"]],
  ])("refuses %s (422)", async (query, errorKeys) => {
    expectFieldErrors(await call("GET", `/v1/apps?${query}`, { key }), errorKeys);
  });

  it("requires an API key", async () => {
    expectProblem(await call("GET", "/v1/apps"), 401, "unauthenticated");
  });
});

describe("OpenAPI reference", () => {
  it("documents the app routes and the bounds", async () => {
    const res = await call<{ paths: Record<string, Record<string, unknown>> }>("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths["/v1/apps"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(res.body.paths["/v1/apps/{id}"] ?? {}).sort()).toEqual([
      "delete",
      "get",
      "patch",
      "put",
    ]);
    expect(res.text).toContain("expiry_seconds");
  });
});
