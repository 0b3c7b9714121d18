import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { outsideWindowQuery } from "../../src/campaigns/service-window";
import { createDb } from "../../src/db/client";
import { number as numberOf, showCampaign } from "../campaign-fixtures";
import { accountD1, firstAccountD1 } from "../databases";
import { call, createAccount, expectProblem } from "../helpers";
import { balanceOf, ledgerOf } from "../message-fixtures";
import { campaignSendsReached, cloudApiSession, deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

// The 24-hour customer service window for campaigns (docs/campaigns.md, Campaigns): a campaign that is not a
// template campaign starts only when every recipient is inside the window of every Cloud API
// session of the campaign; otherwise the start is 422 outside_service_window before anything is
// charged or made. Template campaigns are exempt.

const fake = useFakeGraph();
const INSIDE = ["+14155550141", "+14155550142"];
const OUTSIDE = "+14155550143";

/** An account with a Cloud API session to which `writers` wrote just now. */
async function setUp(writers: string[]) {
  const graph = fake();
  const { key, accountId } = await createAccount(10);
  const session = await cloudApiSession(graph, key);
  for (const from of writers)
    graph.queueIncoming({ phoneNumberId: session.phoneNumberId, from: from.slice(1), text: "hi" });
  await deliverWebhooks(graph);
  return { graph, key, accountId, session };
}

async function createDraft(key: string, body: Record<string, unknown>) {
  const res = await call<{ data: { id: string } }>("POST", "/v1/chatapp/campaigns", {
    key,
    body: { name: "Window", type: "text", content: "Hi {{name}}", delay_between: 0, ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

/** Outgoing messages of the account in D1 (its contacts' incoming ones are stored too). */
async function outgoingCount(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT count(*) AS n FROM messages WHERE account_id = ? AND direction = 'outgoing'")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

const people = (numbers: string[]) => numbers.map((to_number) => ({ to_number, variables: { name: "Ana" } }));

describe("the service window for campaigns", () => {
  it("a text campaign with a recipient outside: start is 422 with outside and outside_count, nothing charged or made", async () => {
    const { key, accountId, session } = await setUp(INSIDE);
    const id = await createDraft(key, {
      chatapp_session_ids: [session.id],
      recipients: people([INSIDE[0] ?? "", OUTSIDE, INSIDE[1] ?? ""]),
    });
    const problem = expectProblem(
      await call("POST", `/v1/chatapp/campaigns/${id}/start`, { key }),
      422,
      "outside_service_window",
    );
    expect(problem.outside).toEqual([OUTSIDE]);
    expect(problem.outside_count).toBe(1);
    expect((await showCampaign(key, id)).status).toBe("draft");
    expect(await balanceOf(accountId)).toBe(10);
    expect(await ledgerOf(accountId)).toEqual([expect.objectContaining({ kind: "credit" })]);
    expect(await outgoingCount(accountId)).toBe(0);
  });

  it("lists at most the first 100 numbers outside, in the order added, and counts them all", async () => {
    const { key, session } = await setUp([]);
    const numbers = Array.from({ length: 150 }, (_, i) => numberOf(i));
    const id = await createDraft(key, { chatapp_session_ids: [session.id], recipients: people(numbers) });
    const problem = expectProblem(
      await call("POST", `/v1/chatapp/campaigns/${id}/start`, { key }),
      422,
      "outside_service_window",
    );
    expect(problem.outside).toEqual(numbers.slice(0, 100));
    expect(problem.outside_count).toBe(150);
  });

  it("recipients on the opt-out list do not count (they are skipped, not sent)", async () => {
    const { graph, key, session } = await setUp(INSIDE);
    expect((await call("POST", "/v1/opt-outs", { key, body: { to_number: OUTSIDE } })).status).toBe(201);
    const id = await createDraft(key, {
      chatapp_session_ids: [session.id],
      recipients: people([...INSIDE, OUTSIDE]),
    });
    const started = await call("POST", `/v1/chatapp/campaigns/${id}/start`, { key });
    expect(started.status, started.text).toBe(200);
    await campaignSendsReached(graph, 2);
    expect((await showCampaign(key, id)).stats.skipped).toBe(1);
  });

  it("every recipient inside: the campaign runs", async () => {
    const { graph, key, session } = await setUp(INSIDE);
    const id = await createDraft(key, { chatapp_session_ids: [session.id], recipients: people(INSIDE) });
    const started = await call("POST", `/v1/chatapp/campaigns/${id}/start`, { key });
    expect(started.status, started.text).toBe(200);
    await campaignSendsReached(graph, 2);
    expect(graph.sent.map((s) => s.body.to).sort()).toEqual(INSIDE.map((n) => n.slice(1)));
    expect(graph.sent.map((s) => (s.body.text as { body: string }).body)).toEqual(["Hi Ana", "Hi Ana"]);
  });

  it("strict rule: a recipient inside one Cloud API session's window but not another's is outside", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const first = await cloudApiSession(graph, key);
    const second = await cloudApiSession(graph, key);
    for (const from of INSIDE)
      graph.queueIncoming({ phoneNumberId: first.phoneNumberId, from: from.slice(1), text: "hi" });
    graph.queueIncoming({ phoneNumberId: second.phoneNumberId, from: INSIDE[0]?.slice(1) ?? "", text: "hi" });
    await deliverWebhooks(graph);
    const id = await createDraft(key, {
      chatapp_session_ids: [first.id, second.id],
      recipients: people(INSIDE),
    });
    const problem = expectProblem(
      await call("POST", `/v1/chatapp/campaigns/${id}/start`, { key }),
      422,
      "outside_service_window",
    );
    expect(problem.outside).toEqual([INSIDE[1]]);
  });

  it("a template campaign to recipients outside the window runs", async () => {
    const { graph, key, session } = await setUp([]);
    graph.addTemplate({
      wabaId: session.wabaId,
      name: "hello_world",
      language: "en_US",
      category: "UTILITY",
      status: "APPROVED",
      components: [{ type: "BODY", text: "Hello {{1}}" }],
    });
    const id = await createDraft(key, {
      chatapp_session_ids: [session.id],
      type: "template",
      content: undefined,
      template: { name: "hello_world", language: "en_US", variables: { body: ["{{name}}"] } },
      recipients: people([OUTSIDE, ...INSIDE]),
    });
    const started = await call("POST", `/v1/chatapp/campaigns/${id}/start`, { key });
    expect(started.status, started.text).toBe(200);
    await campaignSendsReached(graph, 3);
    expect(graph.sent.every((s) => s.body.type === "template")).toBe(true);
  });

  it("the query walks the recipients by primary key in seq order, with key lookups and no scan or sort", async () => {
    const db = createDb(firstAccountD1());
    const plan = await db.all<{ detail: string }>(
      sql`EXPLAIN QUERY PLAN ${outsideWindowQuery("c", "a", ["s1", "s2"], 0)}`,
    );
    const details = plan.map((row) => row.detail).join("\n");
    expect(details).toMatch(/SEARCH r USING INDEX sqlite_autoindex_campaign_recipients_1 \(campaign_id=\?\)/);
    expect(details).toMatch(/SEARCH c USING (COVERING )?INDEX \S+ \(campaign_id=\?\)/);
    expect(details).toMatch(
      /SEARCH o USING (COVERING )?INDEX sqlite_autoindex_opt_outs_1 \(account_id=\? AND to_number=\?\)/,
    );
    expect(details).toMatch(
      /SEARCH ci USING (COVERING )?INDEX sqlite_autoindex_contact_identifiers_1 \(chatapp_session_id=\? AND kind=\? AND value=\?\)/,
    );
    expect(details).toMatch(/SEARCH w USING INDEX sqlite_autoindex_contacts_1 \(id=\?\)/);
    expect(details).not.toMatch(/SCAN r\b|SCAN w\b|SCAN o\b|SCAN ci\b/);
    expect(details).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
  });
});
