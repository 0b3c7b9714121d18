import { describe, expect, it } from "vitest";
import { OTP_CODE_TEMPLATE } from "../../fakes/cloud-api/graph.ts";
import { showCampaign } from "../campaign-fixtures";
import { accountD1 } from "../databases";
import { call, createAccount, expectProblem } from "../helpers";
import { balanceOf, connectedSession, ledgerOf, storedMessageCount } from "../message-fixtures";
import { campaignSendsReached, cloudApiSession, deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

// Campaign recipients known by a user id on the Cloud API (docs/campaigns.md, Campaigns and docs/contacts.md,
// Contacts): every session of a campaign must send to each recipient's kind of user id (the Cloud API sends
// to business-scoped user ids, not to LIDs), and an authentication template with a code button takes
// no BSUID; otherwise 422 recipient_not_supported before anything is stored or charged. A BSUID
// recipient is inside the service window as a number is: when the user wrote to the session.

const fake = useFakeGraph();
const BSUID = "US.13491208655302741918";
const SILENT_BSUID = "US.55512345678901234567";
const LID = "120363025246125888@lid";
const NUMBER = "+14155550161";

/** Campaigns of the account, straight from D1. */
async function campaignCount(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT count(*) AS n FROM campaigns WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

function createCampaign(key: string, body: Record<string, unknown>) {
  return call<{ data: { id: string } }>("POST", "/v1/chatapp/campaigns", {
    key,
    body: { name: "Ids", type: "text", content: "Hi {{name}}", delay_between: 0, ...body },
  });
}

describe("a LID recipient on a Cloud API campaign", () => {
  it("is 422 recipient_not_supported naming it, at create, and nothing is stored or charged", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const cloud = await cloudApiSession(graph, key);
    // The sandbox session could send to it; the Cloud API one cannot, and either may be picked.
    const sandbox = await connectedSession(key);
    const res = await createCampaign(key, {
      chatapp_session_ids: [sandbox.id, cloud.id],
      recipients: [
        { to_number: NUMBER, variables: { name: "Ada" } },
        { to_user_id: BSUID, variables: { name: "Bo" } },
        { to_user_id: LID, variables: { name: "Cy" } },
      ],
    });
    const problem = expectProblem(res, 422, "recipient_not_supported");
    expect(problem).toMatchObject({ recipients: [LID], refused_count: 1 });
    expect(problem.detail).toContain(`Session ${cloud.id}'s gateway (cloud_api)`);
    expect(await campaignCount(accountId)).toBe(0);
    expect(await balanceOf(accountId)).toBe(10);
    expect(await ledgerOf(accountId)).toEqual([expect.objectContaining({ kind: "credit" })]);
    expect(await storedMessageCount(accountId)).toBe(0);
  });

  it("is refused when added to a draft: the draft keeps its recipients", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const cloud = await cloudApiSession(graph, key);
    const created = await createCampaign(key, {
      chatapp_session_ids: [cloud.id],
      recipients: [{ to_user_id: BSUID, variables: { name: "Bo" } }],
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id;
    const res = await call("POST", `/v1/chatapp/campaigns/${id}/recipients`, {
      key,
      body: {
        recipients: [
          { to_number: NUMBER, variables: { name: "Ada" } },
          { to_user_id: LID, variables: { name: "Cy" } },
        ],
      },
    });
    expect(expectProblem(res, 422, "recipient_not_supported")).toMatchObject({
      recipients: [LID],
      refused_count: 1,
    });
    expect((await showCampaign(key, id)).stats.total).toBe(1);
  });

  it("lists at most the first 100 refused, in the request's order, and counts them all", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const cloud = await cloudApiSession(graph, key);
    const lids = Array.from({ length: 120 }, (_, i) => `${1_000_000 + i}@lid`);
    const res = await createCampaign(key, {
      chatapp_session_ids: [cloud.id],
      recipients: lids.map((to_user_id) => ({ to_user_id, variables: { name: "x" } })),
    });
    const problem = expectProblem(res, 422, "recipient_not_supported");
    expect(problem.recipients).toEqual(lids.slice(0, 100));
    expect(problem.refused_count).toBe(120);
    expect(await campaignCount(accountId)).toBe(0);
  });
});

describe("a BSUID recipient of a template campaign", () => {
  const CODE_VARIABLES = {
    body: ["{{code}}"],
    buttons: [{ index: 0, sub_type: "url", parameter: "{{code}}" }],
  };

  it("is refused at create when the template is an authentication template with a code button", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const cloud = await cloudApiSession(graph, key);
    graph.addTemplate({ wabaId: cloud.wabaId, ...OTP_CODE_TEMPLATE });
    const res = await createCampaign(key, {
      chatapp_session_ids: [cloud.id],
      type: "template",
      content: undefined,
      template: { name: "otp_code", language: "en_US", variables: CODE_VARIABLES },
      recipients: [
        { to_number: NUMBER, variables: { code: "123456" } },
        { to_user_id: BSUID, variables: { code: "654321" } },
      ],
    });
    const problem = expectProblem(res, 422, "recipient_not_supported");
    expect(problem).toMatchObject({ recipients: [BSUID], refused_count: 1 });
    expect(problem.detail).toContain("error 131062");
    expect(await campaignCount(accountId)).toBe(0);
  });

  it("is refused at start when the template became one since: nothing charged, still a draft", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const cloud = await cloudApiSession(graph, key);
    const template = graph.addTemplate({
      wabaId: cloud.wabaId,
      name: "sign_in",
      language: "en_US",
      category: "UTILITY",
      components: [
        { type: "BODY", text: "Your sign-in code is {{1}}." },
        { type: "BUTTONS", buttons: [{ type: "URL", text: "Open", url: "https://shop.example/c/{{1}}" }] },
      ],
    });
    const created = await createCampaign(key, {
      chatapp_session_ids: [cloud.id],
      type: "template",
      content: undefined,
      template: { name: "sign_in", language: "en_US", variables: CODE_VARIABLES },
      recipients: [
        { to_number: NUMBER, variables: { code: "123456" } },
        { to_user_id: BSUID, variables: { code: "654321" } },
      ],
    });
    expect(created.status, created.text).toBe(201);
    // Meta now has it as an authentication template with a copy-code button; the cache reads it.
    template.category = "AUTHENTICATION";
    template.components = OTP_CODE_TEMPLATE.components;
    const listed = await call("GET", `/v1/chatapp/sessions/${cloud.id}/templates?refresh=true`, { key });
    expect(listed.status, listed.text).toBe(200);
    const id = created.body.data.id;
    const started = await call("POST", `/v1/chatapp/campaigns/${id}/start`, { key });
    expect(expectProblem(started, 422, "recipient_not_supported")).toMatchObject({
      recipients: [BSUID],
      refused_count: 1,
    });
    expect((await showCampaign(key, id)).status).toBe("draft");
    expect(await balanceOf(accountId)).toBe(10);
    expect(await storedMessageCount(accountId)).toBe(0);
  });
});

