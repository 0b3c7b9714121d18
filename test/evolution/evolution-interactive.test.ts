import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { EvolutionGateway } from "../../src/gateways/evolution";
import type { SentQuery } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { EVOLUTION_API_KEY, EVOLUTION_SETTINGS, EVOLUTION_URL } from "../gateway-config";
import { call, createAccount, createSession } from "../helpers";
import { balanceOf, getMessage, type Message, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Reply buttons and lists through Evolution API (docs/messages.md, Sending messages → Buttons and lists),
// against the fake server (fake-evolution.ts): `POST /message/sendButtons/{instance}`
// (`buttonsMessageSchema`, `buttonMessage`) and `POST /message/sendList/{instance}`
// (`listMessageSchema`, `listMessage`), settling a lost answer by `POST /chat/findMessages`, and a
// contact's tap coming back by `messages.upsert` as an `interactive_reply` linked to its message.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const CONTACT_JID = "14155550123@s.whatsapp.net";

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

interface Shown extends Message {
  type: string;
  content: string | null;
  direction: string;
  reply_to: string | null;
  metadata: Message["metadata"] & { interactive?: unknown; interactive_reply?: unknown };
}

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

async function connectedEvolutionSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
    sender: OWNER_JID,
  });
  return { id: session.id, name };
}

function sendInteractive(
  key: string,
  sessionId: string,
  interactive: object,
  extra: Record<string, unknown> = {},
) {
  return call<{ data: { messages: Shown[]; total_cost: number } }>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: sessionId, to_number: [CONTACT], type: "interactive", interactive, ...extra },
  });
}

/** Sends `interactive` and waits until it left: our message and what the fake stored of it. */
async function sent(
  key: string,
  sessionId: string,
  interactive: object,
  extra: Record<string, unknown> = {},
) {
  const res = await sendInteractive(key, sessionId, interactive, extra);
  expect(res.status).toBe(201);
  const id = res.body.data.messages[0]?.id ?? "";
  const [done] = (await waitForMessages(key, [id])) as Shown[];
  const stored = evolution.sent.at(-1);
  return { id, done, stored, totalCost: res.body.data.total_cost };
}

/** The ids of the account's incoming messages, oldest first. */
async function incomingIds(accountId: string): Promise<string[]> {
  const rows = await (await accountD1(accountId))
    .prepare(
      "SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming' ORDER BY created_at, id",
    )
    .bind(accountId)
    .all<{ id: string }>();
  return rows.results.map((row) => row.id);
}

const price = Number(env.PRICE_INTERACTIVE);

