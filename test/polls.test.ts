import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ApiError } from "../src/errors";
import { formatTimestamp } from "../src/lib/time";
import { requireGatewaySends } from "../src/messages/gateway-types";
import { metadataText } from "../src/messages/metadata";
import { receivePollVote, withPollVote } from "../src/messages/poll-votes";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession, getMessage, type Message, waitForMessages } from "./message-fixtures";
import { metadataProblems } from "./metadata-check";

// Polls through the sandbox (docs/messages.md, Sending messages → Polls): the send's checks and price, what
// the sandbox phone receives, and contacts' votes kept on the poll (the inbound route, and the
// writer a gateway's `poll_vote` event goes through, src/messages/poll-votes.ts).

interface Vote {
  options: string[];
  at: string;
}

interface PollMessage extends Message {
  type: string;
  content: string | null;
  metadata: Message["metadata"] & {
    poll?: { question: string; options: string[]; multiple_answers: boolean };
    poll_votes?: Record<string, Vote>;
    poll_votes_removed?: Record<string, { at: string }>;
    poll_counts?: Record<string, number>;
  };
}

interface PollVoted {
  message_id: string;
  session_id: string;
  from: string;
  options: string[];
  at: string;
}

const CONTACT = "+14155552671";
const DAYS = ["Monday", "Tuesday", "Wednesday"];
/** PRICE_POLL (wrangler.toml) in minor units. */
const PRICE = Math.round(Number(env.PRICE_POLL) * 100);

function send(key: string, body: Record<string, unknown>) {
  return call<{ data: { messages: PollMessage[]; total_cost: number } }>("POST", "/v1/chatapp/messages", {
    key,
    body,
  });
}

function vote(key: string, sessionId: string, pollId: string, options: unknown, from = CONTACT) {
  return call<{ data: PollMessage }>("POST", `/sandbox/sessions/${sessionId}/inbound`, {
    key,
    body: { from_number: from, type: "poll_vote", reply_to: pollId, poll_vote: { options } },
  });
}

async function votedEvents(key: string): Promise<PollVoted[]> {
  const res = await call<{ data: { type: string; data: PollVoted }[] }>(
    "GET",
    "/v1/events?filter[type]=poll.voted",
    { key },
  );
  expect(res.status).toBe(200);
  return res.body.data.map((event) => event.data);
}

/** A connected sandbox session and a poll it sent to {@link CONTACT}, on the network. */
async function sentPoll(poll: Record<string, unknown>) {
  const { key, accountId } = await createAccount(1);
  const session = await connectedSession(key);
  const res = await send(key, { chatapp_session_id: session.id, to_number: [CONTACT], type: "poll", poll });
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.messages[0]?.id ?? "";
  expect((await waitForMessages(key, [id]))[0]?.status).toBe("sent");
  return { key, accountId, session, id, res };
}