describe("a BSUID recipient of a text campaign", () => {
  it("is inside the service window when the user wrote, outside when not; sent to as `recipient`", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const cloud = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId: cloud.phoneNumberId, userId: BSUID, username: "@bo", text: "hi" });
    await deliverWebhooks(graph);
    const outside = await createCampaign(key, {
      chatapp_session_ids: [cloud.id],
      recipients: [
        { to_user_id: BSUID, variables: { name: "Bo" } },
        { to_user_id: SILENT_BSUID, variables: { name: "Si" } },
      ],
    });
    expect(outside.status, outside.text).toBe(201);
    const refused = await call("POST", `/v1/chatapp/campaigns/${outside.body.data.id}/start`, { key });
    expect(expectProblem(refused, 422, "outside_service_window")).toMatchObject({
      outside: [SILENT_BSUID],
      outside_count: 1,
    });
    expect(await balanceOf(accountId)).toBe(10);

    const inside = await createCampaign(key, {
      chatapp_session_ids: [cloud.id],
      recipients: [{ to_user_id: BSUID, variables: { name: "Bo" } }],
    });
    const started = await call("POST", `/v1/chatapp/campaigns/${inside.body.data.id}/start`, { key });
    expect(started.status, started.text).toBe(200);
    await campaignSendsReached(graph, 1);
    const [sent] = graph.sent;
    // The fake checks each send against Meta's document.
    expect(graph.invalidBodies).toEqual([]);
    expect(sent?.body).toMatchObject({ recipient: BSUID, type: "text", text: { body: "Hi Bo" } });
    expect(sent?.body).not.toHaveProperty("to");
  });
});
