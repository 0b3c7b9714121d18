import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import type { SentQuery } from "../../src/gateways/gateway";
import { WahaGateway } from "../../src/gateways/waha";
import { WAHA_SETTINGS, WAHA_URL } from "../gateway-config";
import { network, useNetwork } from "../network";
import { FakeWaha } from "./fake-waha";

// Exactly-once sends through WAHA against the fake server (fake-waha.ts): what a send comes to
// when the server fails at each point, and how `lookup` settles it by the chat's messages
// (src/gateways/waha/lookup.ts).

useNetwork();

const SESSION = "session_6e1d3c2b-4f5a-4b6c-9d7e-8f9a0b1c2d3e";
const CONTACT = "+14155550123";
const CHAT_ID = "14155550123@c.us";

const gateway = new WahaGateway(WAHA_SETTINGS, { intervalMs: 5, polls: 3 });

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
  waha.sessions.set(SESSION, { status: "WORKING", me: null, qrCount: 0, webhooks: [] });
});

function message(overrides: Partial<SentQuery> = {}): SentQuery {
  const id = crypto.randomUUID();
  return {
    id,
    clientMessageId: clientMessageIdOf(id),
    to: CONTACT,
    type: "text",
    content: "Your code is 123456",
    mediaUrl: null,
    media: null,
    since: Date.now(),
    ...overrides,
  };
}

const image = () =>
  message({
    type: "image",
    mediaUrl: "https://cdn.example.test/a.jpg",
    media: { key: crypto.randomUUID(), contentType: "image/jpeg" },
    content: "Look",
  });

describe("WAHA send: outcome per fault", () => {
  it.each([
    ["error", /^gateway_http_500/, false],
    ["hang", /^gateway_timeout/, false],
    ["lost", /^gateway_unreachable/, true],
    ["garbage", /^gateway_bad_response/, true],
  ] as const)("%s → unknown (%s); stored: %s", async (fault, reason, stored) => {
    waha.sendFault = fault;
    await expect(gateway.send(SESSION, message())).resolves.toEqual({
      outcome: "unknown",
      reason: expect.stringMatching(reason),
    });
    expect(waha.sent).toHaveLength(stored ? 1 : 0);
  });

  it("a text carries our client id as id, and a resend with it stores no second message", async () => {
    const sent = message();
    const first = await gateway.send(SESSION, sent);
    const again = await gateway.send(SESSION, sent);

    const id = `true_${CHAT_ID}_${sent.clientMessageId}`;
    expect(first).toEqual({ outcome: "accepted", providerMessageId: id });
    expect(again).toEqual(first);
    expect(waha.sent.map((s) => s.id)).toEqual([id]);
  });
});

describe("WAHA lookup", () => {
  it.each(["lost", "garbage"] as const)(
    "finds a text whose answer was lost (%s), by its id",
    async (fault) => {
      waha.sendFault = fault;
      const sent = message();
      await gateway.send(SESSION, sent);
      waha.sendFault = null;

      await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({
        result: "found",
        providerMessageId: `true_${CHAT_ID}_${sent.clientMessageId}`,
      });
      const list = waha.calls.filter((c) => c.includes("/chats/"));
      // "Remember to escape `@` in `chatId` … with `%40`" (WAHA docs, Chats).
      expect(list).toEqual([`GET /api/${SESSION}/chats/${encodeURIComponent(CHAT_ID)}/messages`]);
    },
  );

  it("asks for our messages of the chat since the first attempt, without media", async () => {
    const sent = message({ since: 1_767_225_600_999 });
    let query: URLSearchParams | null = null;
    network.use(
      http.get(`${WAHA_URL}/api/:name/chats/:chatId/messages`, ({ request }) => {
        query = new URL(request.url).searchParams;
        return HttpResponse.json([]);
      }),
    );
    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({ result: "absent" });
    expect(Object.fromEntries(query ?? [])).toEqual({
      limit: "100",
      offset: "0",
      downloadMedia: "false",
      "filter.fromMe": "true",
      "filter.timestamp.gte": "1767225600",
    });
  });

  it("finds media, which WAHA sends under its own id, by caption", async () => {
    waha.sendFault = "lost";
    const sent = image();
    await gateway.send(SESSION, sent);
    waha.sendFault = null;

    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({
      result: "found",
      providerMessageId: waha.sent[0]?.id,
    });
  });

  it.each(["error", "hang"] as const)("answers absent for a message never stored (%s)", async (fault) => {
    waha.sendFault = fault;
    const sent = message();
    await gateway.send(SESSION, sent);
    waha.sendFault = null;

    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({ result: "absent" });
  });

  it("answers absent when only other messages of ours to that chat were stored", async () => {
    await gateway.send(SESSION, message({ content: "Another text" }));
    await gateway.send(SESSION, image());

    await expect(gateway.lookup(SESSION, message())).resolves.toEqual({ result: "absent" });
  });

  it("answers absent for a number not on the network (a resend is rejected by the same check)", async () => {
    await expect(gateway.lookup(SESSION, message({ to: "+14155550000" }))).resolves.toEqual({
      result: "absent",
    });
  });

  it("is unreachable when WAHA is down", async () => {
    const sent = message();
    await gateway.send(SESSION, sent);
    waha.down = true;

    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({
      result: "unreachable",
      reason: expect.stringMatching(/^gateway_http_503/),
    });
  });

  it("is unreachable when the session is unknown to WAHA's messages list", async () => {
    const sent = message();
    await gateway.send(SESSION, sent);
    waha.sessions.delete(SESSION);

    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({
      result: "unreachable",
      reason: expect.stringMatching(/^gateway_http_404/),
    });
  });
});
