import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { EvolutionGateway } from "../../src/gateways/evolution";
import type { SentQuery } from "../../src/gateways/gateway";
import { userIdKind } from "../../src/lib/contact-identity";
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
import { EVOLUTION_SETTINGS } from "../gateway-config";
import { createAccount, createSession } from "../helpers";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Chats addressed by LID (`<digits>@lid`) on Evolution API (docs/contacts.md, Contacts): a `messages.upsert`
// from a `@lid` chat is stored with the LID as the contact's user id, and with the number when the
// key gives it (`remoteJidAlt`, `senderPn`; src/gateways/evolution/events.ts `senderOf`), in each
// shape Evolution's releases emit (fake-evolution.ts `incomingFromLid`); a send to a LID goes to
// that JID as it is (src/gateways/evolution/recipient.ts). Evolution has no lookup of a LID's
// number: a user is known by the LID alone until a message's key brings the number. Such a user's
// STOP puts the LID on the opt-out list, and their message verifies a reverse OTP.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const LID = "207935014371343@lid";
const CONTACT = "+14155550123";

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

async function connectedSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
    sender: OWNER_JID,
  });
  return { id: session.id, name };
}

/**
 * The user of {@link LID} sends `text` (message `id`) to session `name`; the key names their
 * number too when `phone` is given (`remoteJidAlt`, Evolution 2.3.6).
 */
function fromLid(name: string, id: string, text: string, phone?: string) {
  const data = evolution.incomingFromLid(name, id, LID, text, phone ? { phone } : {});
  return postEvolutionEvent(name, "messages.upsert", data);
}

describe("Evolution API: a message from a @lid chat", () => {
  it("without the number is stored once, from_number null, its contact known by the LID", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const data = evolution.incomingFromLid(session.name, "3EB0LID0000001", LID, "Hello");
    expect(data.key).toEqual({ remoteJid: LID, addressingMode: "lid", fromMe: false, id: "3EB0LID0000001" });
    for (let i = 0; i < 2; i += 1) {
      const res = await postEvolutionEvent(session.name, "messages.upsert", data);
      expect(res.body).toEqual({ success: true, ignored: false });
    }

    const messages = await incomingMessages(key);
    expect(messages).toHaveLength(1);
    const [message] = messages;
    expect(message).toMatchObject({
      provider_message_id: "3EB0LID0000001",
      from_number: null,
      content: "Hello",
      contact: { phone_number: null, user_id: LID, name: "Bruno" },
    });
    const contact = await shownContact(key, String(message?.contact?.id));
    expect(contact).toMatchObject({ phone_number: null, user_id: LID, name: "Bruno" });
    expect(identifiersOf(contact)).toEqual([["user_id", LID]]);
    expect((await contactEvents(key)).map((e) => e.type)).toEqual(["contact.created"]);
  });

  it.each([
    ["2.3.6", { remoteJid: LID, remoteJidAlt: "14155550123@s.whatsapp.net", addressingMode: "lid" }],
    ["2.4.0-rc2", { remoteJid: "14155550123@s.whatsapp.net", remoteJidAlt: LID, addressingMode: "pn" }],
    [
      "2.3.2",
      {
        remoteJid: "14155550123@s.whatsapp.net",
        senderPn: "14155550123@s.whatsapp.net",
        previousRemoteJid: LID,
      },
    ],
  ] as const)(
    "with the number (Evolution %s's key) stores from_number and both identifiers",
    async (release, key) => {
      const account = await createAccount(1);
      const session = await connectedSession(account.key);
      const data = evolution.incomingFromLid(session.name, "3EB0LID0000002", LID, "Hi", {
        phone: CONTACT,
        release,
      });
      expect(data.key).toEqual({ ...key, fromMe: false, id: "3EB0LID0000002" });
      await postEvolutionEvent(session.name, "messages.upsert", data);

      const [message] = await incomingMessages(account.key);
      expect(message).toMatchObject({
        from_number: CONTACT,
        contact: { phone_number: CONTACT, user_id: LID },
      });
      const contact = await shownContact(account.key, String(message?.contact?.id));
      expect(contact).toMatchObject({ phone_number: CONTACT, user_id: LID, name: "Bruno" });
      expect(identifiersOf(contact)).toEqual([
        ["phone_number", CONTACT],
        ["user_id", LID],
      ]);
    },
  );

  it("a later message from the same LID that brings the number: the contact gains it (contact.updated)", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    // Two seconds apart (`messageTimestamp`, seconds): events are listed in the gateway's time.
    const seconds = Math.floor(Date.now() / 1000);
    await postEvolutionEvent(session.name, "messages.upsert", {
      ...evolution.incomingFromLid(session.name, "3EB0LID0000003", LID, "First"),
      messageTimestamp: seconds - 2,
    });
    await postEvolutionEvent(session.name, "messages.upsert", {
      ...evolution.incomingFromLid(session.name, "3EB0LID0000004", LID, "Second", { phone: CONTACT }),
      messageTimestamp: seconds - 1,
    });

    const byContent = new Map((await incomingMessages(key)).map((m) => [m.content, m]));
    const first = byContent.get("First");
    const second = byContent.get("Second");
    expect([first?.content, first?.from_number]).toEqual(["First", null]);
    expect([second?.content, second?.from_number]).toEqual(["Second", CONTACT]);
    expect(second?.contact?.id).toBe(first?.contact?.id);
    await expectNumberLearnt(key, first?.contact?.id, LID, CONTACT);

    // From now on a message from the number alone finds the same contact.
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingText(session.name, "3EB0LID0000005", CONTACT, "Third"),
    );
    const third = (await incomingMessages(key)).find((m) => m.content === "Third");
    expect([third?.from_number, third?.contact?.id]).toEqual([CONTACT, first?.contact?.id]);
  });
});

