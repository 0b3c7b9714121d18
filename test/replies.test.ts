import { describe, expect, it } from "vitest";
import { withReaction } from "../src/messages/reactions";
import { call, createAccount, expectProblem, TIMESTAMP } from "./helpers";
import { connectedSession, getMessage, type Message, sendText, waitForMessages } from "./message-fixtures";

// Replies and reactions through the sandbox (docs/messages.md, Replies and reactions): the send's checks,
// what the sandbox phone receives, and a contact's replies and reactions (the inbound routes).

interface Quoting extends Message {
  type: string;
  content: string | null;
  reply_to: string | null;
  metadata: Message["metadata"] & {
    quoted?: { provider_message_id: string; from_me: boolean };
    reactions?: { from: string; emoji: string; at: string }[];
    reactions_removed?: { from: string; at: string }[];
  };
}

interface Received {
  message_id: string;
  type: string;
  content: string | null;
  reply_to: string | null;
}

interface ReactionEvent {
  id: string;
  type: string;
  data: { message_id: string; session_id: string; from: string; emoji: string; at: string };
}

const CONTACT = "+14155552671";

/** An account with a connected sandbox session and one text sent to {@link CONTACT}, `sent`. */
async function withSentText() {
  const { key, accountId } = await createAccount(1);
  const session = await connectedSession(key);
  const id = (await sendText(key, session.id, [CONTACT])).body.data.messages[0]!.id;
  const [sent] = await waitForMessages(key, [id]);
  expect(sent?.status).toBe("sent");
  return { key, accountId, session, sent: sent as Message };
}

function send(key: string, body: Record<string, unknown>) {
  return call<{ data: { messages: Quoting[]; total_cost: number } }>("POST", "/v1/chatapp/messages", {
    key,
    body,
  });
}

async function received(key: string, sessionId: string, to = CONTACT): Promise<Received[]> {
  const res = await call<{ data: Received[] }>(
    "GET",
    `/sandbox/sessions/${sessionId}/received?to_number=${encodeURIComponent(to)}`,
    { key },
  );
  expect(res.status).toBe(200);
  return res.body.data;
}

async function reactionEvents(key: string): Promise<ReactionEvent[]> {
  const res = await call<{ data: ReactionEvent[] }>(
    "GET",
    "/v1/events?limit=100&filter[type]=message.reaction",
    {
      key,
    },
  );
  expect(res.status).toBe(200);
  return res.body.data.reverse();
}

function inbound(key: string, sessionId: string, body: Record<string, unknown>) {
  return call<{ data: Quoting }>("POST", `/sandbox/sessions/${sessionId}/inbound`, { key, body });
}

function react(key: string, sessionId: string, body: Record<string, unknown>) {
  return call<{ data: Quoting }>("POST", `/sandbox/sessions/${sessionId}/reactions`, { key, body });
}

