import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import type { OutboundMessage } from "../../src/gateways/gateway";
import { WahaGateway } from "../../src/gateways/waha";
import { WAHA_SETTINGS } from "../gateway-config";
import { createAccount } from "../helpers";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha } from "./fake-waha";

// Sending to a user WAHA names by LID (`<digits>@lid`, src/lib/contact-identity.ts `LID_PATTERN`),
// at the gateway, against the fake server (fake-waha.ts, which refuses a chat id WAHA's docs do not
// allow): the LID is the chat id as it is, for the send, its lookup and "typing…". This drives the
// WAHA gateway directly; the public API's send to a LID (`to_user_id`): waha-lids.test.ts.

useNetwork();

const LID = "120363025246125888@lid";

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

describe("WAHA: sending to a LID (gateway)", () => {
  const gateway = new WahaGateway(WAHA_SETTINGS, { intervalMs: 5, polls: 3 });
  const MESSAGE_ID = "0190a5f2-7c1e-4b3a-9d4e-2f6a8b1c3d5e";

  function message(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
    return {
      id: MESSAGE_ID,
      clientMessageId: clientMessageIdOf(MESSAGE_ID),
      to: LID,
      type: "text",
      content: "Hi Jane",
      mediaUrl: null,
      media: null,
      ...overrides,
    };
  }

  it("sends to the LID as the chat id, without a number lookup, replying to the LID's message", async () => {
    const { key } = await createAccount(1);
    const session = await connectedWahaSession(waha, key);
    const quoted = `false_${LID}_297A4A9CC7BD7B111D49B72C8832D6D3`;
    const sent = await gateway.send(
      session.name,
      message({ replyTo: { providerMessageId: quoted, fromMe: false } }),
    );
    const id = `true_${LID}_${clientMessageIdOf(MESSAGE_ID)}`;
    expect(sent).toEqual({ outcome: "accepted", providerMessageId: id });
    expect(waha.checked).toEqual([]);
    expect(waha.sent.map((s) => [s.path, s.chatId, s.body])).toEqual([
      [
        "/api/sendText",
        LID,
        {
          session: session.name,
          chatId: LID,
          text: "Hi Jane",
          id: clientMessageIdOf(MESSAGE_ID),
          reply_to: quoted,
        },
      ],
    ]);
    // An unknown outcome is settled in the LID's chat too.
    expect(await gateway.lookup(session.name, { ...message(), since: Date.now() - 60_000 })).toEqual({
      result: "found",
      providerMessageId: id,
    });
    // So is "typing…".
    expect(await gateway.typing(session.name, LID, "start")).toEqual({ shown: true });
    expect(waha.typing.map((t) => [t.state, t.chatId])).toEqual([["start", LID]]);
  });

  it("sends media to the LID's chat too, and a reaction on a message of that chat", async () => {
    const { key } = await createAccount(1);
    const session = await connectedWahaSession(waha, key);
    const image = await gateway.send(
      session.name,
      message({ type: "image", content: "look", media: { key: "k", contentType: "image/jpeg" } }),
    );
    expect(image).toMatchObject({ outcome: "accepted" });
    expect(waha.sent.map((s) => [s.path, s.chatId])).toEqual([["/api/sendImage", LID]]);
    const quoted = `false_${LID}_297A4A9CC7BD7B111D49B72C8832D6D3`;
    const reacted = await gateway.send(
      session.name,
      message({ type: "reaction", content: "🙏", replyTo: { providerMessageId: quoted, fromMe: false } }),
    );
    expect(reacted).toMatchObject({ outcome: "accepted" });
    expect(waha.reactions.map((r) => [r.messageId, r.reaction, r.id.startsWith(`true_${LID}_`)])).toEqual([
      [quoted, "🙏", true],
    ]);
    expect(waha.checked).toEqual([]);
  });
});
