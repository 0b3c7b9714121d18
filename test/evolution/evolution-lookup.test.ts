import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { EvolutionGateway } from "../../src/gateways/evolution";
import type { OutboundMessage, SentQuery } from "../../src/gateways/gateway";
import { EVOLUTION_API_KEY, EVOLUTION_SETTINGS, EVOLUTION_URL } from "../gateway-config";
import { useNetwork } from "../network";
import { FakeEvolution } from "./fake-evolution";

// Exactly-once sends through Evolution API against the fake server (fake-evolution.ts): what a
// send comes to when the server fails at each point, and how `lookup` settles it by
// `POST /chat/findMessages` (src/gateways/evolution/lookup.ts).

useNetwork();

const SESSION = "session_5d0c2b1a-3e4f-4a5b-8c6d-7e8f9a0b1c2d";
const OWNER = "+447911123456";
const CONTACT = "+447911123457";

const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

let evolution: FakeEvolution;
beforeEach(async () => {
  evolution = new FakeEvolution().install();
  await gateway.create(SESSION);
  evolution.link(SESSION, OWNER);
});

function message(overrides: Partial<OutboundMessage> = {}): SentQuery {
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

describe("Evolution send: the client id", () => {
  it("every send carries messageId = clientMessageIdOf(our id), and the message is stored under it", async () => {
    const text = message();
    const image = message({
      type: "image",
      mediaUrl: "https://cdn.example.test/a.jpg",
      media: { key: crypto.randomUUID(), contentType: "image/jpeg" },
      content: "Look",
    });
    const audio = message({
      type: "audio",
      mediaUrl: "https://cdn.example.test/v.ogg",
      media: { key: crypto.randomUUID(), contentType: "audio/ogg" },
      content: null,
    });

    for (const sent of [text, image, audio]) await gateway.send(SESSION, sent);

    expect(evolution.bodies.filter((b) => b.call.startsWith("POST /message/")).map((b) => b.body)).toEqual([
      expect.objectContaining({ messageId: clientMessageIdOf(text.id) }),
      expect.objectContaining({ messageId: clientMessageIdOf(image.id) }),
      expect.objectContaining({ messageId: clientMessageIdOf(audio.id) }),
    ]);
    expect(await gateway.send(SESSION, text)).toEqual({
      outcome: "accepted",
      providerMessageId: text.clientMessageId,
    });
  });

  it("a resend with the same id answers the same message and stores no second one", async () => {
    const sent = message();
    const first = await gateway.send(SESSION, sent);
    const again = await gateway.send(SESSION, sent);

    expect(first).toEqual({ outcome: "accepted", providerMessageId: sent.clientMessageId });
    expect(again).toEqual(first);
    expect(evolution.sent.map((s) => s.id)).toEqual([sent.clientMessageId]);
  });

  it("the fake refuses a body field Evolution's DTOs do not know (v1's options object)", async () => {
    const response = await fetch(`${EVOLUTION_URL}/message/sendText/${SESSION}`, {
      method: "POST",
      headers: { apikey: EVOLUTION_API_KEY, "Content-Type": "application/json" },
      body: JSON.stringify({ number: "447911123457", text: "Hi", options: { messageId: "3EB0ABC" } }),
    });
    expect(response.status).toBe(400);
    expect(evolution.sent).toEqual([]);
  });
});

describe("Evolution send: outcome per fault", () => {
  it.each([
    ["error", /^gateway_http_500/, false],
    ["hang", /^gateway_timeout/, false],
    ["lost", /^gateway_unreachable/, true],
    ["garbage", /^gateway_bad_response/, true],
  ] as const)("%s → unknown (%s); stored: %s", async (fault, reason, stored) => {
    evolution.sendFault = fault;
    const sent = message();

    const outcome = await gateway.send(SESSION, sent);

    expect(outcome).toEqual({ outcome: "unknown", reason: expect.stringMatching(reason) });
    expect(evolution.sent.map((s) => s.id)).toEqual(stored ? [sent.clientMessageId] : []);
  });
});

describe("Evolution lookup", () => {
  it.each(["lost", "garbage"] as const)(
    "finds a message whose answer was lost (%s), by its id",
    async (fault) => {
      evolution.sendFault = fault;
      const sent = message();
      expect((await gateway.send(SESSION, sent)).outcome).toBe("unknown");
      evolution.sendFault = null;

      await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({
        result: "found",
        providerMessageId: sent.clientMessageId,
      });
      expect(evolution.bodies.find((b) => b.call.startsWith("POST /chat/findMessages"))?.body).toEqual({
        where: { key: { id: sent.clientMessageId, fromMe: true } },
      });
    },
  );

  it.each(["error", "hang"] as const)("answers absent for a message never stored (%s)", async (fault) => {
    evolution.sendFault = fault;
    const sent = message();
    expect((await gateway.send(SESSION, sent)).outcome).toBe("unknown");
    evolution.sendFault = null;

    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({ result: "absent" });
  });

  it("answers absent when only another message of ours to that chat was stored", async () => {
    await gateway.send(SESSION, message({ content: "Another text" }));

    await expect(gateway.lookup(SESSION, message())).resolves.toEqual({ result: "absent" });
  });

  it("finds a voice note, which Evolution sends under an id of its own, by chat, time and type", async () => {
    evolution.sendFault = "lost";
    const sent = message({
      type: "audio",
      mediaUrl: "https://cdn.example.test/v.ogg",
      media: { key: crypto.randomUUID(), contentType: "audio/ogg" },
      content: null,
    });
    await gateway.send(SESSION, sent);
    evolution.sendFault = null;
    // Evolution's `audioWhatsapp` does not pass messageId on: the stored id is Baileys' own.
    const stored = evolution.sent[0];
    if (!stored) throw new Error("not stored");
    stored.id = "3EB0F00DFACEB00C123456";
    stored.record.key.id = stored.id;

    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({
      result: "found",
      providerMessageId: "3EB0F00DFACEB00C123456",
    });
  });

  it("finds a captioned image whose answer was lost", async () => {
    evolution.sendFault = "garbage";
    const sent = message({
      type: "image",
      mediaUrl: "https://cdn.example.test/a.jpg",
      media: { key: crypto.randomUUID(), contentType: "image/jpeg" },
      content: "Look",
    });
    await gateway.send(SESSION, sent);
    evolution.sendFault = null;

    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({
      result: "found",
      providerMessageId: sent.clientMessageId,
    });
  });

  it("is unreachable when Evolution is down, or does not know the instance", async () => {
    const sent = message();
    await gateway.send(SESSION, sent);
    evolution.down = true;
    await expect(gateway.lookup(SESSION, sent)).resolves.toEqual({
      result: "unreachable",
      reason: expect.stringMatching(/^gateway_http_503/),
    });

    evolution.down = false;
    await expect(gateway.lookup("session_00000000-0000-4000-8000-000000000000", sent)).resolves.toEqual({
      result: "unreachable",
      reason: expect.stringMatching(/^gateway_http_404/),
    });
  });
});
