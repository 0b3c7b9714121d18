import { delay, HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { EvolutionGateway } from "../../src/gateways/evolution";
import {
  evolutionInstanceToken,
  parseEvolutionEvent,
  verifyEvolutionEvent,
} from "../../src/gateways/evolution/events";
import { GatewayError, type OutboundMessage } from "../../src/gateways/gateway";
import {
  EVOLUTION_API_KEY,
  EVOLUTION_SETTINGS,
  EVOLUTION_URL,
  GATEWAY_TIMEOUT_MS,
  PUBLIC_URL,
} from "../gateway-config";
import { network, useNetwork } from "../network";

// Contract tests for the Evolution API v2 adapter against a fake Evolution server (MSW). Answer
// bodies follow the shapes of EvolutionAPI/evolution-api's controllers (see src/gateways/evolution/).

useNetwork();

const SESSION = "session_0f1e2d3c-4b5a-4968-8776-655443322110";
/** HMAC-SHA256(key = EVOLUTION_API_KEY, message = SESSION), computed independently with Node. */
const SESSION_TOKEN = "2d7e872ea8e95750f152587b40272d256a47c4509d355983fd3c3c7ac0c2bc7b";
const OWNER_JID = "447911123456@s.whatsapp.net";
const MESSAGE_ID = "0190a5f2-7c1e-4b3a-9d4e-2f6a8b1c3d5e";
/** clientMessageIdOf(MESSAGE_ID), written out: `3EB0` and the uuid's first 18 hex digits. */
const CLIENT_ID = "3EB00190A5F27C1E4B3A9D";
const QR = "2@y8tNqJ1r0sV+3kQ==,Zm9vYmFy,YmF6cXV4,cXV1eA==";

const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  apikey: string | null;
  body: unknown;
}

/** Answers `method path` with `reply` and records every request it receives, in order. */
function fake(
  method: "get" | "post" | "delete",
  path: string,
  reply: () => Response | Promise<Response>,
  log: Seen[] = [],
): Seen[] {
  network.use(
    http[method](`${EVOLUTION_URL}${path}`, async ({ request }) => {
      const url = new URL(request.url);
      const text = await request.text();
      log.push({
        method: request.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        apikey: request.headers.get("apikey"),
        body: text ? JSON.parse(text) : null,
      });
      return reply();
    }),
  );
  return log;
}

const json =
  (body: unknown, status = 200) =>
  () =>
    HttpResponse.json(body as Record<string, unknown>, { status });
/** Evolution's error body (src/main.ts of EvolutionAPI/evolution-api). */
const problem = (status: number, error: string, message: unknown[]) =>
  json({ status, error, response: { message } }, status);
const seen = (
  method: string,
  path: string,
  query: Record<string, string> = {},
  body: unknown = null,
): Seen => ({
  method,
  path,
  query,
  apikey: EVOLUTION_API_KEY,
  body,
});

const qrCode = (code: string | undefined, pairingCode: string | null = null) => ({
  pairingCode,
  code,
  base64: "data:image/png;base64,iVBORw0KGgo=",
  count: 1,
});
const state = (value: string) => json({ instance: { instanceName: SESSION, state: value } });
const instanceRow = {
  id: "a3a1c0de-7b2e-4d5f-9e61-2f1b7c9d0e11",
  name: SESSION,
  connectionStatus: "open",
  ownerJid: OWNER_JID,
  profileName: "Ana Lima",
  profilePicUrl: null,
  integration: "WHATSAPP-BAILEYS",
  number: null,
  token: SESSION_TOKEN,
  clientName: "evolution_exchange",
  disconnectionReasonCode: null,
  _count: { Message: 0, Contact: 0, Chat: 0 },
};
const created = (qrcode: unknown) => ({
  instance: {
    instanceName: SESSION,
    instanceId: instanceRow.id,
    integration: "WHATSAPP-BAILEYS",
    webhookWaBusiness: null,
    accessTokenWaBusiness: "",
    status: "created",
  },
  hash: SESSION_TOKEN,
  webhook: {
    webhookUrl: `${PUBLIC_URL}/gateway/evolution/events`,
    webhookByEvents: false,
    webhookBase64: false,
  },
  websocket: {},
  rabbitmq: {},
  sqs: {},
  settings: { rejectCall: false, msgCall: "", groupsIgnore: false, alwaysOnline: false },
  qrcode,
});
const sentMessage = (id: string) => ({
  key: { remoteJid: OWNER_JID, fromMe: true, id },
  pushName: "",
  status: "PENDING",
  message: { conversation: "Hello" },
  contextInfo: null,
  messageType: "conversation",
  messageTimestamp: 1717689097,
  instanceId: instanceRow.id,
  source: "unknown",
});

