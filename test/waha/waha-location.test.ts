import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import type { SentQuery } from "../../src/gateways/gateway";
import { WahaGateway } from "../../src/gateways/waha";
import { parseWahaEvent } from "../../src/gateways/waha/events";
import { accountD1 } from "../databases";
import { WAHA_SETTINGS, WAHA_URL } from "../gateway-config";
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

// Locations through WAHA beyond waha-chat-kinds.test.ts: a reply (`reply_to` of
// `MessageLocationRequest`), a send whose answer was lost and is settled by the chat's messages
// (lookup.ts, `WAMessage.location`), the fake's own checks of `POST /api/sendLocation`, and how a
// `message` event's `location` (`WALocation`, WAHA's OpenAPI document 2026.7.1) is read
// (src/gateways/waha/location.ts).

useNetwork();

const CONTACT = "+14155550123";
const DIGITS = "14155550123";
const CHAT_ID = `${DIGITS}@c.us`;
const STORE = { latitude: 38.7223, longitude: -9.1393, name: "Lisbon store", address: "Rua Augusta 1" };

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

/** A message as GET /v1/chatapp/messages/{id} shows a location. */
interface Shown extends Message {
  type: string;
  direction: string;
  content: string | null;
  metadata: Message["metadata"] & { location?: Record<string, unknown> };
}

/** POST /v1/chatapp/messages of a location to {@link CONTACT}; answers our message id. */
async function sendLocation(key: string, sessionId: string, extra: Record<string, unknown> = {}) {
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: {
      chatapp_session_id: sessionId,
      to_number: [CONTACT],
      type: "location",
      location: STORE,
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  return res.body.data.messages[0]?.id ?? "";
}

describe("WAHA: sending locations", () => {
  it("a reply location carries the quoted message's WAHA id as reply_to", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const first = await sendLocation(key, session.id);
    const [quoted] = await waitForMessages(key, [first]);
    expect(quoted?.provider_message_id).toBe(`true_${CHAT_ID}_${clientMessageIdOf(first)}`);

    const id = await sendLocation(key, session.id, { reply_to: first });
    expect((await waitForMessages(key, [id]))[0]?.status).toBe("sent");
    expect(waha.sent.at(-1)?.body).toEqual({
      session: session.name,
      chatId: CHAT_ID,
      latitude: 38.7223,
      longitude: -9.1393,
      title: "Lisbon store",
      id: clientMessageIdOf(id),
      reply_to: quoted?.provider_message_id,
    });
  });

  it("a location whose answer was lost is found among the chat's messages: sent once, settled by lookup", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    waha.sendFault = "lost";
    const id = await sendLocation(key, session.id);
    await firstAttempts([id]);
    waha.sendFault = null;

    const [settled] = await settleAll(key, session.id, [id]);
    const wahaId = `true_${CHAT_ID}_${clientMessageIdOf(id)}`;
    expect(settled).toMatchObject({ status: "sent", provider_message_id: wahaId });
    expect(settled?.metadata.settled_by).toBe("lookup");
    expect(waha.sent.map((s) => s.id)).toEqual([wahaId]);
    expect(waha.bodies.filter((b) => b.call === "POST /api/sendLocation")).toHaveLength(1);
    expect(waha.calls).toContain(`GET /api/${session.name}/chats/${encodeURIComponent(CHAT_ID)}/messages`);
  });
});

describe("WAHA gateway: a location by lookup and by refusal", () => {
  const SESSION = "session_0f6b1c9e-2a7d-4e3b-8c5a-9d1e2f3a4b5c";
  const gateway = new WahaGateway(WAHA_SETTINGS, { intervalMs: 5, polls: 3 });

  function location(content: string | null): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "location",
      content,
      mediaUrl: null,
      media: null,
      since: Date.now(),
    };
  }

  beforeEach(() => {
    waha.sessions.set(SESSION, { status: "WORKING", me: null, qrCount: 0, webhooks: [] });
  });

  it("finds a location stored under another id (an engine that ignores ours) by its point, not another point", async () => {
    const sent = location(JSON.stringify(STORE));
    expect(await gateway.send(SESSION, sent)).toEqual({
      outcome: "accepted",
      providerMessageId: `true_${CHAT_ID}_${sent.clientMessageId}`,
    });
    // The same point asked under another client id: found by `WALocation`'s coordinates (strings).
    expect(waha.sent[0]?.message.location).toEqual({
      latitude: "38.7223",
      longitude: "-9.1393",
      live: false,
      name: "Lisbon store",
    });
    const same = location(JSON.stringify({ latitude: 38.7223, longitude: -9.1393 }));
    expect(await gateway.lookup(SESSION, same)).toEqual({
      result: "found",
      providerMessageId: waha.sent[0]?.id,
    });
    const elsewhere = location(JSON.stringify({ latitude: 38.7224, longitude: -9.1393 }));
    expect(await gateway.lookup(SESSION, elsewhere)).toEqual({ result: "absent" });
  });

  it("refuses a location whose content is no location without calling WAHA", async () => {
    expect(await gateway.send(SESSION, location("Lisbon"))).toEqual({
      outcome: "rejected",
      reason: "content_unreadable",
      retryable: false,
    });
    expect(waha.calls).toEqual([]);
  });

  it("the fake refuses what MessageLocationRequest does not allow: strings for numbers, no title, other fields", async () => {
    const base = { session: SESSION, chatId: CHAT_ID, latitude: 1.5, longitude: 2.5, title: "" };
    const post = (body: Record<string, unknown>) =>
      fetch(`${WAHA_URL}/api/sendLocation`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await post({ ...base, latitude: "1.5" })).status).toBe(422);
    expect((await post({ ...base, title: undefined })).status).toBe(422);
    expect((await post({ ...base, address: "Rua Augusta 1" })).status).toBe(422);
    expect((await post({ ...base, id: 7 })).status).toBe(422);
    expect((await post({ ...base, reply_to: "AAAA" })).status).toBe(422);
    expect(waha.sent).toEqual([]);
    // The document's own example body, with an empty title (`title` has no minimum length).
    expect((await post(base)).status).toBe(201);
    expect(waha.sent.map((s) => s.message.location)).toEqual([
      { latitude: "1.5", longitude: "2.5", live: false },
    ]);
  });
});

