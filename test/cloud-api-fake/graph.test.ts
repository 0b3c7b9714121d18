import { describe, expect, it } from "vitest";
import { FakeGraph, templateCursor } from "../../fakes/cloud-api/graph.ts";
import { checkAnswer } from "../../fakes/cloud-api/schema.ts";
import {
  APP_SECRET,
  callGraph,
  GRAPH,
  NOW_MS,
  NUMBER,
  OTHER,
  OTP_TEMPLATE,
  TEXT,
  useFakeGraph,
} from "./fake-graph";

// The fake Graph API (fakes/cloud-api/graph.ts) as a gateway meets it: over fetch, through the
// test network. Every answer is checked against the document's schema for it (checkAnswer).

const fake = useFakeGraph();
const MESSAGES = `/${NUMBER.phoneNumberId}/messages`;
const TEMPLATES = `/${NUMBER.wabaId}/message_templates`;

describe("GET /{version}/{phone number id}", () => {
  it("answers PhoneNumberInfo's default fields", async () => {
    const { status, json } = await callGraph("GET", `/${NUMBER.phoneNumberId}`);
    expect(status).toBe(200);
    expect(json).toEqual({
      id: "100000000000001",
      display_phone_number: "+1 555 010 0001",
      verified_name: "Sandbox Business",
      quality_rating: "YELLOW",
    });
    expect(checkAnswer("getPhoneNumber", json)).toEqual([]);
  });

  it("adds the fields asked for, and refuses a field it does not know", async () => {
    const asked = await callGraph("GET", `/${NUMBER.phoneNumberId}?fields=name_status,throughput`);
    expect(asked.json).toMatchObject({ name_status: "APPROVED", throughput: { level: "HIGH" } });
    expect(checkAnswer("getPhoneNumber", asked.json)).toEqual([]);
    const unknown = await callGraph("GET", `/${NUMBER.phoneNumberId}?fields=colour`);
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({ code: 100, type: "OAuthException" });
    expect(checkAnswer("error", unknown.json)).toEqual([]);
  });
});

describe("GET /{version}/{WABA id}/phone_numbers", () => {
  const PHONE_NUMBERS = `/${NUMBER.wabaId}/phone_numbers`;

  it("answers the WABA's numbers with the fields of the document's example, as its connection schema gives them", async () => {
    const { status, json } = await callGraph("GET", `${PHONE_NUMBERS}?limit=100`);
    expect(status).toBe(200);
    expect(json).toEqual({
      data: [
        {
          id: NUMBER.phoneNumberId,
          display_phone_number: "+1 555 010 0001",
          verified_name: "Sandbox Business",
          status: "LINKED",
          quality_rating: "YELLOW",
        },
      ],
      paging: { cursors: { before: templateCursor(0), after: templateCursor(0) } },
    });
    expect(checkAnswer("listPhoneNumbers", json)).toEqual([]);
  });

  it("answers id and the fields asked for; refuses a field it does not serve", async () => {
    const asked = await callGraph("GET", `${PHONE_NUMBERS}?fields=display_phone_number,status`);
    expect(asked.json.data).toEqual([
      { id: NUMBER.phoneNumberId, display_phone_number: "+1 555 010 0001", status: "LINKED" },
    ]);
    expect(checkAnswer("listPhoneNumbers", asked.json)).toEqual([]);
    const unknown = await callGraph("GET", `${PHONE_NUMBERS}?fields=colour`);
    expect([unknown.status, unknown.json.error]).toMatchObject([400, { code: 100 }]);
    expect(checkAnswer("error", unknown.json)).toEqual([]);
  });

  it("refuses a WABA the token holds no number of (100, subcode 33); lists every number of a WABA it does", async () => {
    const other = await callGraph("GET", `/${OTHER.wabaId}/phone_numbers`);
    expect([other.status, other.json.error]).toMatchObject([400, { code: 100, error_subcode: 33 }]);
    // A second number of NUMBER's WABA, with a token of its own, is listed to NUMBER's token too.
    fake.graph.addNumber({ ...OTHER, phoneNumberId: "100000000000003", wabaId: NUMBER.wabaId });
    const both = await callGraph("GET", PHONE_NUMBERS);
    expect((both.json.data as { id: string }[]).map((n) => n.id)).toEqual([
      NUMBER.phoneNumberId,
      "100000000000003",
    ]);
  });

  it("holds phoneNumberPageSize numbers a page at most; paging.next while more follow", async () => {
    const g = new FakeGraph({ appSecret: APP_SECRET, phoneNumberPageSize: 1 });
    g.addNumber(NUMBER);
    g.addNumber({ ...NUMBER, phoneNumberId: "100000000000003" });
    const list = async (search: string) =>
      (await (
        await g.handle(
          new Request(`${GRAPH}${PHONE_NUMBERS}${search}`, {
            headers: { authorization: `Bearer ${NUMBER.accessToken}` },
          }),
        )
      ).json()) as { data: { id: string }[]; paging?: { cursors: unknown; next?: string } };
    const first = await list("?limit=100");
    expect(first.data.map((n) => n.id)).toEqual([NUMBER.phoneNumberId]);
    expect(first.paging?.next).toBe(
      `${GRAPH}${PHONE_NUMBERS}?limit=100&after=${encodeURIComponent(templateCursor(0))}`,
    );
    expect(checkAnswer("listPhoneNumbers", first)).toEqual([]);
    const second = await list(new URL(first.paging?.next ?? "").search);
    expect(second.data.map((n) => n.id)).toEqual(["100000000000003"]);
    expect(second.paging).toEqual({ cursors: { before: templateCursor(1), after: templateCursor(1) } });
    expect(g.callsOf("listPhoneNumbers").map((c) => c.id)).toEqual([NUMBER.wabaId, NUMBER.wabaId]);
  });
});

