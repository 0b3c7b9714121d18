import { describe, expect, it } from "vitest";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession, getMessage, sendText, waitForMessages } from "./message-fixtures";

// Marking incoming messages read (docs/messages.md, Chat actions): `POST /v1/chatapp/messages/{id}/read`
// through the sandbox, which takes every receipt. Each gateway's own call is tested with its fake
// (test/waha, test/evolution, test/cloud-api).

const CONTACT = "+14155552671";
const OTHER = "+14155552672";

interface Shown {
  id: string;
  status: string;
  read_at: string | null;
  direction: string;
}

async function inbound(key: string, sessionId: string, from: string, content: string): Promise<string> {
  const res = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${sessionId}/inbound`, {
    key,
    body: { from_number: from, type: "text", content },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/** A key of the account holding `scopes` alone. */
async function createKey(key: string, scopes: string[]): Promise<string> {
  const res = await call<{ data: { api_key: string } }>("POST", "/v1/api-keys", {
    key,
    body: { name: scopes.join(" "), scopes },
  });
  expect(res.status).toBe(201);
  return res.body.data.api_key;
}

function markRead(key: string, id: string, headers: Record<string, string> = {}) {
  return call<{ data: Shown; marked: number }>("POST", `/v1/chatapp/messages/${id}/read`, { key, headers });
}

describe("POST /v1/chatapp/messages/{id}/read", () => {
  it("marks the message and the chat's earlier ones read, not later ones nor another contact's; again, nothing moves", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const first = await inbound(key, session.id, CONTACT, "one");
    const second = await inbound(key, session.id, CONTACT, "two");
    const other = await inbound(key, session.id, OTHER, "elsewhere");
    const target = await inbound(key, session.id, CONTACT, "three");
    const later = await inbound(key, session.id, CONTACT, "four");

    const res = await markRead(key, target);
    expect(res.status).toBe(200);
    expect(res.body.marked).toBe(3);
    expect(res.body.data).toMatchObject({ id: target, status: "read", direction: "incoming" });
    expect(res.body.data.read_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    for (const id of [first, second]) {
      const shown = (await getMessage(key, id)) as unknown as Shown;
      expect(shown.status).toBe("read");
      expect(shown.read_at).toBe(res.body.data.read_at);
    }
    for (const id of [other, later]) {
      const shown = (await getMessage(key, id)) as unknown as Shown;
      expect(shown).toMatchObject({ status: "delivered", read_at: null });
    }

    const again = await markRead(key, target);
    expect(again.status).toBe(200);
    expect(again.body.marked).toBe(0);
    expect(again.body.data.read_at).toBe(res.body.data.read_at);
  });

  it("replays its answer for the same Idempotency-Key", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const id = await inbound(key, session.id, CONTACT, "hello");
    const headers = { "Idempotency-Key": "read-1" };
    const first = await markRead(key, id, headers);
    const second = await markRead(key, id, headers);
    expect(first.body.marked).toBe(1);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
  });

  it("refuses an outgoing message (422), an unknown one (404), a disconnected session (409), and a key without messages:write (403)", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const sent = (await sendText(key, session.id, [CONTACT])).body.data.messages[0]!.id;
    await waitForMessages(key, [sent]);
    expectProblem(await markRead(key, sent), 422, "message_not_incoming");
    expectProblem(await markRead(key, crypto.randomUUID()), 404, "not_found");

    const id = await inbound(key, session.id, CONTACT, "hello");
    const readOnly = await createKey(key, ["messages:read"]);
    expectProblem(await markRead(readOnly, id), 403, "insufficient_scope");
    const writer = await createKey(key, ["messages:write"]);
    expect((await markRead(writer, id)).status).toBe(200);

    const other = await inbound(key, session.id, CONTACT, "again");
    const off = await call("PATCH", `/v1/chatapp/sessions/${session.id}/disconnect`, { key });
    expect(off.status).toBe(200);
    expectProblem(await markRead(key, other), 409, "session_not_connected");
    expect(((await getMessage(key, other)) as unknown as Shown).status).toBe("delivered");
  });
});

describe("mark_read on a reply", () => {
  function reply(key: string, body: Record<string, unknown>) {
    return call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      key,
      body: { to_number: [CONTACT], type: "text", content: "On it", ...body },
    });
  }

  it("marks the quoted message and the chat's earlier ones read before the reply goes out", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const first = await inbound(key, session.id, CONTACT, "hello?");
    const quoted = await inbound(key, session.id, CONTACT, "anyone?");
    const other = await inbound(key, session.id, OTHER, "elsewhere");
    const res = await reply(key, { chatapp_session_id: session.id, reply_to: quoted, mark_read: true });
    expect(res.status).toBe(201);
    for (const id of [first, quoted])
      expect(((await getMessage(key, id)) as unknown as Shown).status).toBe("read");
    expect(((await getMessage(key, other)) as unknown as Shown).status).toBe("delivered");
    const [sent] = await waitForMessages(key, [res.body.data.messages[0]?.id ?? ""]);
    expect(sent?.status).toBe("sent");
  });

  it("needs reply_to and the messages:write scope, and marks nothing for a quote the send refuses", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const quoted = await inbound(key, session.id, CONTACT, "hi");
    const alone = await reply(key, { chatapp_session_id: session.id, mark_read: true });
    expectProblem(alone, 422, "validation_failed");
    expect(Object.keys((alone.body as { errors?: object }).errors ?? {})).toEqual(["mark_read"]);

    const sender = await createKey(key, ["messages:send"]);
    const scoped = await reply(sender, { chatapp_session_id: session.id, reply_to: quoted, mark_read: true });
    expectProblem(scoped, 403, "insufficient_scope");

    // Another chat: the send refuses the quote, and the contact's message stays unread.
    const elsewhere = await call("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [OTHER],
        type: "text",
        content: "x",
        reply_to: quoted,
        mark_read: true,
      },
    });
    expectProblem(elsewhere, 422, "reply_to_other_chat");
    expect(((await getMessage(key, quoted)) as unknown as Shown).status).toBe("delivered");
  });
});
