import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createAccount, sessionStub } from "../helpers";
import { balanceOf, firstAttempts, getMessage, ledgerOf, sendText } from "../message-fixtures";
import { cloudApiSession, deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

// A send whose answer was lost (the Graph API call timed out after Meta took the message): the
// Graph API cannot look a message up, so the status webhook that carries our id in
// `biz_opaque_callback_data` settles it (`settled_by: "status_webhook"`), charged once, not resent.

const fake = useFakeGraph();
const CONTACT = "+14155550123";

describe("an unknown send settled by Meta's status webhook", () => {
  it("the sent status with our id settles it: read, status_webhook, charged once, sent once", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId, from: CONTACT.slice(1), text: "hi" });
    await deliverWebhooks(graph);

    graph.hangNext();
    const sent = await sendText(key, session, [CONTACT]);
    expect(sent.status, sent.text).toBe(201);
    const id = sent.body.data.messages[0]?.id ?? "";
    await firstAttempts([id]);
    expect(await getMessage(key, id)).toMatchObject({ status: "queued", metadata: { outcome: "unknown" } });
    const wamid = graph.sent[0]?.wamid ?? "";
    expect(graph.sent[0]?.body).toMatchObject({ biz_opaque_callback_data: id });

    const hooks = await deliverWebhooks(graph);
    expect(hooks).toHaveLength(3);
    const message = await getMessage(key, id);
    expect(message).toMatchObject({
      status: "read",
      provider_message_id: wamid,
      metadata: {
        attempts: 1,
        settled_by: "status_webhook",
        pricing: { category: "service", billable: false, pricing_model: "PMP" },
      },
    });
    expect(message.metadata.outcome).toBeUndefined();
    expect(message.sent_at).not.toBeNull();

    // The session's deadlines run: nothing is asked, resent or refunded.
    for (let i = 0; i < 3; i++) await runDurableObjectAlarm(sessionStub(session));
    expect(graph.sent).toHaveLength(1);
    expect(await balanceOf(accountId)).toBe(sent.body.data.new_balance);
    expect((await ledgerOf(accountId)).map((e) => e.kind)).toEqual(["credit", "charge"]);
    expect((await getMessage(key, id)).status).toBe("read");
  });
});