async function gatewayError(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe("Evolution gateway: lifecycle", () => {
  it("create posts the instance with our token and webhook, and answers the QR of the create answer", async () => {
    const log = fake("post", "/instance/create", json(created(qrCode(QR)), 201));

    await expect(gateway.create(SESSION)).resolves.toEqual({ status: "pending", qr: QR });
    expect(log).toEqual([
      seen(
        "POST",
        "/instance/create",
        {},
        {
          instanceName: SESSION,
          token: SESSION_TOKEN,
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
        },
      ),
    ]);
  });

  it("create fetches the QR from connect when the create answer has none yet", async () => {
    const log: Seen[] = [];
    fake("post", "/instance/create", json(created({ count: 0 }), 201), log);
    fake("get", `/instance/connect/${SESSION}`, json(qrCode(QR)), log);

    await expect(gateway.create(SESSION)).resolves.toEqual({ status: "pending", qr: QR });
    expect(log.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /instance/create",
      `GET /instance/connect/${SESSION}`,
    ]);
  });

  it("create of a name already in use (403) starts the existing instance", async () => {
    const log: Seen[] = [];
    fake(
      "post",
      "/instance/create",
      problem(403, "Forbidden", [`This name "${SESSION}" is already in use.`]),
      log,
    );
    fake("get", `/instance/connectionState/${SESSION}`, state("open"), log);
    fake("get", "/instance/fetchInstances", json([instanceRow]), log);

    await expect(gateway.create(SESSION)).resolves.toEqual({
      status: "connected",
      phoneNumber: "+447911123456",
      displayName: "Ana Lima",
    });
    expect(log.map((r) => r.path)).toEqual([
      "/instance/create",
      `/instance/connectionState/${SESSION}`,
      "/instance/fetchInstances",
    ]);
  });

  it("start of an open instance answers connected with the owner from fetchInstances", async () => {
    const log: Seen[] = [];
    fake("get", `/instance/connectionState/${SESSION}`, state("open"), log);
    fake("get", "/instance/fetchInstances", json([instanceRow]), log);

    await expect(gateway.start(SESSION)).resolves.toEqual({
      status: "connected",
      phoneNumber: "+447911123456",
      displayName: "Ana Lima",
    });
    expect(log).toEqual([
      seen("GET", `/instance/connectionState/${SESSION}`),
      seen("GET", "/instance/fetchInstances", { instanceName: SESSION }),
    ]);
  });

  it("start of a closed instance connects it and answers the QR", async () => {
    const log: Seen[] = [];
    fake("get", `/instance/connectionState/${SESSION}`, state("close"), log);
    fake("get", `/instance/connect/${SESSION}`, json(qrCode(QR)), log);

    await expect(gateway.start(SESSION)).resolves.toEqual({ status: "pending", qr: QR });
    expect(log).toEqual([
      seen("GET", `/instance/connectionState/${SESSION}`),
      seen("GET", `/instance/connect/${SESSION}`),
    ]);
  });

  it("start of an open instance without an owner number is a transient bad response", async () => {
    fake("get", `/instance/connectionState/${SESSION}`, state("open"));
    fake("get", "/instance/fetchInstances", json([{ ...instanceRow, ownerJid: null }]));

    const error = await gatewayError(gateway.start(SESSION));
    expect(error.reason).toBe("gateway_bad_response");
    expect(error.permanent).toBe(false);
  });

  it("currentQr answers the code of connect", async () => {
    const log = fake("get", `/instance/connect/${SESSION}`, json(qrCode(QR)));

    await expect(gateway.currentQr(SESSION)).resolves.toBe(QR);
    expect(log).toEqual([seen("GET", `/instance/connect/${SESSION}`)]);
  });

  it("currentQr without a code (open instance) fails transiently", async () => {
    fake("get", `/instance/connect/${SESSION}`, state("open"));

    const error = await gatewayError(gateway.currentQr(SESSION));
    expect(error.reason).toBe("gateway_qr_unavailable");
    expect(error.permanent).toBe(false);
  });

  it("requestPairingCode passes the number's digits and answers the code in two groups", async () => {
    const log = fake("get", `/instance/connect/${SESSION}`, json(qrCode(QR, "WZYEH1YY")));

    await expect(gateway.requestPairingCode(SESSION, "+447911123456")).resolves.toBe("WZYE-H1YY");
    expect(log).toEqual([seen("GET", `/instance/connect/${SESSION}`, { number: "447911123456" })]);
  });

  it("requestPairingCode without a code in the answer fails permanently", async () => {
    fake("get", `/instance/connect/${SESSION}`, json(qrCode(QR, null)));

    const error = await gatewayError(gateway.requestPairingCode(SESSION, "+447911123456"));
    expect(error.reason).toBe("gateway_pairing_code_unavailable");
    expect(error.permanent).toBe(true);
  });

  it("disconnect logs the instance out", async () => {
    const log = fake(
      "delete",
      `/instance/logout/${SESSION}`,
      json({ status: "SUCCESS", error: false, response: { message: "Instance logged out" } }),
    );

    await expect(gateway.disconnect(SESSION)).resolves.toBeUndefined();
    expect(log).toEqual([seen("DELETE", `/instance/logout/${SESSION}`)]);
  });

  it("disconnect of an instance already closed succeeds", async () => {
    fake(
      "delete",
      `/instance/logout/${SESSION}`,
      problem(400, "Bad Request", [`The "${SESSION}" instance is not connected`]),
    );

    await expect(gateway.disconnect(SESSION)).resolves.toBeUndefined();
  });

  it("disconnect throws a transient error when Evolution answers 500", async () => {
    fake("delete", `/instance/logout/${SESSION}`, problem(500, "Internal Server Error", ["boom"]));

    const error = await gatewayError(gateway.disconnect(SESSION));
    expect(error.reason).toBe("gateway_http_500");
    expect(error.permanent).toBe(false);
  });

  it("remove deletes the instance", async () => {
    const log = fake(
      "delete",
      `/instance/delete/${SESSION}`,
      json({ status: "SUCCESS", error: false, response: { message: "Instance deleted" } }),
    );

    await expect(gateway.remove(SESSION)).resolves.toBeUndefined();
    expect(log).toEqual([seen("DELETE", `/instance/delete/${SESSION}`)]);
  });

  it("remove of an instance already gone (404) succeeds", async () => {
    fake(
      "delete",
      `/instance/delete/${SESSION}`,
      problem(404, "Not Found", [`The "${SESSION}" instance does not exist`]),
    );

    await expect(gateway.remove(SESSION)).resolves.toBeUndefined();
  });

  it("remove of a connected instance logs it out, then deletes it", async () => {
    const log: Seen[] = [];
    let deletes = 0;
    fake(
      "delete",
      `/instance/delete/${SESSION}`,
      () =>
        ++deletes === 1
          ? problem(400, "Bad Request", [`The "${SESSION}" instance needs to be disconnected`])()
          : json({ status: "SUCCESS", error: false, response: { message: "Instance deleted" } })(),
      log,
    );
    fake(
      "delete",
      `/instance/logout/${SESSION}`,
      json({ status: "SUCCESS", error: false, response: { message: "Instance logged out" } }),
      log,
    );

    await expect(gateway.remove(SESSION)).resolves.toBeUndefined();
    expect(log.map((r) => `${r.method} ${r.path}`)).toEqual([
      `DELETE /instance/delete/${SESSION}`,
      `DELETE /instance/logout/${SESSION}`,
      `DELETE /instance/delete/${SESSION}`,
    ]);
  });

  it("a lifecycle call slower than the timeout fails with a transient gateway_timeout", async () => {
    fake("get", `/instance/connect/${SESSION}`, async () => {
      await delay(GATEWAY_TIMEOUT_MS + 200);
      return HttpResponse.json(qrCode(QR));
    });

    const error = await gatewayError(gateway.currentQr(SESSION));
    expect(error.reason).toBe("gateway_timeout");
    expect(error.permanent).toBe(false);
  });

  it("an unexpected connectionState shape is a transient gateway_bad_response", async () => {
    fake("get", `/instance/connectionState/${SESSION}`, json({ state: "open" }));

    const error = await gatewayError(gateway.start(SESSION));
    expect(error.reason).toBe("gateway_bad_response");
    expect(error.permanent).toBe(false);
  });
});

