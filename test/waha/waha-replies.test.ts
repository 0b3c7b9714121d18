import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import type { SentQuery } from "../../src/gateways/gateway";
import { WahaGateway } from "../../src/gateways/waha";
import { accountD1 } from "../databases";
import { WAHA_SETTINGS } from "../gateway-config";
import { call, createAccount } from "../helpers";
import { balanceOf, getMessage, type SendResponse, sendText, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import {
  connectedWahaSession,
  FakeWaha,
  postWahaEvent,
  wahaReactionPayload,
  wahaReplyPayload,
} from "./fake-waha";

// Replies and reactions through WAHA (docs/messages.md, Replies and reactions), against the fake server
// (fake-waha.ts): `reply_to` on sends, `PUT /api/reaction`, and the `message` (with `replyTo`) and
// `message.reaction` webhooks.

useNetwork();

const CONTACT = "+14155550123";
const DIGITS = "14155550123";

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

/** An account, a connected WAHA session and one text sent to {@link CONTACT}, `sent`. */
async function withSentText() {
  const { key, accountId } = await createAccount(10);
  const session = await connectedWahaSession(waha, key);
  const id = (await sendText(key, session.id, [CONTACT])).body.data.messages[0]?.id ?? "";
  const [sent] = await waitForMessages(key, [id]);
  expect(sent?.status).toBe("sent");
  return { key, accountId, session, sent: sent ?? (await getMessage(key, id)) };
}

async function reactionEvents(key: string) {
  const res = await call<{ data: { data: Record<string, string> }[] }>(
    "GET",
    "/v1/events?limit=100&filter[type]=message.reaction",
    { key },
  );
  return res.body.data.map((event) => event.data).reverse();
}

describe("WAHA: sending replies and reactions", () => {
  it("a reply carries the quoted message's WAHA id as reply_to", async () => {
    const { key, session, sent } = await withSentText();
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [CONTACT],
        type: "text",
        content: "As I said",
        reply_to: sent.id,
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    expect((await waitForMessages(key, [id]))[0]?.status).toBe("sent");
    const body = waha.sent.at(-1)?.body;
    expect(body).toEqual({
      session: session.name,
      chatId: `${DIGITS}@c.us`,
      text: "As I said",
      id: clientMessageIdOf(id),
      reply_to: sent.provider_message_id,
    });
  });

  it("a reaction is PUT /api/reaction on the message's WAHA id, without a number lookup, and ends sent", async () => {
    const { key, accountId, session, sent } = await withSentText();
    const checks = waha.checked.length;
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        type: "reaction",
        reaction: { message_id: sent.id, emoji: "🔥" },
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = await waitForMessages(key, [id]);
    expect(waha.reactions).toEqual([
      { session: session.name, messageId: sent.provider_message_id, reaction: "🔥", id: expect.any(String) },
    ]);
    expect(done).toMatchObject({ status: "sent", provider_message_id: waha.reactions[0]?.id });
    expect(waha.checked.length).toBe(checks);
    expect(await balanceOf(accountId)).toBeCloseTo(9.98, 2);
  });
});

describe("WAHA gateway: a reaction whose answer was lost", () => {
  const SESSION = "session_6e1d3c2b-4f5a-4b6c-9d7e-8f9a0b1c2d3e";
  const gateway = new WahaGateway(WAHA_SETTINGS, { intervalMs: 5, polls: 3 });

  function reaction(emoji: string): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "reaction",
      content: emoji,
      mediaUrl: null,
      media: null,
      replyTo: { providerMessageId: `true_${DIGITS}@c.us_3EB0AAAA`, fromMe: true },
      since: Date.now(),
    };
  }

  it("is unknown, answers absent to a lookup (WAHA lists no reactions) and is set again: the same state", async () => {
    waha.sessions.set(SESSION, { status: "WORKING", me: null, qrCount: 0, webhooks: [] });
    const query = reaction("👍");
    waha.sendFault = "lost";
    expect(await gateway.send(SESSION, query)).toEqual({
      outcome: "unknown",
      reason: expect.stringMatching(/^gateway_unreachable/),
    });
    waha.sendFault = null;
    expect(await gateway.lookup(SESSION, query)).toEqual({ result: "absent" });
    // No chat listing was asked: reactions are not messages of the chat.
    expect(waha.calls.filter((c) => c.includes("/chats/"))).toEqual([]);
    expect(await gateway.send(SESSION, query)).toMatchObject({ outcome: "accepted" });
    expect(waha.reactions.map((r) => [r.messageId, r.reaction])).toEqual([
      [`true_${DIGITS}@c.us_3EB0AAAA`, "👍"],
      [`true_${DIGITS}@c.us_3EB0AAAA`, "👍"],
    ]);
  });

  it("an engine that answers no message gets our id for the reaction; a refusal is rejected", async () => {
    waha.sessions.set(SESSION, { status: "WORKING", me: null, qrCount: 0, webhooks: [] });
    const query = reaction("");
    const { network } = await import("../network");
    const { http, HttpResponse } = await import("msw");
    network.use(http.put(`${WAHA_SETTINGS.url}/api/reaction`, () => new HttpResponse(null, { status: 200 })));
    expect(await gateway.send(SESSION, query)).toEqual({
      outcome: "accepted",
      providerMessageId: `reaction_${query.clientMessageId}`,
    });
    network.use(
      http.put(`${WAHA_SETTINGS.url}/api/reaction`, () =>
        HttpResponse.json({ message: "Message not found" }, { status: 404 }),
      ),
    );
    expect(await gateway.send(SESSION, query)).toMatchObject({ outcome: "rejected", retryable: false });
    expect(await gateway.send(SESSION, { ...query, replyTo: null })).toEqual({
      outcome: "rejected",
      reason: "reaction_without_message",
      retryable: false,
    });
  });
});