/** A `message` event envelope from {@link CONTACT} whose payload has `location`, `body` "". */
function locationEvent(location: unknown, body = "") {
  return {
    id: "evt_1",
    timestamp: 1_767_225_600_000,
    session: "session_x",
    event: "message",
    payload: {
      id: `false_${CHAT_ID}_LOC9`,
      timestamp: 1_767_225_600,
      from: CHAT_ID,
      fromMe: false,
      body,
      hasMedia: false,
      location,
    },
  };
}

/** The single event of {@link parseWahaEvent} for a `message` with `location`: an `incoming` one. */
function incomingOf(location: unknown, body = "") {
  const events = parseWahaEvent(locationEvent(location, body))?.events ?? [];
  expect(events).toHaveLength(1);
  const [event] = events;
  if (event?.type !== "incoming") throw new Error(`not incoming: ${JSON.stringify(event)}`);
  return event;
}

describe("WAHA: reading a received WALocation", () => {
  it("reads the document's strings and an engine's numbers alike, with name, address and url", () => {
    const strings = incomingOf({
      latitude: "-33.8568",
      longitude: "151.2153",
      live: false,
      name: "Opera House",
      address: "Bennelong Point, Sydney",
      url: "https://example.com/opera",
      thumbnail: "/9j/4AAQ",
    });
    expect(strings).toEqual({
      type: "incoming",
      providerMessageId: `false_${CHAT_ID}_LOC9`,
      from: { phoneNumber: CONTACT },
      messageType: "location",
      content: "Opera House",
      mediaUrl: null,
      payload: {
        location: {
          latitude: -33.8568,
          longitude: 151.2153,
          name: "Opera House",
          address: "Bennelong Point, Sydney",
          url: "https://example.com/opera",
        },
      },
      at: 1_767_225_600_000,
    });
    const numbers = incomingOf({ latitude: -33.8568, longitude: 151.2153, live: false });
    expect(numbers).toMatchObject({
      messageType: "location",
      content: null,
      payload: { location: { latitude: -33.8568, longitude: 151.2153 } },
    });
  });

  it("labels by the address without a name, and by the description without either", () => {
    expect(
      incomingOf({ latitude: "1", longitude: "2", live: false, address: "Rua Augusta 1" }),
    ).toMatchObject({
      content: "Rua Augusta 1",
      payload: { location: { latitude: 1, longitude: 2, address: "Rua Augusta 1" } },
    });
    expect(
      incomingOf({ latitude: "1", longitude: "2", live: false, description: "Our office" }),
    ).toMatchObject({
      content: "Our office",
      payload: { location: { latitude: 1, longitude: 2, name: "Our office" } },
    });
    // With a name, the description (whatsapp-web.js writes "name\naddress" there) is not read.
    expect(
      incomingOf({ latitude: "1", longitude: "2", live: true, name: "Cafe", description: "Cafe\nMain St" })
        .payload,
    ).toEqual({ location: { latitude: 1, longitude: 2, name: "Cafe" } });
  });

  it("keeps texts within their limit and drops a link too long to keep whole", () => {
    const long = `${"a".repeat(999)}😀tail`;
    const event = incomingOf({
      latitude: "0",
      longitude: "0",
      live: false,
      name: long,
      url: `https://example.com/${"x".repeat(1_000)}`,
    });
    // 999 units, then the emoji's two would pass 1,000: cut before it, not through it.
    expect(event.payload?.location).toEqual({ latitude: 0, longitude: 0, name: "a".repeat(999) });
  });

  it.each([
    ["empty strings (which Number() reads as 0)", { latitude: "", longitude: "", live: false }],
    ["words", { latitude: "north", longitude: "-0.1", live: false }],
    ["a latitude past the pole", { latitude: "91", longitude: "0", live: false }],
    ["a longitude past 180", { latitude: "0", longitude: "-180.5", live: false }],
    ["no coordinates", { live: false, name: "Somewhere" }],
    ["not an object", "51.5,-0.12"],
  ])("a location of %s is read as the message's text, as before locations were read", (_, location) => {
    expect(incomingOf(location, "see you there")).toMatchObject({
      messageType: "text",
      content: "see you there",
      mediaUrl: null,
    });
    expect(incomingOf(location, "see you there")).not.toHaveProperty("payload");
  });

  it("is shown end to end with a description for a label and numbers in metadata.location", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const { payload } = locationEvent({
      latitude: 48.8584,
      longitude: "2.2945",
      live: false,
      description: "Eiffel Tower",
    });
    const res = await postWahaEvent(session.name, "message", {
      ...payload,
      timestamp: Math.floor(Date.now() / 1000),
    });
    expect(res.body).toEqual({ success: true, ignored: false });
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND provider_message_id = ?")
      .bind(accountId, payload.id)
      .first<{ id: string }>();
    const shown = (await getMessage(key, row?.id ?? "")) as Shown;
    expect(shown).toMatchObject({
      type: "location",
      direction: "incoming",
      content: "Eiffel Tower",
      from_number: CONTACT,
    });
    expect(shown.metadata.location).toEqual({ latitude: 48.8584, longitude: 2.2945, name: "Eiffel Tower" });
  });
});
