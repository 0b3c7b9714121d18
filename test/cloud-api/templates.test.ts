import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type FakeTemplate, templateCursor } from "../../fakes/cloud-api/graph.ts";
import { checkBody } from "../../fakes/cloud-api/schema.ts";
import { applyTemplateStatusUpdate } from "../../src/gateways/cloud-api/template-status";
import { accountD1 } from "../databases";
import { call, createAccount, expectProblem } from "../helpers";
import { balanceOf, connectedSession, storedMessageCount, waitForMessages } from "../message-fixtures";
import { cloudApiSession, useFakeGraph } from "./webhooks-fixtures";

// Meta's Graph API is the shared fake (fakes/cloud-api/graph.ts): `message_templates` GET/POST
// and `sendMessage` as Meta's OpenAPI document gives them, every send checked against it. Its
// pages hold two templates at most, so a list of three takes two calls.
const fake = useFakeGraph({ templatePageSize: 2 });

/** A template as seeded at the fake, with the id the tests name; its WABA is the session's. */
type FakeTemplateSeed = Omit<FakeTemplate, "wabaId">;

const ORDER_UPDATE: FakeTemplateSeed = {
  id: "1001",
  name: "order_update",
  language: "en_US",
  category: "UTILITY",
  status: "APPROVED",
  components: [
    { type: "BODY", text: "Hi {{1}}, order {{2}} is on its way." },
    { type: "BUTTONS", buttons: [{ type: "URL", text: "Track", url: "https://shop.example/track/{{1}}" }] },
  ],
};
const PROMO: FakeTemplateSeed = {
  id: "1002",
  name: "promo",
  language: "en_US",
  category: "MARKETING",
  status: "PENDING",
  components: [{ type: "BODY", text: "Sale!" }],
};
const HELLO: FakeTemplateSeed = {
  id: "1003",
  name: "hello_world",
  language: "en_US",
  category: "UTILITY",
  status: "APPROVED",
  components: [{ type: "BODY", text: "Hello" }],
};

/**
 * A connected Cloud API session of a new business number, of WABA `wabaId` (a new one unless
 * given), whose WABA holds `templates` at the fake Graph API (those it does not hold yet).
 */
async function cloudSession(key: string, templates: FakeTemplateSeed[], wabaId?: string) {
  const graph = fake();
  const session = await cloudApiSession(graph, key, wabaId === undefined ? {} : { wabaId });
  for (const template of templates) {
    const held = graph.templates.some((t) => t.wabaId === session.wabaId && t.id === template.id);
    if (!held) graph.addTemplate({ ...template, wabaId: session.wabaId });
  }
  return { ...session, graph };
}

interface TemplateList {
  data: {
    id: string;
    name: string;
    language: string;
    status: string;
    category: string;
    components: unknown[];
  }[];
  meta: { synced_at: string; stale: boolean };
}