describe("Evolution gateway: check", () => {
  it("open → linked with the owner's number and profile name", async () => {
    fake("get", `/instance/connectionState/${SESSION}`, state("open"));
    const log = fake("get", "/instance/fetchInstances", json([instanceRow]));
    const before = Date.now();

    const event = await gateway.check(SESSION);
    expect(event).toEqual({
      type: "linked",
      phoneNumber: "+447911123456",
      displayName: "Ana Lima",
      at: expect.any(Number),
    });
    expect(event?.at).toBeGreaterThanOrEqual(before);
    expect(log).toEqual([seen("GET", "/instance/fetchInstances", { instanceName: SESSION })]);
  });

  it("connecting → null (a QR or a reconnect, which the state does not tell apart)", async () => {
    fake("get", `/instance/connectionState/${SESSION}`, state("connecting"));

    await expect(gateway.check(SESSION)).resolves.toBeNull();
  });

  it("close → dropped, not logged out", async () => {
    fake("get", `/instance/connectionState/${SESSION}`, state("close"));

    await expect(gateway.check(SESSION)).resolves.toEqual({
      type: "dropped",
      reason: "gateway_closed",
      loggedOut: false,
      at: expect.any(Number),
    });
  });

  it("refused (QR limit reached) → failed", async () => {
    fake("get", `/instance/connectionState/${SESSION}`, state("refused"));

    await expect(gateway.check(SESSION)).resolves.toEqual({
      type: "failed",
      reason: "qr_limit_reached",
      at: expect.any(Number),
    });
  });

  it("an instance Evolution does not know (404) → dropped and logged out", async () => {
    fake(
      "get",
      `/instance/connectionState/${SESSION}`,
      problem(404, "Not Found", [`The "${SESSION}" instance does not exist`]),
    );

    await expect(gateway.check(SESSION)).resolves.toEqual({
      type: "dropped",
      reason: "gateway_session_missing",
      loggedOut: true,
      at: expect.any(Number),
    });
  });

  it("a 500 throws a transient error", async () => {
    fake("get", `/instance/connectionState/${SESSION}`, problem(500, "Internal Server Error", ["boom"]));

    const error = await gatewayError(gateway.check(SESSION));
    expect(error.reason).toBe("gateway_http_500");
    expect(error.permanent).toBe(false);
  });
});

