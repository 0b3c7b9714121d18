import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import type { SentQuery } from "../../src/gateways/gateway";
import { WahaGateway } from "../../src/gateways/waha";
import { accountD1 } from "../databases";
import { WAHA_API_KEY, WAHA_SETTINGS, WAHA_URL } from "../gateway-config";
import { call, createAccount } from "../helpers";
import { balanceOf, getMessage, type Message, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha, postWahaEvent, wahaReplyPayload } from "./fake-waha";

// Lists through WAHA (docs/messages.md, Sending messages → Buttons and lists), against the fake server
// (fake-waha.ts), which holds `POST /api/sendList` bodies to `SendListRequest` and
// `SendListMessage` of WAHA's OpenAPI document (2026.7.1) and serves it on NOWEB and GOWS alone (the
// engines' table, "Send messages"). Reply buttons are refused before any charge
// (waha-chat-kinds.test.ts). WAHA's document says neither how a contact's choice arrives nor what
// a sent list's `WAMessage` holds: a choice is stored as any message, and a lost answer is never
// settled by content.

useNetwork();

const CONTACT = "+14155550123";
const DIGITS = "14155550123";
const CHAT_ID = `${DIGITS}@c.us`;

const LIST = {
  type: "list",
  body: { text: "Pick a delivery slot" },
  action: {
    button: "Slots",
    sections: [
      { title: "Morning", rows: [{ id: "am-9", title: "9–10", description: "Before work" }] },
      { title: "Evening", rows: [{ id: "pm-6", title: "18–19" }] },
    ],
  },
};

const TITLED = {
  type: "list",
  header: { type: "text", text: "Deliveries" },
  body: { text: "When suits you?" },
  footer: { text: "Times are local" },
  action: { button: "Choose", sections: [{ rows: [{ id: "now", title: "Now" }] }] },
};

const BUTTONS = {
  type: "button",
  body: { text: "Shipped" },
  action: { buttons: [{ type: "reply", reply: { id: "track", title: "Track" } }] },
};

interface Shown extends Message {
  type: string;
  content: string | null;
  direction: string;
  reply_to: string | null;
  metadata: Message["metadata"] & { interactive?: unknown; interactive_reply?: unknown };
}

const price = Number(env.PRICE_INTERACTIVE);

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

/** Sends `interactive` to {@link CONTACT} and waits until it left (or failed). */
async function sent(
  key: string,
  sessionId: string,
  interactive: object,
  extra: Record<string, unknown> = {},
) {
  const res = await call<{ data: { messages: Shown[]; total_cost: number } }>(
    "POST",
    "/v1/chatapp/messages",
    {
      key,
      body: {
        chatapp_session_id: sessionId,
        to_number: [CONTACT],
        type: "interactive",
        interactive,
        ...extra,
      },
    },
  );
  expect(res.status).toBe(201);
  const id = res.body.data.messages[0]?.id ?? "";
  const [done] = (await waitForMessages(key, [id])) as Shown[];
  return { id, done, totalCost: res.body.data.total_cost };
}

