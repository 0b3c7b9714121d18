import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type ContactCard, readContactCard } from "../src/lib/contact-cards";
import { cardOfVcard, vcardOf } from "../src/lib/vcard";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession, getMessage, type Message, waitForMessages } from "./message-fixtures";

// Contact cards through the sandbox (docs/messages.md, Sending messages → Contact cards): the send's checks
// and price, what the sandbox phone receives, a contact's cards (the inbound route), and the
// vCards linked devices carry them in (src/lib/vcard.ts).

interface CardsMessage extends Message {
  type: string;
  content: string | null;
  cost: number;
  metadata: Message["metadata"] & { contacts?: ContactCard[] };
}

const CONTACT = "+14155552671";
const AGENT = {
  name: { formatted_name: "Ana Silva", first_name: "Ana", last_name: "Silva" },
  phones: [
    { phone: "+351 912 345 678", type: "WORK", wa_id: "351912345678" },
    { phone: "+351 213 000 000", type: "HOME" },
  ],
  emails: [{ email: "ana@example.com", type: "WORK" }],
  org: { company: "Acme", department: "Support", title: "Agent" },
  urls: [{ url: "https://example.com/support" }],
} satisfies ContactCard;
const DESK = {
  name: { formatted_name: "Help desk" },
  phones: [{ phone: "+14155550100" }],
} satisfies ContactCard;

function send(key: string, body: Record<string, unknown>) {
  return call<{ data: { messages: CardsMessage[]; total_cost: number } }>("POST", "/v1/chatapp/messages", {
    key,
    body,
  });
}

describe("contact cards", () => {
  it("sends cards: kept in metadata.contacts, the names as content, priced PRICE_CONTACTS, received as sent", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "contacts",
      contacts: [AGENT, DESK],
    });
    expect(res.status).toBe(201);
    const price = Math.round(Number(env.PRICE_CONTACTS) * 100);
    expect(res.body.data.total_cost).toBe(price / 100);
    const [created] = res.body.data.messages;
    expect(created).toMatchObject({ type: "contacts", content: "Ana Silva, Help desk", media_url: null });

    const [sent] = await waitForMessages(key, [created!.id]);
    expect(sent?.status).toBe("sent");
    const shown = (await getMessage(key, created!.id)) as CardsMessage;
    expect(shown.metadata.contacts).toEqual([AGENT, DESK]);
    expect(shown.cost).toBe(price / 100);

    const phone = await call<{
      data: { message_id: string; type: string; content: string; contacts: unknown }[];
    }>("GET", `/sandbox/sessions/${session.id}/received?to_number=${encodeURIComponent(CONTACT)}`, { key });
    expect(phone.body.data[0]).toMatchObject({
      message_id: created!.id,
      type: "contacts",
      content: "Ana Silva, Help desk",
      contacts: [AGENT, DESK],
    });
    const account = await call<{ data: { balance: number; prices: Record<string, number> } }>(
      "GET",
      "/v1/account",
      {
        key,
      },
    );
    expect(account.body.data.balance).toBe((100 - price) / 100);
    expect(account.body.data.prices.contacts).toBe(Number(env.PRICE_CONTACTS));
  });

  it("refuses cards that break a rule (422 naming the field), charging nothing", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const base = { chatapp_session_id: session.id, to_number: [CONTACT], type: "contacts" };
    const cards = (card: Record<string, unknown>) => ({ ...base, contacts: [card] });
    const cases: [Record<string, unknown>, string][] = [
      [base, "contacts"],
      [{ ...base, contacts: [] }, "contacts"],
      [{ ...base, contacts: Array.from({ length: 6 }, () => DESK) }, "contacts"],
      [cards({ phones: DESK.phones }), "contacts.0.name"],
      [cards({ name: { formatted_name: "" }, phones: DESK.phones }), "contacts.0.name.formatted_name"],
      [cards({ name: DESK.name }), "contacts.0.phones"],
      [cards({ name: DESK.name, phones: [] }), "contacts.0.phones"],
      [cards({ ...DESK, phones: [{ phone: "+1", type: "CELL" }] }), "contacts.0.phones.0.type"],
      [cards({ ...DESK, phones: [{ phone: "+1", wa_id: "+14155550100" }] }), "contacts.0.phones.0.wa_id"],
      [cards({ ...DESK, emails: [{ email: "not an address" }] }), "contacts.0.emails.0.email"],
      [cards({ ...DESK, urls: [{ url: "ftp://example.com" }] }), "contacts.0.urls.0.url"],
      [cards({ ...DESK, org: { company: "x".repeat(257) } }), "contacts.0.org.company"],
      [cards({ ...DESK, birthday: "2000-01-01" }), "contacts.0.birthday"],
      [{ ...base, contacts: [DESK], content: "hi" }, "content"],
      [{ ...base, type: "text", content: "hi", contacts: [DESK] }, "contacts"],
    ];
    for (const [body, field] of cases) {
      const res = await send(key, body);
      expectProblem(res, 422, "validation_failed");
      expect(Object.keys((res.body as { errors?: Record<string, string[]> }).errors ?? {}), field).toContain(
        field,
      );
    }
    const account = await call<{ data: { balance: number } }>("GET", "/v1/account", { key });
    expect(account.body.data.balance).toBe(1);
  });

  it("keeps a contact's cards: type contacts, the names as content, the cards in metadata.contacts", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const res = await call<{ data: CardsMessage }>("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACT, type: "contacts", contacts: [DESK] },
    });
    expect(res.status).toBe(201);
    const shown = (await getMessage(key, res.body.data.id)) as CardsMessage;
    expect(shown).toMatchObject({ type: "contacts", direction: "incoming", content: "Help desk" });
    expect(shown.metadata.contacts).toEqual([DESK]);
    const list = await call<{ data: CardsMessage[] }>("GET", "/v1/chatapp/messages?filter[type]=contacts", {
      key,
    });
    expect(list.body.data.map((m) => m.id)).toEqual([res.body.data.id]);
    const refused = await call("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACT, type: "contacts" },
    });
    expectProblem(refused, 422, "validation_failed");
  });
});