describe("Evolution API: a send to a LID recipient (gateway level)", () => {
  const SESSION = "session_7a1d2c3b-4e5f-4a6b-9c7d-8e9f0a1b2c3d";
  const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

  function message(overrides: Partial<SentQuery> = {}): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: LID,
      type: "text",
      content: "Hello by LID",
      mediaUrl: null,
      media: null,
      since: Date.now(),
      ...overrides,
    };
  }

  beforeEach(async () => {
    await gateway.create(SESSION);
    evolution.link(SESSION, PHONE);
  });

  it("sends with number = the LID JID, no number lookup, and the fake relays it to that chat", async () => {
    expect(userIdKind(LID)).toBe("lid");
    const sent = message();
    expect(await gateway.send(SESSION, sent)).toEqual({
      outcome: "accepted",
      providerMessageId: sent.clientMessageId,
    });
    expect(evolution.bodies.filter((b) => b.call.startsWith("POST /message/"))).toEqual([
      {
        call: `POST /message/sendText/${SESSION}`,
        body: { number: LID, text: "Hello by LID", messageId: sent.clientMessageId },
      },
    ]);
    expect(evolution.calls.filter((c) => c.startsWith("POST /chat/whatsappNumbers"))).toEqual([]);
    expect(evolution.sent.map((s) => [s.id, s.remoteJid, s.record.key.remoteJid])).toEqual([
      [sent.clientMessageId, LID, LID],
    ]);
  });

  it("a reply quotes the message in the LID chat, and a lookup searches that chat", async () => {
    const reply = message({
      content: "Re",
      replyTo: { providerMessageId: "3EB0LID0000006", fromMe: false },
    });
    expect((await gateway.send(SESSION, reply)).outcome).toBe("accepted");
    expect(evolution.sent.at(-1)?.body).toEqual({
      number: LID,
      text: "Re",
      messageId: reply.clientMessageId,
      quoted: { key: { id: "3EB0LID0000006", remoteJid: LID, fromMe: false } },
    });

    // A voice note whose answer was lost, stored under Baileys' own id (`audioWhatsapp` does not
    // pass messageId on): the lookup finds it by the LID chat, the time and the type.
    evolution.sendFault = "lost";
    const voice = message({
      type: "audio",
      content: null,
      mediaUrl: "https://cdn.example.test/v.ogg",
      media: { key: crypto.randomUUID(), contentType: "audio/ogg" },
    });
    expect((await gateway.send(SESSION, voice)).outcome).toBe("unknown");
    evolution.sendFault = null;
    const stored = evolution.sent.at(-1);
    if (!stored) throw new Error("not stored");
    stored.id = "3EB0F00DFACEB00C654321";
    stored.record.key.id = stored.id;

    expect(await gateway.lookup(SESSION, voice)).toEqual({
      result: "found",
      providerMessageId: "3EB0F00DFACEB00C654321",
    });
    const windows = evolution.bodies
      .filter((b) => b.call.startsWith("POST /chat/findMessages"))
      .map((b) => (b.body as { where: { key: unknown } }).where.key);
    expect(windows).toEqual([
      { id: voice.clientMessageId, fromMe: true },
      { fromMe: true, remoteJid: LID },
    ]);
  });
});