describe("polls", () => {
  it("sends a poll: kept in metadata.poll, the question as content, priced PRICE_POLL, received as sent", async () => {
    const { key, session, id, res } = await sentPoll({ question: "Which day suits you?", options: DAYS });
    expect(res.body.data.total_cost).toBe(PRICE / 100);
    expect(res.body.data.messages[0]).toMatchObject({ type: "poll", content: "Which day suits you?" });
    const shown = (await getMessage(key, id)) as PollMessage;
    expect(shown.metadata.poll).toEqual({
      question: "Which day suits you?",
      options: DAYS,
      multiple_answers: false,
    });
    expect(shown.cost).toBe(PRICE / 100);
    expect(metadataProblems(shown.metadata)).toEqual([]);
    const phone = await call<{
      data: { message_id: string; type: string; content: string; poll: unknown }[];
    }>("GET", `/sandbox/sessions/${session.id}/received?to_number=${encodeURIComponent(CONTACT)}`, { key });
    expect(phone.body.data[0]).toMatchObject({
      message_id: id,
      type: "poll",
      content: "Which day suits you?",
      poll: { question: "Which day suits you?", options: DAYS, multiple_answers: false },
    });
    const account = await call<{ data: { balance: number; prices: Record<string, number> } }>(
      "GET",
      "/v1/account",
      { key },
    );
    expect(account.body.data.balance).toBe((100 - PRICE) / 100);
    expect(account.body.data.prices.poll).toBe(Number(env.PRICE_POLL));
    const list = await call<{ data: PollMessage[] }>("GET", "/v1/chatapp/messages?filter[type]=poll", {
      key,
    });
    expect(list.body.data.map((m) => m.id)).toEqual([id]);
  });

  it("refuses a poll that breaks a rule (422 naming the field), charging nothing", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const base = { chatapp_session_id: session.id, to_number: [CONTACT], type: "poll" };
    const poll = (fields: Record<string, unknown>) => ({
      ...base,
      poll: { question: "Q?", options: DAYS, ...fields },
    });
    const cases: [Record<string, unknown>, string][] = [
      [base, "poll"],
      [poll({ question: "" }), "poll.question"],
      [poll({ question: "   " }), "poll.question"],
      [poll({ question: "q".repeat(256) }), "poll.question"],
      [poll({ options: ["Only one"] }), "poll.options"],
      [poll({ options: Array.from({ length: 13 }, (_, i) => `Option ${i}`) }), "poll.options"],
      [poll({ options: ["Monday", "Tuesday", "Monday"] }), "poll.options.2"],
      [poll({ options: ["Monday", ""] }), "poll.options.1"],
      [poll({ options: ["Monday", "o".repeat(101)] }), "poll.options.1"],
      [poll({ multiple_answers: "yes" }), "poll.multiple_answers"],
      [{ ...poll({}), content: "Vote!" }, "content"],
      [{ ...poll({}), media_url: "https://example.com/a.png" }, "media_url"],
      [{ ...base, type: "text", content: "hi", poll: { question: "Q?", options: DAYS } }, "poll"],
    ];
    for (const [body, field] of cases) {
      const res = await send(key, body);
      expectProblem(res, 422, "validation_failed");
      expect(Object.keys((res.body as { errors?: Record<string, string[]> }).errors ?? {}), field).toContain(
        field,
      );
    }
    // Twelve options, each 100 characters, and a 255-character question are within the limits.
    const longest = await send(key, {
      ...base,
      poll: {
        question: "q".repeat(255),
        options: Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(100, "o")),
        multiple_answers: true,
      },
    });
    expect(longest.status, longest.text).toBe(201);
    const account = await call<{ data: { balance: number } }>("GET", "/v1/account", { key });
    expect(account.body.data.balance).toBe((100 - PRICE) / 100);
  });

  it("a gateway without polls, or with fewer options, refuses before any charge (capabilities)", () => {
    const poll = { options: Array.from({ length: 11 }, (_, i) => `Option ${i}`) };
    const refusal = (gateway: "cloud_api" | "evolution" | "waha" | "sandbox") => {
      try {
        requireGatewaySends(gateway, { type: "poll", poll });
        return null;
      } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        return {
          code: (error as ApiError).code,
          fields: Object.keys((error as ApiError).options.fields ?? {}),
        };
      }
    };
    expect(refusal("cloud_api")).toEqual({ code: "type_not_supported_by_gateway", fields: ["type"] });
    expect(refusal("evolution")).toEqual({ code: "type_not_supported_by_gateway", fields: ["poll.options"] });
    expect(refusal("waha")).toBeNull();
    expect(refusal("sandbox")).toBeNull();
    expect(() => requireGatewaySends("evolution", { type: "poll", poll: { options: DAYS } })).not.toThrow();
  });
});

