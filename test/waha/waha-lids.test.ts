import { beforeEach, describe, expect, it, vi } from "vitest";
import { parseWahaEvent } from "../../src/gateways/waha/events";
import {
  contactEvents,
  expectNumberLearnt,
  identifiersOf,
  incomingMessages,
  shownContact,
} from "../contact-fixtures";
import { createAccount } from "../helpers";
import { useNetwork } from "../network";
import {
  connectedWahaSession,
  FakeWaha,
  postWahaEvent,
  wahaLidMessagePayload,
  wahaReactionPayload,
} from "./fake-waha";

// Users WAHA names by LID (`<digits>@lid`, src/lib/contact-identity.ts `LID_PATTERN`), against the fake server
// (fake-waha.ts): a `message` webhook from a LID chat is stored with its contact known by the LID,
// and the number comes from `GET /api/{session}/lids/{lid}` when WAHA knows it. Sends to a LID:
// waha-lid-sends.test.ts.

useNetwork();

const LID = "120363025246125888@lid";
const NUMBER = "+14155550177";
/** The lids endpoint's path for {@link LID}, its `@` escaped as WAHA's docs ask. */
const lidsPath = (name: string) => `GET /api/${name}/lids/120363025246125888%40lid`;

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

async function post(name: string, payload: unknown) {
  const res = await postWahaEvent(name, "message", payload);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ success: true, ignored: false });
}

describe("WAHA: a message from a LID chat", () => {
  it("is stored once, from no number, its contact known by the LID and named by pushName, when WAHA knows no number", async () => {
    const { key } = await createAccount(1);
    const session = await connectedWahaSession(waha, key);
    waha.mapLid(LID, null);
    const payload = wahaLidMessagePayload(LID, "hello", { pushName: "Jane" });
    await post(session.name, payload);
    await post(session.name, payload);

    const messages = await incomingMessages(key);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      from_number: null,
      content: "hello",
      provider_message_id: payload.id,
      contact: { phone_number: null, user_id: LID, name: "Jane" },
    });
    const shown = await shownContact(key, messages[0]?.contact?.id);
    expect(identifiersOf(shown)).toEqual([["user_id", LID]]);
    // WAHA was asked once, for the message stored: the replay stored nothing and asked nothing.
    expect(waha.calls.filter((c) => c.includes("/lids/"))).toEqual([lidsPath(session.name)]);
    expect((await contactEvents(key)).map((e) => e.type)).toEqual(["contact.created"]);
  });

  it("gains the number WAHA maps the LID to: one contact with both identifiers, and a contact.updated", async () => {
    const { key } = await createAccount(1);
    const session = await connectedWahaSession(waha, key);
    waha.mapLid(LID, NUMBER);
    await post(session.name, wahaLidMessagePayload(LID, "hello", { pushName: "Jane" }));

    const [message] = await incomingMessages(key);
    // The message is stored as it came, from the LID alone; its contact then learnt the number.
    expect(message?.from_number).toBeNull();
    const shown = await expectNumberLearnt(key, message?.contact?.id, LID, NUMBER);
    expect(shown.name).toBe("Jane");

    // The next message from the LID finds the contact with its number: WAHA is not asked again.
    await post(session.name, wahaLidMessagePayload(LID, "again", { id: "3EB0AAAAAAAAAAAAAAAA" }));
    expect(waha.calls.filter((c) => c.includes("/lids/"))).toEqual([lidsPath(session.name)]);
    // And the number's own chat is the same contact.
    await post(session.name, {
      id: "false_14155550177@c.us_3EB0BBBBBBBBBBBBBBBB",
      timestamp: Math.floor(Date.now() / 1000),
      from: "14155550177@c.us",
      fromMe: false,
      body: "from my number",
      hasMedia: false,
    });
    const all = await incomingMessages(key);
    expect(all.map((m) => [m.content, m.from_number, m.contact?.id])).toEqual([
      ["from my number", NUMBER, shown.id],
      ["again", null, shown.id],
      ["hello", null, shown.id],
    ]);
    expect((await contactEvents(key)).map((e) => e.type)).toEqual(["contact.created", "contact.updated"]);
  });

  it("keeps the message when WAHA cannot answer the lookup, and learns the number with the next one", async () => {
    const { key } = await createAccount(1);
    const session = await connectedWahaSession(waha, key);
    waha.mapLid(LID, NUMBER);
    waha.down = true;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    await post(session.name, wahaLidMessagePayload(LID, "hello"));
    const logged = warn.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    warn.mockRestore();
    expect(logged.filter((entry) => entry.event === "user_id_resolve_failed")).toEqual([
      expect.objectContaining({ level: "warn", gateway: "waha", error: expect.stringContaining("503") }),
    ]);
    const [first] = await incomingMessages(key);
    expect(first?.contact).toMatchObject({ phone_number: null, user_id: LID });
    expect(waha.calls.filter((c) => c.includes("/lids/"))).toEqual([lidsPath(session.name)]);

    waha.down = false;
    await post(session.name, wahaLidMessagePayload(LID, "again", { id: "3EB0AAAAAAAAAAAAAAAA" }));
    expect(await shownContact(key, first?.contact?.id)).toMatchObject({ phone_number: NUMBER, user_id: LID });
    expect(waha.calls.filter((c) => c.includes("/lids/"))).toEqual([
      lidsPath(session.name),
      lidsPath(session.name),
    ]);
  });

  it("a reaction from a LID chat is skipped: its event names the contact by a number the payload lacks", () => {
    const payload = { ...wahaReactionPayload("1", "false_14155550177@c.us_AAAX1", "🙏"), from: LID };
    const batch = parseWahaEvent({
      id: "evt_00000000000000000000000001",
      timestamp: 1741249702485,
      session: "default",
      event: "message.reaction",
      payload,
    });
    expect(batch?.events).toEqual([]);
  });
});
