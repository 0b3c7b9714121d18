import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { parseWahaEvent } from "../../src/gateways/waha/events";
import { cardOfVcard } from "../../src/lib/vcard";
import { accountD1 } from "../databases";
import { call, createAccount } from "../helpers";
import {
  firstAttempts,
  getMessage,
  type Message,
  type SendResponse,
  settleAll,
  waitForMessages,
} from "../message-fixtures";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha, postWahaEvent } from "./fake-waha";

// Contact cards through WAHA (docs/messages.md, Sending messages → Contact cards): `POST
// /api/sendContactVcard` with each card as a `VCardContact` (WAHA's OpenAPI document,
// `MessageContactVcardRequest`), a lost answer settled by the chat's messages (`WAMessage.vCards`),
// and a contact's cards read from a `message` event's `vCards`.

useNetwork();

const CONTACT = "+14155550123";
const CHAT_ID = "14155550123@c.us";
const CARD = {
  name: { formatted_name: "Ana Silva", first_name: "Ana", last_name: "Silva" },
  phones: [
    { phone: "+351 912 345 678", type: "WORK", wa_id: "351912345678" },
    { phone: "+351 213 000 000", type: "HOME" },
  ],
  emails: [{ email: "ana@example.com" }],
  org: { company: "Acme", department: "Support", title: "Agent" },
};
const DESK = { name: { formatted_name: "Help desk" }, phones: [{ phone: "+14155550100" }] };

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

interface Shown extends Message {
  type: string;
  direction: string;
  content: string | null;
  metadata: Message["metadata"] & { contacts?: unknown };
}

async function sendCards(key: string, sessionId: string, extra: Record<string, unknown> = {}) {
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: {
      chatapp_session_id: sessionId,
      to_number: [CONTACT],
      type: "contacts",
      contacts: [CARD, DESK],
      ...extra,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.messages[0]?.id ?? "";
}

describe("WAHA: sending contact cards", () => {
  it("sends each card as a vCard that carries every field, under our message id, with reply_to for a reply", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const first = await sendCards(key, session.id);
    const [sent] = await waitForMessages(key, [first]);
    expect(sent).toMatchObject({
      status: "sent",
      provider_message_id: `true_${CHAT_ID}_${clientMessageIdOf(first)}`,
    });
    const body = waha.sent.at(-1)?.body as { contacts: { vcard: string }[] };
    expect(Object.keys(body).sort()).toEqual(["chatId", "contacts", "id", "session"]);
    expect(body.contacts.map((c) => cardOfVcard(c.vcard))).toEqual([CARD, DESK]);
    expect(body.contacts[0]?.vcard).toContain("TEL;TYPE=WORK;WAID=351912345678:+351 912 345 678");

    const reply = await sendCards(key, session.id, { reply_to: first });
    expect((await waitForMessages(key, [reply]))[0]?.status).toBe("sent");
    expect(waha.sent.at(-1)?.body).toMatchObject({
      reply_to: sent?.provider_message_id,
      id: clientMessageIdOf(reply),
    });
  });

  it("a send whose answer was lost is found among the chat's messages by its cards: sent once", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    waha.sendFault = "lost";
    const id = await sendCards(key, session.id);
    await firstAttempts([id]);
    waha.sendFault = null;
    const [settled] = await settleAll(key, session.id, [id]);
    expect(settled).toMatchObject({
      status: "sent",
      provider_message_id: `true_${CHAT_ID}_${clientMessageIdOf(id)}`,
    });
    expect(settled?.metadata.settled_by).toBe("lookup");
    expect(waha.bodies.filter((b) => b.call === "POST /api/sendContactVcard")).toHaveLength(1);
  });
});

describe("WAHA: receiving contact cards", () => {
  const vcards = [
    "BEGIN:VCARD\nVERSION:3.0\nN:Doe;Jane;;;\nFN:Jane Doe\nitem1.TEL;waid=911111111111:+91 11111 11111\nitem1.X-ABLabel:Mobile\nEND:VCARD",
    "not a vcard",
  ];

  it("a message's vCards are an incoming contacts message, an unreadable card left out", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const payload = {
      id: `false_${CHAT_ID}_VC1`,
      timestamp: Math.floor(Date.now() / 1000),
      from: CHAT_ID,
      fromMe: false,
      body: "",
      hasMedia: false,
      vCards: vcards,
    };
    const res = await postWahaEvent(session.name, "message", payload);
    expect(res.body).toEqual({ success: true, ignored: false });
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND provider_message_id = ?")
      .bind(accountId, payload.id)
      .first<{ id: string }>();
    const shown = (await getMessage(key, row?.id ?? "")) as Shown;
    expect(shown).toMatchObject({
      type: "contacts",
      direction: "incoming",
      content: "Jane Doe",
      from_number: CONTACT,
    });
    expect(shown.metadata.contacts).toEqual([
      {
        name: { formatted_name: "Jane Doe", first_name: "Jane", last_name: "Doe" },
        phones: [{ phone: "+91 11111 11111", type: "Mobile", wa_id: "911111111111" }],
      },
    ]);
  });

  it("a message with no readable card is read as its text", () => {
    const events =
      parseWahaEvent({
        id: "evt_1",
        timestamp: 1_767_225_600_000,
        session: "s",
        event: "message",
        payload: {
          id: `false_${CHAT_ID}_X`,
          timestamp: 1,
          from: CHAT_ID,
          fromMe: false,
          body: "hi",
          hasMedia: false,
          vCards: ["junk"],
        },
      })?.events ?? [];
    expect(events).toMatchObject([{ type: "incoming", messageType: "text", content: "hi" }]);
  });
});