describe("votes on a poll", () => {
  it("a vote is kept per contact with counts per option; a later one replaces it, [] takes it back; one poll.voted per change", async () => {
    const { key, session, id } = await sentPoll({
      question: "Which days?",
      options: DAYS,
      multiple_answers: true,
    });

    const first = await vote(key, session.id, id, ["Tuesday"]);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.id).toBe(id);
    expect(first.body.data.metadata.poll_votes).toEqual({
      [CONTACT]: { options: ["Tuesday"], at: expect.any(String) },
    });
    expect(first.body.data.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 1, Wednesday: 0 });

    // The same choice again (a redelivered vote) changes nothing and records no event.
    const again = await vote(key, session.id, id, ["Tuesday"]);
    expect(again.body.data.metadata.poll_votes).toEqual(first.body.data.metadata.poll_votes);
    expect(await votedEvents(key)).toHaveLength(1);

    // Several options, named in any order, are kept in the poll's.
    const changed = await vote(key, session.id, id, ["Wednesday", "Monday"]);
    expect(changed.body.data.metadata.poll_votes?.[CONTACT]?.options).toEqual(["Monday", "Wednesday"]);
    expect(changed.body.data.metadata.poll_counts).toEqual({ Monday: 1, Tuesday: 0, Wednesday: 1 });

    const removed = await vote(key, session.id, id, []);
    expect(removed.status).toBe(200);
    expect(removed.body.data.metadata.poll_votes).toEqual({});
    expect(removed.body.data.metadata.poll_votes_removed).toEqual({ [CONTACT]: { at: expect.any(String) } });
    expect(removed.body.data.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 0, Wednesday: 0 });
    expect(metadataProblems(removed.body.data.metadata)).toEqual([]);

    const events = await votedEvents(key);
    // Newest first.
    expect(events.map((e) => e.options)).toEqual([[], ["Monday", "Wednesday"], ["Tuesday"]]);
    expect(events[2]).toEqual({
      message_id: id,
      session_id: session.id,
      from: CONTACT,
      options: ["Tuesday"],
      at: first.body.data.metadata.poll_votes?.[CONTACT]?.at,
    });
    // Nothing was stored as an incoming message.
    const incoming = await call<{ data: PollMessage[] }>(
      "GET",
      "/v1/chatapp/messages?filter[direction]=incoming",
      {
        key,
      },
    );
    expect(incoming.body.data).toEqual([]);

    // A vote after the removal counts again, and the removal is forgotten.
    const back = await vote(key, session.id, id, ["Monday"]);
    expect(back.body.data.metadata.poll_counts).toEqual({ Monday: 1, Tuesday: 0, Wednesday: 0 });
    expect(back.body.data.metadata.poll_votes_removed).toBeUndefined();
  });

  it("orders a contact's votes by their own time: an older one arriving late changes nothing; a redelivery records one event", async () => {
    const { key, accountId, session, id } = await sentPoll({ question: "Which day?", options: DAYS });
    const at = Date.now();
    const gatewayVote = (options: string[], when: number) =>
      receivePollVote(
        env,
        { accountId, sessionId: session.id, providerMessageId: id, from: CONTACT, options, at: when },
        { byId: true },
      );
    expect(await gatewayVote(["Wednesday"], at)).toEqual({ messageId: id, changed: true });
    expect(await gatewayVote(["Wednesday"], at)).toEqual({ messageId: id, changed: false });
    // An earlier vote, delivered late.
    expect(await gatewayVote(["Monday"], at - 5_000)).toEqual({ messageId: id, changed: false });
    // A vote naming no option of the poll is no vote (nor a removal).
    expect(await gatewayVote(["Friday"], at + 1_000)).toEqual({ messageId: id, changed: false });
    let shown = (await getMessage(key, id)) as PollMessage;
    expect(shown.metadata.poll_votes).toEqual({
      [CONTACT]: { options: ["Wednesday"], at: formatTimestamp(at) },
    });
    expect(shown.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 0, Wednesday: 1 });

    // Taken back, then an older vote arrives: the removal stands.
    expect(await gatewayVote([], at + 2_000)).toEqual({ messageId: id, changed: true });
    expect(await gatewayVote(["Tuesday"], at + 1_500)).toEqual({ messageId: id, changed: false });
    shown = (await getMessage(key, id)) as PollMessage;
    expect(shown.metadata.poll_votes).toEqual({});
    expect(shown.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 0, Wednesday: 0 });
    expect((await votedEvents(key)).map((e) => [e.options, e.at])).toEqual([
      [[], formatTimestamp(at + 2_000)],
      [["Wednesday"], formatTimestamp(at)],
    ]);

    // A message that is not a poll, or not the session's, takes no vote.
    const text = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "text",
      content: "hi",
    });
    const textId = text.body.data.messages[0]?.id ?? "";
    expect(
      await receivePollVote(
        env,
        {
          accountId,
          sessionId: session.id,
          providerMessageId: textId,
          from: CONTACT,
          options: ["Monday"],
          at,
        },
        { byId: true },
      ),
    ).toBeNull();
  });

  it("keeps each contact's vote apart: counts add up across voters (withPollVote)", () => {
    const stored = metadataText({
      attempts: 1,
      poll: { question: "Q?", options: DAYS, multiple_answers: true },
    });
    const at = Date.parse("2026-11-21T09:30:00Z");
    const one = withPollVote(stored, { from: "+14155550001", options: ["Monday", "Tuesday"], at });
    const two = withPollVote(one ?? "", { from: "+14155550002", options: ["Tuesday"], at: at + 1 });
    const three = withPollVote(two ?? "", { from: "123456789@lid", options: ["Wednesday"], at: at + 2 });
    const parsed = JSON.parse(three ?? "{}");
    expect(Object.keys(parsed)).toEqual(["attempts", "poll", "poll_votes", "poll_counts"]);
    expect(parsed.poll_counts).toEqual({ Monday: 1, Tuesday: 2, Wednesday: 1 });
    expect(Object.keys(parsed.poll_votes)).toEqual(["+14155550001", "+14155550002", "123456789@lid"]);
    const back = JSON.parse(
      withPollVote(three ?? "", { from: "+14155550002", options: [], at: at + 3 }) ?? "{}",
    );
    expect(back.poll_counts).toEqual({ Monday: 1, Tuesday: 1, Wednesday: 1 });
    expect(back.poll_votes_removed).toEqual({ "+14155550002": { at: formatTimestamp(at + 3) } });
    expect(metadataProblems(back)).toEqual([]);
    // Nothing to take back, and metadata without a poll: no change.
    expect(withPollVote(stored, { from: "+14155550009", options: [], at })).toBeNull();
    expect(
      withPollVote(metadataText({ attempts: 1 }), { from: "+14155550009", options: ["Monday"], at }),
    ).toBeNull();
  });

  it("the sandbox's vote is checked against the poll: its options, one alone on a single-choice poll, a poll at all", async () => {
    const { key, session, id } = await sentPoll({ question: "Which day?", options: DAYS });
    const several = await vote(key, session.id, id, ["Monday", "Tuesday"]);
    expectProblem(several, 422, "validation_failed");
    expect(Object.keys((several.body as { errors?: object }).errors ?? {})).toEqual(["poll_vote.options"]);
    const unknown = await vote(key, session.id, id, ["Monday", "Friday"]);
    expectProblem(unknown, 422, "validation_failed");
    expect(Object.keys((unknown.body as { errors?: object }).errors ?? {})).toEqual(["poll_vote.options.1"]);
    const text = await send(key, {
      chatapp_session_id: session.id,
      to_number: [CONTACT],
      type: "text",
      content: "hi",
    });
    const textId = text.body.data.messages[0]?.id ?? "";
    await waitForMessages(key, [textId]);
    const notPoll = await vote(key, session.id, textId, ["Monday"]);
    expectProblem(notPoll, 422, "validation_failed");
    expect(Object.keys((notPoll.body as { errors?: object }).errors ?? {})).toEqual(["reply_to"]);
    const bare = await call("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACT, type: "poll_vote", poll_vote: { options: ["Monday"] } },
    });
    expectProblem(bare, 422, "validation_failed");
    expect(Object.keys((bare.body as { errors?: object }).errors ?? {})).toEqual(["reply_to"]);
    const stray = await call("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACT, type: "text", content: "hi", poll_vote: { options: [] } },
    });
    expectProblem(stray, 422, "validation_failed");
    // Another contact's chat: the poll is not theirs to vote on.
    expectProblem(await vote(key, session.id, id, ["Monday"], "+14155550999"), 422, "reply_to_other_chat");
    expect(((await getMessage(key, id)) as PollMessage).metadata.poll_votes).toBeUndefined();
    expect(await votedEvents(key)).toEqual([]);
  });
});