describe("Evolution gateway: send", () => {
  const message = (overrides: Partial<OutboundMessage>): OutboundMessage => ({
    id: MESSAGE_ID,
    clientMessageId: clientMessageIdOf(MESSAGE_ID),
    to: "+447911123457",
    type: "text",
    content: "Hello",
    mediaUrl: null,
    media: null,
    ...overrides,
  });
  /** A stored media file's key, and the link to it as the service signs it. */
  const MEDIA_KEY = "6a1f0e52-3b7c-4d8e-9f01-23456789abcd";
  const signedLink = expect.stringMatching(
    new RegExp(`^${PUBLIC_URL}/media/${MEDIA_KEY}\\?expires=[0-9]+&signature=[0-9a-f]{64}$`),
  );
  const stored = (contentType: string) => ({ key: MEDIA_KEY, contentType });

  it("text → sendText with the number's digits and our client id as messageId; answers key.id", async () => {
    const log = fake("post", `/message/sendText/${SESSION}`, json(sentMessage("BAE594145F4C59B4"), 201));

    await expect(gateway.send(SESSION, message({}))).resolves.toEqual({
      outcome: "accepted",
      providerMessageId: "BAE594145F4C59B4",
    });
    expect(log).toEqual([
      seen(
        "POST",
        `/message/sendText/${SESSION}`,
        {},
        { number: "447911123457", text: "Hello", messageId: CLIENT_ID },
      ),
    ]);
  });

  it("image → sendMedia with a signed link to the stored copy, its mimetype and the caption", async () => {
    const log = fake("post", `/message/sendMedia/${SESSION}`, json(sentMessage("3EB0C767D26A1D8E"), 201));

    const outcome = await gateway.send(
      SESSION,
      message({
        type: "image",
        content: "Look",
        mediaUrl: "https://cdn.example.test/cat.jpg",
        media: stored("image/jpeg"),
      }),
    );
    expect(outcome).toEqual({ outcome: "accepted", providerMessageId: "3EB0C767D26A1D8E" });
    expect(log).toEqual([
      seen(
        "POST",
        `/message/sendMedia/${SESSION}`,
        {},
        {
          number: "447911123457",
          mediatype: "image",
          mimetype: "image/jpeg",
          media: signedLink,
          caption: "Look",
          messageId: CLIENT_ID,
        },
      ),
    ]);
  });

  it("video without a caption → sendMedia without caption", async () => {
    const log = fake("post", `/message/sendMedia/${SESSION}`, json(sentMessage("3EB0VIDEO"), 201));

    await gateway.send(
      SESSION,
      message({
        type: "video",
        content: null,
        mediaUrl: "https://cdn.example.test/a.mp4",
        media: stored("video/mp4"),
      }),
    );
    expect(log[0]?.body).toEqual({
      number: "447911123457",
      mediatype: "video",
      mimetype: "video/mp4",
      media: signedLink,
      messageId: CLIENT_ID,
    });
  });

  it("document → sendMedia with the file name of the caller's URL", async () => {
    const log = fake("post", `/message/sendMedia/${SESSION}`, json(sentMessage("3EB0DOC"), 201));

    await gateway.send(
      SESSION,
      message({
        type: "document",
        content: "Invoice",
        mediaUrl: "https://cdn.example.test/files/invoice%20may.pdf",
        media: stored("application/pdf"),
      }),
    );
    expect(log[0]?.body).toEqual({
      number: "447911123457",
      mediatype: "document",
      mimetype: "application/pdf",
      media: signedLink,
      caption: "Invoice",
      fileName: "invoice may.pdf",
      messageId: CLIENT_ID,
    });
  });

  it("audio → sendWhatsAppAudio with a signed link to the stored copy", async () => {
    const log = fake("post", `/message/sendWhatsAppAudio/${SESSION}`, json(sentMessage("3EB0AUDIO"), 201));

    const outcome = await gateway.send(
      SESSION,
      message({
        type: "audio",
        content: null,
        mediaUrl: "https://cdn.example.test/v.ogg",
        media: stored("audio/ogg"),
      }),
    );
    expect(outcome).toEqual({ outcome: "accepted", providerMessageId: "3EB0AUDIO" });
    expect(log).toEqual([
      seen(
        "POST",
        `/message/sendWhatsAppAudio/${SESSION}`,
        {},
        { number: "447911123457", audio: signedLink, messageId: CLIENT_ID },
      ),
    ]);
  });

  it("media without a stored copy are rejected (media_not_stored) without a call", async () => {
    const log = fake("post", `/message/sendMedia/${SESSION}`, json(sentMessage("3EB0NEVER"), 201));
    const unstored = message({ type: "image", mediaUrl: "https://cdn.example.test/cat.jpg", media: null });
    await expect(gateway.send(SESSION, unstored)).resolves.toEqual({
      outcome: "rejected",
      reason: "media_not_stored",
      retryable: false,
    });
    expect(log).toEqual([]);
  });

  it("a number not on WhatsApp (400, exists: false) is rejected with recipient_not_on_chatapp", async () => {
    fake(
      "post",
      `/message/sendText/${SESSION}`,
      problem(400, "Bad Request", [
        { jid: "447911123457@s.whatsapp.net", exists: false, number: "447911123457" },
      ]),
    );

    await expect(gateway.send(SESSION, message({}))).resolves.toEqual({
      outcome: "rejected",
      reason: "recipient_not_on_chatapp",
      retryable: false,
    });
  });

  it("another 400 is rejected, not retryable, with the gateway's reason", async () => {
    fake("post", `/message/sendText/${SESSION}`, problem(400, "Bad Request", ["SessionError: No sessions"]));

    const outcome = await gateway.send(SESSION, message({}));
    expect(outcome).toMatchObject({ outcome: "rejected", retryable: false });
    expect("reason" in outcome ? outcome.reason : "").toMatch(/^gateway_http_400: .*No sessions/);
  });

  it("a socket closed mid-send (400 Connection Closed) is unknown: the message may have left", async () => {
    fake("post", `/message/sendText/${SESSION}`, problem(400, "Bad Request", ["Error: Connection Closed"]));

    await expect(gateway.send(SESSION, message({}))).resolves.toEqual({
      outcome: "unknown",
      reason: "gateway_connection_closed",
    });
  });

  it("classifies a long error body by all of it, not by the start quoted in the message", async () => {
    // Baileys' stack lines first, the "Connection Closed" item past the first 300 characters.
    const noise = Array.from(
      { length: 12 },
      (_, i) => `    at WebSocketClient.emit (node:events:${500 + i}:28)`,
    );
    fake(
      "post",
      `/message/sendText/${SESSION}`,
      problem(400, "Bad Request", [...noise, "Error: Connection Closed"]),
    );
    await expect(gateway.send(SESSION, message({}))).resolves.toEqual({
      outcome: "unknown",
      reason: "gateway_connection_closed",
    });

    const known = Array.from({ length: 12 }, (_, i) => ({
      jid: `4479111234${String(i).padStart(2, "0")}@s.whatsapp.net`,
      exists: true,
      number: `4479111234${String(i).padStart(2, "0")}`,
    }));
    fake(
      "post",
      `/message/sendText/${SESSION}`,
      problem(400, "Bad Request", [
        ...known,
        { jid: "447911123499@s.whatsapp.net", exists: false, number: "447911123499" },
      ]),
    );
    await expect(gateway.send(SESSION, message({}))).resolves.toEqual({
      outcome: "rejected",
      reason: "recipient_not_on_chatapp",
      retryable: false,
    });
  });

  it.each([408, 429])(
    "a %i is rejected and retryable: the request was turned away unprocessed",
    async (status) => {
      fake("post", `/message/sendText/${SESSION}`, problem(status, "Too Many Requests", ["slow down"]));

      const outcome = await gateway.send(SESSION, message({}));
      expect(outcome).toMatchObject({ outcome: "rejected", retryable: true });
      expect("reason" in outcome ? outcome.reason : "").toMatch(new RegExp(`^gateway_http_${status}`));
    },
  );

  it("a 500 is unknown", async () => {
    fake("post", `/message/sendText/${SESSION}`, problem(500, "Internal Server Error", ["boom"]));

    const outcome = await gateway.send(SESSION, message({}));
    expect(outcome).toMatchObject({ outcome: "unknown" });
    expect("reason" in outcome ? outcome.reason : "").toMatch(/^gateway_http_500/);
  });

  it("an answer slower than the timeout is unknown (gateway_timeout)", async () => {
    fake("post", `/message/sendText/${SESSION}`, async () => {
      await delay(GATEWAY_TIMEOUT_MS + 200);
      return HttpResponse.json(sentMessage("LATE"), { status: 201 });
    });

    const outcome = await gateway.send(SESSION, message({}));
    expect(outcome).toMatchObject({ outcome: "unknown" });
    expect("reason" in outcome ? outcome.reason : "").toMatch(/^gateway_timeout/);
  });

  it("a 2xx without key.id is unknown (gateway_bad_response)", async () => {
    fake("post", `/message/sendText/${SESSION}`, json({ status: "PENDING", message: {} }, 201));

    const outcome = await gateway.send(SESSION, message({}));
    expect(outcome).toMatchObject({ outcome: "unknown" });
    expect("reason" in outcome ? outcome.reason : "").toMatch(/^gateway_bad_response/);
  });

  it("an unreachable gateway is unknown (gateway_unreachable)", async () => {
    // The connection fails, as to a host that is down.
    network.use(http.post(`${EVOLUTION_URL}/message/sendText/:instance`, () => HttpResponse.error()));
    const outcome = await gateway.send(SESSION, message({}));
    expect(outcome).toMatchObject({ outcome: "unknown" });
    expect("reason" in outcome ? outcome.reason : "").toMatch(/^gateway_unreachable/);
  });
});

