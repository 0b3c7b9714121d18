import { describe, expect, it } from "vitest";
import subset from "../../fakes/cloud-api/meta-openapi.json" with { type: "json" };
import { checkAnswer, checkAsWritten, checkBody, checkWebhook } from "../../fakes/cloud-api/schema.ts";
import { OTP_TEMPLATE, TEXT } from "./fake-graph";

// The request-body checker against Meta's OpenAPI document (fakes/cloud-api/meta-openapi.json),
// and each reading of the document's gaps that fakes/cloud-api/schema.ts documents, (a) to (l):
// what the document as written says, and what the checker does instead.

const BASE = { messaging_product: "whatsapp", recipient_type: "individual", to: "4915112345678" };
const MEDIA = "https://cdn.example.test/media";

/** Reply buttons as the gateway sends them (src/gateways/cloud-api/send.ts `messageBody`). */
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
/** A list as the gateway sends it: two sections, one row without a description. */
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
const replyButton = (i: number, title = `Button ${i}`) => ({ type: "reply", reply: { id: `b${i}`, title } });

/** A `messages` webhook from 4915112345678 to NUMBER carrying `message`. */
function messageWebhook(message: Record<string, unknown>) {
  const value = {
    messaging_product: "whatsapp",
    metadata: { display_phone_number: "15550100001", phone_number_id: "100000000000001" },
    contacts: [{ profile: { name: "Ada" }, wa_id: "4915112345678" }],
    messages: [{ from: "4915112345678", id: "wamid.TAP", timestamp: "1751328000", ...message }],
  };
  return {
    object: "whatsapp_business_account",
    entry: [{ id: "200000000000001", changes: [{ value, field: "messages" }] }],
  };
}

/** The document's own example request bodies of the POST of `path`, by name. */
function examplesOf(path: string): Record<string, unknown> {
  const paths = subset.paths as Record<string, Record<string, unknown>>;
  const operation = paths[path]?.post as { requestBody: { content: Record<string, { examples: unknown }> } };
  const examples = operation.requestBody.content["application/json"]?.examples as Record<
    string,
    { value: unknown }
  >;
  return Object.fromEntries(Object.entries(examples).map(([name, { value }]) => [name, value]));
}

