import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession, getMessage, type Message, waitForMessages } from "./message-fixtures";

// Location messages through the sandbox (docs/messages.md, Sending messages → Locations): the send's checks
// and price, what the sandbox phone receives, and a contact's location (the inbound route).

interface LocationMessage extends Message {
  type: string;
  content: string | null;
  cost: number;
  metadata: Message["metadata"] & {
    location?: { latitude: number; longitude: number; name?: string; address?: string };
  };
}

const CONTACT = "+14155552671";
const STORE = { latitude: 38.7223, longitude: -9.1393, name: "Lisbon store", address: "Rua Augusta 1" };

function send(key: string, body: Record<string, unknown>) {
  return call<{ data: { messages: LocationMessage[]; total_cost: number } }>("POST", "/v1/chatapp/messages", {
    key,
    body,
  });
}

describe("location messages", () => {
  it("sends a location: stored in metadata.location, the name as content, priced PRICE_LOCATION, received as sent", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT, "+14155552672"],
      type: "location",
      location: STORE,
    });
    expect(res.status).toBe(201);
    const price = Math.round(Number(env.PRICE_LOCATION) * 100);
    expect(res.body.data.total_cost).toBe((2 * price) / 100);
    const [created] = res.body.data.messages;
    expect(created).toMatchObject({ type: "location", content: "Lisbon store", media_url: null });

    const [sent] = await waitForMessages(key, [created!.id]);
    expect(sent?.status).toBe("sent");
    const shown = (await getMessage(key, created!.id)) as LocationMessage;
    expect(shown.metadata.location).toEqual(STORE);
    expect(shown.cost).toBe(price / 100);

    const phone = await call<{
      data: { message_id: string; type: string; content: string; location: unknown }[];
    }>("GET", `/sandbox/sessions/${session.id}/received?to_number=${encodeURIComponent(CONTACT)}`, { key });
    expect(phone.body.data[0]).toMatchObject({
      message_id: created!.id,
      type: "location",
      content: "Lisbon store",
      location: STORE,
    });
  });

  it("stores the address as content when the location has no name, and null for a bare point", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const withAddress = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "location",
      location: { latitude: 0, longitude: 0, address: "Null Island" },
    });
    expect(withAddress.body.data.messages[0]?.content).toBe("Null Island");
    const bare = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "location",
      location: { latitude: -33.8568, longitude: 151.2153 },
    });
    expect(bare.status).toBe(201);
    expect(bare.body.data.messages[0]?.content).toBeNull();
  });

  it("refuses a location out of range, without one, with content or media, or on another type (422 naming the field)", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const base = { chatapp_session_id: session.id, to_number: [CONTACT], type: "location" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, location: { latitude: 91, longitude: 0 } }, "location.latitude"],
      [{ ...base, location: { latitude: 0, longitude: -180.5 } }, "location.longitude"],
      [{ ...base, location: { latitude: "38.7", longitude: 0 } }, "location.latitude"],
      [{ ...base, location: { latitude: 0, longitude: 0, name: "" } }, "location.name"],
      [{ ...base, location: { latitude: 0, longitude: 0, name: "x".repeat(1001) } }, "location.name"],
      [{ ...base, location: { latitude: 0, longitude: 0, url: "https://example.com" } }, "location.url"],
      [base, "location"],
      [{ ...base, location: STORE, content: "hi" }, "content"],
      [{ ...base, location: STORE, media_url: "https://example.com/a.png" }, "media_url"],
      [{ ...base, type: "text", content: "hi", location: STORE }, "location"],
    ];
    for (const [body, field] of cases) {
      const res = await send(key, body);
      expectProblem(res, 422, "validation_failed");
      expect(Object.keys((res.body as { errors?: Record<string, string[]> }).errors ?? {}), field).toContain(
        field,
      );
    }
    const account = await call<{ data: { balance: number; prices: Record<string, number> } }>(
      "GET",
      "/v1/account",
      {
        key,
      },
    );
    expect(account.body.data.balance).toBe(1);
    expect(account.body.data.prices.location).toBe(Number(env.PRICE_LOCATION));
  });

  it("keeps a contact's location: type location, its name as content, the point in metadata.location", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const res = await call<{ data: LocationMessage }>("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: {
        from_number: CONTACT,
        type: "location",
        location: { latitude: 51.5007, longitude: -0.1246, name: "Big Ben" },
      },
    });
    expect(res.status).toBe(201);
    const shown = (await getMessage(key, res.body.data.id)) as LocationMessage;
    expect(shown).toMatchObject({ type: "location", direction: "incoming", content: "Big Ben" });
    expect(shown.metadata.location).toEqual({ latitude: 51.5007, longitude: -0.1246, name: "Big Ben" });
    const refused = await call("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACT, type: "location" },
    });
    expectProblem(refused, 422, "validation_failed");
  });

  it("lists locations by filter[type]", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "location",
      location: STORE,
    });
    await send(key, { chatapp_session_id: session.id, to_number: [CONTACT], type: "text", content: "hi" });
    const list = await call<{ data: LocationMessage[] }>(
      "GET",
      "/v1/chatapp/messages?filter[type]=location",
      { key },
    );
    expect(list.body.data.map((m) => m.type)).toEqual(["location"]);
  });
});