describe("replies (reply_to on a send)", () => {
  it("quotes a sent message: reply_to on the message, the gateway's id in metadata, the phone sees the quote", async () => {
    const { key, session, sent } = await withSentText();
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "text",
      content: "About that…",
      reply_to: sent.id,
    });
    expect(res.status).toBe(201);
    const reply = res.body.data.messages[0]!;
    expect(reply).toMatchObject({ reply_to: sent.id, to_number: CONTACT, type: "text" });
    const shown = (await getMessage(key, reply.id)) as Quoting;
    expect(shown.reply_to).toBe(sent.id);
    expect(shown.metadata.quoted).toEqual({ provider_message_id: sent.provider_message_id, from_me: true });
    await waitForMessages(key, [reply.id]);
    const phone = await received(key, session.id);
    expect(phone.find((m) => m.message_id === reply.id)).toMatchObject({
      content: "About that…",
      reply_to: sent.id,
    });
    // A message without a quote shows reply_to null.
    expect(((await getMessage(key, sent.id)) as Quoting).reply_to).toBeNull();
  });

  it("quotes an incoming message of the same chat", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const incoming = await inbound(key, session.id, { from_number: CONTACT, type: "text", content: "Open?" });
    expect(incoming.status).toBe(201);
    expect(incoming.body.data.provider_message_id).toBe(`sandbox.${incoming.body.data.id}`);
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "text",
      content: "Yes, until 6",
      reply_to: incoming.body.data.id,
    });
    expect(res.status).toBe(201);
    const reply = res.body.data.messages[0]!;
    expect(((await getMessage(key, reply.id)) as Quoting).metadata.quoted).toEqual({
      provider_message_id: incoming.body.data.provider_message_id,
      from_me: false,
    });
    await waitForMessages(key, [reply.id]);
    expect((await received(key, session.id))[0]).toMatchObject({
      message_id: reply.id,
      reply_to: incoming.body.data.id,
    });
  });

  it("refuses reply_to with more than one recipient (422 naming reply_to), charging nothing", async () => {
    const { key, session, sent } = await withSentText();
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT, "+14155552672"],
      type: "text",
      content: "x",
      reply_to: sent.id,
    });
    const problem = expectProblem(res, 422, "validation_failed");
    expect(Object.keys(problem.errors as object)).toEqual(["reply_to"]);
  });

  it("refuses an unknown message and another account's message: 422 reply_to_not_found", async () => {
    const { key, session } = await withSentText();
    const theirs = await withSentText();
    for (const replyTo of [crypto.randomUUID(), theirs.sent.id]) {
      const res = await send(key, {
        chatapp_session_id: session.id,
        to_number: [CONTACT],
        type: "text",
        content: "x",
        reply_to: replyTo,
      });
      const problem = expectProblem(res, 422, "reply_to_not_found");
      expect(problem.errors).toEqual({ reply_to: ["no such message"] });
    }
  });

  it("refuses another chat's message: another recipient, or another session (422 reply_to_other_chat)", async () => {
    const { key, session, sent } = await withSentText();
    const other = await send(key, {
      chatapp_session_id: session.id,
      to_number: ["+14155552672"],
      type: "text",
      content: "x",
      reply_to: sent.id,
    });
    expectProblem(other, 422, "reply_to_other_chat");
    const second = await connectedSession(key);
    const elsewhere = await send(key, {
      chatapp_session_id: second.id,
      to_number: [CONTACT],
      type: "text",
      content: "x",
      reply_to: sent.id,
    });
    expect(expectProblem(elsewhere, 422, "reply_to_other_chat").errors).toEqual({
      reply_to: ["another chat's message"],
    });
  });

  it("refuses a message not on the network yet (a scheduled one): 409 reply_to_not_sent", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const later = await sendText(key, session.id, [CONTACT], {
      scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const scheduled = later.body.data.messages[0]!;
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "text",
      content: "x",
      reply_to: scheduled.id,
    });
    expectProblem(res, 409, "reply_to_not_sent");
  });

  it("refuses reply_to and reactions in campaigns (422)", async () => {
    const { key, session, sent } = await withSentText();
    const base = {
      name: "News",
      chatapp_session_ids: [session.id],
      recipients: [{ to_number: CONTACT }],
    };
    const withReply = await call("POST", "/v1/chatapp/campaigns", {
      key,
      body: { ...base, type: "text", content: "Hi", reply_to: sent.id },
    });
    expectProblem(withReply, 422, "validation_failed");
    const reaction = await call("POST", "/v1/chatapp/campaigns", {
      key,
      body: { ...base, type: "reaction", reaction: { message_id: sent.id, emoji: "👍" } },
    });
    const problem = expectProblem(reaction, 422, "validation_failed");
    expect(Object.keys(problem.errors as object)).toContain("type");
  });
});

