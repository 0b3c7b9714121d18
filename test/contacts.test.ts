import { describe, expect, it } from "vitest";
import type { GatewayEvent } from "../src/gateways/gateway";
import {
  type Contact,
  contactEvents,
  expectCampaignSkips,
  expectStoppedBy,
  type IncomingMessage,
  identifiersOf,
  incomingMessages,
  sendToUserIds,
  shownContact,
} from "./contact-fixtures";
import { firstAccountD1 } from "./databases";
import { call, createAccount, expectProblem, phoneReceived, sessionStub } from "./helpers";
import { connectedSession, waitForMessages } from "./message-fixtures";

// docs/contacts.md, Contacts: whoever is on the other side of a chat, known by a number, a user id (a BSUID
// or a LID) or both; learnt from each message, never losing an identifier.

const BSUID = "US.13491208655302741918";
const NEW_BSUID = "US.98765432109876543210";
const LID = "120363025246125888@lid";

/** The sandbox phone of session `session` receiving a text from `from`. */
async function inbound(key: string, session: string, from: Record<string, string>, content = "hi") {
  const res = await call<{ data: IncomingMessage }>("POST", `/sandbox/sessions/${session}/inbound`, {
    key,
    body: { ...from, type: "text", content },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

describe("a user known only by a user id", () => {
  it("is stored, named on the message, listed, and found again by the same id", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const first = await inbound(key, session, { from_user_id: BSUID, username: "@jane", name: "Jane" });
    expect(first.from_number).toBeNull();
    expect(first.contact).toEqual({
      id: expect.stringMatching(/^ct_[0-9a-f]{32}$/),
      phone_number: null,
      user_id: BSUID,
      parent_user_id: null,
      username: "@jane",
      name: "Jane",
    });
    const second = await inbound(key, session, { from_user_id: BSUID }, "again");
    expect(second.contact?.id).toBe(first.contact?.id);

    const listed = await incomingMessages(key);
    expect(listed.map((m) => [m.id, m.contact?.id, m.contact?.user_id])).toEqual([
      [second.id, first.contact?.id, BSUID],
      [first.id, first.contact?.id, BSUID],
    ]);
    const shown = await shownContact(key, String(first.contact?.id));
    expect(shown).toMatchObject({
      phone_number: null,
      user_id: BSUID,
      username: "@jane",
      chatapp_session_id: session,
    });
    expect(identifiersOf(shown)).toEqual([["user_id", BSUID]]);
    expect(shown.opted_out).toBe(false);
    expect(Date.parse(String(shown.window_open_until)) - Date.parse(String(shown.last_message_at))).toBe(
      86_400_000,
    );

    const events = await contactEvents(key);
    expect(events.map((e) => e.type)).toEqual(["contact.created"]);
    expect(events[0]?.data).toMatchObject({ id: first.contact?.id, user_id: BSUID, phone_number: null });
  });

  it("reveals a number later: the same contact, a contact.updated with the old and new identifiers", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const first = await inbound(key, session, { from_user_id: LID });
    const revealed = await inbound(key, session, { from_user_id: LID, from_number: "+14155552601" });
    expect(revealed.from_number).toBe("+14155552601");
    expect(revealed.contact).toMatchObject({
      id: first.contact?.id,
      phone_number: "+14155552601",
      user_id: LID,
    });
    // From now on the number alone finds them.
    const byNumber = await inbound(key, session, { from_number: "+14155552601" });
    expect(byNumber.contact?.id).toBe(first.contact?.id);

    const events = await contactEvents(key);
    expect(events.map((e) => e.type)).toEqual(["contact.created", "contact.updated"]);
    const update = events[1]?.data as { contact: Contact; previous: Contact };
    expect([update.previous.phone_number, update.contact.phone_number]).toEqual([null, "+14155552601"]);
    expect([update.previous.user_id, update.contact.user_id]).toEqual([LID, LID]);

    const found = await call<{ data: Contact[] }>("GET", "/v1/contacts?filter[phone_number]=%2B14155552601", {
      key,
    });
    expect(found.body.data.map((c) => c.id)).toEqual([first.contact?.id]);
  });

  it("keeps an old BSUID linked when the user's BSUID changes with their number", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const first = await inbound(key, session, { from_user_id: BSUID, from_number: "+14155552602" });
    await inbound(key, session, { from_user_id: NEW_BSUID, from_number: "+14155552602" });
    const byOld = await inbound(key, session, { from_user_id: BSUID });
    expect(byOld.contact).toMatchObject({ id: first.contact?.id, user_id: NEW_BSUID });
    const shown = await shownContact(key, String(first.contact?.id));
    expect(identifiersOf(shown)).toEqual(
      [
        ["phone_number", "+14155552602"],
        ["user_id", BSUID],
        ["user_id", NEW_BSUID],
      ].sort(),
    );
    const byOldFilter = await call<{ data: Contact[] }>("GET", `/v1/contacts?filter[user_id]=${BSUID}`, {
      key,
    });
    expect(byOldFilter.body.data.map((c) => c.id)).toEqual([first.contact?.id]);
  });

  it("merges two contacts that turn out to be one person, messages and identifiers included", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const byLid = await inbound(key, session, { from_user_id: LID });
    const byNumber = await inbound(key, session, { from_number: "+14155552603" });
    expect(byNumber.contact?.id).not.toBe(byLid.contact?.id);
    const both = await inbound(key, session, { from_user_id: LID, from_number: "+14155552603" });
    // The older contact is kept; the other's messages now name it, and it is gone.
    expect(both.contact).toMatchObject({ id: byLid.contact?.id, user_id: LID, phone_number: "+14155552603" });
    const again = await call<{ data: IncomingMessage }>("GET", `/v1/chatapp/messages/${byNumber.id}`, {
      key,
    });
    expect(again.body.data.contact?.id).toBe(byLid.contact?.id);
    expectProblem(await call("GET", `/v1/contacts/${byNumber.contact?.id}`, { key }), 404, "not_found");
    const all = await call<{ data: Contact[] }>("GET", `/v1/contacts?filter[session_id]=${session}`, { key });
    expect(all.body.data.map((c) => c.id)).toEqual([byLid.contact?.id]);
  });
});

