import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { checkBody, checkWebhook } from "../../fakes/cloud-api/schema";
import { decimalDegrees, sendMessage } from "../../src/gateways/cloud-api/send";
import type { OutboundMessage } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { CLOUD_API_BASE_URL, MEDIA_URL_SECRET, PUBLIC_URL } from "../gateway-config";
import { call, createAccount } from "../helpers";
import { balanceOf, getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { openWindow, useExampleNumber } from "./sessions-fixtures";
import { deliverWebhooks, linkNumber, messagesChange, postWebhook } from "./webhooks-fixtures";

// Location messages on a Cloud API session (docs/messages.md, Sending messages → Locations), against the
// fake Graph API: a send is Meta's `LocationMessage`, its coordinates as the strings the document
// types them as (checked by the fake, schema.ts reading k); a contact's location arrives as
// `LocationMessage_1`, its coordinates as numbers, and is kept in `metadata.location`.

const TO = "+14155552671";
const STORE = { latitude: 38.7223, longitude: -9.1393, name: "Lisbon store", address: "Rua Augusta 1" };
/** PRICE_LOCATION (wrangler.toml) in minor units. */
const PRICE = Math.round(Number(env.PRICE_LOCATION) * 100);

const meta = useExampleNumber();

interface Shown extends Message {
  type: string;
  direction: string;
  content: string | null;
  reply_to: string | null;
  metadata: Message["metadata"] & { location?: Record<string, unknown> };
}

async function sendLocation(key: string, body: Record<string, unknown>) {
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { to_number: [TO], type: "location", ...body },
  });
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.messages[0]?.id ?? "";
  const [sent] = await waitForMessages(key, [id]);
  expect(sent?.status).toBe("sent");
  return { id, totalCost: res.body.data.total_cost, shown: (await getMessage(key, id)) as Shown };
}

/** The id of the account's message whose gateway id is `wamid`. */
async function messageIdOf(accountId: string, wamid: string): Promise<string | undefined> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT id FROM messages WHERE account_id = ? AND provider_message_id = ?")
    .bind(accountId, wamid)
    .first<{ id: string }>();
  return row?.id;
}

describe("Cloud API: sending a location", () => {
  it("is Meta's LocationMessage with the coordinates as strings, sent, and priced PRICE_LOCATION", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, [TO]);

    const { id, totalCost, shown } = await sendLocation(key, {
      chatapp_session_id: session,
      location: STORE,
    });

    const sends = meta.graph.sendsOf(id);
    expect(sends).toHaveLength(1);
    expect(sends[0]?.body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: "location",
      biz_opaque_callback_data: id,
      location: { latitude: "38.7223", longitude: "-9.1393", name: "Lisbon store", address: "Rua Augusta 1" },
    });
    expect(checkBody("sendMessage", sends[0]?.body)).toEqual([]);
    expect(meta.graph.invalidBodies).toEqual([]);
    expect(shown).toMatchObject({
      type: "location",
      status: "sent",
      content: "Lisbon store",
      provider_message_id: sends[0]?.wamid,
      cost: PRICE / 100,
      metadata: { gateway: "cloud_api", attempts: 1, location: STORE },
    });
    expect(totalCost).toBe(PRICE / 100);
    expect(await balanceOf(accountId)).toBe((1000 - PRICE) / 100);
  });

  it("a reply carries context.message_id; a bare point sends only its coordinates, tiny ones without an exponent", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    const wamid = meta.graph.queueIncoming({
      phoneNumberId: meta.number.phoneNumberId,
      from: TO,
      text: "Where are you?",
    });
    await deliverWebhooks(meta.graph);
    const incoming = await messageIdOf(accountId, wamid);

    const reply = await sendLocation(key, {
      chatapp_session_id: session,
      location: STORE,
      reply_to: incoming,
    });
    const replyBody = meta.graph.sendsOf(reply.id)[0]?.body;
    expect(replyBody).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: "location",
      biz_opaque_callback_data: reply.id,
      context: { message_id: wamid },
      location: { latitude: "38.7223", longitude: "-9.1393", name: "Lisbon store", address: "Rua Augusta 1" },
    });
    expect(checkBody("sendMessage", replyBody)).toEqual([]);
    expect(reply.shown.reply_to).toBe(incoming);

    const bare = await sendLocation(key, {
      chatapp_session_id: session,
      location: { latitude: 0.0000001, longitude: -180 },
    });
    const bareBody = meta.graph.sendsOf(bare.id)[0]?.body;
    expect(bareBody?.location).toEqual({ latitude: "0.0000001", longitude: "-180" });
    expect(checkBody("sendMessage", bareBody)).toEqual([]);
    expect(bare.shown).toMatchObject({
      content: null,
      metadata: { location: { latitude: 0.0000001, longitude: -180 } },
    });
    expect(meta.graph.invalidBodies).toEqual([]);
  });
});

