import { beforeEach, describe, expect, it } from "vitest";
import { GatewayError } from "../../src/gateways/gateway";
import { WahaGateway } from "../../src/gateways/waha";
import { accountD1 } from "../databases";
import { WAHA_SETTINGS, WAHA_URL } from "../gateway-config";
import { call, createAccount, expectProblem } from "../helpers";
import { getMessage } from "../message-fixtures";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha, postWahaEvent, wahaLidMessagePayload } from "./fake-waha";

// Read receipts through WAHA: `POST /api/sendSeen` with `SendSeenRequest` (WAHA's OpenAPI document,
// 2026.7.1: `session`, `chatId` required; `messageIds`, the serialised ids), from
// `ChatGateway.markRead` (src/gateways/waha/chat-actions.ts) and through `POST
// /v1/chatapp/messages/{id}/read`, against the fake server, which checks each body.

useNetwork();

const SESSION = "session_3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a99";
const CONTACT = "+14155550123";
const DIGITS = "14155550123";
const LID = "120363025246125888@lid";

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

/** The error `promise` rejects with, which must be a GatewayError. */
async function gatewayErrorOf(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof GatewayError)) throw new Error(`not a GatewayError: ${String(error)}`);
  return error;
}

describe("WAHA gateway: markRead", () => {
  const gateway = new WahaGateway(WAHA_SETTINGS, { intervalMs: 5, polls: 3 });

  beforeEach(() => {
    waha.sessions.set(SESSION, { status: "WORKING", me: null, qrCount: 0, webhooks: [] });
  });

  it("sends SendSeenRequest with the chat of the message id and that id, for a number and for a LID", async () => {
    await gateway.markRead(SESSION, { chat: CONTACT, providerMessageId: `false_${DIGITS}@c.us_3EB0AA11` });
    await gateway.markRead(SESSION, { chat: LID, providerMessageId: `false_${LID}_297A4A9CC7BD` });

    expect(waha.bodies.map((b) => b.call)).toEqual(["POST /api/sendSeen", "POST /api/sendSeen"]);
    expect(waha.bodies.map((b) => b.body)).toEqual([
      { session: SESSION, chatId: `${DIGITS}@c.us`, messageIds: [`false_${DIGITS}@c.us_3EB0AA11`] },
      { session: SESSION, chatId: LID, messageIds: [`false_${LID}_297A4A9CC7BD`] },
    ]);
    expect(waha.seen).toEqual([
      { session: SESSION, chatId: `${DIGITS}@c.us`, messageIds: [`false_${DIGITS}@c.us_3EB0AA11`] },
      { session: SESSION, chatId: LID, messageIds: [`false_${LID}_297A4A9CC7BD`] },
    ]);
  });

  it("takes the chat from the message id, not the address, when they differ (a LID chat whose number is known)", async () => {
    await gateway.markRead(SESSION, { chat: CONTACT, providerMessageId: `false_${LID}_297A4A9CC7BD` });
    expect(waha.seen).toEqual([{ session: SESSION, chatId: LID, messageIds: [`false_${LID}_297A4A9CC7BD`] }]);
  });

  it("forms the chat id from the address for an id without one: a number as <digits>@c.us, a LID as it is", async () => {
    // WAHA takes only serialised ids: the fake refuses these ids (422, permanent), after the body
    // was recorded with the chat id formed from the address.
    for (const chat of [CONTACT, LID]) {
      const error = await gatewayErrorOf(gateway.markRead(SESSION, { chat, providerMessageId: "3EB0AA11" }));
      expect(error).toMatchObject({ reason: "gateway_http_422", permanent: true, status: 422 });
    }
    expect(waha.bodies.map((b) => b.body)).toEqual([
      { session: SESSION, chatId: `${DIGITS}@c.us`, messageIds: ["3EB0AA11"] },
      { session: SESSION, chatId: LID, messageIds: ["3EB0AA11"] },
    ]);
    expect(waha.seen).toEqual([]);
  });

  it("refuses a BSUID chat without calling WAHA (recipient_not_supported, permanent)", async () => {
    const error = await gatewayErrorOf(
      gateway.markRead(SESSION, { chat: "US.13491208655302741918", providerMessageId: "wamid.HBgL" }),
    );
    expect(error).toMatchObject({ reason: "recipient_not_supported", permanent: true });
    expect(waha.calls).toEqual([]);
  });

  it("is a permanent GatewayError for WAHA's 4xx and a transient one when WAHA is down", async () => {
    const read = { chat: CONTACT, providerMessageId: `false_${DIGITS}@c.us_3EB0AA11` };
    waha.sessions.set(SESSION, { status: "STOPPED", me: null, qrCount: 0, webhooks: [] });
    expect(await gatewayErrorOf(gateway.markRead(SESSION, read))).toMatchObject({
      reason: "gateway_http_422",
      permanent: true,
    });
    waha.down = true;
    expect(await gatewayErrorOf(gateway.markRead(SESSION, read))).toMatchObject({
      reason: "gateway_http_503",
      permanent: false,
    });
    expect(waha.seen).toEqual([]);
  });

  it("the fake refuses what SendSeenRequest does not allow, and another chat's message id", async () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${WAHA_URL}/api/sendSeen`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const base = { session: SESSION, chatId: `${DIGITS}@c.us` };
    expect((await post({ chatId: base.chatId })).status).toBe(422);
    expect((await post({ ...base, messageIds: `false_${DIGITS}@c.us_A1` })).status).toBe(422);
    expect((await post({ ...base, messageIds: [1] })).status).toBe(422);
    expect((await post({ ...base, messageIds: [`false_${LID}_A1`] })).status).toBe(422);
    expect((await post({ ...base, read: true })).status).toBe(422);
    expect(waha.seen).toEqual([]);
    // The document's forms: without ids (all unread), and with the deprecated `messageId`.
    expect((await post(base)).status).toBe(201);
    expect((await post({ ...base, messageId: `false_${DIGITS}@c.us_A2` })).status).toBe(201);
    expect(waha.seen).toEqual([
      { ...base, messageIds: [] },
      { ...base, messageIds: [`false_${DIGITS}@c.us_A2`] },
    ]);
  });
});

describe("WAHA: POST /v1/chatapp/messages/{id}/read", () => {
  /** Our id of the message stored for WAHA's serialised id `serialized`. */
  async function storedId(accountId: string, serialized: string): Promise<string> {
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND provider_message_id = ?")
      .bind(accountId, serialized)
      .first<{ id: string }>();
    return row?.id ?? "";
  }

  it("marks a LID contact's message read in the LID chat, even once WAHA told its number", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    waha.mapLid(LID, CONTACT);
    const payload = wahaLidMessagePayload(LID, "hello", { id: "297A4A9CC7BD7B11" });
    expect((await postWahaEvent(session.name, "message", payload)).body).toEqual({
      success: true,
      ignored: false,
    });
    const id = await storedId(accountId, payload.id);

    const res = await call<{ marked: number }>("POST", `/v1/chatapp/messages/${id}/read`, { key });
    expect(res.status).toBe(200);
    expect(res.body.marked).toBe(1);
    expect(waha.seen).toEqual([{ session: session.name, chatId: LID, messageIds: [payload.id] }]);
    expect((await getMessage(key, id)).status).toBe("read");
  });

  it("answers 502 gateway_rejected when WAHA refuses, and leaves the message unread", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const serialized = `false_${DIGITS}@c.us_3EB0BB22`;
    await postWahaEvent(session.name, "message", {
      id: serialized,
      timestamp: Math.floor(Date.now() / 1000),
      from: `${DIGITS}@c.us`,
      fromMe: false,
      body: "hi",
      hasMedia: false,
    });
    const id = await storedId(accountId, serialized);
    // WAHA's session stopped behind our back: it refuses the receipt (422).
    const fake = waha.sessions.get(session.name);
    if (fake) fake.status = "STOPPED";

    expectProblem(await call("POST", `/v1/chatapp/messages/${id}/read`, { key }), 502, "gateway_rejected");
    expect(waha.calls).toContain("POST /api/sendSeen");
    expect(waha.seen).toEqual([]);
    expect((await getMessage(key, id)).status).not.toBe("read");
  });
});
