import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { EvolutionGateway } from "../../src/gateways/evolution";
import type { SentQuery } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { EVOLUTION_API_KEY, EVOLUTION_SETTINGS, EVOLUTION_URL } from "../gateway-config";
import { call, createAccount, createSession } from "../helpers";
import { balanceOf, getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Location messages through Evolution API (docs/messages.md, Sending messages → Locations), against the fake
// server (fake-evolution.ts): `POST /message/sendLocation/{instance}` (`locationMessageSchema`),
// settling a lost answer by `POST /chat/findMessages`, and the `messages.upsert` webhook of a
// `locationMessage` (and of a `liveLocationMessage`).

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const CONTACT_JID = "14155550123@s.whatsapp.net";
const STORE = { latitude: 38.7223, longitude: -9.1393, name: "Lisbon store", address: "Rua Augusta 1" };

interface LocationMessage extends Message {
  type: string;
  content: string | null;
  reply_to: string | null;
  metadata: Message["metadata"] & {
    location?: { latitude: number; longitude: number; name?: string; address?: string; url?: string };
  };
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

function sendLocation(key: string, sessionId: string, location: object, extra: Record<string, unknown> = {}) {
  return call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: sessionId, to_number: [CONTACT], type: "location", location, ...extra },
  });
}

/** The id of the account's one incoming message. */
async function incomingId(accountId: string): Promise<string> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
    .bind(accountId)
    .first<{ id: string }>();
  return row?.id ?? "";
}

const price = Number(env.PRICE_LOCATION);

describe("Evolution API: sending a location", () => {
  it("is POST /message/sendLocation with the point, name and address, sent under Baileys' id, priced PRICE_LOCATION", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const res = await sendLocation(key, session.id, STORE);
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = (await waitForMessages(key, [id])) as LocationMessage[];

    expect(evolution.sent).toHaveLength(1);
    const [sent] = evolution.sent;
    expect(sent?.path).toBe(`/message/sendLocation/${session.name}`);
    expect(sent?.body).toEqual({
      number: "14155550123",
      latitude: 38.7223,
      longitude: -9.1393,
      name: "Lisbon store",
      address: "Rua Augusta 1",
      messageId: clientMessageIdOf(id),
    });
    // `locationMessage` does not pass `messageId` on: the message is Baileys' own id.
    expect(sent?.id).toMatch(/^BAE5/);
    expect(sent?.record).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true, id: sent?.id },
      messageType: "locationMessage",
      message: {
        locationMessage: {
          degreesLatitude: 38.7223,
          degreesLongitude: -9.1393,
          name: "Lisbon store",
          address: "Rua Augusta 1",
        },
      },
    });
    expect(done).toMatchObject({
      status: "sent",
      type: "location",
      content: "Lisbon store",
      provider_message_id: sent?.id,
      cost: price,
    });
    expect(done?.metadata.location).toEqual(STORE);
    expect(await balanceOf(accountId)).toBeCloseTo(10 - price, 2);
  });

  it('sends "" for a missing name and address, which locationMessageSchema requires', async () => {
    const { key } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const res = await sendLocation(key, session.id, { latitude: -33.8568, longitude: 151.2153 });
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = (await waitForMessages(key, [id])) as LocationMessage[];
    expect(evolution.sent.map((s) => s.body)).toEqual([
      {
        number: "14155550123",
        latitude: -33.8568,
        longitude: 151.2153,
        name: "",
        address: "",
        messageId: clientMessageIdOf(id),
      },
    ]);
    expect(done).toMatchObject({ status: "sent", content: null });
    expect(done?.metadata.location).toEqual({ latitude: -33.8568, longitude: 151.2153 });
  });

  it("a reply location carries quoted.key of the message it answers", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingText(session.name, "3EB0WHERE001", CONTACT, "Where are you?"),
    );
    const theirs = await incomingId(accountId);
    const res = await sendLocation(key, session.id, { ...STORE, name: undefined }, { reply_to: theirs });
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = (await waitForMessages(key, [id])) as LocationMessage[];
    expect(evolution.sent.at(-1)?.body).toEqual({
      number: "14155550123",
      latitude: 38.7223,
      longitude: -9.1393,
      name: "",
      address: "Rua Augusta 1",
      messageId: clientMessageIdOf(id),
      quoted: { key: { id: "3EB0WHERE001", remoteJid: CONTACT_JID, fromMe: false } },
    });
    expect(done).toMatchObject({ status: "sent", content: "Rua Augusta 1", reply_to: theirs });
  });
});

