import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession, getMessage, waitForMessages } from "./message-fixtures";

// Deleting a sent message for everyone and editing a sent text (docs/messages.md, Chat actions) through the
// sandbox, whose phone shows what changed. Each gateway's own call is tested with its fake.

const CONTACT = "+14155552671";

interface Shown {
  id: string;
  status: string;
  content: string | null;
  metadata: {
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

/** An account with a connected sandbox session and one text sent to {@link CONTACT}, `sent`. */
async function withSentText(content = "Your table is booked for 7 pm") {
  const { key, accountId } = await createAccount(1);
  const session = await connectedSession(key);
  const res = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: session.id, to_number: [CONTACT], type: "text", content },
  });
  const id = res.body.data.messages[0]!.id;
  const [sent] = await waitForMessages(key, [id]);
  expect(sent?.status).toBe("sent");
  return { key, accountId, session, id };
}

async function phone(key: string, sessionId: string): Promise<{ message_id: string; content: string }[]> {
  const res = await call<{ data: { message_id: string; content: string }[] }>(
    "GET",
    `/sandbox/sessions/${sessionId}/received?to_number=${encodeURIComponent(CONTACT)}`,
    { key },
  );
  return res.body.data;
}

async function eventsOf<T>(key: string, type: string): Promise<EventOf<T>[]> {
  const res = await call<{ data: EventOf<T>[] }>("GET", `/v1/events?filter[type]=${type}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Dates message `id`'s `sent_at` `ms` earlier: a message sent that long ago. */
async function sentEarlier(accountId: string, id: string, ms: number): Promise<void> {
  await (await accountD1(accountId))
    .prepare("UPDATE messages SET sent_at = sent_at - ? WHERE id = ?")
    .bind(ms, id)
    .run();
}

describe("DELETE /v1/chatapp/messages/{id}", () => {
  it("deletes a sent message for everyone: deleted_at, off the phone, one message.deleted event; again, nothing new", async () => {
    const { key, session, id } = await withSentText();
    expect((await phone(key, session.id)).map((m) => m.message_id)).toEqual([id]);

    const res = await call<{ data: Shown }>("DELETE", `/v1/chatapp/messages/${id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data.content).toBe("Your table is booked for 7 pm");
    expect(res.body.data.metadata.deleted_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(await phone(key, session.id)).toEqual([]);

    const again = await call<{ data: Shown }>("DELETE", `/v1/chatapp/messages/${id}`, { key });
    expect(again.status).toBe(200);
    expect(again.body.data.metadata.deleted_at).toBe(res.body.data.metadata.deleted_at);
    const events = await eventsOf<Shown>(key, "message.deleted");
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({
      id,
      metadata: { deleted_at: res.body.data.metadata.deleted_at },
    });
  });

  it("refuses a contact's message (422), one not sent (409), one past 48 hours (409), and a key without messages:write (403)", async () => {
    const { key, accountId, session, id } = await withSentText();
    const incoming = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACT, type: "text", content: "hi" },
    });
    expectProblem(
      await call("DELETE", `/v1/chatapp/messages/${incoming.body.data.id}`, { key }),
      422,
      "message_not_outgoing",
    );
    const later = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [CONTACT],
        type: "text",
        content: "later",
        scheduled_at: new Date(Date.now() + 3600_000).toISOString(),
      },
    });
    expectProblem(
      await call("DELETE", `/v1/chatapp/messages/${later.body.data.messages[0]!.id}`, { key }),
      409,
      "message_not_sent",
    );
    expectProblem(
      await call("DELETE", `/v1/chatapp/messages/${crypto.randomUUID()}`, { key }),
      404,
      "not_found",
    );
    const readOnly = await call<{ data: { api_key: string } }>("POST", "/v1/api-keys", {
      key,
      body: { name: "reader", scopes: ["messages:read"] },
    });
    expectProblem(
      await call("DELETE", `/v1/chatapp/messages/${id}`, { key: readOnly.body.data.api_key }),
      403,
      "insufficient_scope",
    );
    await sentEarlier(accountId, id, 48 * 3600_000 + 60_000);
    expectProblem(await call("DELETE", `/v1/chatapp/messages/${id}`, { key }), 409, "message_too_old");
    expect((await getMessage(key, id)) as unknown as Shown).not.toHaveProperty("metadata.deleted_at");
    expect(await eventsOf(key, "message.deleted")).toEqual([]);
  });
});