describe("checkBody('sendMessage')", () => {
  it("passes the bodies the gateway sends", () => {
    const bodies = {
      text: TEXT,
      image: { ...BASE, type: "image", image: { link: `${MEDIA}/photo.jpg`, caption: "A photo" } },
      video: { ...BASE, type: "video", video: { link: `${MEDIA}/clip.mp4`, caption: "A clip" } },
      audio: { ...BASE, type: "audio", audio: { link: `${MEDIA}/note.ogg` } },
      document: {
        ...BASE,
        type: "document",
        document: { link: `${MEDIA}/invoice.pdf`, caption: "Your invoice", filename: "invoice.pdf" },
      },
      template: OTP_TEMPLATE,
      location: {
        ...BASE,
        type: "location",
        location: {
          latitude: "38.7223",
          longitude: "-9.1393",
          name: "Lisbon store",
          address: "Rua Augusta 1",
        },
      },
      buttons: { ...BASE, type: "interactive", interactive: BUTTONS },
      list: { ...BASE, type: "interactive", interactive: LIST, context: { message_id: "wamid.Q" } },
    };
    for (const [kind, body] of Object.entries(bodies))
      expect([kind, checkBody("sendMessage", body)]).toEqual([kind, []]);
  });

  it("refuses a field the document does not declare, naming it", () => {
    expect(checkBody("sendMessage", { ...TEXT, preview_url: true })).toEqual([
      '# Property "preview_url" does not match unevaluated properties schema.',
    ]);
    expect(checkBody("sendMessage", { ...TEXT, text: { body: "Hi", previewUrl: true } })).toEqual([
      '#/text Property "previewUrl" does not match additional properties schema.',
    ]);
  });

  it("refuses a message without recipient_type", () => {
    const { recipient_type: _, ...body } = TEXT;
    expect(checkBody("sendMessage", body)).toEqual([
      '# Instance does not have required property "recipient_type".',
    ]);
  });

  it("refuses an unknown message type in one line, and a media object with both id and link", () => {
    expect(checkBody("sendMessage", { ...BASE, type: "pigeon" })).toEqual([
      '#/type Instance does not match any of ["text","audio","document","image","location","video","sticker","reaction","interactive","template","contacts"].',
    ]);
    const both = { ...BASE, type: "image", image: { id: "1234", link: `${MEDIA}/photo.jpg` } };
    expect(checkBody("sendMessage", both)).toContain(
      "#/image Instance does not match exactly one subschema (2 matches).",
    );
  });

  it("(a) reads allOf + additionalProperties: false as unevaluatedProperties: false", () => {
    // As written, the inner object's additionalProperties refuses the base's own fields.
    expect(checkAsWritten("TextMessage", TEXT)).toEqual([
      '# Property "messaging_product" does not match additional properties schema.',
      '# Property "recipient_type" does not match additional properties schema.',
      '# Property "to" does not match additional properties schema.',
    ]);
    expect(checkBody("sendMessage", TEXT)).toEqual([]);
    // TemplateMessage, which lacks the `false`, is closed the same way.
    const template = {
      ...OTP_TEMPLATE,
      template: { ...OTP_TEMPLATE.template, components: [] },
      urgent: true,
    };
    expect(checkAsWritten("TemplateMessage", template)).toEqual([]);
    expect(checkBody("sendMessage", template)).toEqual([
      '# Property "urgent" does not match unevaluated properties schema.',
    ]);
  });

  it("(b) accepts biz_opaque_callback_data on a message, with CallRequestPayload's definition", () => {
    const definition = subset.components.schemas.CallRequestPayload.properties.biz_opaque_callback_data;
    expect([definition.type, definition.maxLength]).toEqual(["string", 512]);
    expect(Object.keys(subset.components.schemas.BaseMessageProperties.properties)).not.toContain(
      "biz_opaque_callback_data",
    );
    expect(checkBody("sendMessage", { ...TEXT, biz_opaque_callback_data: "x".repeat(512) })).toEqual([]);
    expect(checkBody("sendMessage", { ...OTP_TEMPLATE, biz_opaque_callback_data: "m-1" })).toEqual([]);
    expect(checkBody("sendMessage", { ...TEXT, biz_opaque_callback_data: "x".repeat(513) })).toEqual([
      "#/biz_opaque_callback_data String is too long (513 > 512).",
    ]);
    expect(checkBody("sendMessage", { ...TEXT, biz_opaque_callback_data: { id: 1 } })).toEqual([
      '#/biz_opaque_callback_data Instance type "object" is invalid. Expected "string".',
    ]);
  });

  it("(c) keeps recipient_type and language.policy required, though Meta's own examples omit them", () => {
    const examples = examplesOf("/{Version}/{Phone-Number-ID}/messages") as Record<
      string,
      { recipient_type?: string; template?: { language: { policy?: string } } }
    >;
    expect(examples["Send Contact Message"]?.recipient_type).toBeUndefined();
    expect(examples["Send Message Template Text"]?.template?.language.policy).toBeUndefined();
    const { policy: _, ...language } = OTP_TEMPLATE.template.language;
    const noPolicy = { ...OTP_TEMPLATE, template: { ...OTP_TEMPLATE.template, language } };
    expect(checkBody("sendMessage", noPolicy)).toEqual([
      '#/template/language Instance does not have required property "policy".',
    ]);
  });

  it("(d) reads a template button's index pattern as its description's 0-9", () => {
    const button = {
      type: "button",
      sub_type: "url",
      index: "0",
      parameters: [{ type: "text", text: "482913" }],
    };
    const written = subset.components.schemas.ButtonComponent.allOf[1] as {
      properties: { index: { pattern: string } };
    };
    expect(written.properties.index.pattern).toBe("^[2-6, 11-14]$");
    expect(checkAsWritten("ButtonComponent", button)).toEqual(["#/index String does not match pattern."]);
    expect(checkBody("sendMessage", OTP_TEMPLATE)).toEqual([]);
    const components = [{ ...button, index: "10" }];
    expect(
      checkBody("sendMessage", { ...OTP_TEMPLATE, template: { ...OTP_TEMPLATE.template, components } }),
    ).toEqual(["#/template/components/0/index String does not match pattern."]);
  });

  it("(e) checks a template component's parameters through the discriminator", () => {
    const components = [{ type: "body", parameters: [{ type: "text", value: "482913" }] }];
    const template = { ...OTP_TEMPLATE.template, components };
    // As written the discriminator is ignored, so the parameter goes unchecked.
    expect(checkAsWritten("TemplateObject", template)).toEqual([]);
    expect(checkBody("sendMessage", { ...OTP_TEMPLATE, template })).toEqual([
      '#/template/components/0/parameters/0 Instance does not have required property "text".',
    ]);
  });

  it("(f) reads MediaObject's format url as uri, so links to a local host pass", () => {
    const image = { link: "http://127.0.0.1:8787/media/photo.jpg" };
    expect(checkAsWritten("MediaObject", image)).toContain('#/link String does not match format "url".');
    expect(checkBody("sendMessage", { ...BASE, type: "image", image })).toEqual([]);
    expect(checkBody("sendMessage", { ...BASE, type: "image", image: { link: "not a link" } })).toContain(
      '#/image/link String does not match format "uri".',
    );
  });

  it("(k) requires a location's latitude and longitude, as strings: the document's own numeric examples are refused", () => {
    const examples = examplesOf("/{Version}/{Phone-Number-ID}/messages") as Record<
      string,
      { location: { latitude: unknown; longitude: unknown } }
    >;
    const example = examples["Send Location Message"];
    expect(example?.location).toMatchObject({ latitude: 37.758056, longitude: -122.425332 });
    expect(checkBody("sendMessage", example)).toEqual([
      '#/location/latitude Instance type "number" is invalid. Expected "string".',
      '#/location/longitude Instance type "number" is invalid. Expected "string".',
    ]);
    const point = { latitude: "37.758056", longitude: "-122.425332" };
    expect(checkBody("sendMessage", { ...example, location: point })).toEqual([]);
    // As written, nothing of the location is required; read, both coordinates are.
    const written = subset.components.schemas.LocationMessage.allOf[1] as {
      properties: { location: { required?: string[]; properties: Record<string, { type: string }> } };
    };
    expect(written.properties.location.required).toBeUndefined();
    expect(written.properties.location.properties.latitude?.type).toBe("string");
    const named = { ...BASE, type: "location", location: { name: "META HQ" } };
    expect(checkBody("sendMessage", named)).toEqual([
      '#/location Instance does not have required property "latitude".',
      '#/location Instance does not have required property "longitude".',
    ]);
    expect(
      checkBody("sendMessage", { ...BASE, type: "location", location: { ...point, url: "https://x" } }),
    ).toEqual(['#/location Property "url" does not match additional properties schema.']);
  });

  it("refuses interactive messages beyond the document's bounds, naming the field", () => {
    const interactive = (value: unknown) => ({ ...BASE, type: "interactive", interactive: value });
    const four = { ...BUTTONS, action: { buttons: [1, 2, 3, 4].map((i) => replyButton(i)) } };
    expect(checkBody("sendMessage", interactive(four))).toEqual([
      "#/interactive/action/buttons Array has too many items (4 > 3).",
    ]);
    const long = { ...BUTTONS, action: { buttons: [replyButton(1, "A title of 21 chars..")] } };
    expect(checkBody("sendMessage", interactive(long))).toEqual([
      "#/interactive/action/buttons/0/reply/title String is too long (21 > 20).",
    ]);
    const row = { id: "r", title: "A row title of 25 chars.." };
    const longRow = { ...LIST, action: { button: "Slots", sections: [{ rows: [row] }] } };
    expect(checkBody("sendMessage", interactive(longRow))).toEqual([
      "#/interactive/action/sections/0/rows/0/title String is too long (25 > 24).",
    ]);
    expect(checkBody("sendMessage", interactive({ ...BUTTONS, body: { text: "x".repeat(1025) } }))).toEqual([
      "#/interactive/body/text String is too long (1025 > 1024).",
    ]);
    expect(checkBody("sendMessage", interactive({ ...BUTTONS, type: "carousel" }))).toEqual([
      '#/interactive/type Instance does not match any of ["button","call_permission_request","catalog_message","list","product","product_list","flow"].',
    ]);
    expect(checkBody("sendMessage", { ...interactive(BUTTONS), text: { body: "Hi" } })).toEqual([
      '# Property "text" does not match unevaluated properties schema.',
    ]);
  });

  it("(m) checks an interactive message's action as the variant its type names", () => {
    const examples = examplesOf("/{Version}/{Phone-Number-ID}/messages");
    expect(checkBody("sendMessage", examples["Send Reply Button"])).toEqual([]);
    expect(checkBody("sendMessage", examples["Send List Message"])).toEqual([]);
    // As written, reply buttons carrying a list's action pass: ActionObject is tied to no type.
    const mixed = { ...BUTTONS, action: LIST.action };
    expect(checkAsWritten("InteractiveObject", mixed)).toEqual([]);
    expect(checkBody("sendMessage", { ...BASE, type: "interactive", interactive: mixed })).toEqual([
      '#/interactive/action Instance does not have required property "buttons".',
    ]);
    const swapped = { ...LIST, action: BUTTONS.action };
    expect(checkBody("sendMessage", { ...BASE, type: "interactive", interactive: swapped })).toEqual([
      '#/interactive/action Instance does not have required property "button".',
      '#/interactive/action Instance does not have required property "sections".',
    ]);
    // As written, one bad button is reported against every variant of the oneOf.
    const four = { ...BUTTONS, action: { buttons: [1, 2, 3, 4].map((i) => replyButton(i)) } };
    expect(checkAsWritten("InteractiveObject", four)).toContain(
      '#/action Instance does not have required property "catalog_id".',
    );
    // Other types keep the document's oneOf: a Flow as the document's example sends it.
    expect(checkBody("sendMessage", examples["Send Published Flow by ID"])).toEqual([]);
  });

  it("(l) checks a read receipt as MarkMessageRequestPayload, with the typing indicator, closed", () => {
    // The payloads as the document declares them, kept in the subset by name (no operation names them).
    expect(subset.components.schemas.MarkMessageRequestPayload.required).toEqual([
      "message_id",
      "messaging_product",
      "status",
    ]);
    const read = { messaging_product: "whatsapp", status: "read", message_id: "wamid.X" };
    expect(checkBody("markRead", read)).toEqual([]);
    expect(checkBody("markRead", { ...read, typing_indicator: { type: "text" } })).toEqual([]);
    expect(checkBody("markRead", { ...read, typing_indicator: { type: "audio" } })).toEqual([
      '#/typing_indicator/type Instance does not match any of ["text"].',
    ]);
    expect(checkBody("markRead", { ...read, to: "14155550101" })).toEqual([
      '# Property "to" does not match additional properties schema.',
    ]);
    expect(checkBody("markRead", { ...read, messaging_product: "sms", status: "delivered" })).toEqual([
      '#/messaging_product Instance does not match "whatsapp".',
      '#/status Instance does not match "read".',
    ]);
    const { message_id: _, ...noId } = read;
    expect(checkBody("markRead", noId)).toEqual(['# Instance does not have required property "message_id".']);
    expect(subset.components.schemas.MarkMessageResponsePayload.properties.success.type).toBe("boolean");
    expect(checkAnswer("markRead", { success: true })).toEqual([]);
    expect(checkAnswer("markRead", { success: "yes" })).toEqual([
      '#/success Instance type "string" is invalid. Expected "boolean".',
    ]);
  });
});

