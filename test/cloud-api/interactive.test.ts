import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { checkBody, checkWebhook } from "../../fakes/cloud-api/schema";
import { messagesChangeEvents } from "../../src/gateways/cloud-api/events";
import { sendMessage } from "../../src/gateways/cloud-api/send";
import type { OutboundMessage } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { CLOUD_API_BASE_URL, MEDIA_URL_SECRET, PUBLIC_URL } from "../gateway-config";
import { call, createAccount } from "../helpers";
import { balanceOf, getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { openWindow, useExampleNumber } from "./sessions-fixtures";
import { deliverWebhooks, linkNumber, postWebhook } from "./webhooks-fixtures";

// Interactive messages on a Cloud API session (docs/messages.md, Sending messages → Buttons and lists),
// against the fake Graph API: a send is Meta's `InteractiveMessage` with the stored `interactive`
// object as it is (checked by the fake against the document, schema.ts reading m); a contact's
// tap arrives as `InteractiveMessageReply` (a reply button's `button_reply`, a list row's
// `list_reply`) or, on a template's quick-reply button, as `ButtonMessage`, and is kept as an
// incoming `interactive_reply` whose `reply_to` is the message tapped (`context.id`).

const TO = "+14155552671";
/** PRICE_INTERACTIVE (wrangler.toml) in minor units. */
const PRICE = Math.round(Number(env.PRICE_INTERACTIVE) * 100);

const BUTTONS = {
  type: "button",
  header: { type: "text", text: "Order A-17" },
  body: { text: "Your order has shipped. What next?" },
  footer: { text: "Reply any time" },
  action: {
    buttons: [
      { type: "reply", reply: { id: "track", title: "Track" } },
      { type: "reply", reply: { id: "help", title: "Talk to us" } },
    ],
  },
};

const LIST = {
  type: "list",
  body: { text: "Pick a delivery slot" },
  action: {
    button: "Slots",
    sections: [
      { title: "Morning", rows: [{ id: "am-9", title: "9–10", description: "Before work" }] },
      { title: "Evening", rows: [{ id: "pm-6", title: "18–19" }] },
    ],
  },
};

/** A template with two quick-reply buttons, as Meta's template creation takes it. */
const APPOINTMENT = {
  name: "appointment",
  language: "en_US",
  category: "UTILITY",
  components: [
    { type: "BODY", text: "Your appointment is tomorrow at 9." },
    {
      type: "BUTTONS",
      buttons: [
        { type: "QUICK_REPLY", text: "Confirm" },
        { type: "QUICK_REPLY", text: "Reschedule" },
      ],
    },
  ],
};

const meta = useExampleNumber();

interface Shown extends Message {
  type: string;
  direction: string;
  content: string | null;
  reply_to: string | null;
  metadata: Message["metadata"] & { interactive?: unknown; interactive_reply?: unknown };
}

async function send(key: string, body: Record<string, unknown>) {
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { to_number: [TO], ...body },
  });
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.messages[0]?.id ?? "";
  const [sent] = await waitForMessages(key, [id]);
  expect(sent?.status).toBe("sent");
  return { id, totalCost: res.body.data.total_cost, shown: (await getMessage(key, id)) as Shown };
}

/** The id of the account's message whose gateway id is `wamid`. */
async function messageIdOf(accountId: string, wamid: string): Promise<string | undefined> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT id FROM messages WHERE account_id = ? AND provider_message_id = ?")
    .bind(accountId, wamid)
    .first<{ id: string }>();
  return row?.id;
}

/** Posts the queued webhooks, each accepted and valid by Meta's document; returns their bodies. */
async function deliverValid(): Promise<Awaited<ReturnType<typeof deliverWebhooks>>> {
  const posted = await deliverWebhooks(meta.graph);
  expect(posted.map((hook) => hook.res.body)).toEqual(posted.map(() => ({ success: true, ignored: false })));
  for (const hook of posted) expect(checkWebhook(JSON.parse(hook.body))).toEqual([]);
  return posted;
}

