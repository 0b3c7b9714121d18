import { delay } from "msw";
import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession, sendText, waitForMessages } from "./message-fixtures";
import {
  createEndpoint,
  deliveriesOf,
  type EventRecord,
  RECEIVER,
  recordingEnv,
  runQueue,
  seedEvent,
  useWebhookReceiver,
} from "./webhook-fixtures";

// An event carries its object whole (a message with its text, a QR code, a one-time code), so
// reading it takes the scope that reads the object (src/events/catalogue.ts, EVENT_READ_SCOPE):
// the event log shows a key only those types, and a key subscribes a webhook endpoint only to them.

const receiver = useWebhookReceiver();

/** A key of `key`'s account holding `scopes`, made with `key`. */
async function keyWith(key: string, scopes: string[]): Promise<string> {
  const res = await call<{ data: { api_key: string } }>("POST", "/v1/api-keys", {
    key,
    body: { name: scopes.join(" "), scopes },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.api_key;
}

async function eventsOf(key: string, query = ""): Promise<EventRecord[]> {
  const res = await call<{ data: EventRecord[] }>("GET", `/v1/events?limit=100${query}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** An account with a connected session and one message read: session.status_changed, message.sent/.delivered/.read. */
async function accountWithEvents() {
  const { key, accountId } = await createAccount(1);
  const session = await connectedSession(key);
  const id = (await sendText(key, session.id, ["+14155552671"])).body.data.messages[0]!.id;
  await waitForMessages(key, [id], (m) => m.status === "read");
  const all = await eventsOf(key);
  expect(all.map((e) => e.type).sort()).toEqual([
    "message.delivered",
    "message.read",
    "message.sent",
    "session.status_changed",
  ]);
  return { key, accountId, session, all };
}

function expectScopeProblem(res: Awaited<ReturnType<typeof call>>, scope: string) {
  const problem = expectProblem(res, 403, "insufficient_scope");
  expect(problem.scope).toBe(scope);
  expect(res.headers.get("www-authenticate")).toBe(
    `Bearer realm="api", error="insufficient_scope", scope="${scope}"`,
  );
  return problem;
}

describe("GET /v1/events shows a key only the event types it may read", () => {
  it("leaves message events out of the list for a key without messages:read", async () => {
    const { key, all } = await accountWithEvents();
    const ofType = (prefix: string) => all.filter((e) => e.type.startsWith(prefix)).map((e) => e.id);

    const sessionsOnly = await keyWith(key, ["events:read", "sessions:read"]);
    expect((await eventsOf(sessionsOnly)).map((e) => e.id)).toEqual(ofType("session."));
    // messages:send sends, it does not read: a send-only key reads no message event.
    const sendOnly = await keyWith(key, ["events:read", "messages:send"]);
    expect(await eventsOf(sendOnly)).toEqual([]);
    const messagesOnly = await keyWith(key, ["events:read", "messages:read"]);
    expect((await eventsOf(messagesOnly)).map((e) => e.id)).toEqual(ofType("message."));
  });

  it("refuses with 403 a filter or an event id of a type the key may not read, naming the scope", async () => {
    const { key, all } = await accountWithEvents();
    const reader = await keyWith(key, ["events:read", "sessions:write"]);
    const filtered = await call("GET", "/v1/events?filter[type]=message.sent", { key: reader });
    expect(expectScopeProblem(filtered, "messages:read").detail).toBe(
      "This API key lacks the `messages:read` scope that `message.sent` events need: they carry what `messages:read` reads.",
    );
    const mixed = await call("GET", "/v1/events?filter[type]=session.status_changed,message.read", {
      key: reader,
    });
    expectScopeProblem(mixed, "messages:read");
    const otp = await call("GET", "/v1/events?filter[type]=otp.verified", { key: reader });
    expectScopeProblem(otp, "otp:read");
    const sessionEvents = await eventsOf(reader, "&filter[type]=session.status_changed");
    expect(sessionEvents).toHaveLength(1);

    const message = all.find((e) => e.type === "message.sent");
    expectScopeProblem(await call("GET", `/v1/events/${message?.id}`, { key: reader }), "messages:read");
    const shown = await call<{ data: EventRecord }>("GET", `/v1/events/${sessionEvents[0]?.id}`, {
      key: reader,
    });
    expect(shown.body.data).toEqual(sessionEvents[0]);
  });
});

describe("webhook endpoints get only the event types the key may read", () => {
  it("refuses a webhooks:write key an endpoint for message events with 403, creating nothing", async () => {
    const { key } = await createAccount();
    const hooks = await keyWith(key, ["webhooks:write"]);
    const res = await call("POST", "/v1/webhooks", {
      key: hooks,
      body: { url: `${RECEIVER}/x`, events: ["message.received"] },
    });
    expect(expectScopeProblem(res, "messages:read").detail).toContain(
      "A key subscribes an endpoint only to events it may read.",
    );
    const withSessions = await keyWith(key, ["webhooks:write", "sessions:read"]);
    const mixed = await call("POST", "/v1/webhooks", {
      key: withSessions,
      body: { url: `${RECEIVER}/x`, events: ["session.qr_updated", "otp.verified"] },
    });
    expectScopeProblem(mixed, "otp:read");
    const list = await call<{ data: unknown[] }>("GET", "/v1/webhooks", { key });
    expect(list.body.data).toEqual([]);
  });

  it("gives an every-type endpoint of a key without * the types that key may read", async () => {
    const { key, accountId } = await createAccount();
    const events = async (by: string, asked?: string[] | null) => {
      const res = await call<{ data: { events: string[] | null } }>("POST", "/v1/webhooks", {
        key: by,
        body: { url: `${RECEIVER}/x`, ...(asked === undefined ? {} : { events: asked }) },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.data.events;
    };
    expect(await events(key)).toBeNull();
    expect(await events(await keyWith(key, ["webhooks:write"]), null)).toEqual([]);
    expect(await events(await keyWith(key, ["webhooks:write", "sessions:write", "otp:verify"]))).toEqual([
      "session.status_changed",
      "session.qr_updated",
      "session.health_changed",
      "otp.verified",
      "otp.failed",
      "template.status_changed",
    ]);
    const { results } = await (await accountD1(accountId))
      .prepare("SELECT events FROM webhook_endpoints WHERE account_id = ? AND url = ? ORDER BY rowid")
      .bind(accountId, `${RECEIVER}/x`)
      .all<{ events: string | null }>();
    expect(results.slice(-3).map((r) => r.events)).toEqual([
      null,
      "[]",
      '["session.status_changed","session.qr_updated","session.health_changed","otp.verified","otp.failed","template.status_changed"]',
    ]);
  });

  it("delivers no message event to the every-type endpoint of a key without messages:read", async () => {
    const { key, accountId } = await createAccount(1);
    const full = await createEndpoint(key, "full", receiver);
    const limitedKey = await keyWith(key, ["webhooks:write", "sessions:read"]);
    const limited = await createEndpoint(limitedKey, "limited", receiver);
    const hooksOnly = await createEndpoint(await keyWith(key, ["webhooks:write"]), "hooks-only", receiver);

    // A fan-out of a message event, run by hand: one deliver message, to the `*` key's endpoint.
    const eventId = await seedEvent(accountId);
    const recording = recordingEnv();
    await runQueue("chatapp-webhooks", [{ kind: "event", eventId, accountId }], recording.env);
    expect(recording.sent).toEqual([{ kind: "deliver", eventId, endpointId: full.id, accountId }]);

    // The real path: a session linked and a message read, delivered by the real queues.
    const session = await connectedSession(key);
    const id = (await sendText(key, session.id, ["+14155552672"])).body.data.messages[0]!.id;
    await waitForMessages(key, [id], (m) => m.status === "read");
    for (let i = 0; i < 400 && receiver.to("full").length < 4; i++) await delay(25);
    await delay(200);
    const typesAt = (path: string) => receiver.to(path).map((r) => (JSON.parse(r.body) as EventRecord).type);
    expect(typesAt("full").sort()).toEqual([
      "message.delivered",
      "message.read",
      "message.sent",
      "session.status_changed",
    ]);
    expect(typesAt("limited")).toEqual(["session.status_changed"]);
    expect(typesAt("hooks-only")).toEqual([]);
    expect(receiver.to("limited")[0]?.verified).toBe(true);
    expect(await deliveriesOf(limited.id)).toHaveLength(1);
    expect(await deliveriesOf(hooksOnly.id)).toEqual([]);
  });

  it("holds a PATCH to the same rule, and refuses moving an endpoint whose events the key may not read", async () => {
    const { key } = await createAccount();
    const everything = await createEndpoint(key, "everything", receiver);
    const messages = await createEndpoint(key, "messages", receiver, ["message.read"]);
    const limitedKey = await keyWith(key, ["webhooks:write", "sessions:read"]);
    const patch = (id: string, body: Record<string, unknown>) =>
      call<{ data: { url: string; events: string[] | null } }>("PATCH", `/v1/webhooks/${id}`, {
        key: limitedKey,
        body,
      });

    expectScopeProblem(await patch(everything.id, { events: ["message.received"] }), "messages:read");
    // Pointing an endpoint elsewhere sends its events there: only for a key that may read them all.
    const moved = await patch(messages.id, { url: `${RECEIVER}/mine` });
    expect(expectScopeProblem(moved, "messages:read").detail).toContain(
      "a key moves an endpoint to another URL only if it may read everything the endpoint receives.",
    );
    expectScopeProblem(await patch(everything.id, { url: `${RECEIVER}/mine` }), "messages:read");
    // Every type includes types added later: only `*` reads those.
    const readsAll = await keyWith(key, [
      "webhooks:write",
      "messages:read",
      "sessions:read",
      "otp:read",
      "campaigns:read",
      "account:read",
      "erasures:read",
    ]);
    const movedAll = await call("PATCH", `/v1/webhooks/${everything.id}`, {
      key: readsAll,
      body: { url: `${RECEIVER}/mine` },
    });
    expect(expectScopeProblem(movedAll, "*").detail).toContain(
      "This endpoint receives every event type, including types added later, which only a `*` key reads.",
    );
    // Its own note, or the same URL, is fine.
    expect((await patch(everything.id, { description: "note", url: `${RECEIVER}/everything` })).status).toBe(
      200,
    );
    // Narrowed to what it reads, it may move it.
    const narrowed = await patch(messages.id, { events: null, url: `${RECEIVER}/mine` });
    expect(narrowed.status, narrowed.text).toBe(200);
    expect(narrowed.body.data).toMatchObject({
      url: `${RECEIVER}/mine`,
      events: [
        "session.status_changed",
        "session.qr_updated",
        "session.health_changed",
        "template.status_changed",
      ],
    });
    const shown = await call<{ data: { url: string; events: string[] | null } }>(
      "GET",
      `/v1/webhooks/${everything.id}`,
      { key },
    );
    expect(shown.body.data).toMatchObject({ url: `${RECEIVER}/everything`, events: null });
  });
});
