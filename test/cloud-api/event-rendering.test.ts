import { describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { EVENTS } from "../event-fixtures";
import { call, createAccount } from "../helpers";
import { getMessage, type Message, sendText, waitForMessages } from "../message-fixtures";
import { cloudApiSession, deliverWebhooks, postWebhook, useFakeGraph } from "./webhooks-fixtures";

// Message events point at their message (src/db/queries/events.ts `MESSAGE_EVENT_FIELDS`): an
// event keeps what changes after a message is made, and is rendered when it is read. Each one must
// still show the message exactly as `GET /v1/chatapp/messages/{id}` showed it right after the
// event, however far the message moved since. Meta's statuses are posted one at a time, so the
// message can be read between them.

const fake = useFakeGraph();
const CONTACT = "+14155550123";

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: Message;
}

async function eventsOf(key: string, types: string): Promise<Event[]> {
  const res = await call<{ data: Event[] }>("GET", `/v1/events?limit=100&filter[type]=${types}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data.reverse();
}

/** Event `id` of account `accountId`, as its database stores it. */
async function storedEvent(accountId: string, id: string) {
  return (await accountD1(accountId))
    .prepare(`SELECT message_id, snapshot FROM ${EVENTS} WHERE id = ?`)
    .bind(id)
    .first<{ message_id: string | null; snapshot: string }>();
}

describe("message events that point at their message", () => {
  it("render the message as it was at each event: received, sent, delivered, read and failed", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const session = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId: session.phoneNumberId, from: CONTACT.slice(1), text: "hi" });
    graph.queueIncoming({ phoneNumberId: session.phoneNumberId, from: "14155550124", text: "hello" });
    await deliverWebhooks(graph);
    const [incoming] = (await eventsOf(key, "message.received")).map((e) => e.data);
    const atReceived = await getMessage(key, incoming?.id ?? "");

    const sent = await sendText(key, session.id, [CONTACT, "+14155550124"]);
    expect(sent.status, sent.text).toBe(201);
    const [id, other] = sent.body.data.messages.map((m: { id: string }) => m.id) as [string, string];
    await waitForMessages(key, [id, other], (m) => m.status === "sent");
    const atSent = await getMessage(key, id);
    const otherAtSent = await getMessage(key, other);
    const wamid = graph.sent.find((s) => s.body.biz_opaque_callback_data === id)?.wamid ?? "";
    const otherWamid = graph.sent.find((s) => s.body.biz_opaque_callback_data === other)?.wamid ?? "";

    // Meta's statuses, one at a time: `sent`, `delivered`, `read` of the first message (the
    // other's are dropped), then a failure of the other.
    const hooks = (await graph.takeWebhooks()).filter((h) => h.body.includes(wamid));
    const shown: Message[] = [];
    for (const hook of hooks) {
      expect((await postWebhook(hook.body, hook.signature)).status).toBe(200);
      shown.push(await getMessage(key, id));
    }
    expect(shown.map((m) => m.status)).toEqual(["sent", "delivered", "read"]);
    graph.queueFailedStatus(otherWamid, 131026, "Message undeliverable");
    await deliverWebhooks(graph);
    const otherAtFailed = await getMessage(key, other);
    expect(otherAtFailed.status).toBe("failed");

    const events = await eventsOf(
      key,
      "message.received,message.sent,message.delivered,message.read,message.failed",
    );
    const byType = (type: string, messageId: string) =>
      events.find((e) => e.type === type && e.data.id === messageId)?.data;
    expect(byType("message.received", atReceived.id)).toEqual(atReceived);
    expect(byType("message.sent", id)).toEqual(atSent);
    expect(byType("message.delivered", id)).toEqual(shown[1]);
    expect(byType("message.read", id)).toEqual(shown[2]);
    expect(byType("message.sent", other)).toEqual(otherAtSent);
    expect(byType("message.failed", other)).toEqual(otherAtFailed);
    // The same through GET /v1/events/{id}, which webhook deliveries render alike.
    const sentEvent = events.find((e) => e.type === "message.sent" && e.data.id === id);
    const one = await call<{ data: Event }>("GET", `/v1/events/${sentEvent?.id}`, { key });
    expect(one.body.data).toEqual(sentEvent);

    // Stored: a pointer and the fields that change, not the message; its id made of the message's.
    const stored = await storedEvent(accountId, sentEvent?.id ?? "");
    expect(stored?.message_id).toBe(id);
    const hex = id.replaceAll("-", "");
    expect(sentEvent?.id).toBe(`evt_${hex.slice(0, 12)}1${hex.slice(13)}`);
    const snapshot = JSON.parse(stored?.snapshot ?? "[]") as unknown[];
    // MESSAGE_EVENT_FIELDS in order: media, status, reason, delivered and read (ms from the
    // event's time), metadata (its receipt count alone while it holds no key written later).
    expect(snapshot).toEqual([null, "sent", null, null, null, 0]);
    expect(atSent.metadata).not.toHaveProperty("pricing");
    const readEvent = events.find((e) => e.type === "message.read" && e.data.id === id);
    const readAt = Date.parse(readEvent?.created_at ?? "");
    expect(JSON.parse((await storedEvent(accountId, readEvent?.id ?? ""))?.snapshot ?? "[]")).toEqual([
      null,
      "read",
      null,
      Date.parse(shown[2]?.delivered_at ?? "") - readAt,
      Date.parse(shown[2]?.read_at ?? "") - readAt,
      // Its receipts as their count: the message's first two.
      { ...shown[2]?.metadata, events: 2 },
    ]);
    expect(shown[2]?.metadata.events).toHaveLength(2);
  });

  it("an event stored whole before events pointed still renders from its copy", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const session = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId: session.phoneNumberId, from: CONTACT.slice(1), text: "hi" });
    await deliverWebhooks(graph);
    const [received] = await eventsOf(key, "message.received");
    const message = await getMessage(key, received?.data.id ?? "");
    // Rewrite it as events were stored before: the whole message row, its contact inside.
    const d1 = await accountD1(accountId);
    const row = await d1.prepare("SELECT * FROM messages WHERE id = ?").bind(message.id).first();
    const contact = await d1
      .prepare("SELECT * FROM contacts WHERE id = ?")
      .bind((row as { contact_id: string }).contact_id)
      .first();
    const camel = (r: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), v]),
      );
    const legacy = { ...camel(row ?? {}), contact: camel(contact ?? {}) };
    await d1
      .prepare(
        "UPDATE events SET object_id = NULL, snapshot = ? WHERE id = unhex(substr(?, 5)) AND account_number = (SELECT number FROM accounts WHERE id = ?)",
      )
      .bind(JSON.stringify(legacy), received?.id, accountId)
      .run();
    expect((await storedEvent(accountId, received?.id ?? ""))?.message_id).toBeNull();
    const [again] = await eventsOf(key, "message.received");
    expect(again).toEqual(received);
  });
});