/** The stored message Meta knows as `wamid`, as GET /v1/chatapp/messages/{id} shows it. */
async function shownByWamid(key: string, accountId: string, wamid: string): Promise<Shown> {
  const id = await messageIdOf(accountId, wamid);
  expect(id, wamid).toBeDefined();
  return (await getMessage(key, id ?? "")) as Shown;
}

describe("Cloud API: reply buttons", () => {
  it("are Meta's InteractiveMessage with the stored object as it is, sent, and priced PRICE_INTERACTIVE", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, [TO]);

    const { id, totalCost, shown } = await send(key, {
      chatapp_session_id: session,
      type: "interactive",
      interactive: BUTTONS,
    });

    const sends = meta.graph.sendsOf(id);
    expect(sends).toHaveLength(1);
    expect(sends[0]?.body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: "interactive",
      biz_opaque_callback_data: id,
      interactive: BUTTONS,
    });
    expect(checkBody("sendMessage", sends[0]?.body)).toEqual([]);
    expect(meta.graph.invalidBodies).toEqual([]);
    expect(shown).toMatchObject({
      type: "interactive",
      status: "sent",
      content: BUTTONS.body.text,
      provider_message_id: sends[0]?.wamid,
      cost: PRICE / 100,
      metadata: { gateway: "cloud_api", attempts: 1, interactive: BUTTONS },
    });
    expect(totalCost).toBe(PRICE / 100);
    expect(await balanceOf(accountId)).toBe((1000 - PRICE) / 100);
  });

  it("a tap (button_reply) is an incoming interactive_reply: the title as content, linked to the message tapped, stored once", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, [TO]);
    const { id, shown } = await send(key, {
      chatapp_session_id: session,
      type: "interactive",
      interactive: BUTTONS,
    });
    await deliverValid(); // the statuses of the send

    const tap = meta.graph.queueIncomingInteractiveReply({
      phoneNumberId: meta.number.phoneNumberId,
      from: TO,
      quoted: shown.provider_message_id ?? "",
      id: "help",
    });
    const posted = await deliverValid();
    expect(JSON.parse(posted[0]?.body ?? "{}").entry[0].changes[0].value.messages[0]).toMatchObject({
      type: "interactive",
      context: { id: shown.provider_message_id },
      interactive: { type: "button_reply", button_reply: { id: "help", title: "Talk to us" } },
    });
    // Meta redelivers: stored once.
    await postWebhook(posted[0]?.body ?? "", posted[0]?.signature);

    const reply = await shownByWamid(key, accountId, tap);
    expect(reply).toMatchObject({
      type: "interactive_reply",
      direction: "incoming",
      content: "Talk to us",
      media_url: null,
      from_number: TO,
      provider_message_id: tap,
      reply_to: id,
    });
    expect(reply.metadata.interactive_reply).toEqual({
      type: "button_reply",
      id: "help",
      title: "Talk to us",
    });
    const count = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM messages WHERE provider_message_id = ?")
      .bind(tap)
      .first<{ n: number }>();
    expect(count?.n).toBe(1);
  });
});