describe("tokens", () => {
  it("answers 104 (401) without a token and 190 (401) with a wrong one", async () => {
    const missing = await callGraph("GET", `/${NUMBER.phoneNumberId}`, undefined, null);
    expect([missing.status, missing.json.error]).toMatchObject([401, { code: 104, type: "OAuthException" }]);
    const wrong = await callGraph("GET", `/${NUMBER.phoneNumberId}`, undefined, "not-a-token");
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toMatchObject({
      message: "Invalid OAuth access token",
      type: "OAuthException",
      code: 190,
      fbtrace_id: expect.stringMatching(/^[\w-]{23}$/),
    });
    expect(checkAnswer("error", wrong.json)).toEqual([]);
  });

  it("answers 190 for every call once the token is revoked, and sends nothing", async () => {
    expect((await callGraph("POST", MESSAGES, TEXT)).status).toBe(200);
    fake.graph.revokeToken(NUMBER.accessToken);
    for (const [method, path, body] of [
      ["GET", `/${NUMBER.phoneNumberId}`, undefined],
      ["POST", MESSAGES, TEXT],
      ["GET", TEMPLATES, undefined],
    ] as const) {
      const { status, json } = await callGraph(method, path, body);
      expect([path, status, json.error]).toMatchObject([path, 401, { code: 190 }]);
    }
    expect(fake.graph.sent).toHaveLength(1);
    // Another number's token still works.
    const other = await callGraph("GET", `/${OTHER.phoneNumberId}`, undefined, OTHER.accessToken);
    expect(other.status).toBe(200);
  });

  it("does not let one number's token act for another number", async () => {
    const { status, json } = await callGraph("POST", `/${OTHER.phoneNumberId}/messages`, TEXT);
    expect([status, json.error]).toMatchObject([400, { code: 100, error_subcode: 33 }]);
    expect(fake.graph.sent).toEqual([]);
  });
});

