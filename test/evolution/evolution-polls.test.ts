import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { EvolutionGateway } from "../../src/gateways/evolution";
import type { SentQuery } from "../../src/gateways/gateway";
import { formatTimestamp } from "../../src/lib/time";
import { EVOLUTION_SETTINGS } from "../gateway-config";
import { call, createAccount, createSession, expectProblem } from "../helpers";
import { balanceOf, getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Polls through Evolution API (docs/messages.md, Sending messages → Polls), against the fake server: `POST
// /message/sendPoll/{instance}` (`SendPollDto`, `pollMessageSchema` of
// evolution-foundation/evolution-api src/validate/message.schema.ts: `name`, `selectableCount`
// 0–10, `values` 2–10 unique), a lost answer settled by the poll Evolution stored, and contacts'
// votes from the `messages.upsert` of a `pollUpdateMessage` the Baileys channel decrypted.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const CONTACT_JID = "14155550123@s.whatsapp.net";
const DAYS = ["Monday", "Tuesday", "Wednesday"];

interface Shown extends Message {
  type: string;
  content: string | null;
  metadata: Message["metadata"] & {
    poll_votes?: Record<string, { options: string[]; at: string }>;
    poll_counts?: Record<string, number>;
  };
}

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

function sendPoll(
  key: string,
  sessionId: string,
  poll: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: sessionId, to_number: [CONTACT], type: "poll", poll, ...extra },
  });
}

/**
 * The `messages.upsert` data of `CONTACT`'s vote on our poll `pollId` as the Baileys channel sends
 * it (whatsapp.baileys.service.ts, `messageType === 'pollUpdateMessage'`, then `prepareMessage`):
 * `vote.selectedOptions` the options' names when it decrypted the vote (`decrypted`), else the
 * encrypted vote alone; `senderTimestampMs` a protobuf Long as `prepareMessage` passes it on;
 * `pollUpdates` the options with their voters, beside the message.
 */
function voteData(
  evo: FakeEvolution,
  name: string,
  pollId: string,
  selected: string[] | null,
  at: number,
  id = "3EB0VOTE0001",
) {
  const bytes = { 0: 12, 1: 34 };
  return {
    key: { remoteJid: CONTACT_JID, fromMe: false, id },
    pushName: "Bruno",
    status: "DELIVERY_ACK",
    message: {
      pollUpdateMessage: {
        pollCreationMessageKey: { remoteJid: OWNER_JID, fromMe: false, id: pollId },
        vote: {
          encPayload: bytes,
          encIv: bytes,
          ...(selected === null ? {} : { selectedOptions: selected }),
        },
        senderTimestampMs: { low: at % 2 ** 32, high: Math.floor(at / 2 ** 32), unsigned: false },
      },
      messageContextInfo: {},
    },
    contextInfo: null,
    messageType: "pollUpdateMessage",
    messageTimestamp: Math.floor(at / 1000),
    instanceId: evo.instance(name).id,
    source: "android",
    ...(selected === null
      ? {}
      : {
          pollUpdates: DAYS.map((day) => ({
            name: day,
            voters: selected.includes(day) ? [CONTACT_JID] : [],
          })),
        }),
  };
}

describe("Evolution API: sending a poll", () => {
  it("is POST /message/sendPoll with name, values and selectableCount (0 several, 1 one), quoting a reply; stored as Baileys' poll", async () => {
    const { key } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const res = await sendPoll(key, session.id, {
      question: "Which days?",
      options: DAYS,
      multiple_answers: true,
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = (await waitForMessages(key, [id])) as Shown[];
    const [sent] = evolution.sent;
    expect(sent?.path).toBe(`/message/sendPoll/${session.name}`);
    expect(sent?.body).toEqual({
      number: "14155550123",
      name: "Which days?",
      selectableCount: 0,
      values: DAYS,
      messageId: clientMessageIdOf(id),
    });
    expect(sent?.record).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true },
      messageType: "pollCreationMessage",
    });
    expect(done).toMatchObject({
      status: "sent",
      type: "poll",
      content: "Which days?",
      provider_message_id: sent?.id,
    });

    const reply = await sendPoll(
      key,
      session.id,
      { question: "One day?", options: ["Monday", "Friday"] },
      { reply_to: id },
    );
    const replyId = reply.body.data.messages[0]?.id ?? "";
    expect((await waitForMessages(key, [replyId]))[0]?.status).toBe("sent");
    expect(evolution.sent[1]?.body).toEqual({
      number: "14155550123",
      name: "One day?",
      selectableCount: 1,
      values: ["Monday", "Friday"],
      messageId: clientMessageIdOf(replyId),
      quoted: { key: { id: sent?.id, remoteJid: CONTACT_JID, fromMe: true } },
    });
    expect(evolution.sent[1]?.record.messageType).toBe("pollCreationMessageV3");
  });

  it("more than 10 options, which pollMessageSchema refuses, is 422 type_not_supported_by_gateway before any charge", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const options = Array.from({ length: 11 }, (_, i) => `Option ${i + 1}`);
    const res = await sendPoll(key, session.id, { question: "Pick", options });
    const problem = expectProblem(res, 422, "type_not_supported_by_gateway");
    expect(Object.keys((problem.errors as object) ?? {})).toEqual(["poll.options"]);
    expect(evolution.sent).toEqual([]);
    expect(await balanceOf(accountId)).toBe(10);
    const ten = await sendPoll(key, session.id, { question: "Pick", options: options.slice(0, 10) });
    expect(ten.status, ten.text).toBe(201);
  });
});

