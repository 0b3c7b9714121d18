import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { call, createAccount, expectProblem } from "../helpers";
import {
  balanceOf,
  getMessage,
  type Message,
  type SendResponse,
  sendText,
  waitForMessages,
} from "../message-fixtures";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha } from "./fake-waha";

// Sending a location, refusing reply buttons (WAHA sends lists alone), and deleting and editing a sent text through
// WAHA (docs/messages.md, Locations; Chat actions), against the fake server, which checks each body against
// WAHA's OpenAPI document (2026.7.1): `POST /api/sendLocation` (`MessageLocationRequest`), and
// `DELETE`/`PUT` of `/api/{session}/chats/{chatId}/messages/{messageId}` (`EditMessageRequest`).
// A contact's location and read receipts: waha-location.test.ts, waha-read.test.ts.

useNetwork();

const CONTACT = "+14155550123";
const DIGITS = "14155550123";
const STORE = { latitude: 38.7223, longitude: -9.1393, name: "Lisbon store", address: "Rua Augusta 1" };

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

interface Shown extends Message {
  type: string;
  direction: string;
  content: string | null;
  metadata: Message["metadata"] & {
    location?: Record<string, unknown>;
    deleted_at?: string;
    edits?: { content: string | null; at: string }[];
  };
}

describe("WAHA: locations", () => {
  it("sends MessageLocationRequest: numbers, the name as title, our id; sent and priced PRICE_LOCATION", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: { chatapp_session_id: session.id, to_number: [CONTACT], type: "location", location: STORE },
    });
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    expect((await waitForMessages(key, [id]))[0]?.status).toBe("sent");
    const sent = waha.sent.at(-1);
    expect(sent?.path).toBe("/api/sendLocation");
    expect(sent?.body).toEqual({
      session: session.name,
      chatId: `${DIGITS}@c.us`,
      latitude: 38.7223,
      longitude: -9.1393,
      title: "Lisbon store",
      id: clientMessageIdOf(id),
    });
    const shown = (await getMessage(key, id)) as Shown;
    expect(shown.provider_message_id).toBe(sent?.id);
    expect(shown.cost).toBe(Number(env.PRICE_LOCATION));
    expect(await balanceOf(accountId)).toBe(10 - Number(env.PRICE_LOCATION));
  });

  it("titles a location without a name by its address, and one with neither with an empty title", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    for (const location of [
      { latitude: 1, longitude: 2, address: "Rua Augusta 1" },
      { latitude: 3, longitude: 4 },
    ]) {
      const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
        key,
        body: { chatapp_session_id: session.id, to_number: [CONTACT], type: "location", location },
      });
      await waitForMessages(key, [res.body.data.messages[0]?.id ?? ""]);
    }
    expect(waha.sent.map((s) => s.body.title)).toEqual(["Rua Augusta 1", ""]);
  });
});

it("refuses reply buttons on WAHA (422 type_not_supported_by_gateway) before any charge", async () => {
  const { key, accountId } = await createAccount(10);
  const session = await connectedWahaSession(waha, key);
  const res = await call("POST", "/v1/chatapp/messages", {
    key,
    body: {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "interactive",
      interactive: {
        type: "button",
        body: { text: "Shipped" },
        action: { buttons: [{ type: "reply", reply: { id: "track", title: "Track" } }] },
      },
    },
  });
  const problem = expectProblem(res, 422, "type_not_supported_by_gateway");
  expect(problem.errors).toEqual({ "interactive.type": ["not sent by the waha gateway"] });
  expect(await balanceOf(accountId)).toBe(10);
  expect(waha.sent).toEqual([]);
});

describe("WAHA: chat actions", () => {
  it("deletes and edits a sent text at its own path; WAHA's refusal is 502 and records nothing", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const id = (await sendText(key, session.id, [CONTACT])).body.data.messages[0]?.id ?? "";
    await waitForMessages(key, [id]);
    const serialized = waha.sent.at(-1)?.id ?? "";

    const edit = await call<{ data: Shown }>("PATCH", `/v1/chatapp/messages/${id}`, {
      key,
      body: { content: "Edited text" },
    });
    expect(edit.status).toBe(200);
    expect(waha.edited).toEqual([
      { session: session.name, chatId: `${DIGITS}@c.us`, messageId: serialized, text: "Edited text" },
    ]);
    expect(waha.calls).toContain(
      `PUT /api/${session.name}/chats/${DIGITS}%40c.us/messages/${encodeURIComponent(serialized)}`,
    );

    const removed = await call<{ data: Shown }>("DELETE", `/v1/chatapp/messages/${id}`, { key });
    expect(removed.status).toBe(200);
    expect(removed.body.data.metadata.deleted_at).toBeDefined();
    expect(waha.deleted).toEqual([
      { session: session.name, chatId: `${DIGITS}@c.us`, messageId: serialized },
    ]);

    // A message WAHA does not hold: its 404 is a refusal; nothing is recorded.
    const other = (await sendText(key, session.id, [CONTACT])).body.data.messages[0]?.id ?? "";
    await waitForMessages(key, [other]);
    waha.sent.pop();
    expectProblem(await call("DELETE", `/v1/chatapp/messages/${other}`, { key }), 502, "gateway_rejected");
    expect(((await getMessage(key, other)) as Shown).metadata.deleted_at).toBeUndefined();
  });
});
