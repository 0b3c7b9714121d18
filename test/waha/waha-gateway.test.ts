import { delay, HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import type { GatewayEvent, OutboundMessage } from "../../src/gateways/gateway";
import { GatewayError } from "../../src/gateways/gateway";
import { WahaGateway } from "../../src/gateways/waha";
import { parseWahaEvent, verifyWahaSignature } from "../../src/gateways/waha/events";
import { checkMediaLink, MEDIA_LINK_TTL_SECONDS } from "../../src/media/link";
import {
  GATEWAY_TIMEOUT_MS,
  MEDIA_URL_SECRET,
  PUBLIC_URL,
  WAHA_API_KEY,
  WAHA_SETTINGS,
  WAHA_URL,
  WAHA_WEBHOOK_HMAC_KEY,
} from "../gateway-config";
import { network, useNetwork } from "../network";

// Contract tests for the WAHA adapter against a fake WAHA at its HTTP boundary. Response bodies
// follow the examples of WAHA's docs (waha.devlike.pro/docs/how-to/sessions, /send-messages,
// /contacts, /events) and, for send answers, the engine formats reported in devlikeapro/waha#407
// and devlikeapro/waha#1122.

useNetwork();

const SESSION = "session_0b3f5c2e-8d1a-4c6e-9f2a-7e5d4c3b2a10";
const PHONE = "+4915112345678";
const CONTACT = "+14155550123";
const MESSAGE_ID = "0190a5f2-7c1e-4b3a-9d4e-2f6a8b1c3d5e";
/** clientMessageIdOf(MESSAGE_ID), written out. */
const CLIENT_ID = "3EB00190A5F27C1E4B3A9D";
const QR = "2@Vx1yZ2abc,def0123456789,ghi=,jkl=";

const gateway = new WahaGateway(WAHA_SETTINGS, { intervalMs: 5, polls: 3 });
/** A stored media file's key, and a stored JPEG. */
const MEDIA_KEY = "6a1f0e52-3b7c-4d8e-9f01-23456789abcd";
const IMAGE = { key: MEDIA_KEY, contentType: "image/jpeg" };

/** A request as the fake WAHA received it. */
interface Received {
  method: string;
  /** Path and query, e.g. `/api/x/auth/qr?format=raw`. */
  path: string;
  apiKey: string | null;
  body: unknown;
}

let received: Received[] = [];
beforeEach(() => {
  received = [];
});

type Method = "get" | "post" | "delete";

/** Serves `path` (MSW path pattern) with `respond`, recording each request. */
function serve(method: Method, path: string, respond: () => Response | Promise<Response>) {
  return http[method](`${WAHA_URL}${path}`, async ({ request }) => {
    const url = new URL(request.url);
    const text = await request.text();
    received.push({
      method: request.method,
      path: `${url.pathname}${url.search}`,
      apiKey: request.headers.get("X-Api-Key"),
      body: text ? JSON.parse(text) : undefined,
    });
    return respond();
  });
}

/** Serves `path` with each of `responses` in turn, the last one from then on. */
function serveInTurn(method: Method, path: string, responses: Array<() => Response>) {
  let next = 0;
  return serve(method, path, () => {
    const respond = responses[Math.min(next++, responses.length - 1)];
    return respond ? respond() : HttpResponse.json(null, { status: 500 });
  });
}

/** `GET /api/sessions/{session}` as the docs show it ("Get Session"). */
function sessionInfo(status: string, me: { id: string; pushName: string } | null = null) {
  return HttpResponse.json({
    name: SESSION,
    status,
    config: { proxy: null, webhooks: [], debug: false },
    me,
    engine: { engine: "NOWEB" },
  });
}

const WORKING_ME = { id: "4915112345678@c.us", pushName: "Corner Shop" };
const SESSION_PATH = `/api/sessions/${SESSION}`;

/** The requests received, each with the API key checked and then left out. */
function requests(): Array<Omit<Received, "apiKey">> {
  for (const request of received) expect(request.apiKey).toBe(WAHA_API_KEY);
  return received.map(({ apiKey: _apiKey, ...rest }) => rest);
}

async function gatewayError(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe("create", () => {
  it("creates the session with a signed webhook, polls past STARTING and answers the raw QR", async () => {
    network.use(
      serve("post", "/api/sessions", () =>
        HttpResponse.json(
          { name: SESSION, status: "STARTING", engine: { engine: "NOWEB" }, config: {}, me: null },
          { status: 201 },
        ),
      ),
      serveInTurn("get", "/api/sessions/:name", [
        () => sessionInfo("STARTING"),
        () => sessionInfo("SCAN_QR_CODE"),
      ]),
      serve("get", "/api/:session/auth/qr", () => HttpResponse.json({ value: QR })),
    );

    await expect(gateway.create(SESSION)).resolves.toEqual({ status: "pending", qr: QR });
    expect(requests()).toEqual([
      {
        method: "POST",
        path: "/api/sessions",
        body: {
          name: SESSION,
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
        },
      },
      { method: "GET", path: SESSION_PATH, body: undefined },
      { method: "GET", path: SESSION_PATH, body: undefined },
      { method: "GET", path: `/api/${SESSION}/auth/qr?format=raw`, body: undefined },
    ]);
  });

  it("answers connected with the linked account when WAHA still holds the link", async () => {
    network.use(
      serve("post", "/api/sessions", () => HttpResponse.json({ status: "STARTING" }, { status: 201 })),
      serve("get", "/api/sessions/:name", () => sessionInfo("WORKING", WORKING_ME)),
    );
    await expect(gateway.create(SESSION)).resolves.toEqual({
      status: "connected",
      phoneNumber: PHONE,
      displayName: "Corner Shop",
    });
  });

  it("starts the session instead when WAHA says it already exists (422)", async () => {
    network.use(
      serve("post", "/api/sessions", () =>
        HttpResponse.json(
          {
            statusCode: 422,
            error: "Unprocessable Entity",
            message: `Session '${SESSION}' already exists. Use PUT to update it.`,
          },
          { status: 422 },
        ),
      ),
      serve("post", "/api/sessions/:name/start", () => sessionInfo("STARTING")),
      serve("get", "/api/sessions/:name", () => sessionInfo("SCAN_QR_CODE")),
      serve("get", "/api/:session/auth/qr", () => HttpResponse.json({ value: QR })),
    );
    await expect(gateway.create(SESSION)).resolves.toEqual({ status: "pending", qr: QR });
    expect(requests().map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /api/sessions",
      `POST ${SESSION_PATH}/start`,
      `GET ${SESSION_PATH}`,
      `GET /api/${SESSION}/auth/qr?format=raw`,
    ]);
  });

  it("fails transiently with gateway_failed when the session is FAILED", async () => {
    network.use(
      serve("post", "/api/sessions", () => HttpResponse.json({ status: "STARTING" }, { status: 201 })),
      serve("get", "/api/sessions/:name", () => sessionInfo("FAILED")),
    );
    const error = await gatewayError(gateway.create(SESSION));
    expect([error.reason, error.permanent]).toEqual(["gateway_failed", false]);
  });

  it("fails transiently with gateway_timeout when the session is still STARTING after the last poll", async () => {
    network.use(
      serve("post", "/api/sessions", () => HttpResponse.json({ status: "STARTING" }, { status: 201 })),
      serve("get", "/api/sessions/:name", () => sessionInfo("STARTING")),
    );
    const error = await gatewayError(gateway.create(SESSION));
    expect([error.reason, error.permanent, error.status]).toEqual(["gateway_timeout", false, null]);
    expect(requests().filter((r) => r.method === "GET")).toHaveLength(3);
  });

  it("fails transiently on a 500", async () => {
    network.use(
      serve("post", "/api/sessions", () => HttpResponse.json({ message: "boom" }, { status: 500 })),
    );
    const error = await gatewayError(gateway.create(SESSION));
    expect([error.reason, error.permanent, error.status]).toEqual(["gateway_http_500", false, 500]);
  });

  it("is unknown (gateway_timeout) when WAHA answers too late", async () => {
    network.use(
      serve("post", "/api/sessions", async () => {
        await delay(GATEWAY_TIMEOUT_MS + 200);
        return HttpResponse.json({ status: "STARTING" }, { status: 201 });
      }),
    );
    const error = await gatewayError(gateway.create(SESSION));
    expect([error.reason, error.permanent]).toEqual(["gateway_timeout", false]);
  });

  it("fails transiently with gateway_bad_response when the session has an unexpected shape", async () => {
    network.use(
      serve("post", "/api/sessions", () => HttpResponse.json({ status: "STARTING" }, { status: 201 })),
      serve("get", "/api/sessions/:name", () => HttpResponse.json({ name: SESSION, status: "READY" })),
    );
    const error = await gatewayError(gateway.create(SESSION));
    expect([error.reason, error.permanent]).toEqual(["gateway_bad_response", false]);
  });
});

describe("start", () => {
  it("starts the session and answers connected once it is WORKING", async () => {
    network.use(
      serve("post", "/api/sessions/:name/start", () => sessionInfo("STARTING")),
      serveInTurn("get", "/api/sessions/:name", [
        () => sessionInfo("STARTING"),
        () => sessionInfo("WORKING", WORKING_ME),
      ]),
    );
    await expect(gateway.start(SESSION)).resolves.toEqual({
      status: "connected",
      phoneNumber: PHONE,
      displayName: "Corner Shop",
    });
    expect(requests()).toEqual([
      { method: "POST", path: `${SESSION_PATH}/start`, body: undefined },
      { method: "GET", path: SESSION_PATH, body: undefined },
      { method: "GET", path: SESSION_PATH, body: undefined },
    ]);
  });

  it("fails permanently when WAHA does not know the session (404)", async () => {
    network.use(
      serve("post", "/api/sessions/:name/start", () =>
        HttpResponse.json({ statusCode: 404, message: "Session not found" }, { status: 404 }),
      ),
    );
    const error = await gatewayError(gateway.start(SESSION));
    expect([error.reason, error.permanent, error.status]).toEqual(["gateway_http_404", true, 404]);
  });
});

describe("currentQr", () => {
  it("fetches the raw QR value", async () => {
    network.use(serve("get", "/api/:session/auth/qr", () => HttpResponse.json({ value: QR })));
    await expect(gateway.currentQr(SESSION)).resolves.toBe(QR);
    expect(requests()).toEqual([
      { method: "GET", path: `/api/${SESSION}/auth/qr?format=raw`, body: undefined },
    ]);
  });

  it("fails transiently with gateway_bad_response for an answer without a value", async () => {
    network.use(serve("get", "/api/:session/auth/qr", () => HttpResponse.json({ mimetype: "image/png" })));
    const error = await gatewayError(gateway.currentQr(SESSION));
    expect([error.reason, error.permanent]).toEqual(["gateway_bad_response", false]);
  });

  it("fails permanently when the session is not waiting for a scan (422)", async () => {
    network.use(
      serve("get", "/api/:session/auth/qr", () =>
        HttpResponse.json(
          { message: "Can get QR code only in SCAN_QR_CODE status. The current status is 'WORKING'" },
          { status: 422 },
        ),
      ),
    );
    const error = await gatewayError(gateway.currentQr(SESSION));
    expect([error.reason, error.permanent]).toEqual(["gateway_http_422", true]);
  });
});

describe("requestPairingCode", () => {
  it("asks for a code for the number's digits", async () => {
    network.use(
      serve("post", "/api/:session/auth/request-code", () => HttpResponse.json({ code: "ABCD-EFGH" })),
    );
    await expect(gateway.requestPairingCode(SESSION, PHONE)).resolves.toBe("ABCD-EFGH");
    expect(requests()).toEqual([
      { method: "POST", path: `/api/${SESSION}/auth/request-code`, body: { phoneNumber: "4915112345678" } },
    ]);
  });
});

describe("disconnect", () => {
  it("stops the session", async () => {
    network.use(serve("post", "/api/sessions/:name/stop", () => sessionInfo("STOPPED")));
    await expect(gateway.disconnect(SESSION)).resolves.toBeUndefined();
    expect(requests()).toEqual([{ method: "POST", path: `${SESSION_PATH}/stop`, body: undefined }]);
  });

  it("treats a session WAHA does not know (404) as stopped", async () => {
    network.use(
      serve("post", "/api/sessions/:name/stop", () =>
        HttpResponse.json({ message: "Session not found" }, { status: 404 }),
      ),
    );
    await expect(gateway.disconnect(SESSION)).resolves.toBeUndefined();
  });
});

describe("remove", () => {
  it("logs out, then deletes the session", async () => {
    network.use(
      serve("post", "/api/sessions/:name/logout", () => sessionInfo("STOPPED")),
      serve("delete", "/api/sessions/:name", () => new HttpResponse(null, { status: 200 })),
    );
    await expect(gateway.remove(SESSION)).resolves.toBeUndefined();
    expect(requests()).toEqual([
      { method: "POST", path: `${SESSION_PATH}/logout`, body: undefined },
      { method: "DELETE", path: SESSION_PATH, body: undefined },
    ]);
  });

  it("succeeds when both calls answer 404 (already gone)", async () => {
    const notFound = () => HttpResponse.json({ message: "Session not found" }, { status: 404 });
    network.use(
      serve("post", "/api/sessions/:name/logout", notFound),
      serve("delete", "/api/sessions/:name", notFound),
    );
    await expect(gateway.remove(SESSION)).resolves.toBeUndefined();
    expect(requests().map((r) => r.method)).toEqual(["POST", "DELETE"]);
  });

  it("is unknown when WAHA answers 500", async () => {
    network.use(serve("post", "/api/sessions/:name/logout", () => HttpResponse.json({}, { status: 500 })));
    const error = await gatewayError(gateway.remove(SESSION));
    expect([error.reason, error.permanent]).toEqual(["gateway_http_500", false]);
  });
});

describe("send", () => {
  const CHAT_ID = "14155550123@c.us";
  const LOOKUP_PATH = `/api/contacts/check-exists?phone=14155550123&session=${SESSION}`;
  const SENT_ID = `true_${CHAT_ID}_3EB0C767D097B7C7C030`;

  function message(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
    return {
      id: MESSAGE_ID,
      clientMessageId: clientMessageIdOf(MESSAGE_ID),
      to: CONTACT,
      type: "text",
      content: "Your code is 123456",
      mediaUrl: null,
      media: null,
      ...overrides,
    };
  }

  const exists = (chatId = CHAT_ID) =>
    serve("get", "/api/contacts/check-exists", () => HttpResponse.json({ numberExists: true, chatId }));

  it("looks the number up, sends the text and answers WAHA's message id", async () => {
    network.use(
      exists(),
      serve("post", "/api/sendText", () =>
        HttpResponse.json(
          {
            id: SENT_ID,
            timestamp: 1666943582,
            from: CHAT_ID,
            fromMe: true,
            to: CHAT_ID,
            body: "Your code is 123456",
          },
          { status: 201 },
        ),
      ),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "accepted",
      providerMessageId: SENT_ID,
    });
    expect(requests()).toEqual([
      { method: "GET", path: LOOKUP_PATH, body: undefined },
      {
        method: "POST",
        path: "/api/sendText",
        body: { session: SESSION, chatId: CHAT_ID, text: "Your code is 123456", id: CLIENT_ID },
      },
    ]);
  });

  it.each([
    ["WEBJS", { id: { fromMe: true, remote: CHAT_ID, id: "3EB0C767D097B7C7C030", _serialized: SENT_ID } }],
    [
      "NOWEB",
      {
        key: { remoteJid: "14155550123@s.whatsapp.net", fromMe: true, id: "3EB0C767D097B7C7C030" },
        message: { extendedTextMessage: { text: "Your code is 123456" } },
        messageTimestamp: "1738070128",
        status: "PENDING",
      },
    ],
    ["GOWS", { id: SENT_ID, _data: {} }],
  ])("reads the message id of a %s answer in the form acks carry", async (_engine, answer) => {
    network.use(
      exists(),
      serve("post", "/api/sendText", () => HttpResponse.json(answer, { status: 201 })),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "accepted",
      providerMessageId: SENT_ID,
    });
  });

  it("sends to the chat id the lookup answers (Brazilian numbers may differ from the digits)", async () => {
    network.use(
      serve("get", "/api/contacts/check-exists", () =>
        HttpResponse.json({ numberExists: true, chatId: "551187654321@c.us" }),
      ),
      serve("post", "/api/sendText", () =>
        HttpResponse.json({ id: "true_551187654321@c.us_ABC" }, { status: 201 }),
      ),
    );
    await expect(gateway.send(SESSION, message({ to: "+5511987654321" }))).resolves.toEqual({
      outcome: "accepted",
      providerMessageId: "true_551187654321@c.us_ABC",
    });
    expect(received[0]?.path).toBe(`/api/contacts/check-exists?phone=5511987654321&session=${SESSION}`);
    expect(received[1]?.body).toEqual({
      session: SESSION,
      chatId: "551187654321@c.us",
      text: "Your code is 123456",
      id: CLIENT_ID,
    });
  });

  /** A link to stored media `key` as the service signs it: `<PUBLIC_URL>/media/<key>?expires=…&signature=…`. */
  const signedLink = (key: string) =>
    expect.stringMatching(new RegExp(`^${PUBLIC_URL}/media/${key}\\?expires=[0-9]+&signature=[0-9a-f]{64}$`));

  it.each<[OutboundMessage["type"], string, string, string, Record<string, unknown>]>([
    [
      "image",
      "https://cdn.example.test/promo.png",
      "image/png",
      "/api/sendImage",
      { file: { url: signedLink(MEDIA_KEY), mimetype: "image/png" }, caption: "New in store" },
    ],
    [
      "video",
      "https://cdn.example.test/clip.3gp",
      "video/3gpp",
      "/api/sendVideo",
      {
        file: { url: signedLink(MEDIA_KEY), mimetype: "video/3gpp" },
        caption: "New in store",
        convert: true,
      },
    ],
    [
      "video",
      "https://cdn.example.test/clip",
      "video/mp4",
      "/api/sendVideo",
      {
        file: { url: signedLink(MEDIA_KEY), mimetype: "video/mp4" },
        caption: "New in store",
        convert: false,
      },
    ],
    [
      "audio",
      "https://cdn.example.test/note.mp3",
      "audio/mpeg",
      "/api/sendVoice",
      { file: { url: signedLink(MEDIA_KEY), mimetype: "audio/mpeg" }, convert: true },
    ],
    [
      "document",
      "https://cdn.example.test/files/Price%20list.pdf",
      "application/pdf",
      "/api/sendFile",
      {
        file: { url: signedLink(MEDIA_KEY), mimetype: "application/pdf", filename: "Price list.pdf" },
        caption: "New in store",
      },
    ],
    [
      "document",
      "https://cdn.example.test/download?id=7",
      "text/plain",
      "/api/sendFile",
      {
        file: { url: signedLink(MEDIA_KEY), mimetype: "text/plain", filename: "download" },
        caption: "New in store",
      },
    ],
  ])(
    "sends %s %s (stored as %s) by a signed link of ours to %s",
    async (type, mediaUrl, contentType, path, fields) => {
      network.use(
        exists(),
        serve("post", path, () => HttpResponse.json({ id: SENT_ID }, { status: 201 })),
      );
      const media = { key: MEDIA_KEY, contentType };
      const outcome = await gateway.send(
        SESSION,
        message({ type, mediaUrl, media, content: "New in store" }),
      );
      expect(outcome).toEqual({ outcome: "accepted", providerMessageId: SENT_ID });
      expect(requests()[1]).toEqual({
        method: "POST",
        path,
        body: { session: SESSION, chatId: CHAT_ID, ...fields },
      });
    },
  );

  it("signs the link for 15 minutes with MEDIA_URL_SECRET, and never passes the caller's URL on", async () => {
    network.use(
      exists(),
      serve("post", "/api/sendImage", () => HttpResponse.json({ id: SENT_ID }, { status: 201 })),
    );
    const before = Math.floor(Date.now() / 1000);
    await gateway.send(
      SESSION,
      message({ type: "image", mediaUrl: "https://cdn.example.test/a.jpg", media: IMAGE, content: null }),
    );
    const body = received[1]?.body as { file: { url: string } };
    expect(JSON.stringify(received[1]?.body)).not.toContain("cdn.example.test");
    const link = new URL(body.file.url);
    const query = {
      expires: link.searchParams.get("expires") ?? "",
      signature: link.searchParams.get("signature") ?? "",
    };
    const expires = Number(query.expires);
    expect(expires - before).toBeGreaterThanOrEqual(MEDIA_LINK_TTL_SECONDS);
    expect(expires - before).toBeLessThanOrEqual(MEDIA_LINK_TTL_SECONDS + 1);
    await expect(checkMediaLink(MEDIA_URL_SECRET, MEDIA_KEY, query, Date.now())).resolves.toBe("valid");
  });

  it("leaves the caption out of media without content", async () => {
    network.use(
      exists(),
      serve("post", "/api/sendImage", () => HttpResponse.json({ id: SENT_ID }, { status: 201 })),
    );
    await gateway.send(
      SESSION,
      message({ type: "image", mediaUrl: "https://cdn.example.test/a.jpg", media: IMAGE, content: null }),
    );
    expect(received[1]?.body).toEqual({
      session: SESSION,
      chatId: CHAT_ID,
      file: { url: signedLink(MEDIA_KEY), mimetype: "image/jpeg" },
    });
  });

  it("rejects a media message without a stored copy (media_not_stored), calling nothing", async () => {
    await expect(
      gateway.send(
        SESSION,
        message({ type: "image", mediaUrl: "https://cdn.example.test/a.jpg", media: null }),
      ),
    ).resolves.toEqual({ outcome: "rejected", reason: "media_not_stored", retryable: false });
    expect(received).toEqual([]);
  });

  it("is rejected with recipient_not_on_chatapp, without sending, when the number is not on the network", async () => {
    network.use(
      serve("get", "/api/contacts/check-exists", () =>
        HttpResponse.json({ numberExists: false, chatId: null }),
      ),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "rejected",
      reason: "recipient_not_on_chatapp",
      retryable: false,
    });
    expect(requests().map((r) => r.path)).toEqual([LOOKUP_PATH]);
  });

  it("is unknown when WAHA answers 500", async () => {
    network.use(
      exists(),
      serve("post", "/api/sendText", () => HttpResponse.text("engine crashed", { status: 500 })),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "unknown",
      reason: "gateway_http_500: POST /api/sendText: engine crashed",
    });
  });

  it("is unknown (gateway_timeout) when WAHA answers too late", async () => {
    network.use(
      exists(),
      serve("post", "/api/sendText", async () => {
        await delay(GATEWAY_TIMEOUT_MS + 200);
        return HttpResponse.json({ id: SENT_ID }, { status: 201 });
      }),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "unknown",
      reason: "gateway_timeout: POST /api/sendText",
    });
  });

  it("is rejected and retryable when the lookup times out: the send call was not made", async () => {
    network.use(
      serve("get", "/api/contacts/check-exists", async () => {
        await delay(GATEWAY_TIMEOUT_MS + 200);
        return HttpResponse.json({ numberExists: true, chatId: CHAT_ID });
      }),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "rejected",
      reason: `gateway_timeout: GET ${LOOKUP_PATH}`,
      retryable: true,
    });
  });

  it.each([
    [500, true],
    [503, true],
    [429, true],
    [422, false],
  ])(
    "is rejected when the lookup answers %i, retryable %s: the send call was not made",
    async (status, retryable) => {
      network.use(
        serve("get", "/api/contacts/check-exists", () => HttpResponse.text("lookup failed", { status })),
      );
      await expect(gateway.send(SESSION, message())).resolves.toEqual({
        outcome: "rejected",
        reason: `gateway_http_${status}: GET ${LOOKUP_PATH}: lookup failed`,
        retryable,
      });
      expect(requests().map((r) => r.path)).toEqual([LOOKUP_PATH]);
    },
  );

  it.each([408, 429])(
    "is rejected and retryable when the send call answers %i (turned away unprocessed)",
    async (status) => {
      network.use(
        exists(),
        serve("post", "/api/sendText", () => HttpResponse.text("busy", { status })),
      );
      await expect(gateway.send(SESSION, message())).resolves.toEqual({
        outcome: "rejected",
        reason: `gateway_http_${status}: POST /api/sendText: busy`,
        retryable: true,
      });
    },
  );

  it("is unknown (gateway_bad_response) when a 2xx carries no message id (github.com/devlikeapro/waha/issues/1087)", async () => {
    network.use(
      exists(),
      serve("post", "/api/sendText", () => new HttpResponse(null, { status: 201 })),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "unknown",
      reason: "gateway_bad_response: POST /api/sendText",
    });
  });

  it("is unknown when WAHA cannot be reached", async () => {
    network.use(
      exists(),
      serve("post", "/api/sendText", () => HttpResponse.error()),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "unknown",
      reason: expect.stringMatching(/^gateway_unreachable: POST \/api\/sendText: /),
    });
  });

  it("is rejected, not retryable, with the gateway's reason for another 4xx", async () => {
    network.use(
      exists(),
      serve("post", "/api/sendText", () =>
        HttpResponse.text("Session status is not as expected", { status: 422 }),
      ),
    );
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "rejected",
      reason: "gateway_http_422: POST /api/sendText: Session status is not as expected",
      retryable: false,
    });
  });
});