describe("WAHA: incoming replies and reactions", () => {
  it("a contact's reply quoting our message is stored with reply_to", async () => {
    const { key, accountId, session, sent } = await withSentText();
    const bare = (sent.provider_message_id ?? "").split("_").at(-1) ?? "";
    await postWahaEvent(session.name, "message", wahaReplyPayload(DIGITS, "Got it", bare));
    const row = await (await accountD1(accountId))
      .prepare("SELECT id, reply_to AS replyTo FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string; replyTo: string | null }>();
    expect(row?.replyTo).toBe(sent.id);
    const shown = await call<{ data: { reply_to: string; content: string } }>(
      "GET",
      `/v1/chatapp/messages/${row?.id}`,
      {
        key,
      },
    );
    expect(shown.body.data).toMatchObject({ reply_to: sent.id, content: "Got it" });
  });

  it("a reply quoting a message the session does not hold is stored without reply_to", async () => {
    const { accountId, session } = await withSentText();
    await postWahaEvent(session.name, "message", wahaReplyPayload(DIGITS, "Re: old", "NOTOURS1"));
    const row = await (await accountD1(accountId))
      .prepare(
        "SELECT reply_to AS replyTo, content FROM messages WHERE account_id = ? AND direction = 'incoming'",
      )
      .bind(accountId)
      .first<{ replyTo: string | null; content: string }>();
    expect(row).toEqual({ replyTo: null, content: "Re: old" });
  });

  it("message.reaction: recorded once in metadata and as one event, however often WAHA delivers it", async () => {
    const { key, session, sent } = await withSentText();
    const payload = wahaReactionPayload(DIGITS, sent.provider_message_id ?? "", "🙏");
    const timestamp = Date.now();
    for (let i = 0; i < 3; i++) {
      const res = await postWahaEvent(session.name, "message.reaction", payload, { timestamp });
      expect(res.body).toEqual({ success: true, ignored: false });
    }
    const shown = (await getMessage(key, sent.id)) as unknown as { metadata: { reactions: unknown } };
    expect(shown.metadata.reactions).toEqual([
      { from: CONTACT, emoji: "🙏", at: new Date(timestamp).toISOString().replace("Z", "000Z") },
    ]);
    expect(await reactionEvents(key)).toEqual([
      { message_id: sent.id, session_id: session.id, from: CONTACT, emoji: "🙏", at: expect.any(String) },
    ]);
    // Taken off later: a second event; an older add delivered late changes nothing.
    await postWahaEvent(
      session.name,
      "message.reaction",
      { ...payload, reaction: { ...payload.reaction, text: "" } },
      {
        timestamp: timestamp + 1_000,
      },
    );
    await postWahaEvent(session.name, "message.reaction", payload, { timestamp: timestamp + 500 });
    expect(
      ((await getMessage(key, sent.id)) as unknown as { metadata: { reactions: unknown } }).metadata
        .reactions,
    ).toEqual([]);
    expect((await reactionEvents(key)).map((e) => e.emoji)).toEqual(["🙏", ""]);
  });

  it("a reaction on a message the session does not hold is ignored; our own (fromMe) is skipped", async () => {
    const { key, session, sent } = await withSentText();
    const unknown = await postWahaEvent(
      session.name,
      "message.reaction",
      wahaReactionPayload(DIGITS, `false_${DIGITS}@c.us_NOTOURS2`, "👍"),
    );
    expect(unknown.status).toBe(200);
    await postWahaEvent(session.name, "message.reaction", {
      ...wahaReactionPayload(DIGITS, sent.provider_message_id ?? "", "👍"),
      fromMe: true,
    });
    expect(await reactionEvents(key)).toEqual([]);
    expect(
      ((await getMessage(key, sent.id)) as unknown as { metadata: Record<string, unknown> }).metadata
        .reactions,
    ).toBeUndefined();
  });
});
