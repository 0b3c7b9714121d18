import { beforeEach, describe, expect, it } from "vitest";
import { PUBLIC_URL, WAHA_WEBHOOK_HMAC_KEY } from "../gateway-config";
import {
  call,
  clockMoves,
  createAccount,
  createSession,
  expectProblem,
  runAlarmUntil,
  type SessionEnvelope,
  showSession,
  storedQrPayload,
} from "../helpers";
import { balanceOf, getMessage, sendText, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeWaha, postWahaEvent, wahaSignature } from "./fake-waha";

useNetwork();

const PHONE = "+14155552671";
const ME = { id: "14155552671@c.us", pushName: "Ada" };

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

/** Creates a session through the API against the fake gateway; `name` is its gateway name. */
async function createWahaSession(key: string) {
  const { session, qr_code } = await createSession(key);
  return { session, qrCode: qr_code, name: session.session_id };
}

/** A session linked the way WAHA links one: the phone scans, then `session.status` WORKING arrives. */
async function connectedWahaSession(key: string) {
  const { session, name } = await createWahaSession(key);
  waha.link(name, PHONE, ME.pushName);
  const res = await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: ME });
  expect(res.body).toEqual({ success: true, ignored: false });
  return { id: session.id, name };
}

describe("sessions on WAHA", () => {
  it("creates and starts a WAHA session with a signed webhook, and shows WAHA's QR", async () => {
    const { key } = await createAccount();
    const { session, qrCode, name } = await createWahaSession(key);
    expect(session.status).toBe("pending");
    expect(qrCode).toMatch(/^data:image\/png;base64,/);
    expect(waha.calls.slice(0, 3)).toEqual([
      "POST /api/sessions",
      `GET /api/sessions/${name}`,
      `GET /api/${name}/auth/qr`,
    ]);
    expect(waha.bodies[0]?.body).toEqual({
      name,
      start: true,
      config: {
        webhooks: [
          {
            url: `${PUBLIC_URL}/gateway/waha/events`,
            events: [
              "session.status",
              "message",
              "message.ack",
              "message.reaction",
              "message.edited",
              "message.revoked",
              "poll.vote",
            ],
            hmac: { key: WAHA_WEBHOOK_HMAC_KEY },
            retries: { policy: "exponential", delaySeconds: 2, attempts: 8 },
          },
        ],
      },
    });
    expect(await storedQrPayload(session.id)).toBe(waha.qrOf(name, 1));
  });

  it("answers 503 gateway_unavailable and keeps nothing when WAHA is down", async () => {
    const { key } = await createAccount();
    waha.down = true;
    const res = await call("POST", "/v1/chatapp/sessions", { key });
    const problem = expectProblem(res, 503, "gateway_unavailable");
    expect(problem.detail).toContain("gateway_http_503");
    const list = await call<{ sessions: unknown[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(list.body.sessions).toEqual([]);
  });

  it("follows session.status: WORKING → connected with the phone from `me`", async () => {
    const { key } = await createAccount();
    const { id } = await connectedWahaSession(key);
    expect(await showSession(key, id)).toMatchObject({
      status: "connected",
      phone_number: PHONE,
      display_name: "Ada",
      reason: null,
    });
  });

  it("follows session.status: SCAN_QR_CODE → pending with a fresh QR, FAILED → failed, STOPPED → disconnected", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    waha.sessions.set(name, { status: "SCAN_QR_CODE", me: null, qrCount: 5, webhooks: [] });
    await postWahaEvent(name, "session.status", { status: "SCAN_QR_CODE" });
    expect(await showSession(key, id)).toMatchObject({ status: "pending", phone_number: null });
    expect(await storedQrPayload(id)).toBe(waha.qrOf(name, 6));

    await postWahaEvent(name, "session.status", { status: "FAILED" });
    expect(await showSession(key, id)).toMatchObject({ status: "failed", reason: "gateway_failed" });

    const second = await connectedWahaSession(key);
    await postWahaEvent(second.name, "session.status", { status: "STOPPED" });
    expect(await showSession(key, second.id)).toMatchObject({
      status: "disconnected",
      reason: "gateway_stopped",
    });
  });

  it("applies a repeated event once: the second changes nothing", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    const before = await showSession(key, id);
    await clockMoves();
    const again = await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: ME });
    expect(again.status).toBe(200);
    expect(await showSession(key, id)).toEqual(before);
  });

  it("ignores a status event older than the newest one applied", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    await postWahaEvent(name, "session.status", { status: "STOPPED" }, { timestamp: Date.now() - 60_000 });
    expect(await showSession(key, id)).toMatchObject({ status: "connected" });
  });

  it.each([
    ["missing", null],
    ["wrong", "00".repeat(64)],
    ["of another key", "sign-with-other-key"],
  ])("rejects an event whose signature is %s (401) and applies nothing", async (_label, signature) => {
    const { key } = await createAccount();
    const { session, name } = await createWahaSession(key);
    waha.link(name, PHONE);
    const body = { status: "WORKING" };
    const sig =
      signature === "sign-with-other-key" ? wahaSignature(JSON.stringify(body), "other-key") : signature;
    const res = await postWahaEvent(name, "session.status", body, { me: ME, signature: sig });
    expectProblem(res, 401, "invalid_signature");
    expect((await showSession(key, session.id)).status).toBe("pending");
  });

  it("acknowledges and ignores events for unknown sessions and foreign names", async () => {
    const unknown = await postWahaEvent(
      `session_${crypto.randomUUID()}`,
      "session.status",
      { status: "WORKING" },
      { me: ME },
    );
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ success: true, ignored: true });
    const foreign = await postWahaEvent("default", "session.status", { status: "WORKING" }, { me: ME });
    expect(foreign.body).toEqual({ success: true, ignored: true });
  });

  it("stops on disconnect, starts on reconnect (the link is kept), and logs out and deletes on delete", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    const disconnected = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${id}/disconnect`, {
      key,
    });
    expect(disconnected.body.session).toMatchObject({
      status: "disconnected",
      reason: "disconnected_by_user",
    });
    expect(waha.calls).toContain(`POST /api/sessions/${name}/stop`);
    // WAHA then reports STOPPED: the session already is disconnected, nothing changes.
    await postWahaEvent(name, "session.status", { status: "STOPPED" });
    expect(await showSession(key, id)).toMatchObject({
      status: "disconnected",
      reason: "disconnected_by_user",
    });

    const reconnected = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${id}/reconnect`, { key });
    expect(reconnected.body.session).toMatchObject({ status: "connected", phone_number: PHONE });
    expect(waha.calls).toContain(`POST /api/sessions/${name}/start`);

    const deleted = await call("DELETE", `/v1/chatapp/sessions/${id}`, { key });
    expect(deleted.status).toBe(200);
    expect(waha.calls.slice(-2)).toEqual([
      `POST /api/sessions/${name}/logout`,
      `DELETE /api/sessions/${name}`,
    ]);
    expect(waha.sessions.has(name)).toBe(false);
    expect((await call("GET", `/v1/chatapp/sessions/${id}`, { key })).status).toBe(404);
  });

  it("keeps a session whose delete cannot reach WAHA (503), and deletes it once WAHA is back", async () => {
    const { key } = await createAccount();
    const { id } = await connectedWahaSession(key);
    waha.down = true;
    expectProblem(await call("DELETE", `/v1/chatapp/sessions/${id}`, { key }), 503, "gateway_unavailable");
    expect((await showSession(key, id)).status).toBe("connected");
    waha.down = false;
    expect((await call("DELETE", `/v1/chatapp/sessions/${id}`, { key })).status).toBe(200);
  });

  it("asks WAHA for a pairing code for the number's digits", async () => {
    const { key } = await createAccount();
    const { session, name } = await createWahaSession(key);
    const res = await call("POST", `/v1/chatapp/sessions/${session.id}/pairing-code`, {
      key,
      body: { phone_number: PHONE },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, pairing_code: "WAHA-C0DE" });
    const request = waha.bodies.find((b) => b.call === `POST /api/${name}/auth/request-code`);
    expect(request?.body).toEqual({ phoneNumber: "14155552671" });
  });
});