describe("checkWebhook", () => {
  it("(g) reads the webhook block's clashing names as its renamed schemas, so Meta's examples pass", () => {
    expect(subset["x-subset"].webhookRenames).toMatchObject({
      TextMessage: "TextMessage_2",
      BaseMessageProperties: "BaseMessageProperties_1",
      ImageMessage: "ImageMessage_1",
    });
    const examples = examplesOf("/whatsapp/webhooks");
    const messages = Object.entries(examples).filter(([name]) => !name.startsWith("Group"));
    expect(messages.length).toBe(13);
    for (const [name, body] of messages) expect([name, checkWebhook(body)]).toEqual([name, []]);
    // As written, IncomingMessage points at the outgoing TextMessage.
    expect(checkAsWritten("WebhookPayload", examples["Text Message"])).toEqual(
      expect.arrayContaining([
        '#/entry/0/changes/0/value/messages/0 Instance does not have required property "to".',
      ]),
    );
  });

  it("(h) accepts a message_template_status_update webhook, which the document lacks", () => {
    const body = {
      object: "whatsapp_business_account",
      entry: [
        {
          id: "200000000000001",
          time: 1751328000,
          changes: [
            {
              value: {
                event: "APPROVED",
                message_template_id: 1689556908129832,
                message_template_name: "otp_code",
                message_template_language: "en_US",
                reason: "NONE",
                message_template_category: "AUTHENTICATION",
              },
              field: "message_template_status_update",
            },
          ],
        },
      ],
    };
    expect(checkAsWritten("Change", body.entry[0]?.changes[0])).toContain(
      '#/field Instance does not match any of ["messages","group_lifecycle_update","group_settings_update","group_participant_update"].',
    );
    expect(checkWebhook(body)).toEqual([]);
    const broken = structuredClone(body);
    for (const change of broken.entry[0]?.changes ?? []) change.value.event = "SHINY";
    expect(checkWebhook(broken)).toContain(
      '#/entry/0/changes/0/value/event Instance does not match any of ["APPROVED","ARCHIVED","DELETED","DISABLED","FLAGGED","IN_APPEAL","LIMIT_EXCEEDED","LOCKED","PAUSED","PENDING","PENDING_DELETION","REINSTATED","REJECTED","UNARCHIVED"].',
    );
  });
});

