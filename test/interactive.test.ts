import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession, getMessage, type Message, waitForMessages } from "./message-fixtures";

// Interactive messages through the sandbox (docs/messages.md, Sending messages → Buttons and lists): reply
// buttons and lists in the Cloud API's shape, their checks and price, what the sandbox phone
// receives, and a contact's tap coming back as an `interactive_reply` linked to its message.

interface Shown extends Message {
  type: string;
  content: string | null;
  direction: string;
  reply_to: string | null;
  metadata: Message["metadata"] & { interactive?: unknown; interactive_reply?: unknown };
}

const CONTACT = "+14155552671";

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

function send(key: string, body: Record<string, unknown>) {
  return call<{ data: { messages: Shown[]; total_cost: number } }>("POST", "/v1/chatapp/messages", {
    key,
    body,
  });
}

function tap(key: string, sessionId: string, messageId: string, id: string) {
  return call<{ data: Shown }>("POST", `/sandbox/sessions/${sessionId}/inbound`, {
    key,
    body: { from_number: CONTACT, type: "interactive_reply", reply_to: messageId, interactive_reply: { id } },
  });
}

describe("interactive messages", () => {
  it("sends reply buttons, priced PRICE_INTERACTIVE; a tap comes back as interactive_reply naming the button, linked to the message", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "interactive",
      interactive: BUTTONS,
    });
    expect(res.status).toBe(201);
    expect(res.body.data.total_cost).toBe(Number(env.PRICE_INTERACTIVE));
    const id = res.body.data.messages[0]!.id;
    expect(res.body.data.messages[0]).toMatchObject({ type: "interactive", content: BUTTONS.body.text });
    const [sent] = await waitForMessages(key, [id]);
    expect(sent?.status).toBe("sent");
    expect(((await getMessage(key, id)) as Shown).metadata.interactive).toEqual(BUTTONS);

    const phone = await call<{ data: { message_id: string; content: string; interactive: unknown }[] }>(
      "GET",
      `/sandbox/sessions/${session.id}/received?to_number=${encodeURIComponent(CONTACT)}`,
      { key },
    );
    expect(phone.body.data[0]).toMatchObject({
      message_id: id,
      content: BUTTONS.body.text,
      interactive: BUTTONS,
    });

    const tapped = await tap(key, session.id, id, "track");
    expect(tapped.status).toBe(201);
    const reply = (await getMessage(key, tapped.body.data.id)) as Shown;
    expect(reply).toMatchObject({
      type: "interactive_reply",
      direction: "incoming",
      content: "Track",
      reply_to: id,
    });
    expect(reply.metadata.interactive_reply).toEqual({ type: "button_reply", id: "track", title: "Track" });
    const listed = await call<{ data: Shown[] }>(
      "GET",
      "/v1/chatapp/messages?filter[type]=interactive_reply",
      {
        key,
      },
    );
    expect(listed.body.data.map((m) => m.id)).toEqual([reply.id]);
  });

  it("sends a list; choosing a row answers list_reply with its title and description", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "interactive",
      interactive: LIST,
    });
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]!.id;
    await waitForMessages(key, [id]);
    const tapped = await tap(key, session.id, id, "am-9");
    expect(tapped.body.data.metadata.interactive_reply).toEqual({
      type: "list_reply",
      id: "am-9",
      title: "9–10",
      description: "Before work",
    });
    expectProblem(await tap(key, session.id, id, "nope"), 422, "validation_failed");
  });

  it("refuses what Meta's limits refuse, naming the field, before any charge", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const base = { chatapp_session_id: session.id, to_number: [CONTACT], type: "interactive" };
    const button = (id: string, title = id) => ({ type: "reply", reply: { id, title } });
    const rows = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, title: `${prefix}${i}` }));
    const cases: [unknown, string][] = [
      [
        { ...BUTTONS, action: { buttons: [button("a"), button("b"), button("c"), button("d")] } },
        "interactive.action.buttons",
      ],
      [
        { ...BUTTONS, action: { buttons: [button("a", "x".repeat(21))] } },
        "interactive.action.buttons.0.reply.title",
      ],
      [
        { ...BUTTONS, action: { buttons: [button("a", "Same"), button("b", "Same")] } },
        "interactive.action.buttons.1.reply.title",
      ],
      [
        { ...BUTTONS, action: { buttons: [button("a"), button("a", "Other")] } },
        "interactive.action.buttons.1.reply.id",
      ],
      [{ ...BUTTONS, body: { text: "x".repeat(1025) } }, "interactive.body.text"],
      [{ ...BUTTONS, footer: { text: "x".repeat(61) } }, "interactive.footer.text"],
      [{ ...BUTTONS, header: { type: "image", text: "x" } }, "interactive.header.type"],
      [
        {
          ...LIST,
          action: {
            button: "Slots",
            sections: [
              { title: "A", rows: rows(6, "a") },
              { title: "B", rows: rows(5, "b") },
            ],
          },
        },
        "interactive.action.sections",
      ],
      [
        {
          ...LIST,
          action: { button: "Slots", sections: [{ rows: rows(1, "a") }, { title: "B", rows: rows(1, "b") }] },
        },
        "interactive.action.sections.0.title",
      ],
      [
        {
          ...LIST,
          action: { button: "Slots", sections: [{ title: "A", rows: [...rows(1, "a"), ...rows(1, "a")] }] },
        },
        "interactive.action.sections.0.rows.1.id",
      ],
      [
        { ...LIST, action: { button: "x".repeat(21), sections: LIST.action.sections } },
        "interactive.action.button",
      ],
      [{ type: "flow", body: { text: "x" }, action: {} }, "interactive.type"],
    ];
    for (const [interactive, field] of cases) {
      const res = await send(key, { ...base, interactive });
      expectProblem(res, 422, "validation_failed");
      expect(Object.keys((res.body as { errors?: Record<string, string[]> }).errors ?? {}), field).toContain(
        field,
      );
    }
    for (const [body, field] of [
      [base, "interactive"],
      [{ ...base, interactive: BUTTONS, content: "hi" }, "content"],
      [{ ...base, type: "text", content: "hi", interactive: BUTTONS }, "interactive"],
      [{ ...base, type: "interactive_reply", content: "hi" }, "type"],
    ] as const) {
      const res = await send(key, body);
      expectProblem(res, 422, "validation_failed");
      expect(Object.keys((res.body as { errors?: Record<string, string[]> }).errors ?? {}), field).toContain(
        field,
      );
    }
    const account = await call<{ data: { balance: number } }>("GET", "/v1/account", { key });
    expect(account.body.data.balance).toBe(1);
  });
});