describe("POST /{version}/{phone number id}/messages", () => {
  it("records the message and answers MessageResponsePayload with its wamid", async () => {
    const { status, json } = await callGraph("POST", MESSAGES, TEXT);
    expect(status).toBe(200);
    const wamid = fake.graph.sent[0]?.wamid;
    expect(wamid).toMatch(/^wamid\.[A-Za-z0-9+/=]+$/);
    expect(json).toEqual({
      messaging_product: "whatsapp",
      contacts: [{ input: "+4915112345678", wa_id: "4915112345678" }],
      messages: [{ id: wamid }],
    });
    expect(checkAnswer("sendMessage", json)).toEqual([]);
    expect(fake.graph.sent).toEqual([{ phoneNumberId: NUMBER.phoneNumberId, body: TEXT, wamid }]);
  });

  it("answers a template message with message_status accepted", async () => {
    const { status, json } = await callGraph("POST", MESSAGES, OTP_TEMPLATE);
    expect(status).toBe(200);
    expect(json.messages).toEqual([{ id: fake.graph.sent[0]?.wamid, message_status: "accepted" }]);
    expect(checkAnswer("sendMessage", json)).toEqual([]);
  });

  it("refuses a body the document refuses with error 100, and records the problems", async () => {
    const { recipient_type: _, ...body } = TEXT;
    const { status, json } = await callGraph("POST", MESSAGES, body);
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ message: "Invalid parameter", code: 100, type: "OAuthException" });
    expect(checkAnswer("error", json)).toEqual([]);
    expect(fake.graph.invalidBodies).toEqual([
      {
        phoneNumberId: NUMBER.phoneNumberId,
        body,
        problems: ['# Instance does not have required property "recipient_type".'],
      },
    ]);
    expect(fake.graph.sent).toEqual([]);
    expect(await fake.graph.takeWebhooks()).toEqual([]);
  });

  it("refuses a template that is missing, not approved, paused or disabled", async () => {
    const send = (name: string) =>
      callGraph("POST", MESSAGES, { ...OTP_TEMPLATE, template: { ...OTP_TEMPLATE.template, name } });
    expect((await send("no_such_template")).json.error).toMatchObject({ code: 132001 });
    fake.graph.addTemplate({
      wabaId: NUMBER.wabaId,
      name: "later",
      language: "en_US",
      category: "UTILITY",
      components: [],
      status: "PENDING",
    });
    expect((await send("later")).json.error).toMatchObject({ code: 132001 });
    fake.graph.setTemplateStatus("later", "en_US", "PAUSED");
    expect((await send("later")).json.error).toMatchObject({ code: 132015, message: "Template is Paused" });
    fake.graph.setTemplateStatus("later", "en_US", "DISABLED");
    expect((await send("later")).json.error).toMatchObject({ code: 132016 });
    fake.graph.setTemplateStatus("later", "en_US", "APPROVED");
    expect((await send("later")).status).toBe(200);
    expect(fake.graph.sent.map((s) => (s.body.template as { name: string }).name)).toEqual(["later"]);
  });
});

describe("faults", () => {
  it("failNext answers the given Graph error once and sends nothing", async () => {
    const cases = [
      [131047, "Re-engagement message", 400],
      [131026, "Message undeliverable", 400],
      [130429, "Rate limit hit", 400],
      [131056, "(Business Account, Consumer Account) pair rate limit hit", 400],
      [131049, "This message was not delivered to maintain healthy ecosystem engagement.", 400],
      [
        131050,
        "Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business",
        400,
      ],
      [368, "Temporarily blocked for policies violations", 400],
      [190, "Error validating access token: Session has expired", 401],
    ] as const;
    for (const [code, message, expected] of cases) {
      fake.graph.failNext({ code, message });
      const { status, json } = await callGraph("POST", MESSAGES, TEXT);
      expect([code, status, json.error]).toMatchObject([
        code,
        expected,
        { code, message, type: "OAuthException" },
      ]);
      expect(checkAnswer("error", json)).toEqual([]);
    }
    expect(fake.graph.sent).toEqual([]);
    expect((await callGraph("POST", MESSAGES, TEXT)).status).toBe(200);
    fake.graph.failNext({ code: 130429, message: "Rate limit hit", status: 429 });
    expect((await callGraph("POST", MESSAGES, TEXT)).status).toBe(429);
  });

  it("hangNext sends the message but never answers: the caller's timeout fires", async () => {
    fake.graph.hangNext();
    const call = callGraph("POST", MESSAGES, TEXT, NUMBER.accessToken, AbortSignal.timeout(200));
    await expect(call).rejects.toThrow();
    expect(fake.graph.sent).toHaveLength(1);
    expect(await fake.graph.takeWebhooks()).toHaveLength(3);
    expect((await callGraph("POST", MESSAGES, TEXT)).status).toBe(200);
  });

  it("loseNextAnswer sends the message but answers 500, transient", async () => {
    fake.graph.loseNextAnswer();
    const { status, json } = await callGraph("POST", MESSAGES, TEXT);
    expect(status).toBe(500);
    expect(json.error).toMatchObject({ code: 2, is_transient: true });
    expect(checkAnswer("error", json)).toEqual([]);
    expect(fake.graph.sent).toHaveLength(1);
    expect(await fake.graph.takeWebhooks()).toHaveLength(3);
  });
});