describe("Evolution API: sending reply buttons and lists", () => {
  it("reply buttons are POST /message/sendButtons: the header as title, the body as description, priced PRICE_INTERACTIVE", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const { id, done, stored, totalCost } = await sent(key, session.id, BUTTONS);

    expect(totalCost).toBe(price);
    expect(evolution.sent).toHaveLength(1);
    expect(stored?.path).toBe(`/message/sendButtons/${session.name}`);
    expect(stored?.body).toEqual({
      number: "14155550123",
      title: "Order A-17",
      description: "Your order has shipped. What next?",
      footer: "Reply any time",
      buttons: [
        { type: "reply", displayText: "Track", id: "track" },
        { type: "reply", displayText: "Talk to us", id: "help" },
      ],
      messageId: clientMessageIdOf(id),
    });
    // `buttonMessage` does not pass `messageId` on: the message is Baileys' own id.
    expect(stored?.id).toMatch(/^BAE5/);
    expect(stored?.record).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true, id: stored?.id },
      messageType: "interactiveMessage",
      message: {
        interactiveMessage: {
          body: { text: "*Order A-17*\n\nYour order has shipped. What next?" },
          footer: { text: "Reply any time" },
          nativeFlowMessage: {
            buttons: [
              { name: "quick_reply", buttonParamsJson: '{"display_text":"Track","id":"track"}' },
              { name: "quick_reply", buttonParamsJson: '{"display_text":"Talk to us","id":"help"}' },
            ],
          },
        },
      },
    });
    expect(done).toMatchObject({
      status: "sent",
      type: "interactive",
      content: BUTTONS.body.text,
      provider_message_id: stored?.id,
      cost: price,
    });
    expect(done?.metadata.interactive).toEqual(BUTTONS);
    expect(await balanceOf(accountId)).toBeCloseTo(10 - price, 2);
  });

  it("buttons without a header send the body as title alone, and no footer", async () => {
    const { key } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const bare = {
      type: "button",
      body: { text: "Still there?" },
      action: { buttons: [BUTTONS.action.buttons[0]] },
    };
    const { id, done, stored } = await sent(key, session.id, bare);
    expect(stored?.body).toEqual({
      number: "14155550123",
      title: "Still there?",
      buttons: [{ type: "reply", displayText: "Track", id: "track" }],
      messageId: clientMessageIdOf(id),
    });
    expect(stored?.record.message).toMatchObject({
      interactiveMessage: { body: { text: "*Still there?*" } },
    });
    expect(done).toMatchObject({ status: "sent", content: "Still there?" });
  });

  it('a list is POST /message/sendList: "" for a missing title, footer or section title; a row without description sends none', async () => {
    const { key } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const first = await sent(key, session.id, LIST);
    expect(first.totalCost).toBe(price);
    expect(first.stored?.path).toBe(`/message/sendList/${session.name}`);
    expect(first.stored?.body).toEqual({
      number: "14155550123",
      title: "",
      description: "Pick a delivery slot",
      buttonText: "Slots",
      footerText: "",
      sections: [
        { title: "Morning", rows: [{ title: "9–10", description: "Before work", rowId: "am-9" }] },
        { title: "Evening", rows: [{ title: "18–19", rowId: "pm-6" }] },
      ],
      messageId: clientMessageIdOf(first.id),
    });
    expect(first.stored?.id).toMatch(/^BAE5/);
    expect(first.stored?.record).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true, id: first.stored?.id },
      messageType: "listMessage",
      message: {
        listMessage: {
          title: "",
          description: "Pick a delivery slot",
          buttonText: "Slots",
          footerText: "",
          listType: 1,
          sections: [
            { title: "Morning", rows: [{ title: "9–10", description: "Before work", rowId: "am-9" }] },
            { title: "Evening", rows: [{ title: "18–19", description: "", rowId: "pm-6" }] },
          ],
        },
      },
    });
    expect(first.done).toMatchObject({
      status: "sent",
      type: "interactive",
      content: "Pick a delivery slot",
      provider_message_id: first.stored?.id,
      cost: price,
    });
    expect(first.done?.metadata.interactive).toEqual(LIST);

    const titled = {
      type: "list",
      header: { type: "text", text: "Deliveries" },
      body: { text: "When suits you?" },
      footer: { text: "Times are local" },
      action: { button: "Choose", sections: [{ rows: [{ id: "now", title: "Now" }] }] },
    };
    const second = await sent(key, session.id, titled);
    expect(second.stored?.body).toEqual({
      number: "14155550123",
      title: "Deliveries",
      description: "When suits you?",
      buttonText: "Choose",
      footerText: "Times are local",
      sections: [{ title: "", rows: [{ title: "Now", rowId: "now" }] }],
      messageId: clientMessageIdOf(second.id),
    });
    expect(second.done).toMatchObject({ status: "sent", provider_message_id: second.stored?.id });
  });

  it("buttons or a list in reply carry quoted.key of the message they answer", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingText(session.name, "3EB0ASKING01", CONTACT, "Can I change my order?"),
    );
    const [theirs] = await incomingIds(accountId);
    const quoted = { key: { id: "3EB0ASKING01", remoteJid: CONTACT_JID, fromMe: false } };
    const buttons = await sent(key, session.id, BUTTONS, { reply_to: theirs });
    expect(buttons.stored?.body).toMatchObject({ number: "14155550123", title: "Order A-17", quoted });
    expect(buttons.done).toMatchObject({ status: "sent", reply_to: theirs });
    const list = await sent(key, session.id, LIST, { reply_to: theirs });
    expect(list.stored?.body).toMatchObject({ number: "14155550123", buttonText: "Slots", quoted });
    expect(list.done).toMatchObject({ status: "sent", reply_to: theirs });
  });
});

