import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createAccount } from "../helpers";
import { cloudApiSession, deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

// Meta's `message_template_status_update` through the signed webhook route, end to end: the fake
// Graph API moves a template and posts the update as Meta would.

const fake = useFakeGraph();

describe("template status webhooks", () => {
  it("moves the cached template and records template.status_changed; a redelivery records nothing", async () => {
    const graph = fake();
    const { key } = await createAccount();
    const session = await cloudApiSession(graph, key);
    graph.addTemplate({
      wabaId: session.wabaId,
      name: "order_ready",
      language: "en_US",
      category: "UTILITY",
      components: [{ type: "BODY", text: "Order {{1}} is ready." }],
      status: "PENDING",
    });
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
    const cached = await env.DB.prepare("SELECT status FROM message_templates WHERE session_id = ?")
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