describe("contacts through a gateway's events", () => {
  it("stores a message delivered twice once, with one contact and one contact.created", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const event: GatewayEvent = {
      type: "incoming",
      providerMessageId: "gw-contact-1",
      from: { userId: BSUID, username: "@jane" },
      messageType: "text",
      content: "hello",
      mediaUrl: null,
      at: Date.now(),
    };
    await sessionStub(session).gatewayEvents("sandbox", [event]);
    await sessionStub(session).gatewayEvents("sandbox", [event]);
    const listed = await incomingMessages(key);
    expect(listed).toHaveLength(1);
    expect(listed[0]?.contact).toMatchObject({
      user_id: BSUID,
      username: "@jane",
      phone_number: null,
    });
    expect((await contactEvents(key)).map((e) => e.type)).toEqual(["contact.created"]);
  });
});

describe("GET /v1/contacts", () => {
  it("needs contacts:read, and keeps one account's contacts from another", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const mine = await inbound(key, session, { from_number: "+14155552604" });
    const scoped = await call<{ data: { api_key: string } }>("POST", "/v1/api-keys", {
      key,
      body: { name: "no contacts", scopes: ["messages:read"] },
    });
    expectProblem(
      await call("GET", "/v1/contacts", { key: scoped.body.data.api_key }),
      403,
      "insufficient_scope",
    );
    const other = await createAccount(1);
    expectProblem(
      await call("GET", `/v1/contacts/${mine.contact?.id}`, { key: other.key }),
      404,
      "not_found",
    );
    const theirs = await call<{ data: Contact[] }>("GET", "/v1/contacts", { key: other.key });
    expect(theirs.body.data).toEqual([]);
    expectProblem(await call("GET", "/v1/contacts?filter[user_id]=nope", { key }), 422, "validation_failed");
  });
});

describe("a gateway's contact event (a user id changed, a status naming both ids)", () => {
  it("links a new BSUID to the contact the old one names, once per event", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const first = await inbound(key, session, { from_user_id: BSUID });
    const change: GatewayEvent = {
      type: "contact",
      contact: { userId: NEW_BSUID, previousUserId: BSUID },
      ref: `user_id_update:${BSUID}:${NEW_BSUID}`,
      at: Date.now(),
    };
    await sessionStub(session).gatewayEvents("sandbox", [change]);
    await sessionStub(session).gatewayEvents("sandbox", [change]);
    const shown = await shownContact(key, String(first.contact?.id));
    expect(shown.user_id).toBe(NEW_BSUID);
    expect(shown.identifiers?.map((i) => i.value).sort()).toEqual([BSUID, NEW_BSUID].sort());
    expect((await contactEvents(key)).map((e) => e.type)).toEqual(["contact.created", "contact.updated"]);
    const byNew = await inbound(key, session, { from_user_id: NEW_BSUID });
    expect(byNew.contact?.id).toBe(first.contact?.id);
  });
});