describe("WAHA: sending a list", () => {
  it('is POST /api/sendList with a SendListMessage: "" for a missing title or section title, no empty description; priced PRICE_INTERACTIVE', async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const { id, done, totalCost } = await sent(key, session.id, LIST);

    expect(totalCost).toBe(price);
    expect(waha.sent).toHaveLength(1);
    const stored = waha.sent[0];
    expect(stored?.path).toBe("/api/sendList");
    expect(stored?.body).toEqual({
      session: session.name,
      chatId: CHAT_ID,
      message: {
        title: "",
        description: "Pick a delivery slot",
        button: "Slots",
        sections: [
          { title: "Morning", rows: [{ title: "9–10", rowId: "am-9", description: "Before work" }] },
          { title: "Evening", rows: [{ title: "18–19", rowId: "pm-6" }] },
        ],
      },
    });
    // `SendListRequest` has no `id`: the list goes under WAHA's id, read from NOWEB's Baileys key.
    expect(stored?.id).not.toContain(clientMessageIdOf(id));
    expect(stored?.id).toMatch(new RegExp(`^true_${DIGITS}@c\\.us_3EB0\\d{16}$`));
    expect(done).toMatchObject({
      status: "sent",
      type: "interactive",
      content: "Pick a delivery slot",
      provider_message_id: stored?.id,
      cost: price,
    });
    expect(done?.metadata.interactive).toEqual(LIST);
    expect(await balanceOf(accountId)).toBeCloseTo(10 - price, 2);
  });

  it('the header is title and the footer footer; an untitled section sends ""; a GOWS session answers its WAMessage', async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const fake = waha.sessions.get(session.name);
    if (fake) fake.engine = "GOWS";
    const { done } = await sent(key, session.id, TITLED);
    expect(waha.sent.at(-1)?.body).toEqual({
      session: session.name,
      chatId: CHAT_ID,
      message: {
        title: "Deliveries",
        description: "When suits you?",
        footer: "Times are local",
        button: "Choose",
        sections: [{ title: "", rows: [{ title: "Now", rowId: "now" }] }],
      },
    });
    expect(done).toMatchObject({ status: "sent", provider_message_id: waha.sent.at(-1)?.id });
  });

  it("in reply, carries the quoted message's WAHA id as reply_to", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    await postWahaEvent(session.name, "message", {
      ...wahaReplyPayload(DIGITS, "When can you deliver?", "NOTQUOTING", "AAASK1"),
      replyTo: null,
    });
    const theirs = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>();
    const { done } = await sent(key, session.id, LIST, { reply_to: theirs?.id });
    expect(waha.sent.at(-1)?.body).toMatchObject({ reply_to: `false_${CHAT_ID}_AAASK1` });
    expect(done).toMatchObject({ status: "sent", reply_to: theirs?.id });
  });

  it("an engine without sendList (WEBJS answers 501) fails the message once, refunded", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const fake = waha.sessions.get(session.name);
    if (fake) fake.engine = "WEBJS";
    const { done } = await sent(key, session.id, LIST);
    expect(done?.status).toBe("failed");
    expect(done?.reason).toMatch(/^gateway_http_501: POST \/api\/sendList/);
    expect(waha.calls.filter((c) => c === "POST /api/sendList")).toHaveLength(1);
    expect(waha.sent).toEqual([]);
    expect(await balanceOf(accountId)).toBe(10);
  });
});

describe("WAHA: a contact's choice", () => {
  it("is stored as any message (WAHA's document does not say how a choice arrives): never an interactive_reply", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const { id } = await sent(key, session.id, LIST);
    const listId = waha.sent[0]?.id.split("_").at(-1) ?? "";
    await postWahaEvent(session.name, "message", wahaReplyPayload(DIGITS, "9–10", listId, "AACHOICE1"));
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>();
    const reply = (await getMessage(key, row?.id ?? "")) as Shown;
    expect(reply).toMatchObject({ type: "text", content: "9–10", reply_to: id, direction: "incoming" });
    expect(reply.metadata.interactive_reply).toBeUndefined();
  });
});

