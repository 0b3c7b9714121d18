import { runDurableObjectAlarm } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { evolutionInstanceToken } from "../../src/gateways/evolution/events";
import { EVOLUTION_API_KEY, PUBLIC_URL } from "../gateway-config";
import {
  call,
  clockMoves,
  createAccount,
  createSession,
  expectProblem,
  runAlarmUntil,
  type SessionEnvelope,
  sessionStub,
  showSession,
  storedQrPayload,
} from "../helpers";
import { balanceOf, getMessage, sendText, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { evolutionEnvelope, FakeEvolution, postEvolutionBody, postEvolutionEvent } from "./fake-evolution";

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

/** Creates a session through the API against the fake gateway; `name` is its gateway name. */
async function createEvolutionSession(key: string) {
  const { session, qr_code } = await createSession(key);
  return { session, qrCode: qr_code, name: session.session_id };
}

/** A session linked the way Evolution links one: the phone scans, then `connection.update` open arrives. */
async function connectedEvolutionSession(key: string) {
  const { session, name } = await createEvolutionSession(key);
  const data = evolution.link(name, PHONE, "Ada");
  const res = await postEvolutionEvent(name, "connection.update", data, { sender: OWNER_JID });
  expect(res.body).toEqual({ success: true, ignored: false });
  return { id: session.id, name };
}

describe("sessions on Evolution API", () => {
  it("creates the instance with its token and webhook, and shows the QR of the create answer", async () => {
    const { key } = await createAccount();
    const { session, qrCode, name } = await createEvolutionSession(key);
    expect(session).toMatchObject({
      status: "pending",
      phone_number: null,
      session_id: `session_${session.id}`,
    });
    expect(qrCode).toMatch(/^data:image\/png;base64,/);
    expect(evolution.calls).toEqual(["POST /instance/create"]);
    const token = await evolutionInstanceToken(EVOLUTION_API_KEY, name);
    expect(evolution.bodies[0]?.body).toEqual({
      instanceName: name,
      token,
      qrcode: true,
      integration: "WHATSAPP-BAILEYS",
      webhook: {
        url: `${PUBLIC_URL}/gateway/evolution/events`,
        byEvents: false,
        base64: false,
        events: [
          "CONNECTION_UPDATE",
          "QRCODE_UPDATED",
          "MESSAGES_UPSERT",
          "MESSAGES_UPDATE",
          "MESSAGES_DELETE",
        ],
      },
    });
    expect(evolution.instance(name)).toMatchObject({ state: "connecting", token });
    expect(await storedQrPayload(session.id)).toBe(evolution.qrOf(name, 1));
  });

  it("answers 503 gateway_unavailable and keeps nothing when Evolution is down", async () => {
    const { key } = await createAccount();
    evolution.down = true;
    const res = await call("POST", "/v1/chatapp/sessions", { key });
    const problem = expectProblem(res, 503, "gateway_unavailable");
    expect(problem.detail).toContain("gateway_http_503");
    const list = await call<{ sessions: unknown[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(list.body.sessions).toEqual([]);
    expect(evolution.instances.size).toBe(0);
  });

  it("follows connection.update open → connected with the phone of wuid and the profile name", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    const session = await showSession(key, id);
    expect(session).toMatchObject({
      status: "connected",
      phone_number: PHONE,
      display_name: "Ada",
      reason: null,
    });
    expect(session.last_seen_at).not.toBeNull();
    expect(await storedQrPayload(id)).toBeNull();
    // Linking needs no call to Evolution: the event says it all.
    expect(evolution.calls.filter((c) => c.includes(name))).toEqual([]);
  });

  it("follows qrcode.updated: while pending only the QR changes; a connected session goes back to pending with it", async () => {
    const { key } = await createAccount();
    const { session, name } = await createEvolutionSession(key);
    const before = await showSession(key, session.id);
    await clockMoves();
    const res = await postEvolutionEvent(name, "qrcode.updated", evolution.rotateQr(name));
    expect(res.body).toEqual({ success: true, ignored: false });
    expect(await storedQrPayload(session.id)).toBe(evolution.qrOf(name, 2));
    expect(await showSession(key, session.id)).toEqual(before);

    const linked = await connectedEvolutionSession(key);
    evolution.close(linked.name, 401);
    await postEvolutionEvent(linked.name, "qrcode.updated", evolution.rotateQr(linked.name));
    expect(await showSession(key, linked.id)).toMatchObject({
      status: "pending",
      phone_number: null,
      display_name: linked.name,
      reason: null,
    });
    expect(await storedQrPayload(linked.id)).toBe(evolution.qrOf(linked.name, 2));
    const qr = await call<{ qr_code: string }>("GET", `/v1/chatapp/sessions/${linked.id}/qr-code`, { key });
    expect(qr.status).toBe(200);
    expect(qr.body.qr_code).toMatch(/^data:image\/png;base64,/);
  });

  it.each([
    [401, "logged_out"],
    [408, "connection_closed"],
    [428, "connection_closed"],
    [500, "connection_closed"],
  ])(
    "follows connection.update close with statusReason %i → disconnected %s",
    async (statusReason, reason) => {
      const { key } = await createAccount();
      const { id, name } = await connectedEvolutionSession(key);
      await postEvolutionEvent(name, "connection.update", evolution.close(name, statusReason));
      expect(await showSession(key, id)).toMatchObject({
        status: "disconnected",
        reason,
        phone_number: PHONE,
      });
    },
  );

  it("follows connection.update close with statusReason 403 → banned, failing and refunding the messages waiting", async () => {
    const { key, accountId } = await createAccount(10);
    const { id, name } = await connectedEvolutionSession(key);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const sent = await sendText(key, id, [CONTACT], { scheduled_at: later });
    expect(sent.status).toBe(201);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);

    await postEvolutionEvent(name, "connection.update", evolution.close(name, 403));
    expect(await showSession(key, id)).toMatchObject({ status: "banned", reason: "account_banned" });
    const [message] = await waitForMessages(key, [messageId], (m) => m.status === "failed");
    expect(message?.reason).toBe("session_banned");
    expect(await balanceOf(accountId)).toBe(10);
    expect(evolution.sent).toEqual([]);

    // Banned is final: a later link changes nothing, and nothing more can be sent.
    await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"));
    expect(await showSession(key, id)).toMatchObject({ status: "banned", reason: "account_banned" });
    expectProblem(await sendText(key, id, [CONTACT]), 409, "session_not_connected");
  });

  it("applies a repeated event once: the second changes nothing", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    const connected = await showSession(key, id);
    await clockMoves();
    const again = await postEvolutionEvent(name, "connection.update", evolution.connectionUpdate(name, 200), {
      sender: OWNER_JID,
    });
    expect(again.body).toEqual({ success: true, ignored: false });
    expect(await showSession(key, id)).toEqual(connected);

    const closed = evolution.close(name, 408);
    await postEvolutionEvent(name, "connection.update", closed);
    const disconnected = await showSession(key, id);
    expect(disconnected.updated_at).not.toBe(connected.updated_at);
    await clockMoves();
    await postEvolutionEvent(name, "connection.update", closed);
    expect(await showSession(key, id)).toEqual(disconnected);
  });

  it("ignores a connection event older (by date_time) than the newest one applied", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    const before = await showSession(key, id);
    const res = await postEvolutionEvent(name, "connection.update", evolution.close(name, 401), {
      at: Date.now() - 60_000,
    });
    expect(res.status).toBe(200);
    expect(await showSession(key, id)).toEqual(before);

    // And the other way round: a close applied, then an open stamped earlier.
    await postEvolutionEvent(name, "connection.update", evolution.connectionUpdate(name, 408));
    const closed = await showSession(key, id);
    expect(closed).toMatchObject({ status: "disconnected", reason: "connection_closed" });
    await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
      at: Date.now() - 30_000,
    });
    expect(await showSession(key, id)).toEqual(closed);
  });

  it.each([
    ["wrong", async () => "0".repeat(64)],
    ["null (Evolution without AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES)", async () => null],
    ["the global API key", async () => EVOLUTION_API_KEY],
    [
      "another instance's token",
      async () => evolutionInstanceToken(EVOLUTION_API_KEY, `session_${crypto.randomUUID()}`),
    ],
  ])("rejects an event whose apikey is %s (401) and applies nothing", async (_label, apikey) => {
    const { key } = await createAccount();
    const { session, name } = await createEvolutionSession(key);
    const before = await showSession(key, session.id);
    const data = evolution.link(name, PHONE, "Ada");
    const res = await postEvolutionEvent(name, "connection.update", data, { apikey: await apikey() });
    expectProblem(res, 401, "invalid_signature");
    expect(await showSession(key, session.id)).toEqual(before);
  });

  it("rejects an event without apikey (401) and applies nothing", async () => {
    const { key } = await createAccount();
    const { session, name } = await createEvolutionSession(key);
    const { apikey: _omitted, ...body } = await evolutionEnvelope(
      name,
      "connection.update",
      evolution.link(name, PHONE, "Ada"),
    );
    expectProblem(await postEvolutionBody(body), 401, "invalid_signature");
    expect((await showSession(key, session.id)).status).toBe("pending");
    expect(await storedQrPayload(session.id)).toBe(evolution.qrOf(name, 1));
  });

  it("acknowledges and ignores events for unknown instances and foreign names", async () => {
    const open = (instance: string) => ({
      instance,
      wuid: OWNER_JID,
      profileName: "Ada",
      profilePictureUrl: null,
      state: "open",
      statusReason: 200,
    });
    const name = `session_${crypto.randomUUID()}`;
    const unknown = await postEvolutionEvent(name, "connection.update", open(name));
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ success: true, ignored: true });
    // An instance of the same Evolution server that is not one of our sessions.
    const foreign = await postEvolutionEvent("my-own-instance", "connection.update", open("my-own-instance"));
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({ success: true, ignored: true });
  });

  it("acknowledges and ignores events it does not use", async () => {
    const { key } = await createAccount();
    const { session, name } = await createEvolutionSession(key);
    const before = await showSession(key, session.id);
    const res = await postEvolutionEvent(name, "contacts.update", [
      { remoteJid: OWNER_JID, pushName: "Ada" },
    ]);
    expect(res.body).toEqual({ success: true, ignored: true });
    expect(await showSession(key, session.id)).toEqual(before);
  });

  it("logs out on disconnect, connects again (a fresh QR) on reconnect, and logs out and deletes on delete", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    const disconnected = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${id}/disconnect`, {
      key,
    });
    expect(disconnected.status).toBe(200);
    expect(disconnected.body.session).toMatchObject({
      status: "disconnected",
      reason: "disconnected_by_user",
    });
    expect(evolution.calls).toEqual(["POST /instance/create", `DELETE /instance/logout/${name}`]);
    expect(evolution.instance(name)).toMatchObject({ state: "close", ownerJid: null });
    // Evolution then reports the logout: the session already is disconnected, nothing changes.
    await postEvolutionEvent(name, "connection.update", evolution.connectionUpdate(name, 401));
    expect(await showSession(key, id)).toMatchObject({
      status: "disconnected",
      reason: "disconnected_by_user",
    });

    const reconnected = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${id}/reconnect`, { key });
    expect(reconnected.status).toBe(200);
    expect(reconnected.body.session).toMatchObject({ status: "pending", phone_number: null, reason: null });
    expect(reconnected.body.qr_code).toMatch(/^data:image\/png;base64,/);
    expect(evolution.calls.slice(-2)).toEqual([
      `GET /instance/connectionState/${name}`,
      `GET /instance/connect/${name}`,
    ]);
    expect(evolution.instance(name).state).toBe("connecting");
    expect(await storedQrPayload(id)).toBe(evolution.qrOf(name, 2));
    // The phone scans the new QR.
    await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"));
    expect(await showSession(key, id)).toMatchObject({ status: "connected", phone_number: PHONE });

    const deleted = await call("DELETE", `/v1/chatapp/sessions/${id}`, { key });
    expect(deleted.status).toBe(200);
    // Evolution refuses to delete an open instance: the adapter logs it out first.
    expect(evolution.calls.slice(-3)).toEqual([
      `DELETE /instance/delete/${name}`,
      `DELETE /instance/logout/${name}`,
      `DELETE /instance/delete/${name}`,
    ]);
    expect(evolution.instances.has(name)).toBe(false);
    expect((await call("GET", `/v1/chatapp/sessions/${id}`, { key })).status).toBe(404);
    // An event still in flight for the deleted session is acknowledged and ignored.
    const late = await postEvolutionEvent(name, "connection.update", {
      instance: name,
      state: "close",
      statusReason: 401,
    });
    expect(late.body).toEqual({ success: true, ignored: true });
  });

  it("reconnects a session whose instance is still open without a QR", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    await postEvolutionEvent(name, "connection.update", {
      ...evolution.connectionUpdate(name, 408),
      state: "close",
    });
    expect((await showSession(key, id)).status).toBe("disconnected");
    // Baileys reconnected on its own; Evolution's instance is open again.
    const reconnected = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${id}/reconnect`, { key });
    expect(reconnected.body.session).toMatchObject({
      status: "connected",
      phone_number: PHONE,
      display_name: "Ada",
    });
    expect(reconnected.body.qr_code).toBeUndefined();
    expect(evolution.calls.slice(-2)).toEqual([
      `GET /instance/connectionState/${name}`,
      `GET /instance/fetchInstances?instanceName=${name}`,
    ]);
  });

  it("keeps a session whose delete cannot reach Evolution (503), and deletes it once Evolution is back", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    evolution.down = true;
    const problem = expectProblem(
      await call("DELETE", `/v1/chatapp/sessions/${id}`, { key }),
      503,
      "gateway_unavailable",
    );
    expect(problem.detail).toContain("gateway_http_503");
    expect(await showSession(key, id)).toMatchObject({ status: "connected", phone_number: PHONE });
    expect(evolution.instances.has(name)).toBe(true);
    evolution.down = false;
    expect((await call("DELETE", `/v1/chatapp/sessions/${id}`, { key })).status).toBe(200);
    expect(evolution.instances.has(name)).toBe(false);
    expect((await call("GET", `/v1/chatapp/sessions/${id}`, { key })).status).toBe(404);
  });

  it("gets a pairing code when connect starts a closed instance with the number's digits", async () => {
    const { key } = await createAccount();
    const { session, name } = await createEvolutionSession(key);
    // Evolution closed the QR socket (e.g. restarted): connect starts it again, with the number.
    evolution.instance(name).state = "close";
    const res = await call("POST", `/v1/chatapp/sessions/${session.id}/pairing-code`, {
      key,
      body: { phone_number: PHONE },
    });
    expect(res.status).toBe(200);
    const code = evolution.pairingCodeOf("14155552671");
    expect(res.body).toEqual({ success: true, pairing_code: `${code.slice(0, 4)}-${code.slice(4)}` });
    expect(evolution.calls.at(-1)).toBe(`GET /instance/connect/${name}?number=14155552671`);
    expect((await showSession(key, session.id)).status).toBe("pending");
  });

  it("answers 502 gateway_rejected for a pairing code when the connecting instance answers pairingCode null", async () => {
    const { key } = await createAccount();
    const { session, name } = await createEvolutionSession(key);
    const res = await call("POST", `/v1/chatapp/sessions/${session.id}/pairing-code`, {
      key,
      body: { phone_number: PHONE },
    });
    const problem = expectProblem(res, 502, "gateway_rejected");
    expect(problem.detail).toContain("gateway_pairing_code_unavailable");
    expect(evolution.calls.at(-1)).toBe(`GET /instance/connect/${name}?number=14155552671`);
    expect(await showSession(key, session.id)).toMatchObject({ status: "pending" });
    expect(await storedQrPayload(session.id)).toBe(evolution.qrOf(name, 1));
  });

  it("refuses a pairing code for a connected session (409) without calling Evolution", async () => {
    const { key } = await createAccount();
    const { id } = await connectedEvolutionSession(key);
    const calls = evolution.calls.length;
    const res = await call("POST", `/v1/chatapp/sessions/${id}/pairing-code`, {
      key,
      body: { phone_number: PHONE },
    });
    expectProblem(res, 409, "session_not_pending");
    expect(evolution.calls).toHaveLength(calls);
  });
});

describe("messages on Evolution API", () => {
  it("sends through sendText and follows messages.update: DELIVERY_ACK → delivered, READ → read, never backwards", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    const sent = await sendText(key, id, [CONTACT]);
    expect(sent.status).toBe(201);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    const [message] = await waitForMessages(key, [messageId]);
    expect(message?.status).toBe("sent");
    expect(evolution.sent).toHaveLength(1);
    const providerId = evolution.sent[0]?.id ?? "";
    expect(message?.provider_message_id).toBe(providerId);
    expect(evolution.sent[0]?.path).toBe(`/message/sendText/${name}`);
    expect(evolution.sent[0]?.body).toEqual({
      number: "14155550123",
      text: "hello",
      messageId: clientMessageIdOf(messageId),
    });
    expect(providerId).toBe(clientMessageIdOf(messageId));

    await postEvolutionEvent(name, "messages.update", evolution.messageUpdate(providerId, "DELIVERY_ACK"));
    const delivered = await getMessage(key, messageId);
    expect(delivered.status).toBe("delivered");
    expect(delivered.delivered_at).not.toBeNull();
    await postEvolutionEvent(name, "messages.update", evolution.messageUpdate(providerId, "READ"));
    const read = await getMessage(key, messageId);
    expect(read.status).toBe("read");
    expect(read.read_at).not.toBeNull();
    // Late and repeated updates move nothing back.
    for (const status of ["DELIVERY_ACK", "ERROR", "SERVER_ACK", "READ"]) {
      await postEvolutionEvent(name, "messages.update", evolution.messageUpdate(providerId, status));
    }
    const after = await getMessage(key, messageId);
    expect(after).toMatchObject({ status: "read", read_at: read.read_at, delivered_at: read.delivered_at });
  });

  it("fails and refunds a message Evolution reports as ERROR before delivery, once", async () => {
    const { key, accountId } = await createAccount(10);
    const { id, name } = await connectedEvolutionSession(key);
    const sent = await sendText(key, id, [CONTACT]);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    await waitForMessages(key, [messageId]);
    expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);
    const providerId = evolution.sent[0]?.id ?? "";
    await postEvolutionEvent(name, "messages.update", evolution.messageUpdate(providerId, "ERROR"));
    await postEvolutionEvent(name, "messages.update", evolution.messageUpdate(providerId, "ERROR"));
    expect(await getMessage(key, messageId)).toMatchObject({ status: "failed", reason: "gateway_ack_error" });
    expect(await balanceOf(accountId)).toBe(10);
    // A late delivery receipt does not revive it.
    await postEvolutionEvent(name, "messages.update", evolution.messageUpdate(providerId, "DELIVERY_ACK"));
    expect(await getMessage(key, messageId)).toMatchObject({ status: "failed" });
    expect(await balanceOf(accountId)).toBe(10);
  });

  it("fails a message to a number not on WhatsApp (400 exists: false) as recipient_not_on_chatapp, with a refund", async () => {
    const { key, accountId } = await createAccount(10);
    const { id, name } = await connectedEvolutionSession(key);
    const sent = await sendText(key, id, ["+14155550000"]);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    const [message] = await waitForMessages(key, [messageId]);
    expect(message).toMatchObject({ status: "failed", reason: "recipient_not_on_chatapp" });
    expect(evolution.calls.filter((c) => c.startsWith("POST /message/"))).toEqual([
      `POST /message/sendText/${name}`,
    ]);
    expect(evolution.sent).toHaveLength(0);
    expect(await balanceOf(accountId)).toBe(10);
  });

  it("stores an incoming message once, however often Evolution delivers it", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    const data = evolution.incomingText(name, "3EB0A0C1D2E3F4", "+14155550199", "hi there");
    expect((await postEvolutionEvent(name, "messages.upsert", data)).body).toEqual({
      success: true,
      ignored: false,
    });
    await postEvolutionEvent(name, "messages.upsert", data);
    const list = await call<{
      data: { from_number: string; to_number: string; content: string; direction: string; type: string }[];
    }>("GET", `/v1/chatapp/messages/${id}/session?filter[direction]=incoming`, { key });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({
      from_number: "+14155550199",
      to_number: PHONE,
      content: "hi there",
      direction: "incoming",
      type: "text",
    });
  });
});

describe("checks against Evolution's view", () => {
  const stateChecks = () =>
    evolution.calls.filter((c) => c.startsWith("GET /instance/connectionState/")).length;

  /** Runs the session's alarm until its gateway check has run once more. */
  async function runCheck(id: string) {
    const before = stateChecks();
    await runAlarmUntil(id, () => stateChecks() > before);
  }

  const health = async (key: string, id: string) => {
    const res = await call<{ health: Record<string, unknown> }>("GET", `/v1/chatapp/sessions/${id}/gateway`, {
      key,
    });
    expect(res.status).toBe(200);
    return res.body.health;
  };

  it("corrects a connected session whose instance Evolution reports close without an event", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    evolution.instance(name).state = "close";
    await runCheck(id);
    expect(await showSession(key, id)).toMatchObject({ status: "disconnected", reason: "gateway_closed" });
    expect(await health(key, id)).toMatchObject({
      gateway: "evolution",
      gateway_state: "dropped",
      consecutive_failures: 0,
      last_error: null,
    });
  });

  it("corrects a connected session whose instance Evolution no longer knows (404)", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    evolution.instances.delete(name);
    await runCheck(id);
    expect(await showSession(key, id)).toMatchObject({
      status: "disconnected",
      reason: "gateway_session_missing",
    });
  });

  it("keeps a connected session connected while Evolution reports it open, with the owner of fetchInstances", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedEvolutionSession(key);
    const before = await showSession(key, id);
    await runCheck(id);
    expect(evolution.calls.at(-1)).toBe(`GET /instance/fetchInstances?instanceName=${name}`);
    expect(await showSession(key, id)).toEqual(before);
    expect(await health(key, id)).toMatchObject({ gateway_state: "linked", consecutive_failures: 0 });
  });

  it("marks a session gateway_unreachable after three failed checks, and connected again when Evolution answers", async () => {
    const { key } = await createAccount();
    const { id } = await connectedEvolutionSession(key);
    evolution.down = true;
    await runCheck(id);
    await runCheck(id);
    expect((await showSession(key, id)).status).toBe("connected");
    await runCheck(id);
    expect(await showSession(key, id)).toMatchObject({
      status: "disconnected",
      reason: "gateway_unreachable",
    });
    // The health view checks once more itself.
    expect(await health(key, id)).toMatchObject({
      gateway: "evolution",
      consecutive_failures: 4,
      last_error: expect.stringContaining("gateway_http_503"),
    });

    evolution.down = false;
    await runCheck(id);
    expect(await showSession(key, id)).toMatchObject({
      status: "connected",
      reason: null,
      phone_number: PHONE,
      display_name: "Ada",
    });
    expect(await health(key, id)).toMatchObject({
      gateway: "evolution",
      gateway_state: "linked",
      consecutive_failures: 0,
      last_error: null,
    });
  });

  /** A connected session that three failed checks made `disconnected` `gateway_unreachable`; Evolution is back. */
  async function unreachableSession(key: string) {
    const session = await connectedEvolutionSession(key);
    evolution.down = true;
    for (let i = 0; i < 3; i++) await runCheck(session.id);
    expect(await showSession(key, session.id)).toMatchObject({
      status: "disconnected",
      reason: "gateway_unreachable",
    });
    evolution.down = false;
    return session;
  }

  it("after gateway_unreachable, a check that finds the instance closed says gateway_closed and stops checking", async () => {
    const { key } = await createAccount();
    const { id, name } = await unreachableSession(key);
    evolution.instance(name).state = "close";
    await runCheck(id);
    expect(await health(key, id)).toMatchObject({ gateway_state: "dropped", consecutive_failures: 0 });
    expect(await showSession(key, id)).toMatchObject({ status: "disconnected", reason: "gateway_closed" });
    expect(await runDurableObjectAlarm(sessionStub(id))).toBe(false);
  });

  // The same bug, through the webhook: Evolution's own logged-out event is dropped.
  it("after gateway_unreachable, Evolution's logged-out event (close 401) is applied", async () => {
    const { key } = await createAccount();
    const { id, name } = await unreachableSession(key);
    const res = await postEvolutionEvent(name, "connection.update", evolution.close(name, 401));
    expect(res.body).toEqual({ success: true, ignored: false });
    expect(await showSession(key, id)).toMatchObject({ status: "disconnected", reason: "logged_out" });
  });
});
