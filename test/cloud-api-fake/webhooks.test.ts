import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  checkAsWritten,
  checkWebhook,
  TEMPLATE_STATUS_UPDATE_VALUE,
  webhookFields,
} from "../../fakes/cloud-api/schema.ts";
import { signBody } from "../../fakes/cloud-api/sign.ts";
import { APP_SECRET, callGraph, NOW_MS, NUMBER, OTP_TEMPLATE, TEXT, useFakeGraph } from "./fake-graph";

// The webhooks the fake queues: their bodies against the document's WebhookPayload (with the
// readings of fakes/cloud-api/schema.ts), the fields they carry, and their signatures.

const fake = useFakeGraph();
const MESSAGES = `/${NUMBER.phoneNumberId}/messages`;
const SECONDS = NOW_MS / 1000;

interface Change {
  field: string;
  value: Record<string, unknown> & {
    statuses?: Record<string, unknown>[];
    messages?: Record<string, unknown>[];
  };
}

/** The one change queued, checked as {@link takeChanges} does. */
async function takeOneChange(): Promise<{ entry: Record<string, unknown>; change: Change }> {
  const changes = await takeChanges();
  expect(changes).toHaveLength(1);
  return changes[0]!;
}

/** Takes the queued webhooks, checks each against the document and its signature, and parses them. */
async function takeChanges(): Promise<{ entry: Record<string, unknown>; change: Change }[]> {
  const webhooks = await fake.graph.takeWebhooks();
  return webhooks.map(({ body, signature }) => {
    const expected = `sha256=${createHmac("sha256", APP_SECRET).update(body).digest("hex")}`;
    expect(signature).toBe(expected);
    const parsed = JSON.parse(body);
    expect(checkWebhook(parsed)).toEqual([]);
    expect(parsed.object).toBe("whatsapp_business_account");
    const entry = parsed.entry[0];
    return { entry, change: entry.changes[0] };
  });
}

describe("signBody", () => {
  it("is sha256= and the hex HMAC-SHA256 of the body under the app secret", async () => {
    // RFC 4231-style known answer: HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog").
    expect(await signBody("key", "The quick brown fox jumps over the lazy dog")).toBe(
      "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",
    );
    expect(await signBody(APP_SECRET, "{}")).toBe(
      `sha256=${createHmac("sha256", APP_SECRET).update("{}").digest("hex")}`,
    );
  });
});

describe("status webhooks", () => {
  it("queues sent, delivered and read for each send, with pricing and the opaque data", async () => {
    await callGraph("POST", MESSAGES, { ...TEXT, biz_opaque_callback_data: "message-42" });
    const wamid = fake.graph.sent[0]?.wamid;
    const changes = await takeChanges();
    expect(changes.map(({ entry }) => entry.id)).toEqual([NUMBER.wabaId, NUMBER.wabaId, NUMBER.wabaId]);
    const metadata = { display_phone_number: "15550100001", phone_number_id: NUMBER.phoneNumberId };
    for (const { change } of changes) {
      expect(change.field).toBe("messages");
      expect(change.value).toMatchObject({ messaging_product: "whatsapp", metadata });
    }
    const statuses = changes.map(({ change }) => change.value.statuses?.[0]);
    const conversation = { id: expect.stringMatching(/^[0-9a-f]{32}$/), origin: { type: "service" } };
    const pricing = { billable: false, pricing_model: "PMP", category: "service" };
    const common = { id: wamid, recipient_id: "4915112345678", biz_opaque_callback_data: "message-42" };
    expect(statuses).toEqual([
      {
        ...common,
        status: "sent",
        timestamp: String(SECONDS),
        conversation: { ...conversation, expiration_timestamp: String(SECONDS + 86400) },
        pricing,
      },
      { ...common, status: "delivered", timestamp: String(SECONDS + 1), conversation, pricing },
      { ...common, status: "read", timestamp: String(SECONDS + 2) },
    ]);
    // Only fields the document's Statuses declares (with reading b).
    const declared = webhookFields("Statuses");
    for (const status of statuses)
      for (const field of Object.keys(status ?? {})) expect(declared).toContain(field);
    expect(await fake.graph.takeWebhooks()).toEqual([]);
  });

  it("prices a template send by its category, and leaves out opaque data the send did not carry", async () => {
    await callGraph("POST", MESSAGES, OTP_TEMPLATE);
    const [sent] = (await takeChanges()).map(({ change }) => change.value.statuses?.[0]);
    expect(sent).toMatchObject({
      pricing: { billable: true, pricing_model: "PMP", category: "authentication" },
    });
    expect(sent).not.toHaveProperty("biz_opaque_callback_data");
  });

  it("queueFailedStatus queues failed with its error and drops the queued delivered and read", async () => {
    await callGraph("POST", MESSAGES, TEXT);
    const wamid = fake.graph.sent[0]?.wamid ?? "";
    fake.graph.queueFailedStatus(wamid, 131026, "Message undeliverable");
    const statuses = (await takeChanges()).map(({ change }) => change.value.statuses?.[0]);
    expect(statuses.map((s) => s?.status)).toEqual(["sent", "failed"]);
    expect(statuses[1]).toEqual({
      id: wamid,
      status: "failed",
      timestamp: String(SECONDS),
      recipient_id: "4915112345678",
      errors: [
        {
          code: 131026,
          title: "Message undeliverable",
          message: "Message undeliverable",
          error_data: { details: "Message undeliverable" },
          href: "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/",
        },
      ],
    });
    expect(() => fake.graph.queueFailedStatus("wamid.unknown", 131026, "x")).toThrow(
      "No message wamid.unknown",
    );
  });
});

