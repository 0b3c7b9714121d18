import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import type { SentQuery } from "../../src/gateways/gateway";
import { WahaGateway } from "../../src/gateways/waha";
import { parseWahaEvent } from "../../src/gateways/waha/events";
import { formatTimestamp } from "../../src/lib/time";
import { WAHA_SETTINGS } from "../gateway-config";
import { call, createAccount } from "../helpers";
import {
  firstAttempts,
  getMessage,
  type Message,
  type SendResponse,
  settleAll,
  waitForMessages,
} from "../message-fixtures";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha, postWahaEvent } from "./fake-waha";

// Polls through WAHA (docs/messages.md, Sending messages → Polls): `POST /api/sendPoll` with a
// `MessagePollRequest` (WAHA's OpenAPI document, devlikeapro/waha-docs static/swagger/openapi.json:
// `poll: { name, options, multipleAnswers }`, `id`, `reply_to`), checked by the fake, and contacts'
// votes from the `poll.vote` webhook (`WAHAWebhookPollVote`, `PollVotePayload`) kept on the poll.

useNetwork();

const CONTACT = "+14155550123";
const CHAT_ID = "14155550123@c.us";
const DAYS = ["Monday", "Tuesday", "Wednesday"];

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

interface Shown extends Message {
  type: string;
  content: string | null;
  metadata: Message["metadata"] & {
    poll_votes?: Record<string, { options: string[]; at: string }>;
    poll_counts?: Record<string, number>;
  };
}

async function sendPoll(key: string, sessionId: string, extra: Record<string, unknown> = {}) {
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: {
      chatapp_session_id: sessionId,
      to_number: [CONTACT],
      type: "poll",
      poll: { question: "Which days suit you?", options: DAYS, multiple_answers: true },
      ...extra,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.messages[0]?.id ?? "";
}

/**
 * A `poll.vote` payload (`PollVotePayload`, as "Polls → Events → poll.vote" shows NOWEB's): the
 * vote of chat `from` on our poll `pollId` (its serialised id), `selectedOptions` all the options
 * the contact now picks, `timestamp` in seconds as WAHA sends it today.
 */
function votePayload(
  from: string,
  pollId: string,
  selectedOptions: string[],
  timestamp: number,
  fromMe = true,
) {
  return {
    vote: {
      id: `false_${from}_83ACBE602A05C79B234B54415E95EE8A`,
      to: "me",
      from,
      fromMe: false,
      selectedOptions,
      timestamp,
    },
    poll: { id: pollId, to: from, from: "me", fromMe },
  };
}

async function votedEvents(key: string): Promise<{ from: string; options: string[]; at: string }[]> {
  const res = await call<{ data: { data: { from: string; options: string[]; at: string } }[] }>(
    "GET",
    "/v1/events?filter[type]=poll.voted",
    { key },
  );
  expect(res.status).toBe(200);
  return res.body.data.map((event) => event.data).reverse();
}

describe("WAHA: sending a poll", () => {
  it("sends a MessagePollRequest under our message id, with reply_to for a reply; one option for a single-choice poll", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const first = await sendPoll(key, session.id);
    const [sent] = await waitForMessages(key, [first]);
    expect(sent).toMatchObject({
      status: "sent",
      provider_message_id: `true_${CHAT_ID}_${clientMessageIdOf(first)}`,
    });
    const call1 = waha.sent.at(-1);
    expect(call1?.path).toBe("/api/sendPoll");
    expect(call1?.body).toEqual({
      session: session.name,
      chatId: CHAT_ID,
      poll: { name: "Which days suit you?", options: DAYS, multipleAnswers: true },
      id: clientMessageIdOf(first),
    });

    const reply = await sendPoll(key, session.id, {
      reply_to: first,
      poll: { question: "One day?", options: ["Monday", "Friday"] },
    });
    expect((await waitForMessages(key, [reply]))[0]?.status).toBe("sent");
    expect(waha.sent.at(-1)?.body).toEqual({
      session: session.name,
      chatId: CHAT_ID,
      poll: { name: "One day?", options: ["Monday", "Friday"], multipleAnswers: false },
      id: clientMessageIdOf(reply),
      reply_to: sent?.provider_message_id,
    });
    expect(((await getMessage(key, reply)) as Shown).content).toBe("One day?");
  });

  it("a poll whose answer was lost is found by our id in the chat: sent once", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    waha.sendFault = "lost";
    const id = await sendPoll(key, session.id);
    await firstAttempts([id]);
    waha.sendFault = null;
    const [settled] = await settleAll(key, session.id, [id]);
    expect(settled).toMatchObject({
      status: "sent",
      provider_message_id: `true_${CHAT_ID}_${clientMessageIdOf(id)}`,
    });
    expect(settled?.metadata.settled_by).toBe("lookup");
    expect(waha.bodies.filter((b) => b.call === "POST /api/sendPoll")).toHaveLength(1);
  });
});