describe("reactions (type reaction on a send)", () => {
  it("reacts to a sent message without naming the recipient: priced as a text, the phone gets it", async () => {
    const { key, session, sent } = await withSentText();
    const res = await send(key, {
      chatapp_session_id: session.id,
      type: "reaction",
      reaction: { message_id: sent.id, emoji: "👍🏽" },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.total_cost).toBe(0.01);
    const reaction = res.body.data.messages[0]!;
    expect(reaction).toMatchObject({
      type: "reaction",
      to_number: CONTACT,
      content: "👍🏽",
      reply_to: sent.id,
      cost: 0.01,
      status: "queued",
    });
    const [done] = await waitForMessages(key, [reaction.id]);
    expect(done?.status).toBe("sent");
    expect((await received(key, session.id))[0]).toMatchObject({
      message_id: reaction.id,
      type: "reaction",
      content: "👍🏽",
      reply_to: sent.id,
    });
    // Listed by its type.
    const listed = await call<{ data: Quoting[] }>("GET", "/v1/chatapp/messages?filter[type]=reaction", {
      key,
    });
    expect(listed.body.data.map((m) => m.id)).toEqual([reaction.id]);
  });

  it("takes a reaction off with an empty emoji", async () => {
    const { key, session, sent } = await withSentText();
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "reaction",
      reaction: { message_id: sent.id, emoji: "" },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.messages[0]).toMatchObject({ content: "", reply_to: sent.id });
  });

  it("refuses a recipient other than the reacted message's chat: 422 reaction_other_chat", async () => {
    const { key, session, sent } = await withSentText();
    const res = await send(key, {
      chatapp_session_id: session.id,
      to_number: ["+14155552672"],
      type: "reaction",
      reaction: { message_id: sent.id, emoji: "👍" },
    });
    expect(expectProblem(res, 422, "reaction_other_chat").errors).toEqual({
      "reaction.message_id": ["another chat's message"],
    });
  });

  it("refuses a reaction to a reaction (422 reply_to_not_found) and to an unsent message (409)", async () => {
    const { key, session, sent } = await withSentText();
    const first = await send(key, {
      chatapp_session_id: session.id,
      type: "reaction",
      reaction: { message_id: sent.id, emoji: "👍" },
    });
    const onReaction = await send(key, {
      chatapp_session_id: session.id,
      type: "reaction",
      reaction: { message_id: first.body.data.messages[0]!.id, emoji: "👍" },
    });
    expect(expectProblem(onReaction, 422, "reply_to_not_found").errors).toEqual({
      "reaction.message_id": ["a reaction cannot be quoted or reacted to"],
    });
    const later = await sendText(key, session.id, [CONTACT], {
      scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const unsent = await send(key, {
      chatapp_session_id: session.id,
      type: "reaction",
      reaction: { message_id: later.body.data.messages[0]!.id, emoji: "👍" },
    });
    expectProblem(unsent, 409, "reply_to_not_sent");
  });

  it("validates the body: one emoji or empty, no content, no reply_to, reaction only with its type", async () => {
    const { key, session, sent } = await withSentText();
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "reaction", reaction: { message_id: sent.id, emoji: "ok" } }, "reaction.emoji"],
      [{ type: "reaction", reaction: { message_id: sent.id, emoji: "👍👍" } }, "reaction.emoji"],
      [{ type: "reaction", reaction: { message_id: sent.id, emoji: "👍" }, content: "hi" }, "content"],
      [{ type: "reaction", reaction: { message_id: sent.id, emoji: "👍" }, reply_to: sent.id }, "reply_to"],
      [{ type: "reaction" }, "reaction"],
      [
        { type: "text", content: "hi", to_number: [CONTACT], reaction: { message_id: sent.id, emoji: "👍" } },
        "reaction",
      ],
      [{ type: "text", content: "hi" }, "to_number"],
      [
        {
          type: "reaction",
          to_number: [CONTACT, "+14155552672"],
          reaction: { message_id: sent.id, emoji: "👍" },
        },
        "reaction",
      ],
    ];
    for (const [body, field] of cases) {
      const res = await send(key, { chatapp_session_id: session.id, ...body });
      const problem = expectProblem(res, 422, "validation_failed");
      expect(Object.keys(problem.errors as object), JSON.stringify(body)).toContain(field);
    }
    // Flags, keycaps and ZWJ sequences are one emoji each.
    for (const emoji of ["🇧🇷", "1️⃣", "👩‍👩‍👧", "❤️"]) {
      const res = await send(key, {
        chatapp_session_id: session.id,
        type: "reaction",
        reaction: { message_id: sent.id, emoji },
      });
      expect(res.status, emoji).toBe(201);
    }
  });
});