describe("Evolution API: STOP from a user known by LID alone (docs/campaigns.md, Opt-outs)", () => {
  const OPTED_OUT = "+14155550178";

  it("lists the LID; a send to it goes as one to an opted-out number; the number a later message brings joins the list", async () => {
    const { key } = await createAccount(10);
    const session = await connectedSession(key);
    // Without `remoteJidAlt`: Evolution names the user by the LID alone.
    const stopData = evolution.incomingFromLid(session.name, "3EB0LID0000010", LID, "STOP");
    expect(stopData.key).toEqual({
      remoteJid: LID,
      addressingMode: "lid",
      fromMe: false,
      id: "3EB0LID0000010",
    });
    await postEvolutionEvent(session.name, "messages.upsert", stopData);
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
    expect(evolution.sent.map((s) => [s.remoteJid, s.body.text])).toEqual([
      [LID, "Your order shipped"],
      ["14155550178@s.whatsapp.net", "Your order shipped"],
    ]);

    // A later message brings the number (`remoteJidAlt`): the contact gains it and stays opted
    // out by it too, with the STOP's keyword and time.
    await fromLid(session.name, "3EB0LID0000011", "thanks", CONTACT);
    const shown = await expectNumberLearnt(key, stop?.contact?.id, LID, CONTACT);
    expect(shown.opted_out).toBe(true);
    await expectStoppedBy(key, LID, CONTACT);

    // A campaign to that number skips it, as it skips every number on the list.
    await expectCampaignSkips(key, session.id, [CONTACT, OPTED_OUT]);
    expect(evolution.sent).toHaveLength(2);
  });
});

describe("Evolution API: a reverse OTP verified by a user known by LID (docs/contacts.md, Contacts)", () => {
  it("reports the LID and no number while none is known, and the number once a message brought it", async () => {
    const { key } = await createAccount(10);
    const session = await connectedSession(key);
    const app = await reverseOtpApp(key, session.id);
    const first = await createReverseOtp(key, app);
    await fromLid(session.name, "3EB0LID0000020", first.text);
    expect(await shownOtp(key, first.id)).toMatchObject({
      status: "verified",
      verified_number: null,
      verified_contact: { phone_number: null, user_id: LID },
      refused_messages: 0,
    });

    // A message that comes with the number verifies with it.
    const second = await createReverseOtp(key, app);
    await fromLid(session.name, "3EB0LID0000021", second.text, CONTACT);
    expect(await shownOtp(key, second.id)).toMatchObject({
      status: "verified",
      verified_number: CONTACT,
      verified_contact: { phone_number: CONTACT, user_id: LID },
    });
    // So does a later one by the LID alone: the contact is known by the number now.
    const third = await createReverseOtp(key, app);
    await fromLid(session.name, "3EB0LID0000022", third.text);
    expect(await shownOtp(key, third.id)).toMatchObject({
      status: "verified",
      verified_number: CONTACT,
      verified_contact: { phone_number: CONTACT, user_id: LID },
    });
    expect(await shownOtp(key, first.id)).toMatchObject({
      verified_number: null,
      verified_contact: { phone_number: null, user_id: LID },
    });
  });

  it("an OTP for a number: refused from the LID alone while its number is unknown, verified by the message that brings it", async () => {
    const { key } = await createAccount(10);
    const session = await connectedSession(key);
    const app = await reverseOtpApp(key, session.id);
    const otp = await createReverseOtp(key, app, CONTACT);
    await fromLid(session.name, "3EB0LID0000030", otp.text);
    expect(await shownOtp(key, otp.id)).toMatchObject({
      status: "pending",
      verified_number: null,
      verified_contact: null,
      refused_messages: 1,
    });
    await fromLid(session.name, "3EB0LID0000031", otp.text, CONTACT);
    expect(await shownOtp(key, otp.id)).toMatchObject({
      status: "verified",
      verified_number: CONTACT,
      verified_contact: { phone_number: CONTACT, user_id: LID },
      refused_messages: 1,
    });
  });
});