describe("Cloud API: lists", () => {
  it("a list replying to the contact carries context.message_id; choosing a row is list_reply with the row's description, or none", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    const question = meta.graph.queueIncoming({
      phoneNumberId: meta.number.phoneNumberId,
      from: TO,
      text: "When can you deliver?",
    });
    await deliverValid();
    const incoming = await messageIdOf(accountId, question);

    const list = await send(key, {
      chatapp_session_id: session,
      type: "interactive",
      interactive: LIST,
      reply_to: incoming,
    });
    const body = meta.graph.sendsOf(list.id)[0]?.body;
    expect(body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: "interactive",
      biz_opaque_callback_data: list.id,
      context: { message_id: question },
      interactive: LIST,
    });
    expect(checkBody("sendMessage", body)).toEqual([]);
    expect(meta.graph.invalidBodies).toEqual([]);
    expect(list.shown).toMatchObject({
      type: "interactive",
      content: LIST.body.text,
      reply_to: incoming,
      cost: PRICE / 100,
      metadata: { interactive: LIST },
    });
    await deliverValid();

    const choose = (id: string) =>
      meta.graph.queueIncomingInteractiveReply({
        phoneNumberId: meta.number.phoneNumberId,
        from: TO,
        quoted: list.shown.provider_message_id ?? "",
        id,
      });
    const morning = choose("am-9");
    const evening = choose("pm-6");
    await deliverValid();

    const first = await shownByWamid(key, accountId, morning);
    expect(first).toMatchObject({ type: "interactive_reply", content: "9–10", reply_to: list.id });
    expect(first.metadata.interactive_reply).toEqual({
      type: "list_reply",
      id: "am-9",
      title: "9–10",
      description: "Before work",
    });
    const second = await shownByWamid(key, accountId, evening);
    expect(second).toMatchObject({ type: "interactive_reply", content: "18–19", reply_to: list.id });
    expect(second.metadata.interactive_reply).toEqual({ type: "list_reply", id: "pm-6", title: "18–19" });
  });
});

describe("Cloud API: a template's quick-reply tap", () => {
  it("(ButtonMessage) is an interactive_reply button_reply: id the payload, title the label, linked to the template", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    meta.graph.addTemplate({ wabaId: meta.number.wabaId, ...APPOINTMENT });
    // A template needs no open window.
    const template = await send(key, {
      chatapp_session_id: session,
      type: "template",
      template: {
        name: "appointment",
        language: "en_US",
        variables: { buttons: [{ index: 1, sub_type: "quick_reply", parameter: "resched-42" }] },
      },
    });
    const body = meta.graph.sendsOf(template.id)[0]?.body;
    expect(body?.template).toEqual({
      name: "appointment",
      language: { code: "en_US", policy: "deterministic" },
      components: [
        {
          type: "button",
          sub_type: "quick_reply",
          index: "1",
          parameters: [{ type: "payload", payload: "resched-42" }],
        },
      ],
    });
    expect(checkBody("sendMessage", body)).toEqual([]);
    await deliverValid();

    const tap = (index: number) =>
      meta.graph.queueIncomingQuickReply({
        phoneNumberId: meta.number.phoneNumberId,
        from: TO,
        quoted: template.shown.provider_message_id ?? "",
        index,
      });
    const reschedule = tap(1);
    const confirm = tap(0);
    const posted = await deliverValid();
    expect(JSON.parse(posted[0]?.body ?? "{}").entry[0].changes[0].value.messages[0]).toMatchObject({
      type: "button",
      context: { id: template.shown.provider_message_id },
      button: { payload: "resched-42", text: "Reschedule" },
    });

    const first = await shownByWamid(key, accountId, reschedule);
    expect(first).toMatchObject({
      type: "interactive_reply",
      direction: "incoming",
      content: "Reschedule",
      reply_to: template.id,
    });
    expect(first.metadata.interactive_reply).toEqual({
      type: "button_reply",
      id: "resched-42",
      title: "Reschedule",
    });
    // No payload given for the button: Meta answers its label as the payload.
    const second = await shownByWamid(key, accountId, confirm);
    expect(second).toMatchObject({ type: "interactive_reply", content: "Confirm", reply_to: template.id });
    expect(second.metadata.interactive_reply).toEqual({
      type: "button_reply",
      id: "Confirm",
      title: "Confirm",
    });
  });
});