describe("messages on WAHA", () => {
  it("sends through sendText and follows message.ack: DEVICE → delivered, READ → read, never backwards", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    const sent = await sendText(key, id, ["+14155550123"]);
    expect(sent.status).toBe(201);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    const [message] = await waitForMessages(key, [messageId]);
    expect(message?.status).toBe("sent");
    expect(waha.sent).toHaveLength(1);
    expect(waha.sent[0]?.body).toEqual({
      session: name,
      chatId: "14155550123@c.us",
      text: "hello",
      id: expect.stringMatching(/^3EB0[0-9A-F]{18}$/),
    });
    const providerId = waha.sent[0]?.id ?? "";

    await postWahaEvent(name, "message.ack", { id: providerId, ack: 2, ackName: "DEVICE", fromMe: true });
    expect((await getMessage(key, messageId)).status).toBe("delivered");
    await postWahaEvent(name, "message.ack", { id: providerId, ack: 3, ackName: "READ", fromMe: true });
    const read = await getMessage(key, messageId);
    expect(read.status).toBe("read");
    expect(read.read_at).not.toBeNull();
    // Late and repeated acks move nothing back.
    await postWahaEvent(name, "message.ack", { id: providerId, ack: 2, ackName: "DEVICE", fromMe: true });
    await postWahaEvent(name, "message.ack", { id: providerId, ack: -1, ackName: "ERROR", fromMe: true });
    await postWahaEvent(name, "message.ack", { id: providerId, ack: 3, ackName: "READ", fromMe: true });
    const after = await getMessage(key, messageId);
    expect(after.status).toBe("read");
    expect(after.read_at).toBe(read.read_at);
  });

  it("fails and refunds a message WAHA reports as ERROR before delivery, once", async () => {
    const { key, accountId } = await createAccount(10);
    const { id, name } = await connectedWahaSession(key);
    const sent = await sendText(key, id, ["+14155550123"]);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    await waitForMessages(key, [messageId]);
    expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);
    const providerId = waha.sent[0]?.id ?? "";
    await postWahaEvent(name, "message.ack", { id: providerId, ack: -1, ackName: "ERROR", fromMe: true });
    await postWahaEvent(name, "message.ack", { id: providerId, ack: -1, ackName: "ERROR", fromMe: true });
    expect(await getMessage(key, messageId)).toMatchObject({ status: "failed" });
    expect(await balanceOf(accountId)).toBe(10);
  });

  it("fails a message to a number that is not on the network, with a refund", async () => {
    const { key, accountId } = await createAccount(10);
    const { id } = await connectedWahaSession(key);
    const sent = await sendText(key, id, ["+14155550000"]);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    const [message] = await waitForMessages(key, [messageId]);
    expect(message?.status).toBe("failed");
    expect(waha.sent).toHaveLength(0);
    expect(await balanceOf(accountId)).toBe(10);
    const res = await call<{ data: { reason?: string; metadata?: unknown } }>(
      "GET",
      `/v1/chatapp/messages/${messageId}`,
      {
        key,
      },
    );
    expect(JSON.stringify(res.body)).toContain("recipient_not_on_chatapp");
  });

  it("acknowledges and ignores an ack for a message it does not know", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    const sent = await sendText(key, id, ["+14155550123"]);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    await waitForMessages(key, [messageId]);
    const res = await postWahaEvent(name, "message.ack", {
      id: "true_14155550123@c.us_UNKNOWN",
      ack: 3,
      ackName: "READ",
      fromMe: true,
    });
    expect(res.status).toBe(200);
    expect((await getMessage(key, messageId)).status).toBe("sent");
  });

  it("stores an incoming message once, however often WAHA delivers it", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    const payload = {
      id: "false_14155550199@c.us_AAAA",
      from: "14155550199@c.us",
      fromMe: false,
      body: "hi there",
      hasMedia: false,
    };
    await postWahaEvent(name, "message", payload);
    await postWahaEvent(name, "message", payload);
    const list = await call<{
      data: { from_number: string; to_number: string; content: string; direction: string }[];
    }>("GET", `/v1/chatapp/messages/${id}/session?filter[direction]=incoming`, { key });
    expect(list.status).toBe(200);
    const incoming = list.body.data;
    expect(incoming).toHaveLength(1);
    expect(incoming[0]).toMatchObject({
      from_number: "+14155550199",
      to_number: PHONE,
      content: "hi there",
      direction: "incoming",
    });
  });
});

