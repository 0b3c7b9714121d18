import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { EvolutionGateway } from "../../src/gateways/evolution";
import type { SentQuery } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { EVOLUTION_SETTINGS } from "../gateway-config";
import { call, createAccount, createSession } from "../helpers";
import { balanceOf, getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Contact cards through Evolution API (docs/messages.md, Sending messages → Contact cards), against the fake
// server: `POST /message/sendContact/{instance}` (`contactMessageSchema`), whose fields hold a
// card's name, first phone, company, first email and URL; a lost answer settled by the cards'
// names; and the `messages.upsert` webhook of a `contactMessage` or `contactsArrayMessage`.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const CONTACT_JID = "14155550123@s.whatsapp.net";
const CARD = {
  name: { formatted_name: "Ana Silva", first_name: "Ana" },
  phones: [
    { phone: "+351 912 345 678", type: "WORK", wa_id: "351912345678" },
    { phone: "+351 213 000 000", type: "HOME" },
  ],
  emails: [{ email: "ana@example.com" }, { email: "ana@home.example" }],
  org: { company: "Acme", title: "Agent" },
  urls: [{ url: "https://example.com" }],
};
const DESK = { name: { formatted_name: "Help desk" }, phones: [{ phone: "+1 415 555 0100" }] };

interface Shown extends Message {
  type: string;
  content: string | null;
  metadata: Message["metadata"] & { contacts?: unknown };
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

describe("Evolution API: sending contact cards", () => {
  it("is POST /message/sendContact with each card's fields, sent under Baileys' id; what Evolution stores reads back as the names", async () => {
    const { key } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [CONTACT],
        type: "contacts",
        contacts: [CARD, DESK],
      },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = (await waitForMessages(key, [id])) as Shown[];
    const [sent] = evolution.sent;
    expect(sent?.path).toBe(`/message/sendContact/${session.name}`);
    expect(sent?.body).toEqual({
      number: "14155550123",
      contact: [
        {
          fullName: "Ana Silva",
          phoneNumber: "+351 912 345 678",
          wuid: "351912345678",
          organization: "Acme",
          email: "ana@example.com",
          url: "https://example.com",
        },
        { fullName: "Help desk", phoneNumber: "+1 415 555 0100", wuid: "14155550100" },
      ],
      messageId: clientMessageIdOf(id),
    });
    expect(sent?.record).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true },
      messageType: "contactsArrayMessage",
    });
    expect(done).toMatchObject({
      status: "sent",
      type: "contacts",
      content: "Ana Silva, Help desk",
      provider_message_id: sent?.id,
    });
    expect(done?.metadata.contacts).toEqual([CARD, DESK]);
  });

  it("a phone Evolution's schema refuses (under 10 characters) is the gateway's refusal: failed and refunded", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [CONTACT],
        type: "contacts",
        contacts: [{ name: { formatted_name: "Short" }, phones: [{ phone: "112" }] }],
      },
    });
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = await waitForMessages(key, [id]);
    expect(done).toMatchObject({ status: "failed" });
    expect(done?.metadata.last_error).toMatch(/^gateway_http_400: POST \/message\/sendContact\//);
    expect(evolution.sent).toEqual([]);
    expect(await balanceOf(accountId)).toBe(10);
  });
});

describe("Evolution API gateway: contact cards whose answer was lost", () => {
  const SESSION = "session_5b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e";
  const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

  function query(cards: object[]): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "contacts",
      content: JSON.stringify(cards),
      mediaUrl: null,
      media: null,
      since: Date.now(),
    };
  }

  beforeEach(async () => {
    await gateway.create(SESSION);
    evolution.link(SESSION, PHONE);
  });

  it("is unknown, then found by the chat, the time and the names; other names are absent", async () => {
    const sent = query([DESK]);
    evolution.sendFault = "lost";
    const outcome = await gateway.send(SESSION, sent);
    expect(outcome).toMatchObject({ outcome: "unknown" });
    evolution.sendFault = null;
    const stored = evolution.sent[0];
    expect(stored?.id).not.toBe(sent.clientMessageId);
    expect(await gateway.lookup(SESSION, sent)).toEqual({ result: "found", providerMessageId: stored?.id });
    expect(await gateway.lookup(SESSION, query([CARD]))).toEqual({ result: "absent" });
  });
});

describe("Evolution API: receiving contact cards", () => {
  it("a contactMessage and a contactsArrayMessage are stored as contacts, read from their vCards", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const vcard = (name: string, waid: string) =>
      `BEGIN:VCARD\nVERSION:3.0\nN:;${name};;;\nFN:${name}\nitem1.TEL;waid=${waid}:+${waid}\nitem1.X-ABLabel:Mobile\nEND:VCARD`;
    const one = {
      ...evolution.incomingText(session.name, "3EB0CARD0001", CONTACT, ""),
      messageType: "contactMessage",
      message: { contactMessage: { displayName: "Bea", vcard: vcard("Bea", "447700900123") } },
    };
    const many = {
      ...evolution.incomingText(session.name, "3EB0CARD0002", CONTACT, ""),
      messageType: "contactsArrayMessage",
      message: {
        contactsArrayMessage: {
          displayName: "2 contacts",
          contacts: [
            { displayName: "Cid", vcard: vcard("Cid", "5511999990000") },
            { displayName: "Dee", vcard: vcard("Dee", "33612345678") },
          ],
        },
      },
    };
    for (const data of [one, many]) await postEvolutionEvent(session.name, "messages.upsert", data);
    const rows = await (await accountD1(accountId))
      .prepare(
        "SELECT id, provider_message_id FROM messages WHERE account_id = ? AND direction = 'incoming' ORDER BY provider_message_id",
      )
      .bind(accountId)
      .all<{ id: string }>();
    const shown = await Promise.all(rows.results.map(async (r) => (await getMessage(key, r.id)) as Shown));
    expect(shown.map((m) => [m.type, m.content])).toEqual([
      ["contacts", "Bea"],
      ["contacts", "Cid, Dee"],
    ]);
    expect(shown[0]?.metadata.contacts).toEqual([
      {
        name: { formatted_name: "Bea", first_name: "Bea" },
        phones: [{ phone: "+447700900123", type: "Mobile", wa_id: "447700900123" }],
      },
    ]);
  });
});