describe("checkWebhook: taps", () => {
  const context = { from: "15550100001", id: "wamid.SENT" };

  it("passes a reply button's tap, a list row's, and a template quick reply's, as the document's examples do", () => {
    const examples = examplesOf("/whatsapp/webhooks");
    for (const name of [
      "Interactive Button Reply Message",
      "Interactive List Reply Message",
      "Button Message",
    ])
      expect([name, checkWebhook(examples[name])]).toEqual([name, []]);
    const button_reply = { id: "track", title: "Track" };
    const taps = [
      { context, type: "interactive", interactive: { type: "button_reply", button_reply } },
      {
        context,
        type: "interactive",
        interactive: {
          type: "list_reply",
          list_reply: { id: "am-9", title: "9–10", description: "Before work" },
        },
      },
      { context, type: "button", button: { payload: "resched-42", text: "Reschedule" } },
    ];
    for (const tap of taps) expect(checkWebhook(messageWebhook(tap))).toEqual([]);
  });

  it("refuses a tap without the message tapped, or whose reply is not the one its type names", () => {
    const button_reply = { id: "track", title: "Track" };
    expect(
      checkWebhook(
        messageWebhook({ type: "interactive", interactive: { type: "button_reply", button_reply } }),
      ),
    ).toContain('#/entry/0/changes/0/value/messages/0 Instance does not have required property "context".');
    const wrong = { context, type: "interactive", interactive: { type: "list_reply", button_reply } };
    expect(checkWebhook(messageWebhook(wrong))).toContain(
      '#/entry/0/changes/0/value/messages/0/interactive Instance does not have required property "list_reply".',
    );
    const noPayload = { context, type: "button", button: { text: "Reschedule" } };
    expect(checkWebhook(messageWebhook(noPayload))).toContain(
      '#/entry/0/changes/0/value/messages/0/button Instance does not have required property "payload".',
    );
  });

  it("(n) reads a list reply's description as optional: a row without one answers none", () => {
    const list_reply = { id: "pm-6", title: "18–19" };
    expect(checkAsWritten("InteractiveListReplyContent", { list_reply })).toEqual([
      '#/list_reply Instance does not have required property "description".',
    ]);
    const tap = { context, type: "interactive", interactive: { type: "list_reply", list_reply } };
    expect(checkWebhook(messageWebhook(tap))).toEqual([]);
    const { title: _, ...untitled } = list_reply;
    const noTitle = { ...tap, interactive: { type: "list_reply", list_reply: untitled } };
    expect(checkWebhook(messageWebhook(noTitle))).toContain(
      '#/entry/0/changes/0/value/messages/0/interactive/list_reply Instance does not have required property "title".',
    );
  });
});

