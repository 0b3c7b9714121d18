import { describe, expect, it } from "vitest";
import { OTP_CODE_TEMPLATE } from "../../fakes/cloud-api/graph.ts";
import { checkBody, checkWebhook } from "../../fakes/cloud-api/schema";
import { sendMessage } from "../../src/gateways/cloud-api/send";
import type { OutboundMessage } from "../../src/gateways/gateway";
import {
  contactEvents,
  identifiersOf,
  incomingMessages,
  optOutsOf,
  sendToUserIds,
  shownContact,
} from "../contact-fixtures";
import { CLOUD_API_BASE_URL, MEDIA_URL_SECRET, PUBLIC_URL } from "../gateway-config";
import { call, createAccount } from "../helpers";
import { sendText, waitForMessages } from "../message-fixtures";
import { addNumber, cloudApiSession, deliverWebhooks, postWebhook, useFakeGraph } from "./webhooks-fixtures";

// Business-scoped user ids (BSUIDs) on the Cloud API (Meta, "Business-scoped user IDs"): a user
// known only by BSUID writes and is stored; their number, when Meta shares it, joins the same
// contact; a BSUID that changed (`user_id_update`) stays linked; a status naming a number and a
// BSUID links them; a send to a BSUID goes as `recipient`, and Meta's 131062 refuses one it cannot.

const fake = useFakeGraph();
const BSUID = "US.13491208655302741918";
const NEW_BSUID = "US.55512345678901234567";
const NUMBER = "+14155550123";

/** The contact.* events, sorted by type, then by what they say: events of one second may list in any order. */
async function contactEventsSorted(key: string) {
  return (await contactEvents(key)).sort((a, b) =>
    `${a.type}${JSON.stringify(a.data)}`.localeCompare(`${b.type}${JSON.stringify(b.data)}`),
  );
}

describe("incoming from a user known by BSUID", () => {
  it("stores a BSUID-only message once, from no number, with its contact", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const { phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId, userId: BSUID, username: "@jane", profileName: "Jane", text: "hi" });
    const hooks = await deliverWebhooks(graph);
    const body = JSON.parse(hooks[0]?.body ?? "{}");
    expect(checkWebhook(body)).toEqual([]);
    // What Meta sends (the fake, as the BSUID page shows it): no `from`, no `wa_id`.
    expect(body.entry[0].changes[0].value.messages[0]).not.toHaveProperty("from");
    expect(body.entry[0].changes[0].value.contacts).toEqual([
      { profile: { name: "Jane", username: "@jane" }, user_id: BSUID },
    ]);
    // Meta retries: the same body again stores nothing twice.
    for (const hook of hooks) await postWebhook(hook.body, hook.signature);

    const messages = await incomingMessages(key);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ from_number: null, content: "hi" });
    expect(messages[0]?.contact).toEqual({
      id: expect.stringMatching(/^ct_[0-9a-f]{32}$/),
      phone_number: null,
      user_id: BSUID,
      parent_user_id: null,
      username: "@jane",
      name: "Jane",
    });
    expect((await contactEventsSorted(key)).map((e) => e.type)).toEqual(["contact.created"]);
  });

  it("gives the contact its number when a later message carries wa_id and the BSUID", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const { phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId, userId: BSUID, username: "@jane", profileName: "Jane", text: "hi" });
    await deliverWebhooks(graph);
    graph.queueIncoming({
      phoneNumberId,
      userId: BSUID,
      from: "14155550123",
      profileName: "Jane",
      text: "me",
    });
    await deliverWebhooks(graph);

    const messages = await incomingMessages(key);
    const first = messages.find((m) => m.content === "hi");
    const second = messages.find((m) => m.content === "me");
    expect(first).toMatchObject({ from_number: null });
    expect(second).toMatchObject({ from_number: NUMBER, content: "me" });
    expect(second?.contact).toMatchObject({ id: first?.contact?.id, phone_number: NUMBER, user_id: BSUID });
    const events = await contactEventsSorted(key);
    expect(events.map((e) => e.type)).toEqual(["contact.created", "contact.updated"]);
    expect(events.find((e) => e.type === "contact.updated")?.data).toMatchObject({
      contact: { id: first?.contact?.id, phone_number: NUMBER, user_id: BSUID },
      previous: { phone_number: null, user_id: BSUID },
    });
  });

  it("user_id_update links the new BSUID: the contact lists both, the new one current", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const { phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId, userId: BSUID, from: "14155550123", text: "hi" });
    await deliverWebhooks(graph);
    graph.queueUserIdUpdate({ phoneNumberId, previous: BSUID, current: NEW_BSUID });
    const hooks = await deliverWebhooks(graph);
    expect(hooks.map((h) => h.res.body)).toEqual([{ success: true, ignored: false }]);
    expect(hooks.map((h) => checkWebhook(JSON.parse(h.body)))).toEqual([[]]);
    for (const hook of hooks) await postWebhook(hook.body, hook.signature);

    const [message] = await incomingMessages(key);
    expect(message?.content).toBe("hi");
    const shown = await shownContact(key, String(message?.contact?.id));
    expect(shown).toMatchObject({ user_id: NEW_BSUID, phone_number: NUMBER });
    expect(identifiersOf(shown)).toEqual([
      ["phone_number", NUMBER],
      ["user_id", BSUID],
      ["user_id", NEW_BSUID],
    ]);
    // One contact.updated for the change, however often Meta delivers it.
    expect((await contactEventsSorted(key)).map((e) => e.type)).toEqual([
      "contact.created",
      "contact.updated",
    ]);
    // A message by the new BSUID finds the same contact.
    graph.queueIncoming({ phoneNumberId, userId: NEW_BSUID, text: "again" });
    await deliverWebhooks(graph);
    const again = (await incomingMessages(key)).find((m) => m.content === "again");
    expect(again).toMatchObject({ contact: { id: message?.contact?.id, user_id: NEW_BSUID } });
  });
});