describe("WAHA gateway: a poll not found by our id", () => {
  const SESSION = "session_7e1d3c2b-4f5a-4b6c-9d7e-8f9a0b1c2d3e";
  const gateway = new WahaGateway(WAHA_SETTINGS, { intervalMs: 5, polls: 3 });

  beforeEach(() => {
    waha.sessions.set(SESSION, { status: "WORKING", me: null, qrCount: 0, webhooks: [] });
  });

  function query(): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "poll",
      content: JSON.stringify({ question: "Which day?", options: DAYS, multiple_answers: false }),
      mediaUrl: null,
      media: null,
      since: Date.now(),
    };
  }

  it("is absent in a chat with no message of ours since; while one could be it (an engine that ignored our id), the lookup cannot tell", async () => {
    expect(await gateway.lookup(SESSION, query())).toEqual({ result: "absent" });
    // A poll WAHA holds under another id: WAMessage says nothing of a poll to tell it by.
    expect(await gateway.send(SESSION, query())).toMatchObject({ outcome: "accepted" });
    expect(await gateway.lookup(SESSION, query())).toEqual({
      result: "unreachable",
      reason: "lookup_cannot_tell: WAHA gives no content to tell a sent poll by",
    });
  });
});

describe("WAHA: votes (poll.vote)", () => {
  it("keeps a vote per contact with counts; a redelivery, an older vote and poll.vote.failed change nothing; [] takes it back", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const id = await sendPoll(key, session.id);
    const [sent] = await waitForMessages(key, [id]);
    const pollId = sent?.provider_message_id ?? "";
    const seconds = Math.floor(Date.now() / 1000);

    for (let i = 0; i < 2; i++) {
      const res = await postWahaEvent(
        session.name,
        "poll.vote",
        votePayload(CHAT_ID, pollId, ["Tuesday"], seconds),
      );
      expect(res.body).toEqual({ success: true, ignored: false });
    }
    let shown = (await getMessage(key, id)) as Shown;
    expect(shown.metadata.poll_votes).toEqual({
      [CONTACT]: { options: ["Tuesday"], at: formatTimestamp(seconds * 1000) },
    });
    expect(shown.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 1, Wednesday: 0 });

    // The contact added Wednesday (all the options picked, as WAHA sends a multiple-answer vote).
    await postWahaEvent(
      session.name,
      "poll.vote",
      votePayload(CHAT_ID, pollId, ["Tuesday", "Wednesday"], seconds + 2),
    );
    // An earlier vote delivered late, and a vote WAHA could not decrypt: neither changes it.
    await postWahaEvent(session.name, "poll.vote", votePayload(CHAT_ID, pollId, ["Monday"], seconds + 1));
    await postWahaEvent(session.name, "poll.vote.failed", votePayload(CHAT_ID, pollId, [], seconds + 3));
    shown = (await getMessage(key, id)) as Shown;
    expect(shown.metadata.poll_votes?.[CONTACT]?.options).toEqual(["Tuesday", "Wednesday"]);
    expect(shown.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 1, Wednesday: 1 });

    // Every option unticked: the vote is taken back.
    await postWahaEvent(session.name, "poll.vote", votePayload(CHAT_ID, pollId, [], seconds + 4));
    shown = (await getMessage(key, id)) as Shown;
    expect(shown.metadata.poll_votes).toEqual({});
    expect(shown.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 0, Wednesday: 0 });
    expect((await votedEvents(key)).map((e) => [e.from, e.options])).toEqual([
      [CONTACT, ["Tuesday"]],
      [CONTACT, ["Tuesday", "Wednesday"]],
      [CONTACT, []],
    ]);
  });

  it("reads the vote's time in seconds or milliseconds, a LID voter by its LID, and skips others' polls and the session's own votes", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const id = await sendPoll(key, session.id);
    const [sent] = await waitForMessages(key, [id]);
    const pollId = sent?.provider_message_id ?? "";
    const ms = Date.now();
    const batch = (payload: unknown) =>
      parseWahaEvent({ timestamp: ms + 60_000, session: session.name, event: "poll.vote", payload })?.events;
    expect(batch(votePayload(CHAT_ID, pollId, ["Monday"], Math.floor(ms / 1000)))).toEqual([
      {
        type: "poll_vote",
        providerMessageId: pollId,
        from: CONTACT,
        options: ["Monday"],
        at: Math.floor(ms / 1000) * 1000,
      },
    ]);
    expect(batch(votePayload(CHAT_ID, pollId, ["Monday"], ms))?.[0]).toMatchObject({ at: ms });
    // No timestamp: the envelope's time. A bare poll id (GOWS): the serialised one of our poll.
    const bare = votePayload(CHAT_ID, "BAE5F2EF5C69001E", ["Monday"], 0);
    expect(batch(bare)?.[0]).toMatchObject({
      providerMessageId: `true_${CHAT_ID}_BAE5F2EF5C69001E`,
      at: ms + 60_000,
    });
    expect(batch(votePayload("4639135154355@lid", pollId, ["Monday"], 1))?.[0]).toMatchObject({
      from: "4639135154355@lid",
    });
    expect(batch(votePayload(CHAT_ID, pollId, ["Monday"], 1, false))).toEqual([]);
    const own = votePayload(CHAT_ID, pollId, ["Monday"], 1);
    expect(batch({ ...own, vote: { ...own.vote, fromMe: true } })).toEqual([]);
    // A payload without its vote's fields is not WAHA's: the whole body is refused.
    expect(
      parseWahaEvent({
        timestamp: ms,
        session: session.name,
        event: "poll.vote",
        payload: { vote: { from: CHAT_ID } },
      }),
    ).toBeNull();

    // Through the route: a LID voter's vote is kept under the LID.
    await postWahaEvent(
      session.name,
      "poll.vote",
      votePayload("4639135154355@lid", pollId, ["Wednesday"], 5),
    );
    const shown = (await getMessage(key, id)) as Shown;
    expect(Object.keys(shown.metadata.poll_votes ?? {})).toEqual(["4639135154355@lid"]);
    expect(shown.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 0, Wednesday: 1 });
  });
});