describe("check", () => {
  async function checked(respond: () => Response): Promise<{ event: GatewayEvent | null; before: number }> {
    network.use(serve("get", "/api/sessions/:name", respond));
    const before = Date.now();
    const event = await gateway.check(SESSION);
    expect(requests()).toEqual([{ method: "GET", path: SESSION_PATH, body: undefined }]);
    if (event) expect(event.at).toBeGreaterThanOrEqual(before);
    return { event, before };
  }

  it("maps WORKING to linked with the account", async () => {
    const { event } = await checked(() => sessionInfo("WORKING", WORKING_ME));
    expect(event).toEqual({ type: "linked", phoneNumber: PHONE, displayName: "Corner Shop", at: event?.at });
  });

  it.each([
    ["SCAN_QR_CODE", { type: "qr", qr: null }],
    ["STOPPED", { type: "dropped", reason: "gateway_stopped", loggedOut: false }],
    ["FAILED", { type: "failed", reason: "gateway_failed" }],
  ])("maps %s", async (status, expected) => {
    const { event } = await checked(() => sessionInfo(status));
    expect(event).toEqual({ ...expected, at: event?.at });
  });

  it("answers null while the session is STARTING", async () => {
    const { event } = await checked(() => sessionInfo("STARTING"));
    expect(event).toBeNull();
  });

  it("maps a session WAHA does not know (404) to dropped and logged out", async () => {
    const { event } = await checked(() =>
      HttpResponse.json({ message: "Session not found" }, { status: 404 }),
    );
    expect(event).toEqual({
      type: "dropped",
      reason: "gateway_session_missing",
      loggedOut: true,
      at: event?.at,
    });
  });

  it("propagates other failures", async () => {
    network.use(serve("get", "/api/sessions/:name", () => HttpResponse.json({}, { status: 503 })));
    const error = await gatewayError(gateway.check(SESSION));
    expect([error.reason, error.permanent]).toEqual(["gateway_http_503", false]);
  });
});

