import { describe, expect, it } from "vitest";
import { command, waitForCampaign } from "../campaign-fixtures";
import { accountD1 } from "../databases";
import { call, createAccount, TIMESTAMP, waitFor } from "../helpers";
import { getMessage, ms, sendText } from "../message-fixtures";
import { type Typed, typeThenSend } from "../typing-fixtures";
import { openWindow, useExampleNumber } from "./sessions-fixtures";
import { deliverWebhooks, linkNumber } from "./webhooks-fixtures";

// "Typing…" before a send on the WhatsApp Cloud API (docs/messages.md, Typing before a send): Meta's typing
// indicator is a read receipt of the contact's latest message with `typing_indicator` (the
// example "Send typing indicator and read receipt" of Meta's OpenAPI document), sent on the
// messages edge before the message; Meta ends it at the send. Without a message from the contact
// there is nothing to answer: no indicator, recorded as such, and the message goes.

const meta = useExampleNumber();
const CONTACT = "+14155552680";

describe("simulate_typing on the Cloud API", () => {
  it("answers the contact's latest message with the typing indicator, then sends after the typing's time", async () => {
    const { key } = await createAccount();
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, [CONTACT]);
    const latest = meta.graph.queueIncoming({
      phoneNumberId: meta.number.phoneNumberId,
      from: CONTACT,
      text: "Are you open today?",
    });
    await deliverWebhooks(meta.graph);

    const res = await sendText(key, session, [CONTACT], {
      content: "Yes, until 6 pm.",
      simulate_typing: true,
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const { message, startedAt } = await typeThenSend(key, session, id, 1000);

    expect(meta.graph.reads).toEqual([
      {
        phoneNumberId: meta.number.phoneNumberId,
        messageId: latest,
        typingIndicator: true,
        at: expect.any(Number),
      },
    ]);
    const onEdge = meta.graph.callsOf("sendMessage").map((c) => c.body);
    expect(onEdge).toEqual([
      {
        messaging_product: "whatsapp",
        status: "read",
        message_id: latest,
        typing_indicator: { type: "text" },
      },
      expect.objectContaining({
        type: "text",
        text: { body: "Yes, until 6 pm." },
        biz_opaque_callback_data: id,
      }),
    ]);
    expect(meta.graph.invalidBodies).toEqual([]);
    expect(message.status).toBe("sent");
    expect(message.metadata.typing).toEqual({
      ms: 1000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: true,
    });
    expect(ms(message.metadata.typing?.started_at ?? null)).toBe(startedAt);
  });

  it("a typing indicator Meta refuses is recorded and the message is sent all the same", async () => {
    const { key } = await createAccount();
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, [CONTACT]);
    meta.graph.readFault = { code: 131000, message: "Something went wrong" };
    const res = await sendText(key, session, [CONTACT], { content: "Hello", simulate_typing: true });
    const id = res.body.data.messages[0]?.id ?? "";
    const { message } = await typeThenSend(key, session, id, 1000);

    expect(meta.graph.reads).toEqual([]);
    expect(meta.graph.sent).toHaveLength(1);
    expect(message.status).toBe("sent");
    expect(message.metadata.attempts).toBe(1);
    expect(message.metadata.typing).toEqual({
      ms: 1000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: false,
      reason: expect.stringContaining("gateway_http_400"),
    });
  });

  it("a template campaign to contacts who never wrote: no indicator (no_incoming_message), sent all the same", async () => {
    const { key, accountId } = await createAccount();
    const session = await linkNumber(key, meta.number);
    meta.graph.addTemplate({
      wabaId: meta.number.wabaId,
      name: "order_update",
      language: "en_US",
      category: "UTILITY",
      status: "APPROVED",
      components: [{ type: "BODY", text: "Hi {{1}}, your order is on its way." }],
    });
    const created = await call<{ data: { id: string; simulate_typing: boolean } }>(
      "POST",
      "/v1/chatapp/campaigns",
      {
        key,
        body: {
          name: "Orders",
          chatapp_session_ids: [session],
          type: "template",
          template: {
            name: "order_update",
            language: "en_US",
            variables: { body: ["{{name}}"], buttons: [] },
          },
          recipients: [{ to_number: CONTACT, variables: { name: "Ana" } }],
          delay_between: 0,
          simulate_typing: true,
        },
      },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.simulate_typing).toBe(true);
    const campaign = created.body.data.id;
    expect((await command(key, campaign, "start")).status).toBe(200);
    await waitForCampaign(
      key,
      campaign,
      (c) => c.stats.sent + c.stats.delivered + c.stats.read === 1,
      15_000,
    );

    const { results } = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE campaign_id = ?")
      .bind(campaign)
      .all<{ id: string }>();
    const message = (await getMessage(key, results[0]?.id ?? "")) as Typed;
    expect(message.metadata.typing).toEqual({
      ms: 1000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: false,
      reason: "no_incoming_message",
    });
    expect(meta.graph.reads).toEqual([]);
    await waitFor(
      () => {
        expect(meta.graph.sent).toHaveLength(1);
        return true;
      },
      {
        reason: "the send to reach the Graph API fake (the outbound queue hands it over)",
        timeoutMs: 1_000,
        intervalMs: 50,
      },
    );
    expect(meta.graph.callsOf("sendMessage").every((c) => c.body?.status !== "read")).toBe(true);
  });
});