describe("statuses naming a BSUID", () => {
  it("a status with recipient_id and recipient_user_id gives the number's contact its BSUID", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId, from: "14155550123", text: "hi" });
    await deliverWebhooks(graph);
    // Meta learns the user's BSUID; statuses of sends to the number now name it too.
    graph.addUser({ userId: BSUID, phoneNumber: "14155550123", username: "@jane" });
    const sent = await sendText(key, session, [NUMBER]);
    expect(sent.status, sent.text).toBe(201);
    const id = sent.body.data.messages[0]?.id ?? "";
    await waitForMessages(key, [id], (m) => m.status === "sent");
    const hooks = await deliverWebhooks(graph);
    expect(hooks.map((h) => checkWebhook(JSON.parse(h.body)))).toEqual([[], [], []]);
    const statuses = hooks.map((h) => JSON.parse(h.body).entry[0].changes[0].value.statuses[0]);
    expect(statuses.map((s) => [s.status, s.recipient_id, s.recipient_user_id])).toEqual([
      ["sent", "14155550123", BSUID],
      ["delivered", "14155550123", BSUID],
      ["read", "14155550123", BSUID],
    ]);

    const [message] = await waitForMessages(key, [id], (m) => m.status === "read");
    expect(message?.status).toBe("read");
    const [first] = await incomingMessages(key);
    expect(await shownContact(key, String(first?.contact?.id))).toMatchObject({
      phone_number: NUMBER,
      user_id: BSUID,
      username: "@jane",
    });
    // `sent` links the BSUID; `delivered` adds the username (Meta leaves it out of `sent`);
    // `read` changes nothing.
    const events = await contactEventsSorted(key);
    expect(events.map((e) => e.type)).toEqual(["contact.created", "contact.updated", "contact.updated"]);
    const updates = events.filter((e) => e.type === "contact.updated").map((e) => e.data);
    expect(updates).toContainEqual(
      expect.objectContaining({
        contact: expect.objectContaining({ phone_number: NUMBER, user_id: BSUID, username: null }),
        previous: expect.objectContaining({ phone_number: NUMBER, user_id: null }),
      }),
    );
    expect(updates).toContainEqual(
      expect.objectContaining({
        contact: expect.objectContaining({ user_id: BSUID, username: "@jane" }),
        previous: expect.objectContaining({ user_id: BSUID, username: null }),
      }),
    );
  });
});