describe("Evolution webhook authentication", () => {
  const body = (overrides: Record<string, unknown>) => ({
    event: "connection.update",
    instance: SESSION,
    data: { instance: SESSION, state: "connecting", statusReason: 200 },
    destination: `${PUBLIC_URL}/gateway/evolution/events`,
    date_time: "2025-09-24T21:37:57.432Z",
    sender: null,
    server_url: EVOLUTION_URL,
    apikey: SESSION_TOKEN,
    ...overrides,
  });

  it("the instance token is the hex HMAC-SHA256 of the instance name keyed with the API key", async () => {
    await expect(evolutionInstanceToken(EVOLUTION_API_KEY, SESSION)).resolves.toBe(SESSION_TOKEN);
  });

  it("accepts a body carrying its instance's token", async () => {
    await expect(verifyEvolutionEvent(body({}), EVOLUTION_API_KEY)).resolves.toBe(true);
  });

  it("rejects a wrong token", async () => {
    await expect(
      verifyEvolutionEvent(body({ apikey: `${SESSION_TOKEN.slice(0, -1)}0` }), EVOLUTION_API_KEY),
    ).resolves.toBe(false);
    await expect(verifyEvolutionEvent(body({ apikey: EVOLUTION_API_KEY }), EVOLUTION_API_KEY)).resolves.toBe(
      false,
    );
  });

  it("rejects a body without apikey, or with a null one (Evolution without EXPOSE_IN_FETCH_INSTANCES)", async () => {
    const { apikey: _omitted, ...withoutKey } = body({});
    await expect(verifyEvolutionEvent(withoutKey, EVOLUTION_API_KEY)).resolves.toBe(false);
    await expect(verifyEvolutionEvent(body({ apikey: null }), EVOLUTION_API_KEY)).resolves.toBe(false);
  });

  it("rejects the token of another instance", async () => {
    const other = await evolutionInstanceToken(
      EVOLUTION_API_KEY,
      "session_11111111-2222-4333-8444-555555555555",
    );
    await expect(verifyEvolutionEvent(body({ apikey: other }), EVOLUTION_API_KEY)).resolves.toBe(false);
  });

  it("rejects a token derived from another API key", async () => {
    const forged = await evolutionInstanceToken("another-key", SESSION);
    await expect(verifyEvolutionEvent(body({ apikey: forged }), EVOLUTION_API_KEY)).resolves.toBe(false);
  });

  it("rejects non-objects and a body without instance", async () => {
    await expect(verifyEvolutionEvent(null, EVOLUTION_API_KEY)).resolves.toBe(false);
    await expect(verifyEvolutionEvent("apikey", EVOLUTION_API_KEY)).resolves.toBe(false);
    await expect(verifyEvolutionEvent(body({ instance: undefined }), EVOLUTION_API_KEY)).resolves.toBe(false);
  });
});

