import { describe, expect, it } from "vitest";
import { fillTemplate, scanTemplate } from "../src/lib/template";
import { campaignRoutes } from "../src/routes/campaigns/campaigns.index";
import { accountD1 } from "./databases";
import { call, createAccount, expectProblem, TIMESTAMP } from "./helpers";
import { connectedSession } from "./message-fixtures";

// Campaigns as drafts: create with a template and recipients, add recipients, list, show, delete.

interface Campaign {
  id: string;
  name: string;
  status: string;
  chatapp_session_ids: string[];
  content: string | null;
  delay_range: { min_ms: number; max_ms: number };
  send_window: unknown;
  stats: Record<string, number>;
  cost: number;
  created_at: string;
}

interface Recipient {
  seq: number;
  to_number: string | null;
  to_user_id: string | null;
  variables: Record<string, string> | null;
  status: string;
  message_id: string | null;
}

const UNKNOWN_ID = "0f8fad5b-d9cb-469f-a165-70867728950e";

/** A US number +1415555XXXX (the sandbox fails numbers ending 0000–0002, so they are skipped). */
const number = (n: number) => `+1415555${String(3 + (n % 9_997)).padStart(4, "0")}`;

async function account() {
  const { key, accountId } = await createAccount(1_000);
  const session = await connectedSession(key);
  return { key, accountId, sessionId: session.id };
}

function create(key: string, body: Record<string, unknown>) {
  return call<{ data: Campaign; recipients: { added: number; duplicates: number; total: number } }>(
    "POST",
    "/v1/chatapp/campaigns",
    { key, body },
  );
}

const draft = (sessionId: string, extra: Record<string, unknown> = {}) => ({
  name: "Newsletter",
  chatapp_session_ids: [sessionId],
  type: "text",
  content: "Hi {{name}}, order {{ order }} shipped.",
  ...extra,
});

