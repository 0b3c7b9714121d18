import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { FakeGraph } from "../../fakes/cloud-api/graph.ts";
import { checkBody } from "../../fakes/cloud-api/schema.ts";
import { campaignMessages, command, waitForCampaign } from "../campaign-fixtures";
import { accountD1 } from "../databases";
import { call, createAccount, expectProblem } from "../helpers";
import { balanceOf, connectedSession, ledgerOf, storedMessageCount } from "../message-fixtures";
import { metadataProblems } from "../metadata-check";
import { campaignSendsReached, cloudApiSession, deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

// Template campaigns (docs/campaigns.md, Campaigns; Message templates): one approved template to every
// recipient, each value of its variables filled from the recipient's own `variables`, sent to the
// fake Graph API (fakes/cloud-api/graph.ts) and checked against Meta's document there.

const fake = useFakeGraph();

const PEOPLE = [
  { to_number: "+14155550131", variables: { name: "Ana", order: "A-1" } },
  { to_number: "+14155550132", variables: { name: "Bo", order: "B-22" } },
  { to_number: "+14155550133", variables: { name: "Cy", order: "C-333" } },
];

const TEMPLATE = {
  name: "order_update",
  language: "en_US",
  variables: {
    body: ["{{name}}", "no. {{order}}"],
    buttons: [{ index: 0, sub_type: "url", parameter: "{{order}}" }],
  },
};

/** The template at the fake, under the session's business account. */
function addOrderUpdate(graph: FakeGraph, wabaId: string, status = "APPROVED") {
  graph.addTemplate({
    wabaId,
    name: "order_update",
    language: "en_US",
    category: "UTILITY",
    status,
    components: [
      { type: "BODY", text: "Hi {{1}}, order {{2}} is on its way." },
      { type: "BUTTONS", buttons: [{ type: "URL", text: "Track", url: "https://shop.example/t/{{1}}" }] },
    ],
  });
}

async function setUp(balance = 10) {
  const graph = fake();
  const { key, accountId } = await createAccount(balance);
  const session = await cloudApiSession(graph, key);
  addOrderUpdate(graph, session.wabaId);
  return { graph, key, accountId, session };
}

function createTemplateCampaign(key: string, sessionIds: string[], extra: Record<string, unknown> = {}) {
  return call<{ data: { id: string; type: string; template: unknown; content: string | null } }>(
    "POST",
    "/v1/chatapp/campaigns",
    {
      key,
      body: {
        name: "Orders",
        chatapp_session_ids: sessionIds,
        type: "template",
        template: TEMPLATE,
        recipients: PEOPLE,
        delay_between: 0,
        ...extra,
      },
    },
  );
}

/** Campaigns of the account, straight from D1. */
async function campaignCount(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT count(*) AS n FROM campaigns WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("template campaigns", () => {
  it("sends each recipient the template with its own values, valid by Meta's document, charged PRICE_TEMPLATE each", async () => {
    const { graph, key, accountId, session } = await setUp();
    const created = await createTemplateCampaign(key, [session.id]);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ type: "template", content: null, template: TEMPLATE });

    const started = await command(key, created.body.data.id, "start");
    expect(started.status, started.text).toBe(200);
    await campaignSendsReached(graph, 3);

    const byNumber = new Map(graph.sent.map((s) => [String(s.body.to), s.body]));
    for (const person of PEOPLE) {
      const body = byNumber.get(person.to_number.slice(1));
      expect(body, person.to_number).toBeDefined();
      expect(checkBody("sendMessage", body)).toEqual([]);
      expect(body?.type).toBe("template");
      expect(body?.template).toEqual({
        name: "order_update",
        language: { code: "en_US", policy: "deterministic" },
        components: [
          {
            type: "body",
            parameters: [
              { type: "text", text: person.variables.name },
              { type: "text", text: `no. ${person.variables.order}` },
            ],
          },
          {
            type: "button",
            sub_type: "url",
            index: "0",
            parameters: [{ type: "text", text: person.variables.order }],
          },
        ],
      });
    }
    expect(graph.invalidBodies).toEqual([]);

    // Each message row: the template's name as content, the recipient's filled template in metadata.
    const rows = await campaignMessages(created.body.data.id);
    expect(
      rows.map((row) => [row.to_number, row.content, JSON.parse(row.metadata).template.variables.body]),
    ).toEqual(
      PEOPLE.map((p) => [p.to_number, "order_update", [p.variables.name, `no. ${p.variables.order}`]]),
    );
    expect(rows.flatMap((row) => metadataProblems(row.metadata))).toEqual([]);

    const price = Math.round(Number(env.PRICE_TEMPLATE) * 100);
    expect(await ledgerOf(accountId)).toEqual([
      expect.objectContaining({ kind: "credit" }),
      expect.objectContaining({ kind: "charge", amount: -3 * price, message_count: 3 }),
    ]);
    expect(await balanceOf(accountId)).toBe((1000 - 3 * price) / 100);
    const done = await waitForCampaign(key, created.body.data.id, (c) => c.stats.queued === 0, 15_000);
    expect(done.cost).toBe((3 * price) / 100);
  });

  it("a template the session does not have: 422 template_not_found, no campaign, nothing charged", async () => {
    const { key, accountId, session } = await setUp();
    const res = await createTemplateCampaign(key, [session.id], {
      template: { ...TEMPLATE, name: "no_such_template" },
    });
    expectProblem(res, 422, "template_not_found");
    expect(await campaignCount(accountId)).toBe(0);
    expect(await balanceOf(accountId)).toBe(10);
    expect(await ledgerOf(accountId)).toEqual([expect.objectContaining({ kind: "credit" })]);
  });

  it("a template not APPROVED on one of the sessions: 422 template_not_found", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const approved = await cloudApiSession(graph, key);
    const pending = await cloudApiSession(graph, key);
    addOrderUpdate(graph, approved.wabaId);
    addOrderUpdate(graph, pending.wabaId, "PENDING");
    const res = await createTemplateCampaign(key, [approved.id, pending.id]);
    const problem = expectProblem(res, 422, "template_not_found");
    expect(problem.detail).toContain(pending.id);
    expect(await campaignCount(accountId)).toBe(0);
  });

  it("a recipient without a value for a placeholder: 422 naming recipients.<i>.variables, nothing created", async () => {
    const { key, accountId, session } = await setUp();
    const res = await createTemplateCampaign(key, [session.id], {
      recipients: [PEOPLE[0], { to_number: "+14155550139", variables: { name: "Di" } }],
    });
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual({
      "recipients.1.variables": ["no value for {{order}}"],
    });
    expect(await campaignCount(accountId)).toBe(0);

    // Recipients added to a template draft later are checked the same way.
    const draft = await createTemplateCampaign(key, [session.id]);
    expect(draft.status, draft.text).toBe(201);
    const added = await call("POST", `/v1/chatapp/campaigns/${draft.body.data.id}/recipients`, {
      key,
      body: { recipients: [{ to_number: "+14155550139", variables: { order: "D-4" } }] },
    });
    expect(expectProblem(added, 422, "validation_failed").errors).toEqual({
      "recipients.0.variables": ["no value for {{name}}"],
    });
  });

  it("too few variables for the template: 422 naming template.variables.body.<i>", async () => {
    const { key, session } = await setUp();
    const res = await createTemplateCampaign(key, [session.id], {
      template: { ...TEMPLATE, variables: { ...TEMPLATE.variables, body: ["{{name}}"] } },
    });
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual({
      "template.variables.body.1": ["required: the template's body has {{2}}"],
    });
  });

  it("a session on another gateway: 422 naming type", async () => {
    const { key, session } = await setUp();
    const sandbox = await connectedSession(key);
    const res = await createTemplateCampaign(key, [session.id, sandbox.id]);
    const errors = expectProblem(res, 422, "validation_failed").errors as Record<string, string[]>;
    expect(Object.keys(errors)).toEqual(["type"]);
    expect(errors.type?.[0]).toContain(sandbox.id);
  });

  it("a template paused by Meta after the draft was made: the start is 422 template_not_found, nothing charged", async () => {
    const { graph, key, accountId, session } = await setUp();
    const created = await createTemplateCampaign(key, [session.id]);
    expect(created.status, created.text).toBe(201);
    graph.setTemplateStatus("order_update", "en_US", "PAUSED");
    await deliverWebhooks(graph);
    expectProblem(await command(key, created.body.data.id, "start"), 422, "template_not_found");
    expect(await ledgerOf(accountId)).toEqual([expect.objectContaining({ kind: "credit" })]);
    expect(await storedMessageCount(accountId)).toBe(0);
  });

  it("refuses placeholders that are not variable names, and a template without type template", async () => {
    const { key, session } = await setUp();
    const bad = await createTemplateCampaign(key, [session.id], {
      template: { ...TEMPLATE, variables: { body: ["{{1x}}", "{{order}"], buttons: [] } },
    });
    expect(Object.keys(expectProblem(bad, 422, "validation_failed").errors as object).sort()).toEqual([
      "template.variables.body.0",
      "template.variables.body.1",
    ]);
    const text = await createTemplateCampaign(key, [session.id], { type: "text", content: "Hi {{name}}" });
    expect(expectProblem(text, 422, "validation_failed").errors).toEqual({ template: ["only for template"] });
  });
});