describe("template list", () => {
  it("reads every page from Meta, caches it, serves the cache inside the window, refreshes on demand", async () => {
    const { key, accountId } = await createAccount();
    const { id, graph, wabaId } = await cloudSession(key, [ORDER_UPDATE, PROMO, HELLO]);
    const first = await call<TemplateList>("GET", `/v1/chatapp/sessions/${id}/templates`, { key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.map((t) => [t.name, t.status, t.id])).toEqual([
      ["hello_world", "APPROVED", "1003"],
      ["order_update", "APPROVED", "1001"],
      ["promo", "PENDING", "1002"],
    ]);
    expect(first.body.data[1]?.components).toEqual(ORDER_UPDATE.components);
    expect(first.body.meta.stale).toBe(false);
    const listCalls = () => graph.callsOf("listTemplates");
    expect(listCalls()).toHaveLength(2);
    // The second page starts after the first page's last template (the fake's cursor of index 1).
    expect(new URLSearchParams(listCalls()[1]?.search).get("after")).toBe(templateCursor(1));
    const rows = await (await accountD1(accountId))
      .prepare("SELECT name FROM message_templates WHERE session_id = ?")
      .bind(id)
      .all();
    expect(rows.results).toHaveLength(3);

    const second = await call<TemplateList>("GET", `/v1/chatapp/sessions/${id}/templates`, { key });
    expect(second.body.data).toHaveLength(3);
    expect(listCalls()).toHaveLength(2);

    graph.deleteTemplates(wabaId, "order_update");
    graph.deleteTemplates(wabaId, "promo");
    const refreshed = await call<TemplateList>("GET", `/v1/chatapp/sessions/${id}/templates?refresh=true`, {
      key,
    });
    expect(refreshed.body.data.map((t) => t.name)).toEqual(["hello_world"]);
    expect(listCalls()).toHaveLength(3);

    graph.dropNext("listTemplates");
    const stale = await call<TemplateList>("GET", `/v1/chatapp/sessions/${id}/templates?refresh=true`, {
      key,
    });
    expect(stale.status).toBe(200);
    expect(stale.body.meta.stale).toBe(true);
    expect(stale.body.data.map((t) => t.name)).toEqual(["hello_world"]);
  });

  it("answers 404 for another account's session, 409 for a sandbox session", async () => {
    const { key } = await createAccount();
    const { id } = await cloudSession(key, [HELLO]);
    const other = await createAccount();
    expectProblem(
      await call("GET", `/v1/chatapp/sessions/${id}/templates`, { key: other.key }),
      404,
      "not_found",
    );
    expectProblem(
      await call("POST", `/v1/chatapp/sessions/${id}/templates`, {
        key: other.key,
        body: {
          name: "x",
          language: "en_US",
          category: "UTILITY",
          components: [{ type: "BODY", text: "x" }],
        },
      }),
      404,
      "not_found",
    );
    const sandbox = await connectedSession(other.key);
    expectProblem(
      await call("GET", `/v1/chatapp/sessions/${sandbox.id}/templates`, { key: other.key }),
      409,
      "not_supported_by_gateway",
    );
  });
});

describe("template create", () => {
  it("submits the template, caches Meta's answer, 201 PENDING; Meta's refusal is 422 template_rejected", async () => {
    const { key, accountId } = await createAccount();
    const { id, graph } = await cloudSession(key, []);
    const body = {
      name: "shipping_notice",
      language: "en_US",
      category: "UTILITY",
      components: [{ type: "BODY", text: "Hi {{1}}", example: { body_text: [["Ana"]] } }],
    };
    const res = await call<{ data: { id: string; status: string; category: string } }>(
      "POST",
      `/v1/chatapp/sessions/${id}/templates`,
      { key, body },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // The id Meta gave the template it created (PENDING, as Meta's answer says).
    const created = graph.templates.find((t) => t.name === "shipping_notice");
    expect(created).toMatchObject({ id: expect.stringMatching(/^\d+$/), status: "PENDING" });
    expect(res.body.data).toMatchObject({
      id: created?.id,
      status: "PENDING",
      category: "UTILITY",
      name: "shipping_notice",
    });
    const createCalls = () => graph.callsOf("createTemplate").map((c) => c.body);
    expect(createCalls()).toEqual([body]);
    const row = await (await accountD1(accountId))
      .prepare("SELECT template_id, status FROM message_templates WHERE session_id = ?")
      .bind(id)
      .first();
    expect(row).toEqual({ template_id: created?.id, status: "PENDING" });

    graph.failNext(
      { code: 100, message: "Invalid parameter", details: "Body text is too long." },
      "createTemplate",
    );
    const refused = await call("POST", `/v1/chatapp/sessions/${id}/templates`, {
      key,
      body: { ...body, name: "bad_one" },
    });
    expectProblem(refused, 422, "template_rejected");
    expect(String(refused.body.detail)).toContain("Body text is too long.");

    const invalid = await call("POST", `/v1/chatapp/sessions/${id}/templates`, {
      key,
      body: { ...body, name: "Bad Name", extra: 1 },
    });
    expectProblem(invalid, 422, "validation_failed");
    expect(Object.keys(invalid.body.errors as object).sort()).toEqual(["extra", "name"]);
    expect(createCalls()).toHaveLength(2);
  });
});

describe("template status updates", () => {
  it("updates the cache of every session of the WABA and records template.status_changed once per account", async () => {
    const { key, accountId } = await createAccount();
    const waba = `55${Date.now()}`;
    const a = await cloudSession(key, [PROMO], waba);
    const b = await cloudSession(key, [PROMO], waba);
    for (const s of [a, b]) await call("GET", `/v1/chatapp/sessions/${s.id}/templates`, { key });
    const value = {
      event: "APPROVED",
      message_template_id: 1002,
      message_template_name: "promo",
      message_template_language: "en_US",
      reason: "NONE",
    };
    const result = await applyTemplateStatusUpdate(env, waba, value);
    expect(result).toEqual({ valid: true, rowsUpdated: 2, eventsRecorded: 1 });
    const statuses = await (await accountD1(accountId))
      .prepare("SELECT status, reason FROM message_templates WHERE waba_id = ?")
      .bind(waba)
      .all();
    expect(statuses.results).toEqual([
      { status: "APPROVED", reason: null },
      { status: "APPROVED", reason: null },
    ]);
    const events = await call<{ data: { type: string; data: Record<string, unknown> }[] }>(
      "GET",
      "/v1/events?filter[type]=template.status_changed",
      { key },
    );
    expect(events.status, JSON.stringify(events.body)).toBe(200);
    expect(events.body.data).toHaveLength(1);
    const data = events.body.data[0]?.data as {
      template: Record<string, unknown>;
      chatapp_session_ids: string[];
    };
    expect(data.template).toMatchObject({
      id: "1002",
      name: "promo",
      status: "APPROVED",
      category: "MARKETING",
    });
    expect(data.chatapp_session_ids).toEqual([a.id, b.id].sort());
    // A redelivered update changes nothing and records nothing.
    expect(await applyTemplateStatusUpdate(env, waba, value)).toMatchObject({ eventsRecorded: 0 });
    expect(await applyTemplateStatusUpdate(env, waba, { nothing: true })).toMatchObject({ valid: false });
    expect(accountId).toBeTruthy();
  });
});

describe("template sends", () => {
  const send = (key: string, sessionId: string, template: Record<string, unknown>, to = ["+14155552671"]) =>
    call<{ data: { messages: { id: string; content: string; type: string }[] }; errors?: unknown }>(
      "POST",
      "/v1/chatapp/messages",
      {
        key,
        body: { chatapp_session_id: sessionId, to_number: to, type: "template", template },
      },
    );

  it("sends an approved template with Meta's template object: body parameters in order, the button's", async () => {
    const { key, accountId } = await createAccount();
    const { id, graph } = await cloudSession(key, [ORDER_UPDATE]);
    const res = await send(key, id, {
      name: "order_update",
      language: "en_US",
      variables: { body: ["Ana", "A-17"], buttons: [{ index: 0, sub_type: "url", parameter: "A-17" }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const message = res.body.data.messages[0];
    expect(message).toMatchObject({ type: "template", content: "order_update" });
    expect(await balanceOf(accountId)).toBe(99.99);
    const [sent] = await waitForMessages(key, [message?.id ?? ""], (m) => m.status === "sent");
    expect((sent?.metadata as Record<string, unknown> | undefined)?.template).toEqual({
      name: "order_update",
      language: "en_US",
      variables: { body: ["Ana", "A-17"], buttons: [{ index: 0, sub_type: "url", parameter: "A-17" }] },
    });
    expect(graph.sent.map((s) => s.body)).toEqual([
      {
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: "14155552671",
        type: "template",
        biz_opaque_callback_data: message?.id,
        template: {
          name: "order_update",
          language: { code: "en_US", policy: "deterministic" },
          components: [
            {
              type: "body",
              parameters: [
                { type: "text", text: "Ana" },
                { type: "text", text: "A-17" },
              ],
            },
            { type: "button", sub_type: "url", index: "0", parameters: [{ type: "text", text: "A-17" }] },
          ],
        },
      },
    ]);
    // The body is a `Message` as Meta's OpenAPI document reads (fakes/cloud-api/schema.ts, readings
    // (a)–(f): e.g. `language.policy` is required there though Meta's own examples omit it).
    expect(checkBody("sendMessage", graph.sent[0]?.body)).toEqual([]);
    expect(graph.invalidBodies).toEqual([]);
  });

  it("refuses an unknown or unapproved template with 422 template_not_found, charging nothing", async () => {
    const { key, accountId } = await createAccount();
    const { id } = await cloudSession(key, [ORDER_UPDATE, PROMO]);
    expectProblem(await send(key, id, { name: "nope", language: "en_US" }), 422, "template_not_found");
    expectProblem(await send(key, id, { name: "promo", language: "en_US" }), 422, "template_not_found");
    expectProblem(
      await send(key, id, { name: "order_update", language: "pt_BR" }),
      422,
      "template_not_found",
    );
    expect(await balanceOf(accountId)).toBe(100);
    expect(await storedMessageCount(accountId)).toBe(0);
  });

  it("names a missing variable, refuses extra ones, and refuses templates on a sandbox session", async () => {
    const { key, accountId } = await createAccount();
    const { id } = await cloudSession(key, [ORDER_UPDATE]);
    const missing = await send(key, id, {
      name: "order_update",
      language: "en_US",
      variables: { body: ["Ana"], buttons: [{ index: 0, sub_type: "url", parameter: "A-17" }] },
    });
    expectProblem(missing, 422, "validation_failed");
    expect(missing.body.errors).toEqual({
      "template.variables.body.1": ["required: the template's body has {{2}}"],
    });
    const extra = await send(key, id, {
      name: "order_update",
      language: "en_US",
      variables: { body: ["Ana", "A-17", "x"] },
    });
    expectProblem(extra, 422, "validation_failed");
    expect(Object.keys(extra.body.errors as object).sort()).toEqual([
      "template.variables.body",
      "template.variables.buttons",
    ]);
    const sandbox = await connectedSession(key);
    const onSandbox = await send(key, sandbox.id, { name: "order_update", language: "en_US" });
    expectProblem(onSandbox, 422, "validation_failed");
    expect(Object.keys(onSandbox.body.errors as object)).toEqual(["type"]);
    const noTemplate = await call("POST", "/v1/chatapp/messages", {
      key,
      body: { chatapp_session_id: id, to_number: ["+14155552671"], type: "template", content: "hi" },
    });
    expectProblem(noTemplate, 422, "validation_failed");
    expect(Object.keys(noTemplate.body.errors as object).sort()).toEqual(["content", "template"]);
    expect(await balanceOf(accountId)).toBe(100);
    expect(await storedMessageCount(accountId)).toBe(0);
  });
});