describe("Evolution API gateway: a poll whose answer was lost", () => {
  const SESSION = "session_6c1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e";
  const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

  function query(poll: object): SentQuery {
    const id = crypto.randomUUID();
    return {
      id,
      clientMessageId: clientMessageIdOf(id),
      to: CONTACT,
      type: "poll",
      content: JSON.stringify(poll),
      mediaUrl: null,
      media: null,
      since: Date.now(),
    };
  }

  beforeEach(async () => {
    await gateway.create(SESSION);
    evolution.link(SESSION, PHONE);
  });

  it("is unknown, then found by the chat, the time, the question and the options; another poll is absent", async () => {
    const poll = { question: "Which day?", options: DAYS, multiple_answers: false };
    const sent = query(poll);
    evolution.sendFault = "lost";
    expect(await gateway.send(SESSION, sent)).toMatchObject({ outcome: "unknown" });
    evolution.sendFault = null;
    const stored = evolution.sent[0];
    expect(stored?.id).not.toBe(sent.clientMessageId);
    expect(await gateway.lookup(SESSION, sent)).toEqual({ result: "found", providerMessageId: stored?.id });
    expect(await gateway.lookup(SESSION, query({ ...poll, options: ["Monday", "Tuesday"] }))).toEqual({
      result: "absent",
    });
    expect(await gateway.lookup(SESSION, query({ ...poll, multiple_answers: true }))).toEqual({
      result: "absent",
    });
  });
});

describe("Evolution API: votes (messages.upsert of a pollUpdateMessage)", () => {
  it("keeps a decrypted vote per contact with counts; a later one replaces it; an older one, an undecrypted one and an empty one change nothing", async () => {
    const { key } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const res = await sendPoll(key, session.id, {
      question: "Which days?",
      options: DAYS,
      multiple_answers: true,
    });
    const id = res.body.data.messages[0]?.id ?? "";
    const [sent] = await waitForMessages(key, [id]);
    const pollId = sent?.provider_message_id ?? "";
    const at = Date.now();

    for (let i = 0; i < 2; i++) {
      const posted = await postEvolutionEvent(
        session.name,
        "messages.upsert",
        voteData(evolution, session.name, pollId, ["Tuesday"], at),
      );
      expect(posted.body).toEqual({ success: true, ignored: false });
    }
    let shown = (await getMessage(key, id)) as Shown;
    expect(shown.metadata.poll_votes).toEqual({
      [CONTACT]: { options: ["Tuesday"], at: formatTimestamp(at) },
    });
    expect(shown.metadata.poll_counts).toEqual({ Monday: 0, Tuesday: 1, Wednesday: 0 });

    const later = voteData(
      evolution,
      session.name,
      pollId,
      ["Monday", "Tuesday"],
      at + 2_000,
      "3EB0VOTE0002",
    );
    const older = voteData(evolution, session.name, pollId, ["Wednesday"], at + 1_000, "3EB0VOTE0003");
    // Not decrypted (Evolution did not hold the poll): no options named.
    const opaque = voteData(evolution, session.name, pollId, null, at + 3_000, "3EB0VOTE0004");
    // Empty: a vote taken back, or one Evolution could not decrypt; it cannot tell which.
    const empty = voteData(evolution, session.name, pollId, [], at + 4_000, "3EB0VOTE0005");
    for (const data of [later, older, opaque, empty])
      await postEvolutionEvent(session.name, "messages.upsert", data);
    shown = (await getMessage(key, id)) as Shown;
    expect(shown.metadata.poll_votes).toEqual({
      [CONTACT]: { options: ["Monday", "Tuesday"], at: formatTimestamp(at + 2_000) },
    });
    expect(shown.metadata.poll_counts).toEqual({ Monday: 1, Tuesday: 1, Wednesday: 0 });
    const events = await call<{ data: { data: { options: string[] } }[] }>(
      "GET",
      "/v1/events?filter[type]=poll.voted",
      {
        key,
      },
    );
    expect(events.body.data.map((e) => e.data.options)).toEqual([["Monday", "Tuesday"], ["Tuesday"]]);
    // No vote was stored as an incoming message.
    const incoming = await call<{ data: unknown[] }>(
      "GET",
      "/v1/chatapp/messages?filter[direction]=incoming",
      { key },
    );
    expect(incoming.body.data).toEqual([]);
  });
});