describe("sends to a BSUID (gateway level)", () => {
  const text = (to: string): OutboundMessage => ({
    id: `msg_${crypto.randomUUID()}`,
    clientMessageId: crypto.randomUUID(),
    to,
    type: "text",
    content: "Hello",
    mediaUrl: null,
    media: null,
  });
  const links = { publicUrl: PUBLIC_URL, secret: MEDIA_URL_SECRET };
  const httpOf = (token: string) => ({
    baseUrl: `${CLOUD_API_BASE_URL}/v23.0`,
    headers: { Authorization: `Bearer ${token}` },
    timeoutMs: 2_000,
    mediaTimeoutMs: 2_000,
  });

  it("carries `recipient` and no `to`, as the document's Message with reading (j)", async () => {
    const graph = fake();
    const number = addNumber(graph);
    graph.addUser({ userId: BSUID });
    const message = text(BSUID);
    const outcome = await sendMessage(httpOf(number.accessToken), number.phoneNumberId, message, links);

    expect(graph.sent).toHaveLength(1);
    expect(outcome).toEqual({ outcome: "accepted", providerMessageId: graph.sent[0]?.wamid });
    expect(graph.sent[0]?.body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      recipient: BSUID,
      type: "text",
      biz_opaque_callback_data: message.id,
      text: { body: "Hello" },
    });
    expect(checkBody("sendMessage", graph.sent[0]?.body)).toEqual([]);
    // Its statuses name the recipient by BSUID only (Meta knows no number for them).
    const statuses = (await graph.takeWebhooks()).map((h) => JSON.parse(h.body).entry[0].changes[0].value);
    expect(statuses[0]?.statuses[0]).toMatchObject({ recipient_user_id: BSUID });
    expect(statuses[0]?.statuses[0]).not.toHaveProperty("recipient_id");
  });

  it("an OTP authentication template to a BSUID: 131062 → rejected recipient_not_supported, final", async () => {
    const graph = fake();
    const number = addNumber(graph);
    graph.addTemplate({ wabaId: number.wabaId, ...OTP_CODE_TEMPLATE });
    const template = {
      name: "otp_code",
      language: "en_US",
      variables: { body: ["482913"], buttons: [{ index: 0, sub_type: "url", parameter: "482913" }] },
    };
    const message = { ...text(BSUID), type: "template" as const, content: JSON.stringify(template) };
    const outcome = await sendMessage(httpOf(number.accessToken), number.phoneNumberId, message, links);

    expect(outcome).toEqual({ outcome: "rejected", reason: "recipient_not_supported", retryable: false });
    expect(graph.sent).toEqual([]);
    expect(graph.sendsOf(message.id)).toHaveLength(1);
    // The same template to a number is sent.
    const toNumber = { ...message, id: `msg_${crypto.randomUUID()}`, to: NUMBER };
    const sent = await sendMessage(httpOf(number.accessToken), number.phoneNumberId, toNumber, links);
    expect(sent.outcome).toBe("accepted");
  });
});

describe("a username user through the API (docs/contacts.md, Contacts)", () => {
  it("writes by BSUID, is answered by to_user_id inside the window, then opts out with STOP", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId, userId: BSUID, username: "@jane", profileName: "Jane", text: "hi" });
    await deliverWebhooks(graph);
    const sent = await sendToUserIds(key, session, [BSUID], "Hello Jane");
    expect(sent.status, sent.text).toBe(201);
    const id = String(sent.body.data.messages[0]?.id);
    const [message] = await waitForMessages(key, [id]);
    expect(message).toMatchObject({ status: "sent", to_number: null });
    const request = graph.sent.at(-1)?.body;
    expect(request).toMatchObject({ recipient: BSUID, text: { body: "Hello Jane" } });
    expect(request).not.toHaveProperty("to");
    // A LID is no Cloud API recipient: refused before anything is charged.
    const lid = await call("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_user_id: ["120363025246125888@lid"],
        type: "text",
        content: "x",
      },
    });
    expect(lid.status).toBe(422);
    expect(lid.body.code).toBe("recipient_not_supported");

    graph.queueIncoming({
      phoneNumberId,
      userId: BSUID,
      username: "@jane",
      profileName: "Jane",
      text: "STOP",
    });
    await deliverWebhooks(graph);
    const optOuts = await optOutsOf(key);
    expect(optOuts.map((o) => [o.to_number, o.user_id])).toEqual([[null, BSUID]]);
  });
});