describe("incoming messages", () => {
  it("queues a text message with the sender's contact", async () => {
    const wamid = fake.graph.queueIncoming({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "+49 151 12345678",
      text: "STOP",
    });
    const { change } = await takeOneChange();
    expect(change).toEqual({
      field: "messages",
      value: {
        messaging_product: "whatsapp",
        metadata: { display_phone_number: "15550100001", phone_number_id: NUMBER.phoneNumberId },
        contacts: [{ profile: { name: "4915112345678" }, wa_id: "4915112345678" }],
        messages: [
          {
            from: "4915112345678",
            id: wamid,
            timestamp: String(SECONDS),
            type: "text",
            text: { body: "STOP" },
          },
        ],
      },
    });
  });

  it("queues a reply with its context { from, id } (reading i) and a reaction as ReactionMessage_1", async () => {
    await callGraph("POST", MESSAGES, TEXT);
    const ours = fake.graph.sent[0]?.wamid ?? "";
    await fake.graph.takeWebhooks();
    fake.graph.queueIncomingReply({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "4915112345678",
      text: "Yes",
      quoted: ours,
    });
    fake.graph.queueIncomingReaction({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "4915112345678",
      messageId: ours,
      emoji: "👍",
    });
    const [reply, reaction] = await takeChanges();
    expect(reply?.change.value.messages?.[0]).toMatchObject({
      type: "text",
      text: { body: "Yes" },
      context: { from: "15550100001", id: ours },
    });
    expect(reaction?.change.value.messages?.[0]).toMatchObject({
      type: "reaction",
      reaction: { message_id: ours, emoji: "👍" },
    });
    // As written, the document would refuse the reply's context (it requires referred_product).
    expect(checkAsWritten("ContextObject", { from: "15550100001", id: ours })).not.toEqual([]);
  });

  it("queues a location as LocationMessage_1: the coordinates as numbers, url when given", async () => {
    const place = {
      latitude: 37.44221496582,
      longitude: -122.16165924072,
      name: "Philz Coffee",
      address: "101 Forest Ave, Palo Alto, CA 94301",
    };
    const wamid = fake.graph.queueIncomingLocation({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "4915112345678",
      location: { ...place, url: "https://philzcoffee.com/" },
    });
    fake.graph.queueIncomingLocation({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "4915112345678",
      location: place,
    });
    const [business, plain] = await takeChanges();
    expect(business?.change.value.messages).toEqual([
      {
        from: "4915112345678",
        id: wamid,
        timestamp: String(SECONDS),
        type: "location",
        location: { ...place, url: "https://philzcoffee.com/" },
      },
    ]);
    expect(plain?.change.value.messages?.[0]?.location).toEqual(place);
    // Received coordinates are numbers: a string one is refused.
    fake.graph.queueIncomingLocation({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "4915112345678",
      location: place,
    });
    const [hook] = await fake.graph.takeWebhooks();
    const body = JSON.parse(hook?.body ?? "{}");
    body.entry[0].changes[0].value.messages[0].location.latitude = "37.44";
    expect(checkWebhook(body)).toContain(
      '#/entry/0/changes/0/value/messages/0/location/latitude Instance type "string" is invalid. Expected "number".',
    );
  });

  it("queues taps on reply buttons and list rows as InteractiveMessageReply, with the sent titles", async () => {
    const { text: _, ...base } = TEXT;
    const interactive = (value: Record<string, unknown>) => ({
      ...base,
      type: "interactive",
      interactive: value,
    });
    const buttons = {
      type: "button",
      body: { text: "Your order has shipped" },
      action: {
        buttons: [
          { type: "reply", reply: { id: "track", title: "Track" } },
          { type: "reply", reply: { id: "help", title: "Talk to us" } },
        ],
      },
    };
    const rows = [
      { id: "am-9", title: "9–10", description: "Before work" },
      { id: "pm-6", title: "18–19" },
    ];
    const list = {
      type: "list",
      body: { text: "Pick a slot" },
      action: { button: "Slots", sections: [{ rows }] },
    };
    expect((await callGraph("POST", MESSAGES, interactive(buttons))).status).toBe(200);
    expect((await callGraph("POST", MESSAGES, interactive(list))).status).toBe(200);
    const [sentButtons, sentList] = fake.graph.sent.map((s) => s.wamid);
    await fake.graph.takeWebhooks();
    const tap = (quoted: string | undefined, id: string) =>
      fake.graph.queueIncomingInteractiveReply({
        phoneNumberId: NUMBER.phoneNumberId,
        from: "4915112345678",
        quoted: quoted ?? "",
        id,
      });
    const tapped = [tap(sentButtons, "help"), tap(sentList, "am-9"), tap(sentList, "pm-6")];
    const messages = (await takeChanges()).map(({ change }) => change.value.messages);
    const common = (id: string, quoted: string | undefined) => ({
      context: { from: "15550100001", id: quoted },
      from: "4915112345678",
      id,
      timestamp: String(SECONDS),
      type: "interactive",
    });
    expect(messages).toEqual([
      [
        {
          ...common(tapped[0] ?? "", sentButtons),
          interactive: { type: "button_reply", button_reply: { id: "help", title: "Talk to us" } },
        },
      ],
      [
        {
          ...common(tapped[1] ?? "", sentList),
          interactive: {
            type: "list_reply",
            list_reply: { id: "am-9", title: "9–10", description: "Before work" },
          },
        },
      ],
      // A row without a description answers none (reading n).
      [
        {
          ...common(tapped[2] ?? "", sentList),
          interactive: { type: "list_reply", list_reply: { id: "pm-6", title: "18–19" } },
        },
      ],
    ]);
    expect(() => tap(sentButtons, "nope")).toThrow(`No button nope on ${sentButtons}`);
    expect(() => tap(sentList, "track")).toThrow(`No row track on ${sentList}`);
    await callGraph("POST", MESSAGES, TEXT);
    const text = fake.graph.sent[2]?.wamid;
    expect(() => tap(text, "track")).toThrow(`${text} is no interactive button or list message`);
    expect(() => tap("wamid.unknown", "track")).toThrow(
      `No message wamid.unknown sent from ${NUMBER.phoneNumberId}`,
    );
  });

  it("queues a template quick reply as ButtonMessage: the send's payload, else the label", async () => {
    fake.graph.addTemplate({
      wabaId: NUMBER.wabaId,
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
    });
    const button = { type: "button", sub_type: "quick_reply", index: "1" };
    const template = {
      ...OTP_TEMPLATE,
      template: {
        name: "appointment",
        language: { policy: "deterministic", code: "en_US" },
        components: [{ ...button, parameters: [{ type: "payload", payload: "resched-42" }] }],
      },
    };
    expect((await callGraph("POST", MESSAGES, template)).status).toBe(200);
    const sent = fake.graph.sent[0]?.wamid ?? "";
    await fake.graph.takeWebhooks();
    const tap = (index: number, quoted = sent) =>
      fake.graph.queueIncomingQuickReply({
        phoneNumberId: NUMBER.phoneNumberId,
        from: "4915112345678",
        quoted,
        index,
      });
    const tapped = [tap(1), tap(0)];
    const messages = (await takeChanges()).map(({ change }) => change.value.messages?.[0]);
    const common = { context: { from: "15550100001", id: sent }, from: "4915112345678", type: "button" };
    expect(messages).toEqual([
      {
        ...common,
        id: tapped[0],
        timestamp: String(SECONDS),
        button: { payload: "resched-42", text: "Reschedule" },
      },
      {
        ...common,
        id: tapped[1],
        timestamp: String(SECONDS),
        button: { payload: "Confirm", text: "Confirm" },
      },
    ]);
    expect(() => tap(2)).toThrow("No quick reply 2 on appointment");
    await callGraph("POST", MESSAGES, TEXT);
    const text = fake.graph.sent[1]?.wamid ?? "";
    expect(() => tap(0, text)).toThrow(`${text} is no template message`);
  });

  it("queues an image message with the media fields ImageMessage_1 requires", async () => {
    fake.graph.queueIncomingImage({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "4915112345678",
      caption: "Receipt",
      mediaId: "1003383421387256",
      profileName: "Ada",
    });
    const { change } = await takeOneChange();
    expect(change.value.contacts).toEqual([{ profile: { name: "Ada" }, wa_id: "4915112345678" }]);
    expect(change.value.messages?.[0]).toMatchObject({
      type: "image",
      image: {
        id: "1003383421387256",
        mime_type: "image/jpeg",
        sha256: expect.any(String),
        caption: "Receipt",
      },
    });
  });
});

describe("template status webhooks", () => {
  it("setTemplateStatus moves the template and queues message_template_status_update", async () => {
    fake.graph.setTemplateStatus("otp_code", "en_US", "REJECTED", "INVALID_FORMAT");
    expect(fake.graph.templates[0]?.status).toBe("REJECTED");
    const { entry, change } = await takeOneChange();
    expect(entry).toMatchObject({ id: NUMBER.wabaId, time: SECONDS });
    expect(change).toEqual({
      field: "message_template_status_update",
      value: {
        event: "REJECTED",
        message_template_id: Number(fake.graph.templates[0]?.id),
        message_template_name: "otp_code",
        message_template_language: "en_US",
        reason: "INVALID_FORMAT",
        message_template_category: "AUTHENTICATION",
      },
    });
    for (const field of Object.keys(change.value)) {
      expect(Object.keys(TEMPLATE_STATUS_UPDATE_VALUE.properties)).toContain(field);
    }
    expect(() => fake.graph.setTemplateStatus("otp_code", "de", "APPROVED")).toThrow(
      "No template otp_code (de)",
    );
  });
});