describe("WAHA gateway: a list whose answer was lost, and what it refuses", () => {
  const SESSION = "session_6e1d3c2b-4f5a-4b6c-9d7e-8f9a0b1c2d3e";
  const gateway = new WahaGateway(WAHA_SETTINGS, { intervalMs: 5, polls: 3 });

  beforeEach(() => {
    waha.sessions.set(SESSION, { status: "WORKING", me: null, qrCount: 0, webhooks: [] });
  });

  function query(content: string, overrides: Partial<SentQuery> = {}): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "interactive",
      content,
      mediaUrl: null,
      media: null,
      since: Date.now(),
      ...overrides,
    };
  }

  it("is unknown; while a message of ours could be it the lookup cannot tell (unreachable), never found by content", async () => {
    const lost = query(JSON.stringify(LIST));
    waha.sendFault = "lost";
    expect(await gateway.send(SESSION, lost)).toEqual({
      outcome: "unknown",
      reason: expect.stringMatching(/^gateway_unreachable/),
    });
    waha.sendFault = null;
    expect(waha.sent.map((s) => s.path)).toEqual(["/api/sendList"]);
    expect(await gateway.lookup(SESSION, lost)).toEqual({
      result: "unreachable",
      reason: expect.stringMatching(/^lookup_cannot_tell/),
    });
    expect(waha.calls.filter((c) => c.startsWith("GET /api/") && c.includes("/chats/"))).toEqual([
      `GET /api/${SESSION}/chats/${DIGITS}%40c.us/messages`,
    ]);
  });

  it("is absent when the chat holds no message of ours since, or only media, locations and cards", async () => {
    expect(await gateway.lookup(SESSION, query(JSON.stringify(LIST)))).toEqual({ result: "absent" });
    const since = Date.now();
    const other = (overrides: Partial<SentQuery>) => gateway.send(SESSION, query("", overrides));
    expect(
      await other({
        type: "image",
        content: "Look",
        mediaUrl: "https://cdn.example.test/a.jpg",
        media: { key: crypto.randomUUID(), contentType: "image/jpeg" },
      }),
    ).toMatchObject({ outcome: "accepted" });
    expect(
      await other({ type: "location", content: JSON.stringify({ latitude: 1, longitude: 2 }) }),
    ).toMatchObject({
      outcome: "accepted",
    });
    expect(waha.sent).toHaveLength(2);
    expect(await gateway.lookup(SESSION, query(JSON.stringify(LIST), { since }))).toEqual({
      result: "absent",
    });
    // A text of ours could be the list, whose `WAMessage` WAHA's document does not describe.
    expect(await other({ type: "text", content: "Anything else?" })).toMatchObject({ outcome: "accepted" });
    expect(await gateway.lookup(SESSION, query(JSON.stringify(LIST), { since }))).toMatchObject({
      result: "unreachable",
    });
  });

  it("refuses reply buttons (not_supported_by_gateway) and content that is no Interactive (content_unreadable), without a call", async () => {
    expect(await gateway.send(SESSION, query(JSON.stringify(BUTTONS)))).toEqual({
      outcome: "rejected",
      reason: "not_supported_by_gateway",
      retryable: false,
    });
    const elevenRows = {
      ...LIST,
      action: {
        button: "Slots",
        sections: [{ rows: Array.from({ length: 11 }, (_, i) => ({ id: `r${i}`, title: `Row ${i}` })) }],
      },
    };
    for (const content of ["not json", JSON.stringify(elevenRows)]) {
      expect(await gateway.send(SESSION, query(content))).toEqual({
        outcome: "rejected",
        reason: "content_unreadable",
        retryable: false,
      });
    }
    expect(waha.calls).toEqual([]);
  });

  it("the fake holds sendList bodies to SendListRequest and SendListMessage", async () => {
    const post = (body: object) =>
      fetch(`${WAHA_URL}/api/sendList`, {
        method: "POST",
        headers: { "X-Api-Key": WAHA_API_KEY, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const row = { title: "Now", rowId: "now" };
    const message = { title: "", button: "Choose", sections: [{ title: "", rows: [row] }] };
    const valid = { session: SESSION, chatId: CHAT_ID, message };
    for (const refused of [
      { ...valid, message: undefined },
      { ...valid, id: "3EB0AAAA" },
      { ...valid, chatId: "120363@g.us" },
      { ...valid, message: { ...message, title: undefined } },
      { ...valid, message: { ...message, button: undefined } },
      { ...valid, message: { ...message, buttonText: "Choose" } },
      { ...valid, message: { ...message, footer: null } },
      { ...valid, message: { ...message, sections: "none" } },
      { ...valid, message: { ...message, sections: [{ rows: [row] }] } },
      { ...valid, message: { ...message, sections: [{ title: "", rows: [{ title: "Now" }] }] } },
      { ...valid, message: { ...message, sections: [{ title: "", rows: [{ ...row, id: "now" }] }] } },
      { ...valid, message: { ...message, sections: [{ title: "", rows: [{ ...row, description: null }] }] } },
      { ...valid, reply_to: "not-an-id" },
    ]) {
      expect((await post(refused)).status, JSON.stringify(refused)).toBe(422);
    }
    expect(waha.sent).toEqual([]);
    const accepted = await post({ ...valid, message: { ...message, description: "d", footer: "f" } });
    expect(accepted.status).toBe(201);
    expect(await accepted.json()).toMatchObject({
      key: { remoteJid: `${DIGITS}@s.whatsapp.net`, fromMe: true, id: waha.sent[0]?.id.split("_").at(-1) },
    });
  });
});
