import { describe, expect, it } from "vitest";
import { checkBody } from "../../fakes/cloud-api/schema";
import { accountD1 } from "../databases";
import { call, createAccount } from "../helpers";
import { getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { openWindow, useExampleNumber } from "./sessions-fixtures";
import { deliverWebhooks, linkNumber, postWebhook } from "./webhooks-fixtures";

// Replies and reactions through a Cloud API session (docs/messages.md, Replies and reactions), against the
// fake Graph API: a reply's `context.message_id` and a `reaction` message (`ReactionMessage` of
// Meta's document, checked by the fake), and the webhooks of a user's reply (`context.id`) and
// reaction (`type: reaction`).

const TO = "+14155552671";

const meta = useExampleNumber();

interface Shown extends Message {
  reply_to: string | null;
  metadata: Message["metadata"] & { reactions?: { from: string; emoji: string; at: string }[] };
}

async function send(key: string, body: Record<string, unknown>): Promise<Message> {
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", { key, body });
  expect(res.status, res.text).toBe(201);
  const [sent] = await waitForMessages(key, [res.body.data.messages[0]?.id ?? ""]);
  expect(sent?.status).toBe("sent");
  return sent as Message;
}

async function incomingIds(accountId: string): Promise<string[]> {
  const rows = await (await accountD1(accountId))
    .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming' ORDER BY created_at")
    .bind(accountId)
    .all<{ id: string }>();
  return rows.results.map((row) => row.id);
}

async function reactionEvents(key: string) {
  const res = await call<{ data: { data: Record<string, string> }[] }>(
    "GET",
    "/v1/events?limit=100&filter[type]=message.reaction",
    { key },
  );
  return res.body.data.map((event) => event.data).reverse();
}

describe("Cloud API: sending replies and reactions", () => {
  it("a reply carries context.message_id and a reaction is a ReactionMessage, both as the document reads them", async () => {
    const { key, accountId } = await createAccount();
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, [TO]);
    const [incoming] = await incomingIds(accountId);
    const incomingWamid = (await getMessage(key, incoming ?? "")).provider_message_id;

    const reply = await send(key, {
      chatapp_session_id: session,
      to_number: [TO],
      type: "text",
      content: "Yes, we are open",
      reply_to: incoming,
    });
    const replyBody = meta.graph.sendsOf(reply.id)[0]?.body;
    expect(replyBody).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: "text",
      biz_opaque_callback_data: reply.id,
      context: { message_id: incomingWamid },
      text: { body: "Yes, we are open" },
    });
    expect(checkBody("sendMessage", replyBody)).toEqual([]);

    const reaction = await send(key, {
      chatapp_session_id: session,
      type: "reaction",
      reaction: { message_id: reply.id, emoji: "✅" },
    });
    const reactionBody = meta.graph.sendsOf(reaction.id)[0]?.body;
    expect(reactionBody).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: "reaction",
      biz_opaque_callback_data: reaction.id,
      reaction: { message_id: reply.provider_message_id, emoji: "✅" },
    });
    expect(checkBody("sendMessage", reactionBody)).toEqual([]);
    expect(reaction).toMatchObject({ provider_message_id: meta.graph.sendsOf(reaction.id)[0]?.wamid });
    // No invalid body reached the fake.
    expect(meta.graph.invalidBodies).toEqual([]);
  });
});

describe("Cloud API: incoming replies and reactions", () => {
  it("a user's reply (context.id) is stored with reply_to; a reaction is recorded once per change", async () => {
    const { key, accountId } = await createAccount();
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, [TO]);
    const ours = await send(key, {
      chatapp_session_id: session,
      to_number: [TO],
      type: "text",
      content: "Order shipped",
    });
    const wamid = ours.provider_message_id ?? "";

    meta.graph.queueIncomingReply({
      phoneNumberId: meta.number.phoneNumberId,
      from: TO,
      text: "Thanks",
      quoted: wamid,
    });
    meta.graph.queueIncomingReaction({
      phoneNumberId: meta.number.phoneNumberId,
      from: TO,
      messageId: wamid,
      emoji: "❤️",
    });
    const posted = await deliverWebhooks(meta.graph);
    // Meta redelivers the reaction's webhook: nothing changes twice.
    const reactionHook = posted.find((hook) => hook.body.includes('"type":"reaction"'));
    expect(reactionHook).toBeDefined();
    await postWebhook(reactionHook?.body ?? "", reactionHook?.signature);

    const ids = await incomingIds(accountId);
    expect(ids).toHaveLength(2);
    const reply = (await getMessage(key, ids[1] ?? "")) as Shown;
    expect(reply).toMatchObject({ content: "Thanks", reply_to: ours.id });
    const reacted = (await getMessage(key, ours.id)) as Shown;
    expect(reacted.metadata.reactions).toEqual([{ from: TO, emoji: "❤️", at: expect.any(String) }]);
    expect(await reactionEvents(key)).toEqual([
      {
        message_id: ours.id,
        session_id: session,
        from: TO,
        emoji: "❤️",
        at: reacted.metadata.reactions?.[0]?.at,
      },
    ]);

    // Taken off: Meta sends the reaction with an empty emoji.
    meta.graph.queueIncomingReaction({
      phoneNumberId: meta.number.phoneNumberId,
      from: TO,
      messageId: wamid,
      emoji: "",
    });
    await deliverWebhooks(meta.graph);
    expect(((await getMessage(key, ours.id)) as Shown).metadata.reactions).toEqual([]);
    expect((await reactionEvents(key)).map((event) => event.emoji)).toEqual(["❤️", ""]);
  });
});