describe("send.ts (gateway level)", () => {
  const message = (type: OutboundMessage["type"], content: string | null): OutboundMessage => ({
    id: `msg_${crypto.randomUUID()}`,
    clientMessageId: crypto.randomUUID(),
    to: TO,
    type,
    content,
    mediaUrl: null,
    media: null,
  });
  const http = () => ({
    baseUrl: `${CLOUD_API_BASE_URL}/v23.0`,
    headers: { Authorization: `Bearer ${meta.number.accessToken}` },
    timeoutMs: 2_000,
    mediaTimeoutMs: 2_000,
  });
  const links = { publicUrl: PUBLIC_URL, secret: MEDIA_URL_SECRET };

  it("refuses without a call a location whose content is not a Location, and a type it has no body for", async () => {
    const send = (m: OutboundMessage) => sendMessage(http(), meta.number.phoneNumberId, m, links);
    expect(await send(message("location", '{"latitude":91,"longitude":0}'))).toEqual({
      outcome: "rejected",
      reason: expect.stringMatching(/^content_unreadable: /),
      retryable: false,
    });
    expect(await send(message("interactive_reply", "Yes"))).toEqual({
      outcome: "rejected",
      reason: "not_supported_by_gateway",
      retryable: false,
    });
    expect(await send(message("image", null))).toEqual({
      outcome: "rejected",
      reason: "media_not_stored",
      retryable: false,
    });
    expect(meta.graph.calls).toEqual([]);
  });

  it("writes coordinates as decimal degrees, never with an exponent", () => {
    expect([38.7223, -9.1393, 0, -0, 90, -180, 1e-7, -2.5e-7, 0.000001].map(decimalDegrees)).toEqual([
      "38.7223",
      "-9.1393",
      "0",
      "0",
      "90",
      "-180",
      "0.0000001",
      "-0.00000025",
      "0.000001",
    ]);
  });
});

describe("Cloud API: receiving a location", () => {
  it("stores Meta's LocationMessage_1: type location, its name as content, the point and url in metadata.location", async () => {
    const { key, accountId } = await createAccount(10);
    await linkNumber(key, meta.number);
    const place = {
      latitude: 37.44221496582,
      longitude: -122.16165924072,
      name: "Philz Coffee",
      address: "101 Forest Ave, Palo Alto, CA 94301",
      url: "https://philzcoffee.com/",
    };
    const wamid = meta.graph.queueIncomingLocation({
      phoneNumberId: meta.number.phoneNumberId,
      from: TO,
      location: place,
    });
    const posted = await deliverWebhooks(meta.graph);
    expect(posted.map((hook) => hook.res.body)).toEqual([{ success: true, ignored: false }]);
    // What was posted is Meta's webhook as the document has it, the coordinates JSON numbers.
    const body = JSON.parse(posted[0]?.body ?? "{}");
    expect(checkWebhook(body)).toEqual([]);
    expect(body.entry[0].changes[0].value.messages[0]).toMatchObject({ type: "location", location: place });
    // Meta redelivers: stored once.
    await postWebhook(posted[0]?.body ?? "", posted[0]?.signature);

    const id = await messageIdOf(accountId, wamid);
    const shown = (await getMessage(key, id ?? "")) as Shown;
    expect(shown).toMatchObject({
      type: "location",
      direction: "incoming",
      content: "Philz Coffee",
      media_url: null,
      from_number: TO,
      provider_message_id: wamid,
    });
    expect(shown.metadata.location).toEqual(place);
    const count = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM messages WHERE provider_message_id = ?")
      .bind(wamid)
      .first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it("keeps a point without name (its address as content) or with neither (no content); skips one off the map", async () => {
    const { key, accountId } = await createAccount(10);
    await linkNumber(key, meta.number);
    const now = String(Math.floor(Date.now() / 1000));
    const incoming = (id: string, location: Record<string, unknown>) => ({
      from: "14155552671",
      id,
      timestamp: now,
      type: "location",
      location,
    });
    const res = await postWebhook(
      messagesChange(
        meta.number.phoneNumberId,
        {
          contacts: [{ profile: { name: "Ana" }, wa_id: "14155552671" }],
          messages: [
            incoming("wamid.ADDRESS", { latitude: 51.5007, longitude: -0.1246, address: "Westminster" }),
            incoming("wamid.PIN", { latitude: -33.8568, longitude: 151.2153, name: "" }),
            incoming("wamid.OFFMAP", { latitude: 95, longitude: 0, name: "Nowhere" }),
          ],
        },
        meta.number.wabaId,
      ),
    );
    expect(res.body).toEqual({ success: true, ignored: false });

    const address = (await getMessage(key, (await messageIdOf(accountId, "wamid.ADDRESS")) ?? "")) as Shown;
    expect(address).toMatchObject({ type: "location", content: "Westminster" });
    expect(address.metadata.location).toEqual({
      latitude: 51.5007,
      longitude: -0.1246,
      address: "Westminster",
    });
    const pin = (await getMessage(key, (await messageIdOf(accountId, "wamid.PIN")) ?? "")) as Shown;
    expect(pin).toMatchObject({ type: "location", content: null });
    expect(pin.metadata.location).toEqual({ latitude: -33.8568, longitude: 151.2153 });
    expect(await messageIdOf(accountId, "wamid.OFFMAP")).toBeUndefined();
  });
});
