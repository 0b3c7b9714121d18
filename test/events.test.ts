import { createScheduledController, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findMessage } from "../src/db/queries/messages";
import { EVENT_RETENTION_MS } from "../src/events/record";
import worker from "../src/index";
import { dispatchRequestOf } from "../src/messages/dispatch-request";
import { applyMoves } from "../src/moves/apply";
import type { ChatSession } from "../src/sessions/chat-session";
import { refuse, restoreD1 } from "./d1-outage";
import { accountDb } from "./databases";
import { backdateEvent } from "./event-fixtures";
import {
  call,
  createAccount,
  createSession,
  expectProblem,
  sessionStub,
  showSession,
  waitFor,
} from "./helpers";
import {
  connectedSession,
  driveAlarmUntil,
  getMessage,
  sendText,
  sessionStorage,
  waitForMessages,
} from "./message-fixtures";

// Every state change becomes an event in the same D1 batch as the change (src/events/record.ts),
// once per change, with `data` in exactly the shape the object's own GET returns.

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

interface EventPage {
  data: Event[];
  links: { prev: string | null; next: string | null };
  meta: { per_page: number; next_cursor: string | null; prev_cursor: string | null };
}

async function eventsOf(key: string, query = ""): Promise<Event[]> {
  const res = await call<EventPage>("GET", `/v1/events?limit=100${query}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The account's events of `type` about object `id`, oldest first. */
async function eventsAbout(key: string, type: string, id: string): Promise<Event[]> {
  const all = await eventsOf(key, `&filter[type]=${type}`);
  return all.filter((e) => (e.data.id ?? (e.data.session as { id?: string })?.id) === id).reverse();
}

describe("message events", () => {
  it("records sent, delivered and read once each, carrying the message as its GET shows it", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const id = (await sendText(key, session, ["+14155552671"])).body.data.messages[0]!.id;
    await driveAlarmUntil(session, async () => (await getMessage(key, id)).status === "read");
    const read = await getMessage(key, id);

    const events = (await eventsOf(key)).filter((e) => e.data.id === id);
    expect(events.map((e) => e.type)).toEqual(["message.read", "message.delivered", "message.sent"]);
    expect(events.map((e) => e.data.status)).toEqual(["read", "delivered", "sent"]);
    expect(events[0]!.data).toEqual(read);
    expect(events.every((e) => /^evt_[0-9a-f]{32}$/.test(e.id))).toBe(true);
    expect(events[2]!.data).toMatchObject({ sent_at: read.sent_at, delivered_at: null, read_at: null });

    // A redelivered queue message and replayed receipts change nothing, so record nothing.
    const row = await findMessage(await accountDb(accountId), accountId, id);
    expect(await sessionStub(session).enqueue([dispatchRequestOf(row!, 1)])).toBe(0);
    const now = Date.now();
    await applyMoves(env, accountId, [
      { kind: "delivered", target: { ids: [id] }, at: now, gatewayAt: now },
      { kind: "read", target: { ids: [id] }, at: now, gatewayAt: now },
    ]);
    await runDurableObjectAlarm(sessionStub(session));
    expect((await eventsOf(key)).filter((e) => e.data.id === id)).toHaveLength(3);
  });

  it("records message.failed once, with the reason, for a message the gateway refused", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const id = (await sendText(key, session, ["+14155550000"])).body.data.messages[0]!.id;
    const [failed] = await waitForMessages(key, [id]);
    const events = await eventsAbout(key, "message.failed", id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toEqual(failed);
    expect(events[0]!.data).toMatchObject({ status: "failed", reason: "recipient_not_on_chatapp" });
  });

  it("records no event for a change that rolled back, and one once it commits", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    await refuse("ledger_entries", "INSERT", { accountId, when: "NEW.kind = 'refund'" });
    const id = (await sendText(key, session, ["+14155550000"])).body.data.messages[0]!.id;
    // The object has failed the message and D1 has refused the write: a failed entry is written
    // at once (Dispatcher.fail), so one still owed (unsynced) with a `sync` retry set was refused.
    await waitFor(
      async () => {
        const { outbox, deadlines } = await sessionStorage(session);
        expect(outbox).toEqual([{ id, state: "failed", synced: 0 }]);
        expect(deadlines.map((d) => [d.kind, d.ref])).toContainEqual(["sync", ""]);
        return true;
      },
      {
        reason: "the session to fail the message and owe D1 its outcome (the outbound queue hands it over)",
        timeoutMs: 10_000,
        intervalMs: 25,
      },
    );
    expect(await getMessage(key, id)).toMatchObject({ status: "queued" });
    expect(await eventsAbout(key, "message.failed", id)).toEqual([]);

    await restoreD1();
    await runInDurableObject(sessionStub(session), (_i: ChatSession, state) => {
      state.storage.sql.exec("UPDATE deadlines SET due_at = 0 WHERE kind = 'sync'");
    });
    await runDurableObjectAlarm(sessionStub(session));
    await waitForMessages(key, [id]);
    expect(await eventsAbout(key, "message.failed", id)).toHaveLength(1);
  });

  it("records message.received once for an incoming message", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await call<{ data: Record<string, unknown> }>(
      "POST",
      `/sandbox/sessions/${session}/inbound`,
      {
        key,
        body: { from_number: "+14155552699", type: "text", content: "hi" },
      },
    );
    expect(res.status).toBe(201);
    const events = await eventsAbout(key, "message.received", String(res.body.data.id));
    expect(events.map((e) => e.data)).toEqual([res.body.data]);
  });
});

describe("session events", () => {
  it("records every status move with its reason, not the creation", async () => {
    const { key } = await createAccount(1);
    const { session } = await createSession(key);
    expect(await eventsOf(key, "&filter[type]=session.status_changed")).toEqual([]);
    await call("POST", `/sandbox/sessions/${session.id}/scan`, { key, body: {} });
    await call("PATCH", `/v1/chatapp/sessions/${session.id}/disconnect`, { key });
    const shown = await showSession(key, session.id);
    const events = (await eventsAbout(key, "session.status_changed", session.id)).map((e) => e.data);
    expect(events.map((s) => [s.status, s.reason])).toEqual([
      ["connected", null],
      ["disconnected", "disconnected_by_user"],
    ]);
    expect(events.at(-1)).toEqual(shown);
  });

  it("records session.qr_updated with the session and the new QR code at each rotation", async () => {
    const { key } = await createAccount(1);
    const { session, qr_code } = await createSession(key);
    await runInDurableObject(sessionStub(session.id), (_i: ChatSession, state) => {
      state.storage.sql.exec("UPDATE deadlines SET due_at = 0 WHERE kind = 'qr_rotate'");
    });
    await runDurableObjectAlarm(sessionStub(session.id));
    const events = await eventsOf(key, "&filter[type]=session.qr_updated");
    expect(events).toHaveLength(1);
    const current = await call<{ qr_code: string }>("GET", `/v1/chatapp/sessions/${session.id}/qr-code`, {
      key,
    });
    expect(events[0]!.data).toEqual({
      session: await showSession(key, session.id),
      qr_code: current.body.qr_code,
    });
    expect(events[0]!.data.qr_code).not.toBe(qr_code);
  });
});

describe("GET /v1/events", () => {
  async function accountWithEvents() {
    const { key } = await createAccount(1);
    const { session } = await createSession(key);
    await call("POST", `/sandbox/sessions/${session.id}/scan`, { key, body: {} });
    const sent = (await sendText(key, session.id, ["+14155552671", "+14155552672"])).body.data.messages;
    await waitForMessages(
      key,
      sent.map((m) => m.id),
      (m) => m.status === "read",
    );
    // 1 session.status_changed + 2 × (sent, delivered, read) = 7 events.
    return { key, session: session.id };
  }

  it("pages newest first with cursors, both ways", async () => {
    const { key } = await accountWithEvents();
    const all = await eventsOf(key);
    expect(all).toHaveLength(7);
    const sorted = [...all].sort((a, b) =>
      a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0,
    );
    expect(all.map((e) => e.created_at)).toEqual(sorted.map((e) => e.created_at));

    const seen: string[] = [];
    let next: string | null = "/v1/events?limit=3";
    const pages: EventPage[] = [];
    while (next) {
      const res: { status: number; body: EventPage } = await call<EventPage>(
        "GET",
        next.replace("http://localhost", ""),
        { key },
      );
      expect(res.status).toBe(200);
      pages.push(res.body);
      seen.push(...res.body.data.map((e) => e.id));
      next = res.body.links.next;
    }
    expect(seen).toEqual(all.map((e) => e.id));
    expect(pages.map((p) => p.data.length)).toEqual([3, 3, 1]);
    const back = await call<EventPage>("GET", (pages[2]!.links.prev ?? "").replace("http://localhost", ""), {
      key,
    });
    expect(back.body.data.map((e) => e.id)).toEqual(pages[1]!.data.map((e) => e.id));
  });

  it("filters by repeated or comma-separated types and by time", async () => {
    const { key } = await accountWithEvents();
    const reads = await eventsOf(key, "&filter[type]=message.read");
    expect(reads.map((e) => e.type)).toEqual(["message.read", "message.read"]);
    const two = await eventsOf(key, "&filter[type]=message.read&filter[type]=session.status_changed");
    expect(two.map((e) => e.type).sort()).toEqual(["message.read", "message.read", "session.status_changed"]);
    const comma = await eventsOf(key, "&filter[type]=message.read,session.status_changed");
    expect(comma.map((e) => e.id)).toEqual(two.map((e) => e.id));

    const all = await eventsOf(key);
    const oldest = all.at(-1)!.created_at;
    expect((await eventsOf(key, `&time_to=${oldest}`)).map((e) => e.id)).toEqual(
      all.filter((e) => e.created_at <= oldest).map((e) => e.id),
    );
    expect((await eventsOf(key, `&time_from=${all[0]!.created_at}`)).map((e) => e.id)).toEqual(
      all.filter((e) => e.created_at >= all[0]!.created_at).map((e) => e.id),
    );
  });

  it("refuses an unknown type or a bad limit with 422", async () => {
    const { key } = await createAccount(1);
    const bad = expectProblem(
      await call("GET", "/v1/events?filter[type]=message.lost", { key }),
      422,
      "validation_failed",
    );
    expect(Object.keys(bad.errors as object)).toEqual(["filter[type].0"]);
    expectProblem(await call("GET", "/v1/events?limit=0", { key }), 422, "validation_failed");
  });

  it("shows one event, and answers 404 for another account's, an unknown or a malformed id; 401 without a key", async () => {
    const { key } = await accountWithEvents();
    const [latest] = await eventsOf(key);
    const shown = await call<{ data: Event }>("GET", `/v1/events/${latest!.id}`, { key });
    expect(shown.status).toBe(200);
    expect(shown.body.data).toEqual(latest);

    const other = await createAccount(1);
    expectProblem(await call("GET", `/v1/events/${latest!.id}`, { key: other.key }), 404, "not_found");
    expect(await eventsOf(other.key)).toEqual([]);
    expectProblem(await call("GET", `/v1/events/evt_${"0".repeat(32)}`, { key }), 404, "not_found");
    expectProblem(await call("GET", "/v1/events/not-an-event", { key }), 404, "not_found");
    expectProblem(await call("GET", "/v1/events"), 401, "unauthenticated");
  });

  it("keeps events 30 days: the hourly sweep deletes older ones", async () => {
    const { key } = await accountWithEvents();
    const [latest, ...older] = await eventsOf(key);
    await backdateEvent(latest!.id, Date.now() - EVENT_RETENTION_MS - 1000);
    await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env);
    expect((await eventsOf(key)).map((e) => e.id)).toEqual(older.map((e) => e.id));
  });
});

describe("OpenAPI document", () => {
  it("lists every event type in its top-level webhooks, with the payload its GET shape has", async () => {
    const res = await call<{
      webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
      paths: Record<string, unknown>;
    }>("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const { EVENT_TYPES, TEST_EVENT_TYPE } = await import("../src/events/catalogue");
    expect(Object.keys(res.body.webhooks).sort()).toEqual([...EVENT_TYPES, TEST_EVENT_TYPE].sort());
    const payload = (type: string) =>
      JSON.stringify(res.body.webhooks[type]?.post.requestBody.content["application/json"]?.schema);
    expect(payload("message.read")).toContain('"$ref":"#/components/schemas/Message"');
    expect(payload("session.status_changed")).toContain('"$ref":"#/components/schemas/Session"');
    expect(payload("session.qr_updated")).toContain("SessionQrUpdate");
    expect(payload("otp.failed")).toContain('"$ref":"#/components/schemas/Otp"');
    expect(payload("otp.failed")).toMatch(/"(const|enum)":\[?"otp.failed"/);
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(["/v1/events", "/v1/events/{id}"]));
  });
});