describe("verifyWahaSignature", () => {
  // The example of WAHA's docs ("Events → HMAC authentication").
  const BODY = '{"event":"message","session":"default","engine":"WEBJS"}';
  const KEY = "my-secret-key";
  const HMAC =
    "208f8a55dde9e05519e898b10b89bf0d0b3b0fdf11fdbf09b6b90476301b98d8097c462b2b17a6ce93b6b47a136cf2e78a33a63f6752c2c1631777076153fa89";

  it("accepts the hex HMAC-SHA512 of the raw body, in any case", async () => {
    await expect(verifyWahaSignature(BODY, HMAC, KEY)).resolves.toBe(true);
    await expect(verifyWahaSignature(BODY, HMAC.toUpperCase(), KEY)).resolves.toBe(true);
  });

  it("rejects a signature of another body or under another key", async () => {
    await expect(verifyWahaSignature(`${BODY} `, HMAC, KEY)).resolves.toBe(false);
    await expect(verifyWahaSignature(BODY, HMAC, "other-key")).resolves.toBe(false);
    await expect(verifyWahaSignature(BODY, `${HMAC.slice(0, -1)}0`, KEY)).resolves.toBe(false);
  });

  it("rejects a missing signature", async () => {
    await expect(verifyWahaSignature(BODY, null, KEY)).resolves.toBe(false);
    await expect(verifyWahaSignature(BODY, undefined, KEY)).resolves.toBe(false);
    await expect(verifyWahaSignature(BODY, "", KEY)).resolves.toBe(false);
  });

  it("rejects a signature of the wrong length", async () => {
    await expect(verifyWahaSignature(BODY, HMAC.slice(0, 64), KEY)).resolves.toBe(false);
    await expect(verifyWahaSignature(BODY, `${HMAC}00`, KEY)).resolves.toBe(false);
  });
});