describe("Evolution webhook parsing", () => {
  const DATE_TIME = "2025-09-24T21:37:57.432Z";
  const AT = Date.parse(DATE_TIME);
  const envelope = (event: string, data: unknown, extra: Record<string, unknown> = {}) => ({
    event,
    instance: SESSION,
    data,
    destination: `${PUBLIC_URL}/gateway/evolution/events`,
    date_time: DATE_TIME,
    sender: OWNER_JID,
    server_url: EVOLUTION_URL,
    apikey: SESSION_TOKEN,
    ...extra,
  });
  const events = (body: unknown) => parseEvolutionEvent(body)?.events;

  describe("connection.update", () => {
    it("open → linked with the number of wuid and the profile name", () => {
      const body = envelope("connection.update", {
        instance: SESSION,
        wuid: "447911123456@s.whatsapp.net",
        profileName: "Ana Lima",
        profilePictureUrl: null,
        state: "open",
        statusReason: 200,
      });
      expect(parseEvolutionEvent(body)).toEqual({
        sessionId: SESSION,
        sentAt: AT,
        events: [{ type: "linked", phoneNumber: "+447911123456", displayName: "Ana Lima", at: AT }],
      });
    });

    it("open without wuid → the number of sender; no profile name → null", () => {
      const body = envelope("connection.update", { instance: SESSION, state: "open", statusReason: 200 });
      expect(events(body)).toEqual([
        { type: "linked", phoneNumber: "+447911123456", displayName: null, at: AT },
      ]);
    });

    it("close with 401 (loggedOut) → dropped, logged out", () => {
      const body = envelope("connection.update", { instance: SESSION, state: "close", statusReason: 401 });
      expect(events(body)).toEqual([{ type: "dropped", reason: "logged_out", loggedOut: true, at: AT }]);
    });

    it("close with 403 (forbidden) → banned", () => {
      const body = envelope("connection.update", { instance: SESSION, state: "close", statusReason: 403 });
      expect(events(body)).toEqual([{ type: "banned", reason: "account_banned", at: AT }]);
    });

    it("close with another code → dropped, not logged out", () => {
      const body = envelope("connection.update", { instance: SESSION, state: "close", statusReason: 408 });
      expect(events(body)).toEqual([
        { type: "dropped", reason: "connection_closed", loggedOut: false, at: AT },
      ]);
    });

    it("connecting → no event", () => {
      const body = envelope("connection.update", {
        instance: SESSION,
        state: "connecting",
        statusReason: 200,
      });
      expect(events(body)).toEqual([]);
    });

    it("refused (QR limit reached) → failed", () => {
      const body = envelope("connection.update", { instance: SESSION, state: "refused", statusReason: 428 });
      expect(events(body)).toEqual([{ type: "failed", reason: "qr_limit_reached", at: AT }]);
    });

    it("accepts the config spelling of the event name", () => {
      const body = envelope("CONNECTION_UPDATE", { instance: SESSION, state: "close", statusReason: 401 });
      expect(events(body)).toEqual([{ type: "dropped", reason: "logged_out", loggedOut: true, at: AT }]);
    });
  });

  describe("qrcode.updated", () => {
    it("→ qr with the code", () => {
      const body = envelope("qrcode.updated", {
        qrcode: {
          instance: SESSION,
          pairingCode: null,
          code: QR,
          base64: "data:image/png;base64,iVBORw0KGgo=",
        },
      });
      expect(events(body)).toEqual([{ type: "qr", qr: QR, at: AT }]);
    });

    it("the QR-limit notice (no qrcode) → no event", () => {
      const body = envelope("qrcode.updated", {
        message: "QR code limit reached, please login again",
        statusCode: 500,
      });
      expect(events(body)).toEqual([]);
    });
  });

  describe("messages.update", () => {
    const update = (status: string, extra: Record<string, unknown> = {}) =>
      envelope("messages.update", {
        keyId: "BAE594145F4C59B4",
        remoteJid: "447911123457@s.whatsapp.net",
        fromMe: true,
        participant: null,
        status,
        instanceId: instanceRow.id,
        messageId: "cmfyoow42000hov4xwkdug3lv",
        ...extra,
      });

    it.each([
      ["SERVER_ACK", "sent", null],
      ["DELIVERY_ACK", "delivered", null],
      ["READ", "read", null],
      ["PLAYED", "read", null],
      ["ERROR", "failed", "gateway_ack_error"],
    ])("%s → ack %s", (status, ack, reason) => {
      expect(events(update(status))).toEqual([
        { type: "ack", providerMessageId: "BAE594145F4C59B4", status: ack, reason, at: AT },
      ]);
    });

    it.each(["PENDING", "DELETED"])("%s → no ack", (status) => {
      expect(events(update(status))).toEqual([]);
    });

    it("an update of a message we did not send → no ack", () => {
      expect(events(update("READ", { fromMe: false }))).toEqual([]);
    });

    it("accepts an array of updates and the key.id form", () => {
      const body = envelope("messages.update", [
        { keyId: "A1", fromMe: true, status: "DELIVERY_ACK" },
        { key: { id: "A2", fromMe: true }, status: "READ" },
      ]);
      expect(events(body)).toEqual([
        { type: "ack", providerMessageId: "A1", status: "delivered", reason: null, at: AT },
        { type: "ack", providerMessageId: "A2", status: "read", reason: null, at: AT },
      ]);
    });
  });

  describe("messages.upsert", () => {
    const TIMESTAMP = 1727213877;
    const upsert = (key: Record<string, unknown>, messageType: string, message: Record<string, unknown>) =>
      envelope("messages.upsert", {
        key: { remoteJid: "447911123457@s.whatsapp.net", fromMe: false, id: "3EB0A0C1D2E3F4", ...key },
        pushName: "Bruno",
        status: "DELIVERY_ACK",
        message,
        contextInfo: null,
        messageType,
        messageTimestamp: TIMESTAMP,
        instanceId: instanceRow.id,
        source: "android",
      });
    const incoming = (overrides: Record<string, unknown>) => ({
      type: "incoming",
      providerMessageId: "3EB0A0C1D2E3F4",
      from: { phoneNumber: "+447911123457", name: "Bruno" },
      messageType: "text",
      content: null,
      mediaUrl: null,
      at: TIMESTAMP * 1000,
      // Media is downloaded by the message's id (getBase64FromMediaMessage).
      ...(overrides.messageType ? { media: { mimetype: null, ref: "3EB0A0C1D2E3F4" } } : {}),
      ...overrides,
    });

    it("conversation → incoming text, at the message's timestamp", () => {
      expect(events(upsert({}, "conversation", { conversation: "Hi there" }))).toEqual([
        incoming({ content: "Hi there" }),
      ]);
    });

    it("extendedTextMessage → incoming text", () => {
      const body = upsert({}, "extendedTextMessage", { extendedTextMessage: { text: "See https://x.test" } });
      expect(events(body)).toEqual([incoming({ content: "See https://x.test" })]);
    });

    it("imageMessage → incoming image with caption and mediaUrl", () => {
      const body = upsert({}, "imageMessage", {
        imageMessage: { url: "https://mmg.whatsapp.net/o1/v/t62", mimetype: "image/jpeg", caption: "A cat" },
        mediaUrl: "https://s3.example.test/evolution/cat.jpeg",
      });
      expect(events(body)).toEqual([
        incoming({
          messageType: "image",
          content: "A cat",
          mediaUrl: "https://s3.example.test/evolution/cat.jpeg",
        }),
      ]);
    });

    it("videoMessage without S3 → incoming video without mediaUrl", () => {
      const body = upsert({}, "videoMessage", { videoMessage: { mimetype: "video/mp4", caption: "Clip" } });
      expect(events(body)).toEqual([incoming({ messageType: "video", content: "Clip" })]);
    });

    it("audioMessage → incoming audio", () => {
      const body = upsert({}, "audioMessage", {
        audioMessage: { mimetype: "audio/ogg; codecs=opus", ptt: true },
        mediaUrl: "https://s3.example.test/evolution/voice.oga",
      });
      expect(events(body)).toEqual([
        incoming({ messageType: "audio", mediaUrl: "https://s3.example.test/evolution/voice.oga" }),
      ]);
    });

    it("documentMessage and documentWithCaptionMessage → incoming document with caption", () => {
      const plain = upsert({}, "documentMessage", {
        documentMessage: { fileName: "a.pdf", caption: "Invoice" },
      });
      const captioned = upsert({}, "documentWithCaptionMessage", {
        documentWithCaptionMessage: {
          message: { documentMessage: { fileName: "b.pdf", caption: "Receipt" } },
        },
      });
      expect(events(plain)).toEqual([incoming({ messageType: "document", content: "Invoice" })]);
      expect(events(captioned)).toEqual([incoming({ messageType: "document", content: "Receipt" })]);
    });

    describe("who wrote: the number and the LID the key gives (docs/contacts.md, Contacts)", () => {
      const LID = "123456789012345@lid";
      const PN = "447911123457@s.whatsapp.net";
      const both = { phoneNumber: "+447911123457", userId: LID, name: "Bruno" };

      it("a @lid chat with remoteJidAlt (2.3.5–2.3.6) → the LID and the phone of remoteJidAlt", () => {
        const body = upsert({ remoteJid: LID, remoteJidAlt: PN, addressingMode: "lid" }, "conversation", {
          conversation: "Hi",
        });
        expect(events(body)).toEqual([incoming({ content: "Hi", from: both })]);
      });

      it("a @lid chat without its number → the LID alone, not dropped", () => {
        const body = upsert({ remoteJid: LID, addressingMode: "lid" }, "conversation", {
          conversation: "Hi",
        });
        expect(events(body)).toEqual([incoming({ content: "Hi", from: { userId: LID, name: "Bruno" } })]);
      });

      it("a LID with a device suffix → the LID without it", () => {
        const body = upsert({ remoteJid: "123456789012345:7@lid" }, "conversation", { conversation: "Hi" });
        expect(events(body)?.[0]).toMatchObject({ from: { userId: LID } });
      });

      it("a phone chat whose remoteJidAlt is the LID (2.4.0-rc, addressingMode pn) → both", () => {
        const body = upsert({ remoteJid: PN, remoteJidAlt: LID, addressingMode: "pn" }, "conversation", {
          conversation: "Hi",
        });
        expect(events(body)).toEqual([incoming({ content: "Hi", from: both })]);
      });

      it("senderPn and previousRemoteJid (2.3.1–2.3.2) → both", () => {
        const body = upsert({ remoteJid: PN, senderPn: PN, previousRemoteJid: LID }, "conversation", {
          conversation: "Hi",
        });
        expect(events(body)).toEqual([incoming({ content: "Hi", from: both })]);
        const lidFirst = upsert({ remoteJid: LID, senderPn: PN }, "conversation", { conversation: "Hi" });
        expect(events(lidFirst)).toEqual([incoming({ content: "Hi", from: both })]);
      });

      it("no pushName → no name", () => {
        const body = envelope("messages.upsert", {
          key: { remoteJid: LID, fromMe: false, id: "3EB0A0C1D2E3F4" },
          pushName: null,
          message: { conversation: "Hi" },
          messageType: "conversation",
          messageTimestamp: TIMESTAMP,
        });
        expect(events(body)).toEqual([incoming({ content: "Hi", from: { userId: LID } })]);
      });

      it("a reaction from a @lid chat: kept with its number, skipped without one", () => {
        const reaction = { reactionMessage: { key: { id: "BAE5AAAA" }, text: "👍", senderTimestampMs: 1 } };
        const withNumber = upsert({ remoteJid: LID, remoteJidAlt: PN }, "reactionMessage", reaction);
        expect(events(withNumber)).toEqual([
          { type: "reaction", providerMessageId: "BAE5AAAA", from: "+447911123457", emoji: "👍", at: 1 },
        ]);
        expect(events(upsert({ remoteJid: LID }, "reactionMessage", reaction))).toEqual([]);
      });
    });

    it("our own message (fromMe) → no event", () => {
      expect(events(upsert({ fromMe: true }, "conversation", { conversation: "Hi" }))).toEqual([]);
    });

    it("a group message → no event", () => {
      const body = upsert(
        { remoteJid: "120363025246125888@g.us", participant: "447911123457@s.whatsapp.net" },
        "conversation",
        { conversation: "Hi all" },
      );
      expect(events(body)).toEqual([]);
    });

    it("a sticker → an incoming sticker whose WebP is downloaded by the message's id", () => {
      expect(
        events(upsert({}, "stickerMessage", { stickerMessage: { mimetype: "image/webp" } })),
      ).toMatchObject([
        {
          type: "incoming",
          messageType: "sticker",
          content: null,
          media: { mimetype: null, ref: expect.any(String) },
        },
      ]);
    });

    it("a message type we do not receive (a protocol message) → no event", () => {
      expect(events(upsert({}, "protocolMessage", { protocolMessage: { type: 0 } }))).toEqual([]);
    });
  });

  it("an event we do not use → a batch without events", () => {
    const body = envelope("contacts.update", [
      { remoteJid: "447911123457@s.whatsapp.net", pushName: "Bruno" },
    ]);
    expect(parseEvolutionEvent(body)).toEqual({ sessionId: SESSION, events: [], sentAt: AT });
  });

  it("a body without a readable date_time takes the time of parsing, and is undated (sentAt null)", () => {
    for (const date_time of [undefined, null, "yesterday"]) {
      const before = Date.now();
      const body = envelope("connection.update", { state: "close", statusReason: 401 }, { date_time });
      const batch = parseEvolutionEvent(body);
      expect(batch?.sentAt).toBeNull();
      const [event] = batch?.events ?? [];
      expect(event?.at).toBeGreaterThanOrEqual(before);
      expect(event?.at).toBeLessThanOrEqual(Date.now());
    }
  });

  it("a body that is not an envelope → null", () => {
    expect(parseEvolutionEvent(null)).toBeNull();
    expect(parseEvolutionEvent("connection.update")).toBeNull();
    expect(parseEvolutionEvent([envelope("connection.update", {})])).toBeNull();
    expect(parseEvolutionEvent({ event: "connection.update", data: {} })).toBeNull();
    expect(parseEvolutionEvent({ instance: SESSION, data: {} })).toBeNull();
  });
});