describe("events.ts: taps (gateway level)", () => {
  const value = (message: Record<string, unknown>) => ({
    messaging_product: "whatsapp",
    metadata: { display_phone_number: "15555555555", phone_number_id: "106540352242922" },
    contacts: [{ profile: { name: "Ana" }, wa_id: "14155552671" }],
    messages: [{ from: "14155552671", id: "wamid.TAP", timestamp: "1751328000", ...message }],
  });
  const context = { from: "15555555555", id: "wamid.SENT" };

  it("reads button_reply, list_reply and a quick-reply button as incoming interactive_reply events quoting context.id", () => {
    const events = [
      {
        type: "interactive",
        interactive: { type: "button_reply", button_reply: { id: "help", title: "Talk to us" } },
      },
      {
        type: "interactive",
        interactive: {
          type: "list_reply",
          list_reply: { id: "am-9", title: "9–10", description: "Before work" },
        },
      },
      { type: "button", button: { payload: "resched-42", text: "Reschedule" } },
    ].map((message) => messagesChangeEvents(value({ context, ...message }))?.events);
    const base = {
      type: "incoming",
      providerMessageId: "wamid.TAP",
      from: { phoneNumber: TO, userId: null, parentUserId: null, username: null, name: "Ana" },
      messageType: "interactive_reply",
      mediaUrl: null,
      quotedIds: ["wamid.SENT"],
      at: 1751328000000,
    };
    expect(events).toEqual([
      [
        {
          ...base,
          content: "Talk to us",
          payload: { interactive_reply: { type: "button_reply", id: "help", title: "Talk to us" } },
        },
      ],
      [
        {
          ...base,
          content: "9–10",
          payload: {
            interactive_reply: { type: "list_reply", id: "am-9", title: "9–10", description: "Before work" },
          },
        },
      ],
      [
        {
          ...base,
          content: "Reschedule",
          payload: { interactive_reply: { type: "button_reply", id: "resched-42", title: "Reschedule" } },
        },
      ],
    ]);
  });

  it("keeps a tap without context unlinked, and skips a reply of another kind or without its object", () => {
    const button_reply = { id: "help", title: "Talk to us" };
    const unlinked = messagesChangeEvents(
      value({ type: "interactive", interactive: { type: "button_reply", button_reply } }),
    )?.events;
    expect(unlinked).toHaveLength(1);
    expect(unlinked?.[0]).not.toHaveProperty("quotedIds");
    for (const message of [
      // A kind the document's InteractiveMessageReply does not list.
      { context, type: "interactive", interactive: { type: "other_reply", button_reply } },
      { context, type: "interactive", interactive: { type: "list_reply", button_reply } },
      { context, type: "button" },
    ])
      expect(messagesChangeEvents(value(message))?.events).toEqual([]);
  });
});

describe("send.ts: interactive (gateway level)", () => {
  const message = (content: string | null): OutboundMessage => ({
    id: `msg_${crypto.randomUUID()}`,
    clientMessageId: crypto.randomUUID(),
    to: TO,
    type: "interactive",
    content,
    mediaUrl: null,
    media: null,
  });
  const http = () => ({
    baseUrl: `${CLOUD_API_BASE_URL}/v23.0`,
    headers: { Authorization: `Bearer ${meta.number.accessToken}` },
    timeoutMs: 2_000,
    mediaTimeoutMs: 2_000,
  });
  const links = { publicUrl: PUBLIC_URL, secret: MEDIA_URL_SECRET };

  it("refuses without a call content that is not an interactive message, or one beyond Meta's limits", async () => {
    const four = {
      ...BUTTONS,
      action: {
        buttons: [1, 2, 3, 4].map((i) => ({ type: "reply", reply: { id: `b${i}`, title: `B${i}` } })),
      },
    };
    for (const content of [null, "{}", "not json", JSON.stringify(four)])
      expect(await sendMessage(http(), meta.number.phoneNumberId, message(content), links)).toEqual({
        outcome: "rejected",
        reason: expect.stringMatching(/^content_unreadable: /),
        retryable: false,
      });
    expect(meta.graph.calls).toEqual([]);
  });
});