describe("parseWahaEvent", () => {
  const AT = 1741249702485;

  /** A webhook body shaped as "Events → Event Payload → Structure". */
  function envelope(event: string, payload: unknown, overrides: Record<string, unknown> = {}) {
    return {
      id: "evt_01jnqz8y7k3m2x9v4w5t6r7s8p",
      timestamp: AT,
      event,
      session: SESSION,
      metadata: {},
      me: WORKING_ME,
      payload,
      environment: { tier: "PLUS", version: "2025.3.1", engine: "NOWEB" },
      engine: "NOWEB",
      ...overrides,
    };
  }

  function status(value: string, overrides: Record<string, unknown> = {}) {
    return envelope(
      "session.status",
      {
        status: value,
        statuses: [
          { status: "STARTING", timestamp: AT - 1000 },
          { status: value, timestamp: AT },
        ],
      },
      overrides,
    );
  }

  describe("session.status", () => {
    it("maps SCAN_QR_CODE to a qr event without payload", () => {
      expect(parseWahaEvent(status("SCAN_QR_CODE", { me: null }))).toEqual({
        sessionId: SESSION,
        sentAt: AT,
        events: [{ type: "qr", qr: null, at: AT }],
      });
    });

    it("maps WORKING to linked with the envelope's account", () => {
      expect(parseWahaEvent(status("WORKING"))).toEqual({
        sessionId: SESSION,
        sentAt: AT,
        events: [{ type: "linked", phoneNumber: PHONE, displayName: "Corner Shop", at: AT }],
      });
    });

    it("gives no event for WORKING without an account", () => {
      expect(parseWahaEvent(status("WORKING", { me: undefined }))).toEqual({
        sessionId: SESSION,
        sentAt: AT,
        events: [],
      });
      expect(parseWahaEvent(status("WORKING", { me: { id: "123456789012345@lid", pushName: "x" } }))).toEqual(
        {
          sessionId: SESSION,
          sentAt: AT,
          events: [],
        },
      );
    });

    it("maps FAILED to failed", () => {
      expect(parseWahaEvent(status("FAILED"))?.events).toEqual([
        { type: "failed", reason: "gateway_failed", at: AT },
      ]);
    });

    it("maps STOPPED to dropped, not logged out", () => {
      expect(parseWahaEvent(status("STOPPED"))?.events).toEqual([
        { type: "dropped", reason: "gateway_stopped", loggedOut: false, at: AT },
      ]);
    });

    it("gives no event for STARTING", () => {
      expect(parseWahaEvent(status("STARTING"))).toEqual({ sessionId: SESSION, events: [], sentAt: AT });
    });
  });

  describe("message.ack", () => {
    const ID = "true_14155550123@c.us_4CC5EDD64BC22EBA6D639F2AF571346C";

    function ack(value: number, name: string) {
      return envelope("message.ack", {
        id: ID,
        from: "14155550123@c.us",
        participant: null,
        fromMe: true,
        ack: value,
        ackName: name,
      });
    }

    it.each([
      [-1, "ERROR", "failed", "gateway_ack_error"],
      [1, "SERVER", "sent", null],
      [2, "DEVICE", "delivered", null],
      [3, "READ", "read", null],
      [4, "PLAYED", "read", null],
    ])("maps ack %i (%s) to %s", (value, name, ackStatus, reason) => {
      expect(parseWahaEvent(ack(value, name))).toEqual({
        sessionId: SESSION,
        sentAt: AT,
        events: [{ type: "ack", providerMessageId: ID, status: ackStatus, reason, at: AT }],
      });
    });

    it("gives no event for ack 0 (PENDING)", () => {
      expect(parseWahaEvent(ack(0, "PENDING"))).toEqual({ sessionId: SESSION, events: [], sentAt: AT });
    });

    it("carries the id that send answered for the message (NOWEB)", async () => {
      network.use(
        serve("get", "/api/contacts/check-exists", () =>
          HttpResponse.json({ numberExists: true, chatId: "14155550123@c.us" }),
        ),
        serve("post", "/api/sendText", () =>
          HttpResponse.json(
            {
              key: {
                remoteJid: "14155550123@s.whatsapp.net",
                fromMe: true,
                id: "4CC5EDD64BC22EBA6D639F2AF571346C",
              },
            },
            { status: 201 },
          ),
        ),
      );
      const sent = await gateway.send(SESSION, {
        id: MESSAGE_ID,
        clientMessageId: clientMessageIdOf(MESSAGE_ID),
        to: CONTACT,
        type: "text",
        content: "Hi",
        mediaUrl: null,
        media: null,
      });
      expect(sent).toEqual({ outcome: "accepted", providerMessageId: ID });
      expect(parseWahaEvent(ack(3, "READ"))?.events).toEqual([
        { type: "ack", providerMessageId: ID, status: "read", reason: null, at: AT },
      ]);
    });
  });

  describe("message", () => {
    const ID = "false_14155550123@c.us_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

    function incoming(fields: Record<string, unknown>) {
      return envelope("message", {
        id: ID,
        timestamp: 1667561485,
        from: "14155550123@c.us",
        fromMe: false,
        source: "app",
        to: "4915112345678@c.us",
        body: "Hi there!",
        hasMedia: false,
        ack: 1,
        vCards: [],
        _data: {},
        ...fields,
      });
    }

    it("maps a text message from a contact to incoming", () => {
      expect(parseWahaEvent(incoming({}))).toEqual({
        sessionId: SESSION,
        sentAt: AT,
        events: [
          {
            type: "incoming",
            providerMessageId: ID,
            from: { phoneNumber: CONTACT },
            messageType: "text",
            content: "Hi there!",
            mediaUrl: null,
            at: AT,
          },
        ],
      });
    });

    it.each([
      ["image/jpeg", "image"],
      ["video/mp4", "video"],
      ["audio/ogg; codecs=opus", "audio"],
      ["application/pdf", "document"],
    ])(
      "maps media of type %s to %s, with its caption and type but not WAHA's own URL",
      (mimetype, messageType) => {
        const url = `http://localhost:3000/api/files/${SESSION}/${ID}.bin`;
        const batch = parseWahaEvent(
          incoming({
            body: "Check this out",
            hasMedia: true,
            media: { url, mimetype, filename: null, error: null },
          }),
        );
        expect(batch?.events).toEqual([
          {
            type: "incoming",
            providerMessageId: ID,
            from: { phoneNumber: CONTACT },
            messageType,
            content: "Check this out",
            mediaUrl: null,
            media: { mimetype, ref: `/api/files/${SESSION}/${ID}.bin` },
            at: AT,
          },
        ]);
      },
    );

    it("maps media WAHA did not download to a document without URL, content or type", () => {
      expect(parseWahaEvent(incoming({ body: "", hasMedia: true, media: null }))?.events).toEqual([
        {
          type: "incoming",
          providerMessageId: ID,
          from: { phoneNumber: CONTACT },
          messageType: "document",
          content: null,
          mediaUrl: null,
          media: { mimetype: null },
          at: AT,
        },
      ]);
    });

    it("ignores our own messages", () => {
      expect(parseWahaEvent(incoming({ fromMe: true }))).toEqual({
        sessionId: SESSION,
        events: [],
        sentAt: AT,
      });
    });

    it("names the sender by NOWEB's _data.pushName when given", () => {
      const events = parseWahaEvent(incoming({ _data: { pushName: "Jane" } }))?.events;
      expect(events?.[0]).toMatchObject({ from: { phoneNumber: CONTACT, name: "Jane" } });
    });

    it("maps a message from a LID chat to incoming from the LID, without a number", () => {
      const lid = "123456789012345@lid";
      const id = `false_${lid}_AAAAAAAAAAAAAAAAAAAA`;
      const batch = parseWahaEvent(
        incoming({ id, from: lid, _data: { key: { remoteJid: lid, fromMe: false }, pushName: "Jane" } }),
      );
      expect(batch?.events).toEqual([
        {
          type: "incoming",
          providerMessageId: id,
          from: { userId: lid, name: "Jane" },
          messageType: "text",
          content: "Hi there!",
          mediaUrl: null,
          at: AT,
        },
      ]);
      // A LID with a device part is the same user; `_data` of another shape gives no name.
      expect(
        parseWahaEvent(incoming({ from: "123456789012345:3@lid", _data: [] }))?.events?.[0],
      ).toMatchObject({
        from: { userId: lid },
      });
      expect(parseWahaEvent(incoming({ from: lid, _data: null }))?.events?.[0]?.type).toBe("incoming");
    });

    it.each([
      ["a group", "120363402931855007@g.us"],
      ["a status broadcast", "status@broadcast"],
      ["a channel", "120363417343416222@newsletter"],
    ])("ignores messages from %s", (_what, from) => {
      expect(parseWahaEvent(incoming({ from }))).toEqual({ sessionId: SESSION, events: [], sentAt: AT });
    });
  });

  it("answers an empty batch for events it does not map", () => {
    expect(parseWahaEvent(envelope("presence.update", { id: "14155550123@c.us", presences: [] }))).toEqual({
      sessionId: SESSION,
      sentAt: AT,
      events: [],
    });
  });

  it("answers null for a body that is not a WAHA envelope", () => {
    expect(parseWahaEvent(null)).toBeNull();
    expect(parseWahaEvent("message")).toBeNull();
    expect(parseWahaEvent({})).toBeNull();
    expect(parseWahaEvent({ event: "message", session: SESSION, payload: {} })).toBeNull();
    expect(parseWahaEvent(envelope("message", {}, { timestamp: "1741249702485" }))).toBeNull();
    expect(parseWahaEvent(envelope("message", {}, { session: "" }))).toBeNull();
  });

  it("answers null for a known event whose payload lacks the fields it needs", () => {
    expect(parseWahaEvent(envelope("session.status", { status: "READY" }))).toBeNull();
    expect(parseWahaEvent(envelope("message.ack", { id: "x" }))).toBeNull();
    expect(parseWahaEvent(envelope("message", { id: "x", fromMe: false }))).toBeNull();
  });
});