describe("Evolution API: a contact's tap", () => {
  async function tapped(accountId: string, key: string): Promise<Shown> {
    const ids = await incomingIds(accountId);
    expect(ids).toHaveLength(1);
    return (await getMessage(key, ids[0] ?? "")) as Shown;
  }

  it("on a reply button (the native-flow quick_reply Evolution 2.4 sends) is an interactive_reply linked to our message", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const { id, stored } = await sent(key, session.id, BUTTONS);
    const data = evolution.incomingTap(session.name, "3EB0TAP00001", CONTACT, {
      kind: "quickReply",
      stanzaId: stored?.id ?? "",
      buttonId: "help",
      text: "Talk to us",
    });
    // A repeated webhook stores nothing more.
    for (let i = 0; i < 2; i++) await postEvolutionEvent(session.name, "messages.upsert", data);

    const reply = await tapped(accountId, key);
    expect(reply).toMatchObject({
      type: "interactive_reply",
      direction: "incoming",
      content: "Talk to us",
      from_number: CONTACT,
      provider_message_id: "3EB0TAP00001",
      reply_to: id,
      media_url: null,
    });
    expect(reply.metadata.interactive_reply).toEqual({
      type: "button_reply",
      id: "help",
      title: "Talk to us",
    });
  });

  it("a legacy buttonsResponseMessage or templateButtonReplyMessage, the stanzaId where 2.3.7 put it, reads the same", async () => {
    for (const kind of ["buttons", "template"] as const) {
      for (const release of ["2.4.0-rc2", "2.3.7"] as const) {
        const { key, accountId } = await createAccount(10);
        const session = await connectedEvolutionSession(key);
        const { id, stored } = await sent(key, session.id, BUTTONS);
        await postEvolutionEvent(
          session.name,
          "messages.upsert",
          evolution.incomingTap(
            session.name,
            `3EB0${kind.toUpperCase()}${release.length}`,
            CONTACT,
            { kind, stanzaId: stored?.id ?? "", buttonId: "track", text: "Track" },
            release,
          ),
        );
        const reply = await tapped(accountId, key);
        expect(reply, `${kind} ${release}`).toMatchObject({
          type: "interactive_reply",
          content: "Track",
          reply_to: id,
        });
        expect(reply.metadata.interactive_reply).toEqual({
          type: "button_reply",
          id: "track",
          title: "Track",
        });
      }
    }
  });

  it("choosing a list row is an interactive_reply of its id, title and description, linked to our list", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const { id, stored } = await sent(key, session.id, LIST);
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingTap(session.name, "3EB0CHOICE01", CONTACT, {
        kind: "list",
        stanzaId: stored?.id ?? "",
        rowId: "am-9",
        title: "9–10",
        description: "Before work",
      }),
    );
    const reply = await tapped(accountId, key);
    expect(reply).toMatchObject({
      type: "interactive_reply",
      direction: "incoming",
      content: "9–10",
      from_number: CONTACT,
      provider_message_id: "3EB0CHOICE01",
      reply_to: id,
    });
    expect(reply.metadata.interactive_reply).toEqual({
      type: "list_reply",
      id: "am-9",
      title: "9–10",
      description: "Before work",
    });
  });

  it('a row without a description ("" in the tap) keeps none; a tap naming no button or row is not stored', async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const { id, stored } = await sent(key, session.id, LIST);
    const stanzaId = stored?.id ?? "";
    for (const data of [
      evolution.incomingTap(session.name, "3EB0NOROW001", CONTACT, {
        kind: "list",
        stanzaId,
        rowId: "",
        title: "?",
      }),
      evolution.incomingTap(session.name, "3EB0NOBTN001", CONTACT, {
        kind: "quickReply",
        stanzaId,
        buttonId: "",
      }),
    ]) {
      const res = await postEvolutionEvent(session.name, "messages.upsert", data);
      expect(res.status).toBe(200);
    }
    expect(await incomingIds(accountId)).toEqual([]);

    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingTap(session.name, "3EB0CHOICE02", CONTACT, {
        kind: "list",
        stanzaId,
        rowId: "pm-6",
        title: "18–19",
        description: "",
      }),
    );
    const reply = await tapped(accountId, key);
    expect(reply).toMatchObject({ type: "interactive_reply", content: "18–19", reply_to: id });
    expect(reply.metadata.interactive_reply).toEqual({ type: "list_reply", id: "pm-6", title: "18–19" });
  });
});