describe("PATCH /v1/chatapp/messages/{id}", () => {
  it("edits a sent text: new content on the phone, the old text in metadata.edits, one message.edited event per edit", async () => {
    const { key, session, id } = await withSentText("See you at 7");
    const first = await call<{ data: Shown }>("PATCH", `/v1/chatapp/messages/${id}`, {
      key,
      body: { content: "See you at 8" },
    });
    expect(first.status).toBe(200);
    expect(first.body.data.content).toBe("See you at 8");
    const firstAt = first.body.data.metadata.edited_at;
    expect(first.body.data.metadata.edits).toEqual([{ content: "See you at 7", at: firstAt }]);
    expect((await phone(key, session.id))[0]?.content).toBe("See you at 8");

    // The same text again changes nothing and records nothing.
    const same = await call<{ data: Shown }>("PATCH", `/v1/chatapp/messages/${id}`, {
      key,
      body: { content: "See you at 8" },
    });
    expect(same.body.data.metadata.edits).toHaveLength(1);

    const second = await call<{ data: Shown }>("PATCH", `/v1/chatapp/messages/${id}`, {
      key,
      body: { content: "See you at 8:30" },
    });
    expect(second.body.data.metadata.edits?.map((e) => e.content)).toEqual(["See you at 7", "See you at 8"]);
    const events = await eventsOf<Record<string, unknown>>(key, "message.edited");
    expect(events.map((e) => e.data)).toEqual([
      {
        message_id: id,
        session_id: session.id,
        content: "See you at 8:30",
        previous_content: "See you at 8",
        edited_at: second.body.data.metadata.edited_at,
      },
      {
        message_id: id,
        session_id: session.id,
        content: "See you at 8",
        previous_content: "See you at 7",
        edited_at: firstAt,
      },
    ]);
  });

  it("refuses another type, a deleted message, one past 15 minutes (409) and a bad body (422)", async () => {
    const { key, accountId, session, id } = await withSentText();
    const place = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [CONTACT],
        type: "location",
        location: { latitude: 1, longitude: 2, name: "Here" },
      },
    });
    const placeId = place.body.data.messages[0]!.id;
    await waitForMessages(key, [placeId]);
    const patch = (target: string, body: unknown) =>
      call("PATCH", `/v1/chatapp/messages/${target}`, { key, body: body as Record<string, unknown> });
    expectProblem(await patch(placeId, { content: "There" }), 422, "message_not_editable");
    expectProblem(await patch(id, { content: "" }), 422, "validation_failed");
    expectProblem(await patch(id, { content: "x".repeat(4097) }), 422, "validation_failed");
    expectProblem(await patch(id, { content: "ok", type: "image" }), 422, "validation_failed");

    await sentEarlier(accountId, id, 15 * 60_000 + 1_000);
    expectProblem(await patch(id, { content: "too late" }), 409, "message_too_old");
    expect(((await getMessage(key, id)) as unknown as Shown).content).toBe("Your table is booked for 7 pm");

    expect((await call("DELETE", `/v1/chatapp/messages/${id}`, { key })).status).toBe(200);
    expectProblem(await patch(id, { content: "after" }), 422, "message_not_editable");
  });
});

it("sends nothing through a disconnected session (409) and records nothing", async () => {
  const { key, session, id } = await withSentText();
  expect((await call("PATCH", `/v1/chatapp/sessions/${session.id}/disconnect`, { key })).status).toBe(200);
  expectProblem(await call("DELETE", `/v1/chatapp/messages/${id}`, { key }), 409, "session_not_connected");
  expectProblem(
    await call("PATCH", `/v1/chatapp/messages/${id}`, { key, body: { content: "new" } }),
    409,
    "session_not_connected",
  );
  const shown = (await getMessage(key, id)) as unknown as Shown;
  expect(shown.content).toBe("Your table is booked for 7 pm");
  expect(shown.metadata).not.toHaveProperty("deleted_at");
});
