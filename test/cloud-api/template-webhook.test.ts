import { describe, expect, it } from "vitest";
import type { FakeGraph } from "../../fakes/cloud-api/graph.ts";
import { accountD1, driveMove, otherDatabase } from "../databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem } from "../helpers";
import { cloudApiSession, deliverWebhooks, postWebhook, useFakeGraph } from "./webhooks-fixtures";

// Meta's `message_template_status_update` through the signed webhook route, end to end: the fake
// Graph API moves a template and posts the update as Meta would.

const fake = useFakeGraph();

/** A session whose cache holds `order_ready` PENDING, read from Meta now; the session, its key and account. */
async function listedSession(graph: FakeGraph) {
  const { key, accountId } = await createAccount();
  const session = await cloudApiSession(graph, key);
  graph.addTemplate({
    wabaId: session.wabaId,
    name: "order_ready",
    language: "en_US",
    category: "UTILITY",
    components: [{ type: "BODY", text: "Order {{1}} is ready." }],
    status: "PENDING",
  });
  const listed = await call("GET", `/v1/chatapp/sessions/${session.id}/templates`, { key });
  expect(listed.status).toBe(200);
  return { key, accountId, session };
}

describe("template status webhooks", () => {
  it("moves the cached template and records template.status_changed; a redelivery records nothing", async () => {
    const graph = fake();
    const { key, accountId, session } = await listedSession(graph);
    const listed = await call<{ data: { name: string; status: string }[] }>(
      "GET",
      `/v1/chatapp/sessions/${session.id}/templates`,
      { key },
    );
    expect(listed.body.data.map((t) => [t.name, t.status])).toEqual([["order_ready", "PENDING"]]);

    graph.setTemplateStatus("order_ready", "en_US", "APPROVED");
    const [posted, ...more] = await deliverWebhooks(graph);
    expect(more).toEqual([]);
    expect(posted?.res.body).toEqual({ success: true, ignored: false });
    const cached = await (await accountD1(accountId))
      .prepare("SELECT status FROM message_templates WHERE session_id = ?")
      .bind(session.id)
      .first<{ status: string }>();
    expect(cached?.status).toBe("APPROVED");
    const events = await call<{ data: { data: { template: { name: string; status: string } } }[] }>(
      "GET",
      "/v1/events?filter[type]=template.status_changed",
      { key },
    );
    expect(events.body.data.map((e) => e.data.template)).toMatchObject([
      { name: "order_ready", status: "APPROVED" },
    ]);

    // Meta redelivers the same post: applied to the same template again, which changes nothing and
    // records no second event.
    const again = await call("POST", "/gateway/cloud-api", {
      body: posted?.body,
      headers: { "X-Hub-Signature-256": posted?.signature ?? "" },
    });
    expect(again.body).toEqual({ success: true, ignored: false });
    const after = await call<{ data: unknown[] }>("GET", "/v1/events?filter[type]=template.status_changed", {
      key,
    });
    expect(after.body.data).toHaveLength(1);
  });
});

describe("template status webhooks while an account moves", () => {
  it("refuses the update with 503 while the account moves; Meta's redelivery after the move applies it once", async () => {
    const graph = fake();
    const { key, accountId, session } = await listedSession(graph);
    const account = await call<{ data: { account: { database: string } } }>(
      "GET",
      `/admin/accounts/${accountId}`,
      {
        key: ADMIN_TOKEN,
      },
    );
    const to = otherDatabase(account.body.data.account.database);
    const moving = await call("POST", `/admin/accounts/${accountId}/move`, {
      key: ADMIN_TOKEN,
      body: { database: to },
    });
    expect(moving.status).toBe(202);

    graph.setTemplateStatus("order_ready", "en_US", "APPROVED");
    const [hook, ...more] = await graph.takeWebhooks();
    expect(more).toEqual([]);
    const refused = await postWebhook(hook?.body ?? "", hook?.signature ?? "");
    expectProblem(refused, 503, "account_moving");

    expect(await driveMove(accountId)).toBe("done");
    const again = await postWebhook(hook?.body ?? "", hook?.signature ?? "");
    expect(again.body).toEqual({ success: true, ignored: false });
    const cached = await (await accountD1(accountId))
      .prepare("SELECT status FROM message_templates WHERE session_id = ?")
      .bind(session.id)
      .first<{ status: string }>();
    expect(cached?.status).toBe("APPROVED");
    const events = await call<{ data: unknown[] }>("GET", "/v1/events?filter[type]=template.status_changed", {
      key,
    });
    expect(events.body.data).toHaveLength(1);
  });
});

describe("template status webhooks out of time", () => {
  /** The fake's queued status update moved to `time` (its entry's `time`, Unix seconds), re-signed. */
  async function updateAt(graph: FakeGraph, time: number): Promise<string> {
    const [hook, ...more] = await graph.takeWebhooks();
    expect(more).toEqual([]);
    const body = JSON.parse(hook?.body ?? "{}");
    body.entry[0].time = time;
    return JSON.stringify(body);
  }

  /** The cached templates' row of session `sessionId` of account `accountId`. */
  const cacheRow = async (accountId: string, sessionId: string) =>
    (await accountD1(accountId))
      .prepare("SELECT status, reason, synced_at, status_at FROM message_templates WHERE session_id = ?")
      .bind(sessionId)
      .first<{ status: string; reason: string | null; synced_at: number; status_at: number }>();

  const statusEvents = async (key: string) =>
    (
      await call<{ data: { data: { template: { status: string } } }[] }>(
        "GET",
        "/v1/events?filter[type]=template.status_changed",
        { key },
      )
    ).body.data.map((e) => e.data.template.status);

  it("an update triggered before the cache was read from Meta changes nothing and records no event", async () => {
    const graph = fake();
    const { key, accountId, session } = await listedSession(graph);
    const before = await cacheRow(accountId, session.id);
    expect(before).toMatchObject({ status: "PENDING", reason: null });
    expect(before?.status_at).toBe(before?.synced_at);

    // Meta's REJECTED of a minute before the read arrives late.
    graph.setTemplateStatus("order_ready", "en_US", "REJECTED", "INCORRECT_CATEGORY");
    const stale = await updateAt(graph, Math.floor((before?.synced_at ?? 0) / 1000) - 60);
    const res = await postWebhook(stale);
    expect(res.body).toEqual({ success: true, ignored: true });
    expect(await cacheRow(accountId, session.id)).toEqual(before);
    expect(await statusEvents(key)).toEqual([]);
  });

  it("of two updates delivered out of order, the older one changes nothing", async () => {
    const graph = fake();
    const { key, accountId, session } = await listedSession(graph);
    const readAt = Math.floor(((await cacheRow(accountId, session.id))?.synced_at ?? 0) / 1000);

    graph.setTemplateStatus("order_ready", "en_US", "PAUSED");
    const paused = await updateAt(graph, readAt + 5);
    graph.setTemplateStatus("order_ready", "en_US", "APPROVED");
    const approved = await updateAt(graph, readAt + 10);

    expect((await postWebhook(approved)).body).toEqual({ success: true, ignored: false });
    const after = await cacheRow(accountId, session.id);
    expect(after).toMatchObject({ status: "APPROVED", reason: null, status_at: (readAt + 10) * 1000 });
    expect((await postWebhook(paused)).body).toEqual({ success: true, ignored: true });
    expect(await cacheRow(accountId, session.id)).toEqual(after);
    expect(await statusEvents(key)).toEqual(["APPROVED"]);
  });
});