describe("Evolution API gateway: buttons or a list whose answer was lost", () => {
  const SESSION = "session_3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
  const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

  function query(interactive: object): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "interactive",
      content: JSON.stringify(interactive),
      mediaUrl: null,
      media: null,
      since: Date.now(),
    };
  }

  beforeEach(async () => {
    await gateway.create(SESSION);
    evolution.link(SESSION, PHONE);
  });

  it("is unknown, then found by the chat, the time and the choices (not by its client id)", async () => {
    for (const interactive of [BUTTONS, LIST]) {
      const lost = query(interactive);
      evolution.sendFault = "lost";
      expect(await gateway.send(SESSION, lost)).toMatchObject({ outcome: "unknown" });
      evolution.sendFault = null;
      const stored = evolution.sent.at(-1);
      expect(stored?.id).not.toBe(lost.clientMessageId);
      expect(await gateway.lookup(SESSION, lost)).toEqual({ result: "found", providerMessageId: stored?.id });
    }
    expect(
      evolution.bodies
        .filter((b) => b.call.startsWith("POST /chat/findMessages"))
        .map((b) => b.body)
        .slice(0, 2),
    ).toEqual([
      { where: { key: { id: expect.any(String), fromMe: true } } },
      {
        where: {
          key: { fromMe: true, remoteJid: CONTACT_JID },
          messageTimestamp: { gte: expect.any(String), lte: expect.any(String) },
        },
        page: 1,
        offset: 100,
      },
    ]);
  });

  it("is absent when only other buttons or another list were stored", async () => {
    const otherButton = { type: "reply", reply: { id: "cancel", title: "Cancel" } };
    await gateway.send(
      SESSION,
      query({ ...BUTTONS, action: { buttons: [BUTTONS.action.buttons[0], otherButton] } }),
    );
    await gateway.send(SESSION, query({ ...BUTTONS, header: undefined }));
    await gateway.send(SESSION, query({ ...BUTTONS, footer: { text: "Another footer" } }));
    await gateway.send(SESSION, query({ ...LIST, action: { ...LIST.action, button: "Times" } }));
    await gateway.send(
      SESSION,
      query({ ...LIST, action: { ...LIST.action, sections: [LIST.action.sections[0]] } }),
    );
    expect(evolution.sent).toHaveLength(5);

    expect(await gateway.lookup(SESSION, query(BUTTONS))).toEqual({ result: "absent" });
    expect(await gateway.lookup(SESSION, query(LIST))).toEqual({ result: "absent" });
  });

  it("rejects an interactive message whose content is not an Interactive, without a call", async () => {
    const fourButtons = {
      ...BUTTONS,
      action: { buttons: ["a", "b", "c", "d"].map((id) => ({ type: "reply", reply: { id, title: id } })) },
    };
    for (const content of ["not json", JSON.stringify(fourButtons)]) {
      expect(await gateway.send(SESSION, { ...query(BUTTONS), content })).toEqual({
        outcome: "rejected",
        reason: expect.stringMatching(/^content_unreadable/),
        retryable: false,
      });
    }
    expect(evolution.calls.filter((c) => c.startsWith("POST /message/"))).toEqual([]);
  });

  it("the fake holds sendButtons bodies to buttonsMessageSchema and buttonMessage's rules", async () => {
    const post = (body: object) =>
      fetch(`${EVOLUTION_URL}/message/sendButtons/${SESSION}`, {
        method: "POST",
        headers: { apikey: EVOLUTION_API_KEY, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const reply = (id: string) => ({ type: "reply", displayText: id, id });
    const valid = { number: "14155550123", title: "Pick", buttons: [reply("a")] };
    for (const refused of [
      { ...valid, buttons: [] },
      { ...valid, buttons: undefined },
      { ...valid, buttons: [reply("a"), reply("b"), reply("c"), reply("d")] },
      { ...valid, buttons: [reply("a"), { type: "url", displayText: "Site", url: "https://example.com" }] },
      { ...valid, buttons: [{ ...reply("a"), type: "postback" }] },
      { ...valid, buttons: [{ ...reply("a"), displayText: 7 }] },
      { ...valid, buttons: [{ ...reply("a"), payload: "not a Button field" }] },
      { ...valid, title: 1 },
      { ...valid, number: "" },
      { ...valid, header: "not in the schema" },
    ]) {
      expect((await post(refused)).status, JSON.stringify(refused)).toBe(400);
    }
    expect(evolution.sent).toEqual([]);
    const accepted = await post({ ...valid, description: "", footer: "f" });
    expect(accepted.status).toBe(201);
    expect(await accepted.json()).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true, id: evolution.sent[0]?.id },
      messageType: "interactiveMessage",
      message: { interactiveMessage: { body: { text: "*Pick*" }, footer: { text: "f" } } },
    });
  });

  it("the fake holds sendList bodies to listMessageSchema", async () => {
    const post = (body: object) =>
      fetch(`${EVOLUTION_URL}/message/sendList/${SESSION}`, {
        method: "POST",
        headers: { apikey: EVOLUTION_API_KEY, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const row = { title: "Now", rowId: "now" };
    const valid = {
      number: "14155550123",
      title: "",
      buttonText: "Choose",
      footerText: "",
      sections: [{ title: "", rows: [row] }],
    };
    for (const refused of [
      { ...valid, title: undefined },
      { ...valid, footerText: undefined },
      { ...valid, buttonText: 3 },
      { ...valid, description: null },
      { ...valid, sections: [] },
      { ...valid, sections: [{ rows: [row] }] },
      { ...valid, sections: [{ title: "A", rows: [] }] },
      { ...valid, sections: [{ title: "A", rows: [row, row] }] },
      { ...valid, sections: [{ title: "A", rows: [{ ...row, description: "" }] }] },
      { ...valid, sections: [{ title: "A", rows: [{ ...row, rowId: "" }] }] },
      { ...valid, sections: [{ title: "A", rows: [{ ...row, id: "now" }] }] },
      { ...valid, footer: "not in the schema" },
    ]) {
      expect((await post(refused)).status, JSON.stringify(refused)).toBe(400);
    }
    expect(evolution.sent).toEqual([]);
    const accepted = await post(valid);
    expect(accepted.status).toBe(201);
    expect(await accepted.json()).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true, id: evolution.sent[0]?.id },
      messageType: "listMessage",
      message: {
        listMessage: {
          title: "",
          buttonText: "Choose",
          listType: 1,
          sections: [{ title: "", rows: [{ title: "Now", description: "", rowId: "now" }] }],
        },
      },
    });
  });
});