describe("incoming media on WAHA", () => {
  it("does not show WAHA's own media URL: media_url is null, metadata.media names the type", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    const internal = `http://waha.internal:3000/api/files/${name}/false_14155550199@c.us_IMG1.jpeg`;
    await postWahaEvent(name, "message", {
      id: "false_14155550199@c.us_IMG1",
      from: "14155550199@c.us",
      fromMe: false,
      body: "the receipt",
      hasMedia: true,
      media: { url: internal, mimetype: "image/jpeg", filename: null, error: null },
    });
    const list = await call<{ data: Record<string, unknown>[] }>(
      "GET",
      `/v1/chatapp/messages/${id}/session?filter[direction]=incoming`,
      { key },
    );
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({
      type: "image",
      content: "the receipt",
      media_url: null,
      metadata: { media: { mimetype: "image/jpeg" } },
    });
    expect(list.text).not.toContain("waha.internal");
    expect(list.text).not.toContain("/api/files/");
    // The session asks WAHA for the file (the fake holds none: 404) while this test's fake answers.
    await runAlarmUntil(id, () => waha.calls.some((c) => c.startsWith("GET /api/files/")));
  });
});

describe("checks against WAHA's view", () => {
  /** Runs the session's alarm until its gateway check has run once more. */
  async function runCheck(id: string) {
    const checks = () => waha.calls.filter((c) => c.startsWith("GET /api/sessions/")).length;
    const before = checks();
    await runAlarmUntil(id, () => checks() > before);
  }

  it("corrects a connected session that WAHA reports STOPPED without an event", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedWahaSession(key);
    const found = waha.sessions.get(name);
    if (found) found.status = "STOPPED";
    await runCheck(id);
    expect(await showSession(key, id)).toMatchObject({ status: "disconnected", reason: "gateway_stopped" });
  });

  it("marks a session gateway_unreachable after three failed checks, and connected again when WAHA answers", async () => {
    const { key } = await createAccount();
    const { id } = await connectedWahaSession(key);
    waha.down = true;
    await runCheck(id);
    await runCheck(id);
    expect((await showSession(key, id)).status).toBe("connected");
    await runCheck(id);
    expect(await showSession(key, id)).toMatchObject({
      status: "disconnected",
      reason: "gateway_unreachable",
    });
    const health = await call<{ health: Record<string, unknown> }>(
      "GET",
      `/v1/chatapp/sessions/${id}/gateway`,
      { key },
    );
    expect(health.body.health).toMatchObject({
      gateway: "waha",
      consecutive_failures: 4,
      last_error: expect.stringContaining("gateway_http_503"),
    });

    waha.down = false;
    await runCheck(id);
    expect(await showSession(key, id)).toMatchObject({
      status: "connected",
      reason: null,
      phone_number: PHONE,
    });
    const healthy = await call<{ health: Record<string, unknown> }>(
      "GET",
      `/v1/chatapp/sessions/${id}/gateway`,
      { key },
    );
    expect(healthy.body.health).toMatchObject({
      gateway_state: "linked",
      consecutive_failures: 0,
      last_error: null,
    });
  });
});