describe("Evolution API gateway: a location whose answer was lost", () => {
  const SESSION = "session_7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

  function query(location: object): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "location",
      content: JSON.stringify(location),
      mediaUrl: null,
      media: null,
      since: Date.now(),
    };
  }

  beforeEach(async () => {
    await gateway.create(SESSION);
    evolution.link(SESSION, PHONE);
  });

  it("is unknown, then found by the chat, the time and the point (not by its client id)", async () => {
    const sent = query({ latitude: 38.7223, longitude: -9.1393, address: "Rua Augusta 1" });
    evolution.sendFault = "lost";
    expect(await gateway.send(SESSION, sent)).toMatchObject({ outcome: "unknown" });
    evolution.sendFault = null;
    const stored = evolution.sent[0];
    expect(stored?.id).not.toBe(sent.clientMessageId);

    expect(await gateway.lookup(SESSION, sent)).toEqual({ result: "found", providerMessageId: stored?.id });
    expect(
      evolution.bodies.filter((b) => b.call.startsWith("POST /chat/findMessages")).map((b) => b.body),
    ).toEqual([
      { where: { key: { id: sent.clientMessageId, fromMe: true } } },
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

  it("is absent when only another point, or the same point under another name, was stored", async () => {
    await gateway.send(SESSION, query({ latitude: 38.7223, longitude: -9.1394, name: "Lisbon store" }));
    await gateway.send(SESSION, query({ latitude: 38.7223, longitude: -9.1393, name: "Porto store" }));
    await gateway.send(SESSION, query({ latitude: 38.7223, longitude: -9.1393 }));
    expect(evolution.sent).toHaveLength(3);

    const lost = query({ latitude: 38.7223, longitude: -9.1393, name: "Lisbon store" });
    expect(await gateway.lookup(SESSION, lost)).toEqual({ result: "absent" });
  });

  it("rejects a location whose content is not a Location, without a call", async () => {
    expect(await gateway.send(SESSION, { ...query({}), content: '{"latitude":91,"longitude":0}' })).toEqual({
      outcome: "rejected",
      reason: expect.stringMatching(/^content_unreadable/),
      retryable: false,
    });
    expect(evolution.calls.filter((c) => c.startsWith("POST /message/"))).toEqual([]);
  });

  it("the fake holds a sendLocation body to locationMessageSchema", async () => {
    const post = (body: object) =>
      fetch(`${EVOLUTION_URL}/message/sendLocation/${SESSION}`, {
        method: "POST",
        headers: { apikey: EVOLUTION_API_KEY, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const valid = { number: "14155550123", latitude: 1.5, longitude: 2.5, name: "", address: "" };
    for (const refused of [
      { ...valid, latitude: "1.5" },
      { ...valid, longitude: undefined },
      { ...valid, name: undefined },
      { ...valid, address: null },
      { ...valid, number: "" },
      { ...valid, delay: 1.5 },
      { ...valid, comment: "not in the schema" },
    ]) {
      expect((await post(refused)).status).toBe(400);
    }
    expect(evolution.sent).toEqual([]);
    const accepted = await post(valid);
    expect(accepted.status).toBe(201);
    expect(await accepted.json()).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true, id: evolution.sent[0]?.id },
      messageType: "locationMessage",
      message: { locationMessage: { degreesLatitude: 1.5, degreesLongitude: 2.5, name: "", address: "" } },
    });
  });
});

describe("Evolution API: receiving a location", () => {
  it("a locationMessage is stored as a location: its name as content, the point in metadata.location", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const data = evolution.incomingLocation(session.name, "3EB0LOCATE01", CONTACT, {
      degreesLatitude: 41.1579,
      degreesLongitude: -8.6291,
      name: "Café Majestic",
      address: "Rua Santa Catarina 112, Porto",
      url: "https://www.cafemajestic.com",
    });
    // A repeated webhook stores nothing more.
    for (let i = 0; i < 2; i++) await postEvolutionEvent(session.name, "messages.upsert", data);

    const shown = (await getMessage(key, await incomingId(accountId))) as LocationMessage;
    expect(shown).toMatchObject({
      type: "location",
      content: "Café Majestic",
      from_number: CONTACT,
      provider_message_id: "3EB0LOCATE01",
      media_url: null,
    });
    expect(shown.metadata.location).toEqual({
      latitude: 41.1579,
      longitude: -8.6291,
      name: "Café Majestic",
      address: "Rua Santa Catarina 112, Porto",
      url: "https://www.cafemajestic.com",
    });
    expect(evolution.calls.filter((c) => c.includes("getBase64FromMediaMessage"))).toEqual([]);
    const count = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it('a dropped pin ("" name and address) has null content; a live location is its first point', async () => {
    for (const [data, content, location] of [
      [
        (name: string) =>
          evolution.incomingLocation(name, "3EB0PIN00001", CONTACT, {
            degreesLatitude: 0,
            degreesLongitude: 0,
            name: "",
            address: "",
          }),
        null,
        { latitude: 0, longitude: 0 },
      ],
      [
        (name: string) =>
          evolution.incomingLocation(
            name,
            "3EB0LIVE0001",
            CONTACT,
            { degreesLatitude: -22.9519, degreesLongitude: -43.2105 },
            true,
          ),
        null,
        { latitude: -22.9519, longitude: -43.2105 },
      ],
    ] as const) {
      const { key, accountId } = await createAccount(10);
      const session = await connectedEvolutionSession(key);
      await postEvolutionEvent(session.name, "messages.upsert", data(session.name));
      const shown = (await getMessage(key, await incomingId(accountId))) as LocationMessage;
      expect(shown).toMatchObject({ type: "location", content, media_url: null });
      expect(shown.metadata.location).toEqual(location);
    }
  });

  it("a location without both coordinates, or off the map, is not stored", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    for (const [id, point] of [
      ["3EB0NOLAT001", { degreesLongitude: 10, name: "Nowhere" }],
      ["3EB0OFFMAP01", { degreesLatitude: 95, degreesLongitude: 10, name: "Beyond the pole" }],
    ] as const) {
      const res = await postEvolutionEvent(
        session.name,
        "messages.upsert",
        evolution.incomingLocation(session.name, id, CONTACT, point),
      );
      expect(res.status).toBe(200);
    }
    expect(await incomingId(accountId)).toBe("");
  });
});