describe("vCards (src/lib/vcard.ts)", () => {
  it("writes a card as vCard 3.0 that reads back as the same card", () => {
    const vcard = vcardOf(AGENT);
    expect(vcard.split("\r\n")).toEqual([
      "BEGIN:VCARD",
      "VERSION:3.0",
      "FN:Ana Silva",
      "N:Silva;Ana;;;",
      "TEL;TYPE=WORK;WAID=351912345678:+351 912 345 678",
      "TEL;TYPE=HOME:+351 213 000 000",
      "EMAIL;TYPE=WORK:ana@example.com",
      "URL:https://example.com/support",
      "ORG:Acme;Support",
      "TITLE:Agent",
      "END:VCARD",
    ]);
    expect(cardOfVcard(vcard)).toEqual(AGENT);
    expect(cardOfVcard(vcardOf(DESK))).toEqual(DESK);
  });

  it("escapes what vCard text must, and reads it back unchanged", () => {
    const card = {
      name: { formatted_name: "Smith, Jones; Partners" },
      phones: [{ phone: "+1 (415) 555-0100" }],
    };
    expect(vcardOf(card)).toContain("FN:Smith\\, Jones; Partners");
    expect(cardOfVcard(vcardOf(card))).toEqual(card);
  });

  it("reads the vCards WhatsApp phones and Evolution API write: item groups, X-ABLabel, lowercase waid", () => {
    const evolution =
      "BEGIN:VCARD\nVERSION:3.0\nN:Jane Doe\nFN:Jane Doe\nORG:Company Name;\nEMAIL:jane@example.com\nitem1.TEL;waid=911111111111:+91 11111 11111\nitem1.X-ABLabel:Celular\nEND:VCARD";
    expect(cardOfVcard(evolution)).toEqual({
      // Evolution writes `N:<full name>`, one part only, which is not read as the name's parts.
      name: { formatted_name: "Jane Doe" },
      phones: [{ phone: "+91 11111 11111", type: "Celular", wa_id: "911111111111" }],
      emails: [{ email: "jane@example.com" }],
      org: { company: "Company Name" },
    });
    const waha =
      "BEGIN:VCARD\nVERSION:3.0\nFN:Jane Doe\nTEL;type=CELL;type=VOICE;waid=911111111111:+91 11111 11111\nEND:VCARD";
    expect(cardOfVcard(waha)?.phones).toEqual([
      { phone: "+91 11111 11111", type: "CELL", wa_id: "911111111111" },
    ]);
    // No FN: the name's parts; neither: the display name WhatsApp gave the card; none at all: null.
    expect(cardOfVcard("BEGIN:VCARD\nVERSION:3.0\nN:Doe;John;;Dr.;\nEND:VCARD")?.name.formatted_name).toBe(
      "Dr. John Doe",
    );
    expect(
      cardOfVcard("BEGIN:VCARD\nVERSION:3.0\nTEL:+1\nEND:VCARD", "Front desk")?.name.formatted_name,
    ).toBe("Front desk");
    expect(cardOfVcard("BEGIN:VCARD\nVERSION:3.0\nTEL:+1\nEND:VCARD")).toBeNull();
    expect(cardOfVcard("not a card")).toBeNull();
    expect(cardOfVcard("BEGIN:VCALENDAR\nEND:VCALENDAR")).toBeNull();
  });

  it("reads Meta's received cards (ContactObject_1): parts stand for a missing formatted_name, addresses kept", () => {
    expect(
      readContactCard({
        name: { first_name: "Lucía", last_name: "Gómez" },
        addresses: [{ city: "Menlo Park", type: "HOME" }],
        birthday: "1999-01-23",
      }),
    ).toEqual({
      name: { formatted_name: "Lucía Gómez", first_name: "Lucía", last_name: "Gómez" },
      phones: [],
      addresses: [{ city: "Menlo Park", type: "HOME" }],
      birthday: "1999-01-23",
    });
    expect(readContactCard({ phones: [{ phone: "+1" }] })).toBeNull();
    expect(readContactCard({ name: { formatted_name: "X" }, phones: "+1" })).toBeNull();
  });
});