describe("checkBody('createTemplate')", () => {
  it("passes the document's authentication template and refuses a wrongly typed field", () => {
    const body = {
      name: "otp_code_2",
      language: "en_US",
      category: "AUTHENTICATION",
      components: [{ type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE", text: "Copy Code" }] }],
    };
    expect(checkBody("createTemplate", body)).toEqual([]);
    expect(checkBody("createTemplate", { ...body, language: { code: "en_US" } })).toEqual([
      '#/language Instance type "object" is invalid. Expected "string".',
    ]);
  });
});

describe("checkWebhook: contacts' edits and deletes", () => {
  it("(o) accepts Meta's edit and revoke messages, which the document lacks, and refuses them incomplete", () => {
    const image = {
      caption: "The red one",
      mime_type: "image/jpeg",
      sha256: "c2hhMjU2",
      id: "1003383421387256",
    };
    const edits = [
      {
        type: "edit",
        edit: { original_message_id: "wamid.SENT", message: { type: "text", text: { body: "Hi!" } } },
      },
      {
        type: "edit",
        edit: {
          original_message_id: "wamid.SENT",
          message: { context: { id: "wamid.CONTEXT" }, type: "image", image },
        },
      },
    ];
    const revoke = { type: "revoke", revoke: { original_message_id: "wamid.SENT" } };
    const incoming = subset.components.schemas.IncomingMessage as { discriminator: { mapping: object } };
    expect(Object.keys(incoming.discriminator.mapping)).not.toEqual(expect.arrayContaining(["edit"]));
    expect(Object.keys(incoming.discriminator.mapping)).not.toEqual(expect.arrayContaining(["revoke"]));
    for (const message of [...edits, revoke]) expect(checkWebhook(messageWebhook(message))).toEqual([]);
    expect(checkWebhook(messageWebhook({ type: "revoke", revoke: {} }))).toContain(
      '#/entry/0/changes/0/value/messages/0/revoke Instance does not have required property "original_message_id".',
    );
    const noMessage = { type: "edit", edit: { original_message_id: "wamid.SENT" } };
    expect(checkWebhook(messageWebhook(noMessage))).toContain(
      '#/entry/0/changes/0/value/messages/0/edit Instance does not have required property "message".',
    );
  });
});