describe("incoming replies and reactions (sandbox inbound routes)", () => {
  it("stores a contact's reply with reply_to; another chat's message is refused", async () => {
    const { key, session, sent } = await withSentText();
    const reply = await inbound(key, session.id, {
      from_number: CONTACT,
      type: "text",
      content: "Thanks!",
      reply_to: sent.id,
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({ direction: "incoming", reply_to: sent.id, content: "Thanks!" });
    expect(((await getMessage(key, reply.body.data.id)) as Quoting).reply_to).toBe(sent.id);
    const stranger = await inbound(key, session.id, {
      from_number: "+14155552672",
      type: "text",
      content: "?",
      reply_to: sent.id,
    });
    expectProblem(stranger, 422, "reply_to_other_chat");
  });

  it("records a contact's reaction in the message's metadata and one message.reaction event per change", async () => {
    const { key, session, sent } = await withSentText();
    const first = await react(key, session.id, { from_number: CONTACT, message_id: sent.id, emoji: "❤️" });
    expect(first.status).toBe(200);
    expect(first.body.data.id).toBe(sent.id);
    expect(first.body.data.metadata.reactions).toEqual([
      { from: CONTACT, emoji: "❤️", at: expect.stringMatching(TIMESTAMP) },
    ]);
    // The same reaction again changes nothing and records nothing.
    const again = await react(key, session.id, { from_number: CONTACT, message_id: sent.id, emoji: "❤️" });
    expect(again.body.data.metadata.reactions).toEqual(first.body.data.metadata.reactions);
    expect(await reactionEvents(key)).toHaveLength(1);
    // Another emoji replaces the contact's entry.
    const changed = await react(key, session.id, { from_number: CONTACT, message_id: sent.id, emoji: "😂" });
    expect(changed.body.data.metadata.reactions?.map((r) => r.emoji)).toEqual(["😂"]);
    // An empty emoji takes it off; taking it off again records nothing.
    const removed = await react(key, session.id, { from_number: CONTACT, message_id: sent.id, emoji: "" });
    expect(removed.body.data.metadata.reactions).toEqual([]);
    expect(removed.body.data.metadata.reactions_removed).toEqual([
      { from: CONTACT, at: expect.stringMatching(TIMESTAMP) },
    ]);
    await react(key, session.id, { from_number: CONTACT, message_id: sent.id, emoji: "" });
    const events = await reactionEvents(key);
    expect(events.map((e) => e.data.emoji)).toEqual(["❤️", "😂", ""]);
    expect(events[0]).toMatchObject({
      type: "message.reaction",
      data: {
        message_id: sent.id,
        session_id: session.id,
        from: CONTACT,
        emoji: "❤️",
        at: first.body.data.metadata.reactions?.[0]?.at,
      },
    });
    const shown = await call<{ data: ReactionEvent }>("GET", `/v1/events/${events[0]!.id}`, { key });
    expect(shown.body.data).toEqual(events[0]);
  });

  it("refuses a reaction from another chat's contact (422 reaction_other_chat) and an unknown message (422)", async () => {
    const { key, session, sent } = await withSentText();
    expectProblem(
      await react(key, session.id, { from_number: "+14155552672", message_id: sent.id, emoji: "👍" }),
      422,
      "reaction_other_chat",
    );
    expectProblem(
      await react(key, session.id, { from_number: CONTACT, message_id: crypto.randomUUID(), emoji: "👍" }),
      422,
      "reply_to_not_found",
    );
    expectProblem(
      await react(key, session.id, { from_number: CONTACT, message_id: sent.id, emoji: "two words" }),
      422,
      "validation_failed",
    );
    expect(await reactionEvents(key)).toEqual([]);
  });
});

describe("withReaction (the rules of metadata.reactions)", () => {
  const from = CONTACT;
  it("lets the latest time win, keeps one entry per contact and ignores a stale add after a removal", () => {
    const set = withReaction("{}", { from, emoji: "👍", at: 1_000 });
    expect(JSON.parse(set ?? "")).toEqual({
      reactions: [{ from, emoji: "👍", at: "1970-01-01T00:00:01.000000Z" }],
    });
    expect(withReaction(set ?? "", { from, emoji: "😂", at: 999 })).toBeNull();
    const other = withReaction(set ?? "", { from: "+14155552672", emoji: "😂", at: 1_500 });
    expect(JSON.parse(other ?? "").reactions).toHaveLength(2);
    const removed = withReaction(set ?? "", { from, emoji: "", at: 2_000 });
    expect(JSON.parse(removed ?? "")).toEqual({
      reactions: [],
      reactions_removed: [{ from, at: "1970-01-01T00:00:02.000000Z" }],
    });
    // A redelivered older add does not bring it back.
    expect(withReaction(removed ?? "", { from, emoji: "👍", at: 1_000 })).toBeNull();
    const back = withReaction(removed ?? "", { from, emoji: "🎉", at: 3_000 });
    expect(JSON.parse(back ?? "")).toEqual({
      reactions: [{ from, emoji: "🎉", at: "1970-01-01T00:00:03.000000Z" }],
    });
    // Other metadata stays.
    expect(
      JSON.parse(withReaction('{"gateway":"sandbox"}', { from, emoji: "👍", at: 1 }) ?? "").gateway,
    ).toBe("sandbox");
  });
});
