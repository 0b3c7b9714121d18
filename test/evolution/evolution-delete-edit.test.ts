import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { EvolutionGateway } from "../../src/gateways/evolution";
import { GatewayError } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { EVOLUTION_API_KEY, EVOLUTION_SETTINGS, EVOLUTION_URL } from "../gateway-config";
import { call, createAccount, createSession, expectProblem } from "../helpers";
import { getMessage, type Message, type SendResponse, sendText, waitForMessages } from "../message-fixtures";
import { network, useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Deleting a sent message for everyone and editing a sent text through Evolution API (docs/messages.md,
// Chat actions): `DELETE /v1/chatapp/messages/{id}` and `PATCH /v1/chatapp/messages/{id}` on an
// Evolution session send `DELETE /chat/deleteMessageForEveryone/{instance}` (`deleteMessageSchema`,
// the key in the DELETE's JSON body) and `POST /chat/updateMessage/{instance}`
// (`updateMessageSchema`), against the fake server (fake-evolution.ts), which plays the Baileys
// channel's `deleteMessage` and `updateMessage`. The rules common to every gateway (windows,
// types, scopes): message-delete-edit.test.ts.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const DIGITS = "14155550123";
const CONTACT_JID = "14155550123@s.whatsapp.net";
const LID = "123456789012345@lid";

interface Shown extends Message {
  content: string | null;
  metadata: Message["metadata"] & {
    deleted_at?: string;
    edited_at?: string;
    edits?: { content: string | null; at: string }[];
  };
}

interface EventOf<T> {
  id: string;
  type: string;
  data: T;
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

/** An account with a connected Evolution session and the text "hello" sent to {@link CONTACT}. */
async function withSentText() {
  const { key, accountId } = await createAccount(10);
  const session = await connectedEvolutionSession(key);
  const id = (await sendText(key, session.id, [CONTACT])).body.data.messages[0]?.id ?? "";
  const [sent] = await waitForMessages(key, [id]);
  expect(sent?.status).toBe("sent");
  const keyId = sent?.provider_message_id ?? "";
  expect(keyId).not.toBe("");
  return { key, accountId, session, id, keyId };
}

function edit(key: string, id: string, content: string) {
  return call<{ data: Shown }>("PATCH", `/v1/chatapp/messages/${id}`, { key, body: { content } });
}

function remove(key: string, id: string) {
  return call<{ data: Shown }>("DELETE", `/v1/chatapp/messages/${id}`, { key });
}

async function shown(key: string, id: string): Promise<Shown> {
  return (await getMessage(key, id)) as Shown;
}

async function eventsOf<T>(key: string, type: string): Promise<EventOf<T>[]> {
  const res = await call<{ data: EventOf<T>[] }>("GET", `/v1/events?filter[type]=${type}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The requests the fake received for chat action `path` (`deleteMessageForEveryone`, `updateMessage`). */
function callsTo(path: string) {
  return evolution.bodies.filter((b) => b.call.includes(`/chat/${path}/`));
}

/** The text Evolution holds for its message `keyId` (the fake's store). */
function storedText(keyId: string): unknown {
  return evolution.sent.find((s) => s.id === keyId)?.record.message.conversation;
}

describe("Evolution API: editing a sent text", () => {
  it("sends updateMessage with the chat's number and the message's key; content, metadata.edits and one message.edited event", async () => {
    const { key, session, id, keyId } = await withSentText();

    const res = await edit(key, id, "hello, edited");
    expect(res.status).toBe(200);
    expect(res.body.data.content).toBe("hello, edited");
    const at = res.body.data.metadata.edited_at;
    expect(at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(res.body.data.metadata.edits).toEqual([{ content: "hello", at }]);
    expect(callsTo("updateMessage")).toEqual([
      {
        call: `POST /chat/updateMessage/${session.name}`,
        body: {
          number: DIGITS,
          text: "hello, edited",
          key: { id: keyId, remoteJid: CONTACT_JID, fromMe: true },
        },
      },
    ]);
    expect(evolution.edits).toEqual([
      {
        instance: session.name,
        jid: CONTACT_JID,
        text: "hello, edited",
        key: { id: keyId, remoteJid: CONTACT_JID, fromMe: true },
      },
    ]);
    expect(storedText(keyId)).toBe("hello, edited");

    // The same text again: no call, no event, the message as it is.
    const same = await edit(key, id, "hello, edited");
    expect(same.status).toBe(200);
    expect(same.body.data.metadata).toMatchObject({ edited_at: at, edits: [{ content: "hello", at }] });
    expect(evolution.edits).toHaveLength(1);

    const second = await edit(key, id, "hello again");
    expect(second.body.data.metadata.edits?.map((e) => e.content)).toEqual(["hello", "hello, edited"]);
    expect(evolution.edits.map((e) => e.text)).toEqual(["hello, edited", "hello again"]);
    expect(storedText(keyId)).toBe("hello again");

    const events = await eventsOf<Record<string, unknown>>(key, "message.edited");
    expect(events.map((e) => e.data)).toEqual([
      {
        message_id: id,
        session_id: session.id,
        content: "hello again",
        previous_content: "hello, edited",
        edited_at: second.body.data.metadata.edited_at,
      },
      {
        message_id: id,
        session_id: session.id,
        content: "hello, edited",
        previous_content: "hello",
        edited_at: at,
      },
    ]);
  });

  it("an edit whose answer was lost is 503 and records nothing; asked again, it is made again and recorded once", async () => {
    const { key, id, keyId } = await withSentText();
    evolution.chatActionFault = "lost";
    expectProblem(await edit(key, id, "hello, edited"), 503, "gateway_unavailable");
    expect(evolution.edits).toHaveLength(1);
    const unchanged = await shown(key, id);
    expect(unchanged.content).toBe("hello");
    expect(unchanged.metadata).not.toHaveProperty("edits");
    expect(await eventsOf(key, "message.edited")).toEqual([]);

    evolution.chatActionFault = null;
    const res = await edit(key, id, "hello, edited");
    expect(res.status).toBe(200);
    expect(evolution.edits.map((e) => e.text)).toEqual(["hello, edited", "hello, edited"]);
    expect(storedText(keyId)).toBe("hello, edited");
    expect(res.body.data.metadata.edits).toEqual([
      { content: "hello", at: res.body.data.metadata.edited_at },
    ]);
    expect(await eventsOf(key, "message.edited")).toHaveLength(1);
  });

  it("Evolution's refusals are 502 gateway_rejected and change nothing: a message it does not hold, one in another chat", async () => {
    const { key, id, keyId } = await withSentText();
    const stored = evolution.sent.find((s) => s.id === keyId);
    if (!stored) throw new Error("the fake holds no sent message");

    // Its store names the message's chat by another JID: 400 "RemoteJid does not match".
    stored.record.key.remoteJid = "5511987654321@s.whatsapp.net";
    const other = expectProblem(await edit(key, id, "hello, edited"), 502, "gateway_rejected");
    expect(other.detail).toContain("message_other_chat");

    // Its store lacks the message: 400 "Message not compatible".
    evolution.sent.splice(evolution.sent.indexOf(stored), 1);
    const missing = expectProblem(await edit(key, id, "hello, edited"), 502, "gateway_rejected");
    expect(missing.detail).toContain("message_not_found");

    expect(evolution.edits).toEqual([]);
    const unchanged = await shown(key, id);
    expect(unchanged.content).toBe("hello");
    expect(unchanged.metadata).not.toHaveProperty("edited_at");
    expect(await eventsOf(key, "message.edited")).toEqual([]);
  });

  it("past WhatsApp's 15 minutes it is 409 message_too_old without a call", async () => {
    const { key, accountId, id } = await withSentText();
    await (await accountD1(accountId))
      .prepare("UPDATE messages SET sent_at = sent_at - ? WHERE id = ?")
      .bind(15 * 60_000 + 1_000, id)
      .run();
    expectProblem(await edit(key, id, "too late"), 409, "message_too_old");
    expect(callsTo("updateMessage")).toEqual([]);
    expect((await shown(key, id)).content).toBe("hello");
  });
});

describe("Evolution API: deleting a sent message for everyone", () => {
  it("sends deleteMessageForEveryone with the message's key in the DELETE's body; deleted_at, content kept, one message.deleted event", async () => {
    const { key, session, id, keyId } = await withSentText();

    const res = await remove(key, id);
    expect(res.status).toBe(200);
    expect(res.body.data.content).toBe("hello");
    const deletedAt = res.body.data.metadata.deleted_at;
    expect(deletedAt).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(callsTo("deleteMessageForEveryone")).toEqual([
      {
        call: `DELETE /chat/deleteMessageForEveryone/${session.name}`,
        body: { id: keyId, remoteJid: CONTACT_JID, fromMe: true },
      },
    ]);
    expect(evolution.deletions).toEqual([
      { instance: session.name, key: { id: keyId, remoteJid: CONTACT_JID, fromMe: true } },
    ]);
    expect(evolution.sent.find((s) => s.id === keyId)?.record.key.deleted).toBe(true);

    // Again: the message as it is, no call, no second event.
    const again = await remove(key, id);
    expect(again.status).toBe(200);
    expect(again.body.data.metadata.deleted_at).toBe(deletedAt);
    expect(evolution.deletions).toHaveLength(1);
    const events = await eventsOf<Shown>(key, "message.deleted");
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ id, content: "hello", metadata: { deleted_at: deletedAt } });

    // A deleted message cannot be edited: refused before any call.
    expectProblem(await edit(key, id, "after"), 422, "message_not_editable");
    expect(callsTo("updateMessage")).toEqual([]);
  });

  it("a delete whose answer was lost is 503 and records nothing; asked again, it is made again and recorded once", async () => {
    const { key, id } = await withSentText();
    evolution.chatActionFault = "lost";
    expectProblem(await remove(key, id), 503, "gateway_unavailable");
    expect(evolution.deletions).toHaveLength(1);
    expect((await shown(key, id)).metadata).not.toHaveProperty("deleted_at");
    expect(await eventsOf(key, "message.deleted")).toEqual([]);

    evolution.chatActionFault = null;
    const res = await remove(key, id);
    expect(res.status).toBe(200);
    expect(res.body.data.metadata.deleted_at).toBeDefined();
    expect(evolution.deletions).toHaveLength(2);
    expect(await eventsOf(key, "message.deleted")).toHaveLength(1);
  });

  it("Evolution's 500 (a closed connection) is 503 gateway_unavailable, its 404 (no instance) 502 gateway_rejected; nothing is recorded", async () => {
    const { key, session, id } = await withSentText();
    evolution.instance(session.name).state = "close";
    expectProblem(await remove(key, id), 503, "gateway_unavailable");
    expectProblem(await edit(key, id, "hello, edited"), 503, "gateway_unavailable");
    expect(evolution.deletions).toEqual([]);
    expect(evolution.edits).toEqual([]);

    evolution.instances.delete(session.name);
    expectProblem(await remove(key, id), 502, "gateway_rejected");
    expectProblem(await edit(key, id, "hello, edited"), 502, "gateway_rejected");

    const unchanged = await shown(key, id);
    expect(unchanged.content).toBe("hello");
    expect(unchanged.metadata).not.toHaveProperty("deleted_at");
    expect(unchanged.metadata).not.toHaveProperty("edits");
    expect(await eventsOf(key, "message.deleted")).toEqual([]);
    expect(await eventsOf(key, "message.edited")).toEqual([]);
  });
});

it("a message sent to a LID (to_user_id) is edited and deleted in its @lid chat", async () => {
  const { key } = await createAccount(10);
  const session = await connectedEvolutionSession(key);
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: session.id, to_user_id: [LID], type: "text", content: "hello" },
  });
  expect(res.status).toBe(201);
  const id = res.body.data.messages[0]?.id ?? "";
  const [sent] = await waitForMessages(key, [id]);
  expect(sent?.status).toBe("sent");
  const keyId = sent?.provider_message_id ?? "";
  const lidKey = { id: keyId, remoteJid: LID, fromMe: true };

  expect((await edit(key, id, "hello, edited")).status).toBe(200);
  expect(callsTo("updateMessage").map((b) => b.body)).toEqual([
    { number: LID, text: "hello, edited", key: lidKey },
  ]);
  expect(storedText(keyId)).toBe("hello, edited");

  expect((await remove(key, id)).status).toBe(200);
  expect(evolution.deletions).toEqual([{ instance: session.name, key: lidKey }]);
});

describe("Evolution API gateway: deleteMessage and editMessage", () => {
  const SESSION = "session_2f3e4d5c-6b7a-4890-9abc-def012345678";
  const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

  beforeEach(async () => {
    await gateway.create(SESSION);
    evolution.link(SESSION, PHONE);
  });

  /** Sends "hello" to {@link CONTACT} through the gateway; @returns its `key.id`. */
  async function sentId(clientMessageId: string): Promise<string> {
    const outcome = await gateway.send(SESSION, {
      id: crypto.randomUUID(),
      clientMessageId,
      to: CONTACT,
      type: "text",
      content: "hello",
      mediaUrl: null,
      media: null,
    });
    if (outcome.outcome !== "accepted") throw new Error(`not sent: ${JSON.stringify(outcome)}`);
    return outcome.providerMessageId;
  }

  it("refuses a BSUID chat without a call (permanent recipient_not_supported)", async () => {
    const target = { chat: "US.13491208655302741918", providerMessageId: "3EB0BSUID001" };
    for (const attempt of [
      gateway.deleteMessage(SESSION, target),
      gateway.editMessage(SESSION, target, "x"),
    ]) {
      const error = await attempt.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ reason: "recipient_not_supported", permanent: true });
    }
    expect(evolution.calls.filter((c) => c.includes("Message"))).toEqual([]);
  });

  it("deletes a message Evolution does not hold as a no-op relay (201), as the channel does", async () => {
    await gateway.deleteMessage(SESSION, { chat: CONTACT, providerMessageId: "3EB0UNKNOWN1" });
    expect(evolution.deletions).toEqual([
      { instance: SESSION, key: { id: "3EB0UNKNOWN1", remoteJid: CONTACT_JID, fromMe: true } },
    ]);
  });

  it("names each of updateMessage's refusals (permanent), keeping Evolution's status and body", async () => {
    const id = await sentId("00000000-0000-4000-8000-000000000001");
    // After a delete, Evolution relays the edit and then refuses it.
    await gateway.deleteMessage(SESSION, { chat: CONTACT, providerMessageId: id });
    const deleted = await gateway
      .editMessage(SESSION, { chat: CONTACT, providerMessageId: id }, "x")
      .catch((e: unknown) => e);
    expect(deleted).toMatchObject({ reason: "message_deleted", permanent: true, status: 400 });

    for (const [status, text, reason] of [
      [400, "Message not compatible", "message_not_found"],
      [404, "Message not found", "message_not_found"],
      [400, "RemoteJid does not match", "message_other_chat"],
      [400, "Message is older than 15 minutes", "message_too_old"],
      [400, "You cannot edit others messages", "message_not_own"],
    ] as const) {
      network.use(
        http.post(`${EVOLUTION_URL}/chat/updateMessage/:name`, () =>
          HttpResponse.json(
            { status, error: status === 404 ? "Not Found" : "Bad Request", response: { message: [text] } },
            { status },
          ),
        ),
      );
      const error = await gateway
        .editMessage(SESSION, { chat: CONTACT, providerMessageId: id }, "x")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({
        reason,
        permanent: true,
        status,
        body: { response: { message: [text] } },
      });
    }
  });

  it("another 400 stays gateway_http_400 (permanent); an answer without the protocol message is gateway_bad_response (transient)", async () => {
    network.use(
      http.post(`${EVOLUTION_URL}/chat/updateMessage/:name`, () =>
        HttpResponse.json(
          { status: 400, error: "Bad Request", response: { message: ["[object Object]"] } },
          { status: 400 },
        ),
      ),
    );
    const refused = await gateway
      .editMessage(SESSION, { chat: CONTACT, providerMessageId: "3EB0ANY00001" }, "x")
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ reason: "gateway_http_400", permanent: true });

    network.use(
      http.post(`${EVOLUTION_URL}/chat/updateMessage/:name`, () => HttpResponse.json({}, { status: 200 })),
      http.delete(`${EVOLUTION_URL}/chat/deleteMessageForEveryone/:name`, () =>
        HttpResponse.json({ key: { id: "X" } }, { status: 201 }),
      ),
    );
    const target = { chat: CONTACT, providerMessageId: "3EB0ANY00001" };
    for (const attempt of [
      gateway.editMessage(SESSION, target, "x"),
      gateway.deleteMessage(SESSION, target),
    ]) {
      expect(await attempt.catch((e: unknown) => e)).toMatchObject({
        reason: "gateway_bad_response",
        permanent: false,
      });
    }
  });

  it("the fake holds the bodies to deleteMessageSchema and updateMessageSchema", async () => {
    const id = await sentId("00000000-0000-4000-8000-000000000002");
    const send = (method: "DELETE" | "POST", path: string, body: object) =>
      fetch(`${EVOLUTION_URL}/chat/${path}/${SESSION}`, {
        method,
        headers: { apikey: EVOLUTION_API_KEY, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const key = { id, remoteJid: CONTACT_JID, fromMe: true };
    for (const refused of [
      {},
      { id, remoteJid: CONTACT_JID },
      { id, fromMe: true },
      { remoteJid: CONTACT_JID, fromMe: true },
      { ...key, fromMe: "true" },
      { ...key, id: 7 },
      { ...key, participant: 5 },
      { ...key, number: DIGITS },
    ]) {
      expect((await send("DELETE", "deleteMessageForEveryone", refused)).status).toBe(400);
    }
    const edit = { number: DIGITS, text: "edited", key };
    for (const refused of [
      { ...edit, number: "" },
      { ...edit, text: "" },
      { ...edit, text: 5 },
      { number: DIGITS, key },
      { number: DIGITS, text: "edited" },
      { ...edit, key: { id, remoteJid: CONTACT_JID } },
      { ...edit, key: { ...key, participant: CONTACT_JID } },
      { ...edit, linkPreview: true },
    ]) {
      expect((await send("POST", "updateMessage", refused)).status).toBe(400);
    }
    expect(evolution.deletions).toEqual([]);
    expect(evolution.edits).toEqual([]);

    const edited = await send("POST", "updateMessage", edit);
    expect(edited.status).toBe(200);
    expect(await edited.json()).toMatchObject({
      key: { remoteJid: CONTACT_JID, fromMe: true },
      message: {
        protocolMessage: {
          key,
          type: "MESSAGE_EDIT",
          editedMessage: { extendedTextMessage: { text: "edited" } },
        },
      },
    });
    // `participant` may be given; "" passes, as `isNotEmpty` never applies to this schema.
    const deleted = await send("DELETE", "deleteMessageForEveryone", { ...key, participant: "" });
    expect(deleted.status).toBe(201);
    expect(await deleted.json()).toMatchObject({
      message: { protocolMessage: { key: { ...key, participant: "" }, type: "REVOKE" } },
    });
    expect(evolution.deletions).toEqual([{ instance: SESSION, key: { ...key, participant: "" } }]);
  });
});
