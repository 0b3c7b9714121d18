import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { EvolutionGateway } from "../../src/gateways/evolution";
import type { SentQuery } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { EVOLUTION_SETTINGS } from "../gateway-config";
import { call, createAccount, createSession } from "../helpers";
import { balanceOf, getMessage, type SendResponse, sendText, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Replies and reactions through Evolution API (docs/messages.md, Replies and reactions), against the fake
// server (fake-evolution.ts): `quoted` on sends, `POST /message/sendReaction/{instance}`, and the
// `messages.upsert` webhooks of a reply (`contextInfo.stanzaId`) and of a reaction
// (`reactionMessage`).

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const CONTACT_JID = "14155550123@s.whatsapp.net";

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

async function connectedEvolutionSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
    sender: OWNER_JID,
  });
  return { id: session.id, name };
}

async function withSentText() {
  const { key, accountId } = await createAccount(10);
  const session = await connectedEvolutionSession(key);
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

describe("Evolution API: sending replies and reactions", () => {
  it("a reply carries quoted.key of the message (id, the chat's JID, fromMe)", async () => {
    const { key, accountId, session, sent } = await withSentText();
    // An incoming message of the same chat can be quoted too (fromMe false).
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingText(session.name, "3EB0THEIRS01", CONTACT, "Hi"),
    );
    const theirs = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>();
    for (const [replyTo, quotedKey] of [
      [sent.id, { id: sent.provider_message_id, remoteJid: CONTACT_JID, fromMe: true }],
      [theirs?.id, { id: "3EB0THEIRS01", remoteJid: CONTACT_JID, fromMe: false }],
    ] as const) {
      const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
        key,
        body: {
          chatapp_session_id: session.id,
          to_number: [CONTACT],
          type: "text",
          content: "Re",
          reply_to: replyTo,
        },
      });
      expect(res.status).toBe(201);
      const id = res.body.data.messages[0]?.id ?? "";
      expect((await waitForMessages(key, [id]))[0]?.status).toBe("sent");
      expect(evolution.sent.at(-1)?.body).toEqual({
        number: "14155550123",
        text: "Re",
        messageId: clientMessageIdOf(id),
        quoted: { key: quotedKey },
      });
    }
  });

  it("a reaction is POST /message/sendReaction with the message's key, and ends sent under Evolution's id", async () => {
    const { key, accountId, session, sent } = await withSentText();
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [CONTACT],
        type: "reaction",
        reaction: { message_id: sent.id, emoji: "🎉" },
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = await waitForMessages(key, [id]);
    expect(evolution.reactions).toEqual([
      {
        instance: session.name,
        body: { key: { id: sent.provider_message_id, remoteJid: CONTACT_JID, fromMe: true }, reaction: "🎉" },
        id: expect.any(String),
      },
    ]);
    expect(done).toMatchObject({ status: "sent", provider_message_id: evolution.reactions[0]?.id });
    expect(await balanceOf(accountId)).toBeCloseTo(9.98, 2);
  });
});

describe("Evolution API gateway: a reaction whose answer was lost", () => {
  const SESSION = "session_5d0c2b1a-3e4f-4a5b-8c6d-7e8f9a0b1c2d";
  const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

  it("is unknown, answers absent without asking findMessages, and is set again under the same key", async () => {
    await gateway.create(SESSION);
    evolution.link(SESSION, PHONE);
    const id = crypto.randomUUID();
    const query: SentQuery = {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "reaction",
      content: "👍",
      mediaUrl: null,
      media: null,
      replyTo: { providerMessageId: "3EB0REACTED1", fromMe: false },
      since: Date.now(),
    };
    evolution.sendFault = "lost";
    expect(await gateway.send(SESSION, query)).toMatchObject({ outcome: "unknown" });
    evolution.sendFault = null;
    expect(await gateway.lookup(SESSION, query)).toEqual({ result: "absent" });
    expect(evolution.calls.filter((c) => c.includes("findMessages"))).toEqual([]);
    expect(await gateway.send(SESSION, query)).toMatchObject({ outcome: "accepted" });
    expect(evolution.reactions.map((r) => r.body)).toEqual([
      { key: { id: "3EB0REACTED1", remoteJid: CONTACT_JID, fromMe: false }, reaction: "👍" },
      { key: { id: "3EB0REACTED1", remoteJid: CONTACT_JID, fromMe: false }, reaction: "👍" },
    ]);
    expect(await gateway.send(SESSION, { ...query, replyTo: null })).toEqual({
      outcome: "rejected",
      reason: "reaction_without_message",
      retryable: false,
    });
  });
});

describe("Evolution API: incoming replies and reactions", () => {
  it("a reply (contextInfo.stanzaId) is stored with reply_to", async () => {
    const { key, accountId, session, sent } = await withSentText();
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingReply(session.name, "3EB0REPLY001", CONTACT, "Sure", sent.provider_message_id ?? ""),
    );
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>();
    const shown = await call<{ data: { reply_to: string; content: string } }>(
      "GET",
      `/v1/chatapp/messages/${row?.id}`,
      {
        key,
      },
    );
    expect(shown.body.data).toMatchObject({ reply_to: sent.id, content: "Sure" });
  });

  it("a reactionMessage is recorded once per change, not stored as a message; an unknown one is ignored", async () => {
    const { key, accountId, session, sent } = await withSentText();
    const at = Date.now();
    const data = evolution.incomingReaction(
      session.name,
      "3EB0REACT001",
      CONTACT,
      sent.provider_message_id ?? "",
      "😮",
      at,
    );
    for (let i = 0; i < 2; i++) await postEvolutionEvent(session.name, "messages.upsert", data);
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingReaction(session.name, "3EB0REACT002", CONTACT, "3EB0NOTOURS1", "😮", at),
    );
    const shown = (await getMessage(key, sent.id)) as unknown as { metadata: { reactions: unknown } };
    expect(shown.metadata.reactions).toEqual([
      { from: CONTACT, emoji: "😮", at: new Date(at).toISOString().replace("Z", "000Z") },
    ]);
    expect(await reactionEvents(key)).toEqual([
      { message_id: sent.id, session_id: session.id, from: CONTACT, emoji: "😮", at: expect.any(String) },
    ]);
    const incoming = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ n: number }>();
    expect(incoming?.n).toBe(0);
  });
});