describe("message templates", () => {
  it("lists the WABA's templates as the document's GET answers them, filtered by name", async () => {
    const { status, json } = await callGraph("GET", `${TEMPLATES}?name=otp_code`);
    expect(status).toBe(200);
    expect(json).toEqual({
      data: [
        {
          id: fake.graph.templates[0]?.id,
          name: "otp_code",
          language: "en_US",
          category: "AUTHENTICATION",
          status: "APPROVED",
          components: [
            { type: "BODY", text: "{{1}} is your verification code." },
            { type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE", text: "Copy Code" }] },
          ],
        },
      ],
      paging: { cursors: { before: expect.any(String), after: expect.any(String) } },
    });
    expect(checkAnswer("listTemplates", json)).toEqual([]);
    expect(await callGraph("GET", `${TEMPLATES}?name=nothing`)).toEqual({ status: 200, json: { data: [] } });
  });

  it("pages with limit and the after cursor", async () => {
    for (const name of ["b_code", "c_code"]) {
      fake.graph.addTemplate({
        wabaId: NUMBER.wabaId,
        name,
        language: "en_US",
        category: "UTILITY",
        components: [],
      });
    }
    const first = await callGraph("GET", `${TEMPLATES}?limit=2`);
    const data = first.json.data as { name: string }[];
    expect(data.map((t) => t.name)).toEqual(["otp_code", "b_code"]);
    const { after } = (first.json.paging as { cursors: { after: string } }).cursors;
    const second = await callGraph("GET", `${TEMPLATES}?limit=2&after=${encodeURIComponent(after)}`);
    expect((second.json.data as { name: string }[]).map((t) => t.name)).toEqual(["c_code"]);
  });

  it("creates a PENDING template, answers { id, status, category }, and refuses a duplicate", async () => {
    const body = {
      name: "login_code",
      language: "en_US",
      category: "AUTHENTICATION",
      components: [{ type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE", text: "Copy Code" }] }],
    };
    const { status, json } = await callGraph("POST", TEMPLATES, body);
    expect(status).toBe(200);
    expect(json).toEqual({
      id: expect.stringMatching(/^\d{16}$/),
      status: "PENDING",
      category: "AUTHENTICATION",
    });
    expect(checkAnswer("createTemplate", json)).toEqual([]);
    expect(fake.graph.templates.at(-1)).toEqual({
      ...body,
      id: json.id,
      wabaId: NUMBER.wabaId,
      status: "PENDING",
    });
    const again = await callGraph("POST", TEMPLATES, body);
    expect([again.status, again.json.error]).toMatchObject([400, { code: 100, error_subcode: 2388024 }]);
    const invalid = await callGraph("POST", TEMPLATES, { ...body, name: "x", language: { code: "en_US" } });
    expect([invalid.status, invalid.json.error]).toMatchObject([400, { code: 100 }]);
  });
});

describe("the call log", () => {
  it("logs every call, refused ones too, at the fake's clock; sendsOf finds a send by its callback data", async () => {
    const send = { ...TEXT, biz_opaque_callback_data: "msg-1" };
    await callGraph("POST", MESSAGES, send, "not-a-token");
    fake.graph.failNext({ code: 131047, message: "Re-engagement message" });
    await callGraph("POST", MESSAGES, send);
    await callGraph("POST", MESSAGES, send);
    await callGraph("GET", `/${NUMBER.phoneNumberId}?fields=throughput`);
    const wamid = fake.graph.sent[0]?.wamid;
    const sendCall = {
      operation: "sendMessage",
      id: NUMBER.phoneNumberId,
      search: "",
      body: send,
      at: NOW_MS,
    };
    expect(fake.graph.calls).toEqual([
      { ...sendCall, wamid: null },
      { ...sendCall, wamid: null },
      { ...sendCall, wamid },
      {
        operation: "getPhoneNumber",
        id: NUMBER.phoneNumberId,
        search: "?fields=throughput",
        body: null,
        at: NOW_MS,
        wamid: null,
      },
    ]);
    expect(fake.graph.sendsOf("msg-1")).toEqual(fake.graph.callsOf("sendMessage"));
    expect(fake.graph.sendsOf("msg-2")).toEqual([]);
  });
});

describe("faults of other operations", () => {
  it("failNext on createTemplate answers Meta's error with error_data.details and creates nothing", async () => {
    fake.graph.failNext(
      { code: 100, message: "Invalid parameter", details: "Body text is too long." },
      "createTemplate",
    );
    // A send is not the operation the fault waits for: it goes through.
    expect((await callGraph("POST", MESSAGES, TEXT)).status).toBe(200);
    const body = { name: "long_one", language: "en_US", category: "UTILITY", components: [] };
    const { status, json } = await callGraph("POST", TEMPLATES, body);
    expect([status, json.error]).toMatchObject([
      400,
      { code: 100, message: "Invalid parameter", error_data: { details: "Body text is too long." } },
    ]);
    expect(checkAnswer("error", json)).toEqual([]);
    expect(fake.graph.templates.map((t) => t.name)).toEqual(["otp_code"]);
    expect((await callGraph("POST", TEMPLATES, body)).status).toBe(200);
  });

  it("dropNext fails the next call of the operation as a network error, once", async () => {
    fake.graph.dropNext("listTemplates");
    await expect(callGraph("GET", TEMPLATES)).rejects.toThrow();
    expect(fake.graph.callsOf("listTemplates")).toHaveLength(1);
    expect((await callGraph("GET", TEMPLATES)).status).toBe(200);
  });

  it("hangNext on getPhoneNumber never answers: the caller's timeout fires", async () => {
    fake.graph.hangNext("getPhoneNumber");
    const call = callGraph(
      "GET",
      `/${NUMBER.phoneNumberId}`,
      undefined,
      NUMBER.accessToken,
      AbortSignal.timeout(200),
    );
    await expect(call).rejects.toThrow();
    expect((await callGraph("GET", `/${NUMBER.phoneNumberId}`)).status).toBe(200);
  });
});

describe("template pages", () => {
  const graph = () => {
    const g = new FakeGraph({ appSecret: APP_SECRET, templatePageSize: 2 });
    g.addNumber(NUMBER);
    for (const name of ["a_code", "b_code", "c_code"]) {
      g.addTemplate({ wabaId: NUMBER.wabaId, name, language: "en_US", category: "UTILITY", components: [] });
    }
    return g;
  };
  const list = async (g: FakeGraph, search: string) => {
    const request = new Request(`${GRAPH}${TEMPLATES}${search}`, {
      headers: { authorization: `Bearer ${NUMBER.accessToken}` },
    });
    return (await (await g.handle(request)).json()) as {
      data: { id: string; name: string }[];
      paging?: { cursors: { before: string; after: string }; next?: string };
    };
  };

  it("holds templatePageSize templates at most, whatever limit asks; paging.next while more follow", async () => {
    const g = graph();
    const first = await list(g, "?limit=100");
    expect(first.data.map((t) => t.name)).toEqual(["a_code", "b_code"]);
    expect(first.paging?.cursors).toEqual({ before: templateCursor(0), after: templateCursor(1) });
    expect(first.paging?.next).toBe(
      `${GRAPH}${TEMPLATES}?limit=100&after=${encodeURIComponent(templateCursor(1))}`,
    );
    expect(checkAnswer("listTemplates", first)).toEqual([]);
    const next = new URL(first.paging?.next ?? "");
    const second = await list(g, next.search);
    expect(second.data.map((t) => t.name)).toEqual(["c_code"]);
    expect(second.paging).toEqual({ cursors: { before: templateCursor(2), after: templateCursor(2) } });
  });

  it("deleteTemplates removes a name in every language, and only in its WABA", async () => {
    const g = graph();
    g.addTemplate({
      wabaId: NUMBER.wabaId,
      name: "b_code",
      language: "pt_BR",
      category: "UTILITY",
      components: [],
    });
    g.addTemplate({
      wabaId: OTHER.wabaId,
      name: "b_code",
      language: "en_US",
      category: "UTILITY",
      components: [],
    });
    expect(g.deleteTemplates(NUMBER.wabaId, "b_code")).toBe(2);
    expect((await list(g, "")).data.map((t) => t.name)).toEqual(["a_code", "c_code"]);
    expect(g.templates.map((t) => [t.wabaId, t.name])).toEqual([
      [NUMBER.wabaId, "a_code"],
      [NUMBER.wabaId, "c_code"],
      [OTHER.wabaId, "b_code"],
    ]);
  });
});

describe("POST /{version}/{phone number id}/messages with a location", () => {
  const location = (latitude: unknown, longitude: unknown) => ({
    messaging_product: "whatsapp",
    recipient_type: "individual",
    to: "4915112345678",
    type: "location",
    location: { latitude, longitude, name: "META HQ", address: "1 Hacker Way, Menlo Park, CA 94025" },
  });

  it("takes LocationMessage with the coordinates as strings; refuses numbers (reading k), sending nothing", async () => {
    const numbers = location(37.758056, -122.425332);
    const refused = await callGraph("POST", MESSAGES, numbers);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 100, message: "Invalid parameter" });
    expect(fake.graph.invalidBodies).toEqual([
      {
        phoneNumberId: NUMBER.phoneNumberId,
        body: numbers,
        problems: [
          '#/location/latitude Instance type "number" is invalid. Expected "string".',
          '#/location/longitude Instance type "number" is invalid. Expected "string".',
        ],
      },
    ]);
    expect(fake.graph.sent).toEqual([]);

    const strings = location("37.758056", "-122.425332");
    const { status, json } = await callGraph("POST", MESSAGES, strings);
    expect(status).toBe(200);
    expect(checkAnswer("sendMessage", json)).toEqual([]);
    expect(fake.graph.sent).toEqual([
      { phoneNumberId: NUMBER.phoneNumberId, body: strings, wamid: fake.graph.sent[0]?.wamid },
    ]);
  });
});

describe("POST /{version}/{phone number id}/messages with an interactive message", () => {
  const button = (i: number, title = `Button ${i}`) => ({ type: "reply", reply: { id: `b${i}`, title } });
  const buttons = (...replies: unknown[]) => ({
    messaging_product: "whatsapp",
    recipient_type: "individual",
    to: "4915112345678",
    type: "interactive",
    interactive: { type: "button", body: { text: "Pick one" }, action: { buttons: replies } },
  });

  it("takes InteractiveMessage reply buttons; refuses four buttons or a title over 20 characters, sending nothing", async () => {
    const four = buttons(button(1), button(2), button(3), button(4));
    const long = buttons(button(1, "A title of 21 chars.."));
    for (const body of [four, long]) {
      const refused = await callGraph("POST", MESSAGES, body);
      expect(refused.status).toBe(400);
      expect(refused.json.error).toMatchObject({ code: 100, message: "Invalid parameter" });
    }
    expect(fake.graph.invalidBodies).toEqual([
      {
        phoneNumberId: NUMBER.phoneNumberId,
        body: four,
        problems: ["#/interactive/action/buttons Array has too many items (4 > 3)."],
      },
      {
        phoneNumberId: NUMBER.phoneNumberId,
        body: long,
        problems: ["#/interactive/action/buttons/0/reply/title String is too long (21 > 20)."],
      },
    ]);
    expect(fake.graph.sent).toEqual([]);

    const three = buttons(button(1), button(2), button(3, "A title of 20 chars."));
    const { status, json } = await callGraph("POST", MESSAGES, three);
    expect(status).toBe(200);
    expect(checkAnswer("sendMessage", json)).toEqual([]);
    expect(fake.graph.sent).toEqual([
      { phoneNumberId: NUMBER.phoneNumberId, body: three, wamid: fake.graph.sent[0]?.wamid },
    ]);
  });
});

describe("POST /{version}/{phone number id}/messages with status read (typing indicator)", () => {
  /** The document's example "Send typing indicator and read receipt", for `messageId`. */
  const typing = (messageId: string) => ({
    messaging_product: "whatsapp",
    status: "read",
    message_id: messageId,
    typing_indicator: { type: "text" },
  });

  it("takes the document's example for a message the number received: { success: true }, recorded", async () => {
    const wamid = fake.graph.queueIncoming({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "14155550101",
      text: "Hi",
    });
    const { status, json } = await callGraph("POST", MESSAGES, typing(wamid));
    expect(status).toBe(200);
    expect(json).toEqual({ success: true });
    expect(fake.graph.reads).toEqual([
      { phoneNumberId: NUMBER.phoneNumberId, messageId: wamid, typingIndicator: true, at: NOW_MS },
    ]);
    expect(fake.graph.sent).toEqual([]);
  });

  it("takes a read receipt alone (MarkMessageRequestPayload), answered MarkMessageResponsePayload", async () => {
    const wamid = fake.graph.queueIncoming({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "14155550101",
      text: "Hi",
    });
    const { typing_indicator: _, ...read } = typing(wamid);
    const { status, json } = await callGraph("POST", MESSAGES, read);
    expect(status).toBe(200);
    expect(json).toEqual({ success: true });
    expect(checkAnswer("markRead", json)).toEqual([]);
    expect(fake.graph.reads).toEqual([
      { phoneNumberId: NUMBER.phoneNumberId, messageId: wamid, typingIndicator: false, at: NOW_MS },
    ]);
  });

  it("answers readFault, with its details, while it is set, recording nothing", async () => {
    const wamid = fake.graph.queueIncoming({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "14155550101",
      text: "Hi",
    });
    fake.graph.readFault = { code: 131009, message: "Parameter value is not valid", details: "message_id" };
    const { status, json } = await callGraph("POST", MESSAGES, typing(wamid));
    expect(status).toBe(400);
    expect(json.error).toMatchObject({
      code: 131009,
      message: "Parameter value is not valid",
      error_data: { details: "message_id" },
    });
    expect(checkAnswer("error", json)).toEqual([]);
    expect(fake.graph.reads).toEqual([]);
  });

  it("refuses another indicator type, other fields, and a message the number never received (error 100)", async () => {
    const wamid = fake.graph.queueIncoming({
      phoneNumberId: NUMBER.phoneNumberId,
      from: "14155550101",
      text: "Hi",
    });
    const audio = await callGraph("POST", MESSAGES, {
      ...typing(wamid),
      typing_indicator: { type: "audio" },
    });
    const extra = await callGraph("POST", MESSAGES, { ...typing(wamid), to: "14155550101" });
    const unknown = await callGraph("POST", MESSAGES, typing("wamid.unknown"));
    const elsewhere = await callGraph(
      "POST",
      `/${OTHER.phoneNumberId}/messages`,
      typing(wamid),
      OTHER.accessToken,
    );
    for (const refused of [audio, extra, unknown, elsewhere]) {
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({ error: { code: 100, message: "Invalid parameter" } });
    }
    expect(fake.graph.invalidBodies.map((invalid) => invalid.problems)).toEqual([
      ['#/typing_indicator/type Instance does not match any of ["text"].'],
      ['# Property "to" does not match additional properties schema.'],
    ]);
    expect(fake.graph.reads).toEqual([]);
  });
});
