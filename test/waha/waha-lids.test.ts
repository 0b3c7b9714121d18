import { beforeEach, describe, expect, it, vi } from "vitest";
import { parseWahaEvent } from "../../src/gateways/waha/events";
import {
  contactEvents,
  createReverseOtp,
  expectCampaignSkips,
  expectNumberLearnt,
  expectSentLikeAnOptedOutNumber,
  expectStoppedBy,
  identifiersOf,
  incomingMessages,
  reverseOtpApp,
  shownContact,
  shownOtp,
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
// and the number comes from `GET /api/{session}/lids/{lid}` when WAHA knows it. Such a user's STOP
// puts the LID on the opt-out list, and their message verifies a reverse OTP, with the number once
// WAHA knows it. Sends to a LID at the gateway: waha-lid-sends.test.ts.

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

describe("WAHA: STOP from a user WAHA knows by LID alone (docs/campaigns.md, Opt-outs)", () => {
  const OPTED_OUT = "+14155550178";

  it("lists the LID; a send to it goes as one to an opted-out number; the number WAHA learns later joins the list", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    waha.mapLid(LID, null);
    await post(session.name, wahaLidMessagePayload(LID, "STOP", { pushName: "Jane" }));
    // WAHA was asked for the number and answered "not found" (`pn` null).
    expect(waha.calls.filter((c) => c.includes("/lids/"))).toEqual([lidsPath(session.name)]);
    const [stop] = await incomingMessages(key);
    expect(stop).toMatchObject({
      from_number: null,
      content: "STOP",
      contact: { phone_number: null, user_id: LID },
    });
    expect(await expectStoppedBy(key, LID)).toHaveLength(1);
    expect((await shownContact(key, stop?.contact?.id)).opted_out).toBe(true);

    // A send to the LID goes as one to a number on the list goes: single sends do not read it.
    await expectSentLikeAnOptedOutNumber(key, session.id, LID, OPTED_OUT, "Your order shipped");
    expect(waha.sent.map((s) => [s.chatId, s.body.text])).toEqual([
      [LID, "Your order shipped"],
      ["14155550178@c.us", "Your order shipped"],
    ]);

    // WAHA learns the number; the user's next message brings it to the contact, which stays
    // opted out by it too, with the STOP's keyword and time.
    waha.mapLid(LID, NUMBER);
    await post(session.name, wahaLidMessagePayload(LID, "thanks", { id: "3EB0CCCCCCCCCCCCCCCC" }));
    const shown = await expectNumberLearnt(key, stop?.contact?.id, LID, NUMBER);
    expect(shown.opted_out).toBe(true);
    await expectStoppedBy(key, LID, NUMBER);

    // A campaign to that number skips it, as it skips every number on the list.
    await expectCampaignSkips(key, session.id, [NUMBER, OPTED_OUT]);
    expect(waha.sent).toHaveLength(2);
  });
});

describe("WAHA: a reverse OTP verified by a user WAHA knows by LID (docs/contacts.md, Contacts)", () => {
  it("reports the LID and no number while WAHA knows none, and the number once it does", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const app = await reverseOtpApp(key, session.id);
    waha.mapLid(LID, null);
    const first = await createReverseOtp(key, app);
    await post(session.name, wahaLidMessagePayload(LID, first.text, { pushName: "Jane" }));
    expect(await shownOtp(key, first.id)).toMatchObject({
      status: "verified",
      verified_number: null,
      verified_contact: { phone_number: null, user_id: LID },
      refused_messages: 0,
    });

    // WAHA learns the number: the contact gains it with the user's next message, and the OTP
    // that message verifies names it.
    waha.mapLid(LID, NUMBER);
    const second = await createReverseOtp(key, app);
    await post(session.name, wahaLidMessagePayload(LID, second.text, { id: "3EB0DDDDDDDDDDDDDDDD" }));
    expect(await shownOtp(key, second.id)).toMatchObject({
      status: "verified",
      verified_number: NUMBER,
      verified_contact: { phone_number: NUMBER, user_id: LID },
    });
    // The first stays as it was verified.
    expect(await shownOtp(key, first.id)).toMatchObject({
      verified_number: null,
      verified_contact: { phone_number: null, user_id: LID },
    });
    const [message] = await incomingMessages(key);
    expect(message).toMatchObject({ from_number: null, contact: { phone_number: NUMBER, user_id: LID } });
  });

  it("an OTP for a number: refused while the LID's number is unknown, verified once WAHA knows it is that number", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const app = await reverseOtpApp(key, session.id);
    waha.mapLid(LID, null);
    const otp = await createReverseOtp(key, app, NUMBER);
    await post(session.name, wahaLidMessagePayload(LID, otp.text));
    expect(await shownOtp(key, otp.id)).toMatchObject({
      status: "pending",
      verified_number: null,
      verified_contact: null,
      refused_messages: 1,
    });
    // Another number's LID, whose number WAHA knows, verifies nothing of it either.
    const OTHER_LID = "120363025246125999@lid";
    waha.mapLid(OTHER_LID, "+14155550179");
    await post(session.name, wahaLidMessagePayload(OTHER_LID, otp.text, { id: "3EB0EEEEEEEEEEEEEEEE" }));
    expect(await shownOtp(key, otp.id)).toMatchObject({ status: "pending", refused_messages: 2 });

    waha.mapLid(LID, NUMBER);
    await post(session.name, wahaLidMessagePayload(LID, otp.text, { id: "3EB0FFFFFFFFFFFFFFFF" }));
    expect(await shownOtp(key, otp.id)).toMatchObject({
      status: "verified",
      verified_number: NUMBER,
      verified_contact: { phone_number: NUMBER, user_id: LID },
      refused_messages: 2,
    });
  });
});
