import { runDurableObjectAlarm } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { call, createAccount, sessionStub } from "../helpers";
import { balanceOf, firstAttempts, getMessage, type SendResponse, sendText } from "../message-fixtures";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha, postWahaEvent } from "./fake-waha";

// Receipts for messages whose send outcome is unknown (docs/exactly-once.md, Exactly once): a text's WAHA id
// carries our client id (`true_{chatId}_{clientId}`), so its `message.ack` settles it (`status_webhook`); a
// media message's id does not, so its receipt is kept until the lookup settles the message, and
// applied then, never dropped.

useNetwork();

const CONTACT = "+14155550123";

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

describe("a receipt for a message whose outcome is unknown", () => {
  it("a text's receipt settles it (status_webhook): delivered, stored once, no lookup", async () => {
    const { key, accountId } = await createAccount(10);
    const { id: session, name } = await connectedWahaSession(waha, key);
    waha.sendFault = "lost";
    const id = (await sendText(key, session, [CONTACT])).body.data.messages[0]?.id ?? "";
    await firstAttempts([id]);
    waha.sendFault = null;
    const providerId = waha.sent[0]?.id ?? "";

    await postWahaEvent(name, "message.ack", { id: providerId, ack: 2, ackName: "DEVICE", fromMe: true });
    expect(await getMessage(key, id)).toMatchObject({
      status: "delivered",
      provider_message_id: providerId,
      metadata: { attempts: 1, settled_by: "status_webhook" },
    });
    await runDurableObjectAlarm(sessionStub(session));
    expect(waha.calls.filter((c) => c.includes("/messages"))).toEqual([]);
    expect(waha.sent).toHaveLength(1);
    expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);
  });

  it("a media message's receipts wait for the lookup, then apply: read, settled by lookup", async () => {
    const { key, accountId } = await createAccount(10);
    const { id: session, name } = await connectedWahaSession(waha, key);
    waha.sendFault = "lost";
    const sent = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_number: [CONTACT],
        type: "image",
        media_url: "https://cdn.example.test/photo.jpg",
        content: "Look",
      },
    });
    expect(sent.status).toBe(201);
    const id = sent.body.data.messages[0]?.id ?? "";
    await firstAttempts([id]);
    waha.sendFault = null;
    const providerId = waha.sent[0]?.id ?? "";

    // Both receipts arrive while the outcome is unknown: D1 knows no message by that id yet.
    await postWahaEvent(name, "message.ack", { id: providerId, ack: 2, ackName: "DEVICE", fromMe: true });
    await postWahaEvent(name, "message.ack", { id: providerId, ack: 3, ackName: "READ", fromMe: true });
    expect(await getMessage(key, id)).toMatchObject({ status: "queued", metadata: { outcome: "unknown" } });

    // The lookup settles it; its outcome (written a moment later: the `sync` deadline) brings the
    // receipts with it.
    for (let i = 0; i < 3 && (await getMessage(key, id)).status === "queued"; i++) {
      await runDurableObjectAlarm(sessionStub(session));
    }
    const read = await getMessage(key, id);
    expect(read).toMatchObject({
      status: "read",
      provider_message_id: providerId,
      metadata: { attempts: 1, settled_by: "lookup" },
    });
    expect(read.delivered_at).not.toBeNull();
    expect(read.read_at).not.toBeNull();
    expect(waha.sent).toHaveLength(1);
    expect(await balanceOf(accountId)).toBe(sent.body.data.new_balance);
  });
});