describe("sending to a user id", () => {
  it("answers a username user by to_user_id: to_number null, the contact named, the phone receives it", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const wrote = await inbound(key, session, { from_user_id: BSUID, username: "@jane" });
    const sent = await sendToUserIds(key, session, [BSUID], "hello Jane");
    expect(sent.status).toBe(201);
    expect(sent.body.data.messages.map((m) => m.to_number)).toEqual([null]);
    const id = String(sent.body.data.messages[0]?.id);
    const [message] = await waitForMessages(key, [id]);
    expect(message).toMatchObject({ status: "sent", to_number: null });
    const shown = await call<{ data: IncomingMessage }>("GET", `/v1/chatapp/messages/${id}`, { key });
    expect(shown.body.data.contact).toMatchObject({
      id: wrote.contact?.id,
      user_id: BSUID,
      username: "@jane",
    });
    expect((await phoneReceived(session, BSUID)).map((m) => m.content)).toEqual(["hello Jane"]);
  });

  it("replies by user id to a message that came by number, once the contact is known by both", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const wrote = await inbound(key, session, { from_user_id: LID, from_number: "+14155552605" });
    const reply = await sendToUserIds(key, session, [LID], "got it", { reply_to: wrote.id });
    expect(reply.status).toBe(201);
    const shown = await call<{ data: IncomingMessage & { reply_to: string | null } }>(
      "GET",
      `/v1/chatapp/messages/${reply.body.data.messages[0]?.id}`,
      { key },
    );
    expect(shown.body.data).toMatchObject({ reply_to: wrote.id, contact: { id: wrote.contact?.id } });
  });

  it("names a number and a user id of one send each once, and refuses a send with neither", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const sent = await call<{ data: { count: number; messages: { to_number: string | null }[] } }>(
      "POST",
      "/v1/chatapp/messages",
      {
        key,
        body: {
          chatapp_session_id: session,
          to_number: ["+14155552606", "+1 415 555 2606"],
          to_user_id: [BSUID, BSUID, LID],
          type: "text",
          content: "hi",
        },
      },
    );
    expect(sent.status).toBe(201);
    expect(sent.body.data.messages.map((m) => m.to_number)).toEqual(["+14155552606", null, null]);
    const none = await call("POST", "/v1/chatapp/messages", {
      key,
      body: { chatapp_session_id: session, type: "text", content: "hi" },
    });
    expectProblem(none, 422, "validation_failed");
    const bad = await call("POST", "/v1/chatapp/messages", {
      key,
      body: { chatapp_session_id: session, to_user_id: ["jane"], type: "text", content: "hi" },
    });
    expectProblem(bad, 422, "validation_failed");
  });
});

describe("opting out by user id (STOP)", () => {
  it("lists the user id, then the number the contact reveals, and a campaign to that number skips it", async () => {
    const { key } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const number = "+14155552607";
    const stopped = await inbound(key, session, { from_user_id: BSUID, username: "@jane" }, "STOP");
    expect(await expectStoppedBy(key, BSUID)).toHaveLength(1);
    // Opted out by the user id alone: the contact says so before any number is known.
    expect((await shownContact(key, stopped.contact?.id)).opted_out).toBe(true);
    // The number comes later, with an ordinary message: the contact stays opted out by it too.
    const revealed = await inbound(key, session, { from_user_id: BSUID, from_number: number }, "hello again");
    expect(await expectStoppedBy(key, BSUID, number)).toHaveLength(2);
    const shown = await shownContact(key, String(revealed.contact?.id));
    expect(shown.opted_out).toBe(true);
    await expectCampaignSkips(key, session, [number]);
  });
});

describe("filter[user_id] on the message list", () => {
  it("lists the contact's messages both ways, whatever address each used, newest first", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const first = await inbound(key, session, { from_user_id: LID }, "one");
    await inbound(key, session, { from_number: "+14155552608" }, "someone else");
    const second = await inbound(key, session, { from_user_id: LID, from_number: "+14155552609" }, "two");
    const reply = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      key,
      body: { chatapp_session_id: session, to_number: ["+14155552609"], type: "text", content: "three" },
    });
    const listed = await call<{ data: IncomingMessage[] }>(
      "GET",
      `/v1/chatapp/messages?filter[user_id]=${encodeURIComponent(LID)}&limit=10`,
      { key },
    );
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((m) => m.id)).toEqual([reply.body.data.messages[0]?.id, second.id, first.id]);
    const none = await call<{ data: IncomingMessage[] }>(
      "GET",
      `/v1/chatapp/messages?filter[user_id]=${BSUID}`,
      {
        key,
      },
    );
    expect(none.body.data).toEqual([]);
  });

  it("reads the contact's messages through messages_account_contact, with no sort", async () => {
    const plan = await firstAccountD1()
      .prepare(
        `EXPLAIN QUERY PLAN SELECT id FROM messages WHERE account_number = ? AND contact_id IN (?)
       ORDER BY created_at DESC, id DESC LIMIT 11`,
      )
      .bind(1, "ct_x")
      .all<{ detail: string }>();
    const details = plan.results.map((row) => row.detail).join("\n");
    expect(details).toMatch(
      /USING (COVERING )?INDEX messages_account_contact \(account_number=\? AND contact_id=\?\)/,
    );
    expect(details).not.toMatch(/TEMP B-TREE/);
  });
});