async function campaignCount(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT count(*) AS n FROM campaigns WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("the template engine, for any placeholder names", () => {
  it("reads placeholders in both syntaxes and fills them in one pass", () => {
    expect(scanTemplate("Hi {{ name }}, {order}! {").placeholders).toEqual([
      { name: "name", written: "{{ name }}" },
      { name: "order", written: "{order}" },
    ]);
    expect(scanTemplate("Hi {{ name }}, {order}! {").strayBraces).toHaveLength(1);
    expect(fillTemplate("Hi {{name}}, {{x}}", { name: "{{x}}" })).toBe("Hi {{x}}, {{x}}");
    expect(fillTemplate("{{toString}} {{name}}", { name: "Ada" })).toBe("{{toString}} Ada");
  });
});

describe("POST /v1/chatapp/campaigns", () => {
  it("creates a draft with its recipients, each number once", async () => {
    const { key, sessionId } = await account();
    const res = await create(
      key,
      draft(sessionId, {
        recipients: [
          { to_number: "+1 415 555 2671", variables: { name: "Ada", order: "A-1" } },
          { to_number: "14155552671", variables: { name: "Ada again", order: "A-2" } },
          { to_number: "+14155552672", variables: { name: "Bo", order: "B-1", extra: "unused" } },
        ],
        delay_range: { min_ms: 2_000, max_ms: 8_000 },
        send_window: { start: "22:00", end: "06:00", time_zone: "Asia/Tokyo" },
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.recipients).toEqual({ added: 2, duplicates: 1, total: 2 });
    expect(res.body.data).toMatchObject({
      name: "Newsletter",
      status: "draft",
      chatapp_session_ids: [sessionId],
      content: "Hi {{name}}, order {{ order }} shipped.",
      delay_range: { min_ms: 2_000, max_ms: 8_000 },
      send_window: { start: "22:00", end: "06:00", time_zone: "Asia/Tokyo" },
      stats: { total: 2, queued: 0, sent: 0, delivered: 0, read: 0, failed: 0, replied: 0, skipped: 0 },
      cost: 0,
      created_at: expect.stringMatching(TIMESTAMP),
    });
    const shown = await call<{ data: Campaign }>("GET", `/v1/chatapp/campaigns/${res.body.data.id}`, { key });
    expect(shown.body.data).toEqual(res.body.data);
    const recipients = await call<{ data: Recipient[] }>(
      "GET",
      `/v1/chatapp/campaigns/${res.body.data.id}/recipients`,
      { key },
    );
    expect(recipients.body.data).toEqual([
      {
        seq: 3,
        to_number: "+14155552672",
        to_user_id: null,
        variables: { name: "Bo", order: "B-1", extra: "unused" },
        status: "pending",
        reason: null,
        message_id: null,
      },
      {
        seq: 1,
        to_number: "+14155552671",
        to_user_id: null,
        variables: { name: "Ada", order: "A-1" },
        status: "pending",
        reason: null,
        message_id: null,
      },
    ]);
  });

  it("uses delay_between as a fixed gap, 500 ms by default", async () => {
    const { key, sessionId } = await account();
    expect((await create(key, draft(sessionId, { delay_between: 0 }))).body.data.delay_range).toEqual({
      min_ms: 0,
      max_ms: 0,
    });
    expect((await create(key, draft(sessionId))).body.data.delay_range).toEqual({ min_ms: 500, max_ms: 500 });
  });

  it("refuses a recipient without a value for a placeholder, naming its index, and creates nothing", async () => {
    const { key, accountId, sessionId } = await account();
    const res = await create(
      key,
      draft(sessionId, {
        recipients: [
          { to_number: "+14155552671", variables: { name: "Ada", order: "1" } },
          { to_number: "+14155552672", variables: { name: "Bo" } },
          { to_number: "not a number" },
        ],
      }),
    );
    const body = expectProblem(res, 422, "validation_failed");
    expect(body.errors).toEqual({
      "recipients.1.variables": ["no value for {{order}}"],
      "recipients.2.to_number": ["invalid phone number"],
      "recipients.2.variables": ["no value for {{name}}, {{order}}"],
    });
    expect(await campaignCount(accountId)).toBe(0);
  });

  it("refuses bad templates, delays, windows and content, field by field", async () => {
    const { key, sessionId } = await account();
    const cases: [Record<string, unknown>, string][] = [
      [{ content: "Hi {{first name}}" }, "content"],
      [{ content: "Hi {name" }, "content"],
      [{ content: "x".repeat(4097) }, "content"],
      [{ type: "image", content: "caption" }, "media_url"],
      [{ delay_between: 600_001 }, "delay_between"],
      [{ delay_between: 100, delay_range: { min_ms: 1, max_ms: 2 } }, "delay_range"],
      [{ delay_range: { min_ms: 5, max_ms: 4 } }, "delay_range.max_ms"],
      [{ send_window: { start: "9:00", end: "17:00", time_zone: "UTC" } }, "send_window.start"],
      [{ send_window: { start: "09:00", end: "09:00", time_zone: "UTC" } }, "send_window.end"],
      [{ send_window: { start: "09:00", end: "17:00", time_zone: "Mars/Olympus" } }, "send_window.time_zone"],
      [{ scheduled_at: "2020-01-01T00:00:00Z" }, "scheduled_at"],
      [{ chatapp_session_ids: [] }, "chatapp_session_ids"],
      [{ chatapp_session_ids: [sessionId, sessionId] }, "chatapp_session_ids"],
      [
        { recipients: [{ to_number: "+14155552671", variables: { "bad-name": "x" } }] },
        "recipients.0.variables.bad-name",
      ],
    ];
    for (const [extra, field] of cases) {
      const body = expectProblem(await create(key, draft(sessionId, extra)), 422, "validation_failed");
      expect(Object.keys(body.errors as object), JSON.stringify(extra)).toContain(field);
    }
  });

  it("refuses a session that is not the account's (404) or not connected (409)", async () => {
    const { key, sessionId } = await account();
    const theirs = await account();
    expectProblem(
      await create(key, draft(sessionId, { chatapp_session_ids: [sessionId, UNKNOWN_ID] })),
      404,
      "not_found",
    );
    expectProblem(await create(key, draft(theirs.sessionId)), 404, "not_found");
    await call("PATCH", `/v1/chatapp/sessions/${sessionId}/disconnect`, { key });
    expectProblem(await create(key, draft(sessionId)), 409, "session_not_connected");
  });
});

describe("recipients", () => {
  it("takes 10,000 recipients a request, keeps each number once, and pages them newest first", async () => {
    const { key, sessionId } = await account();
    const created = await create(key, draft(sessionId, { content: "Hello {{name}}" }));
    const id = created.body.data.id;
    const batch = (from: number) =>
      Array.from({ length: 10_000 }, (_, i) => ({
        to_number: number(from + i),
        variables: { name: `n${from + i}` },
      }));
    const first = await call<{ data: { added: number; duplicates: number; total: number } }>(
      "POST",
      `/v1/chatapp/campaigns/${id}/recipients`,
      { key, body: { recipients: batch(0) } },
    );
    expect(first.status, first.text.slice(0, 300)).toBe(200);
    // number() wraps after 9,997: the last three repeat the first three.
    expect(first.body.data).toEqual({ added: 9_997, duplicates: 3, total: 9_997 });
    const more = await call<{ data: { added: number; duplicates: number; total: number } }>(
      "POST",
      `/v1/chatapp/campaigns/${id}/recipients`,
      {
        key,
        body: {
          recipients: [
            { to_number: number(5), variables: { name: "again" } },
            { to_number: "+447911123456", variables: { name: "uk" } },
          ],
        },
      },
    );
    expect(more.body.data, JSON.stringify(more.body)).toEqual({ added: 1, duplicates: 1, total: 9_998 });

    const page = await call<{ data: Recipient[]; meta: { next_cursor: string } }>(
      "GET",
      `/v1/chatapp/campaigns/${id}/recipients?limit=2`,
      { key },
    );
    expect(page.body.data.map((r) => r.to_number)).toEqual(["+447911123456", number(9_996)]);
    const next = await call<{ data: Recipient[] }>(
      "GET",
      `/v1/chatapp/campaigns/${id}/recipients?limit=2&cursor=${page.body.meta.next_cursor}`,
      { key },
    );
    expect(next.body.data.map((r) => r.seq)).toEqual([
      page.body.data[1]!.seq - 1,
      page.body.data[1]!.seq - 2,
    ]);
    const shown = await call<{ data: Campaign }>("GET", `/v1/chatapp/campaigns/${id}`, { key });
    expect(shown.body.data.stats.total).toBe(9_998);
  });

  it("checks added recipients against the template, naming their index", async () => {
    const { key, sessionId } = await account();
    const id = (await create(key, draft(sessionId))).body.data.id;
    const res = await call("POST", `/v1/chatapp/campaigns/${id}/recipients`, {
      key,
      body: { recipients: [{ to_number: "+14155552671", variables: { name: "Ada" } }] },
    });
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual({
      "recipients.0.variables": ["no value for {{order}}"],
    });
  });

  it("are added only to a draft", async () => {
    const { key, accountId, sessionId } = await account();
    const id = (await create(key, draft(sessionId))).body.data.id;
    // Starting is not built yet: the state is set directly.
    await (await accountD1(accountId))
      .prepare("UPDATE campaigns SET status = 'running' WHERE id = ?")
      .bind(id)
      .run();
    const res = await call("POST", `/v1/chatapp/campaigns/${id}/recipients`, {
      key,
      body: { recipients: [{ to_number: "+14155552671", variables: { name: "Ada", order: "1" } }] },
    });
    expectProblem(res, 409, "campaign_not_draft");
    expectProblem(await call("DELETE", `/v1/chatapp/campaigns/${id}`, { key }), 409, "campaign_not_draft");
  });
});

describe("list, show and delete", () => {
  it("lists newest first, and deletes a draft with its recipients", async () => {
    const { key, accountId, sessionId } = await account();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await create(
            key,
            draft(sessionId, {
              recipients: [{ to_number: number(i), variables: { name: "a", order: "b" } }],
            }),
          )
        ).body.data.id,
      );
    const list = await call<{ data: Campaign[]; meta: { next_cursor: string | null } }>(
      "GET",
      "/v1/chatapp/campaigns?limit=2",
      { key },
    );
    expect(list.body.data.map((c) => c.id)).toEqual([ids[2], ids[1]]);
    const rest = await call<{ data: Campaign[] }>(
      "GET",
      `/v1/chatapp/campaigns?cursor=${list.body.meta.next_cursor}`,
      {
        key,
      },
    );
    expect(rest.body.data.map((c) => c.id)).toEqual([ids[0]]);

    const res = await call("DELETE", `/v1/chatapp/campaigns/${ids[0]}`, { key });
    expect(res.status).toBe(204);
    expectProblem(await call("GET", `/v1/chatapp/campaigns/${ids[0]}`, { key }), 404, "not_found");
    const left = await (await accountD1(accountId))
      .prepare("SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = ?")
      .bind(ids[0])
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });
});

describe("OpenAPI document", () => {
  it("documents the create body's fields, recipients included", async () => {
    const doc = await call<{
      paths: Record<string, { post?: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
    }>("GET", "/openapi.json");
    const body = JSON.stringify(
      doc.body.paths["/v1/chatapp/campaigns"]?.post?.requestBody.content["application/json"]?.schema,
    );
    for (const field of ["name", "chatapp_session_ids", "recipients", "delay_range", "send_window"])
      expect(body).toContain(`"${field}"`);
    expect(body).not.toContain("recipientRows");
  });
});

describe("ownership and authentication, for every campaign route", () => {
  // Generated from the router, so that a new route cannot ship without these cases.
  const routes = [
    ...new Set(campaignRoutes.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path}`)),
  ];
  const bodies: Record<string, unknown> = {
    "POST /": { name: "x", chatapp_session_ids: [UNKNOWN_ID], type: "text", content: "hi" },
    "POST /:id/recipients": { recipients: [{ to_number: "+14155552671" }] },
  };

  for (const route of routes.filter((r) => r.includes(":id"))) {
    const [method, path] = route.split(" ") as [string, string];
    it(`${route}: another account's campaign is 404 and stays unchanged`, async () => {
      const theirs = await account();
      const campaign = (await create(theirs.key, draft(theirs.sessionId, { content: "hi" }))).body.data;
      const { key } = await createAccount();
      const res = await call(method, `/v1/chatapp/campaigns${path.replace(":id", campaign.id)}`, {
        key,
        body: bodies[route],
      });
      expectProblem(res, 404, "not_found");
      const after = await call<{ data: Campaign }>("GET", `/v1/chatapp/campaigns/${campaign.id}`, {
        key: theirs.key,
      });
      expect(after.body.data).toEqual(campaign);
    });
  }

  for (const route of routes) {
    const [method, path] = route.split(" ") as [string, string];
    it(`${route} without a key is 401`, async () => {
      const res = await call(method, `/v1/chatapp/campaigns${path.replace(":id", UNKNOWN_ID)}`, {
        body: bodies[route],
      });
      expectProblem(res, 401, "unauthenticated");
    });
  }
});
