import { describe, expect, it } from "vitest";
import { checkWebhook } from "../../fakes/cloud-api/schema";
import { accountD1 } from "../databases";
import { call, createAccount } from "../helpers";
import { getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { addNumber, deliverWebhooks, linkNumber, postWebhook, useFakeGraph } from "./webhooks-fixtures";

// A contact's own edits and deletes for everyone of the messages they sent (docs/messages.md, Chat actions:
// "Contacts' own edits and deletes") through a Cloud API session: Meta's `edit` and `revoke`
// messages webhooks (for numbers onboarded from the WhatsApp Business app), which the fake queues
// in the shapes of Meta's references (fakes/cloud-api/schema.ts reading o) and each test checks.

const CONTACT = "+14155552671";
const OTHER = "+14155552672";

/** The fake Graph API's clock (epoch ms): webhooks carry its seconds as their `timestamp`. */
let clock = Date.now();
const graph = useFakeGraph({ now: () => clock });

interface Shown extends Message {
  direction: string;
  content: string | null;
  metadata: Message["metadata"] & {
    deleted_at?: string;
    edited_at?: string;
    edits?: { content: string | null; at: string }[];
  };
}

/** The API timestamp of the fake's clock `ms`, in whole seconds as Meta's `timestamp` carries it. */
const stamp = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace("Z", "000Z");

/**
 * An account with a Cloud API session whose contact {@link CONTACT} wrote "Is the blue one in
 * stock?": the number, the session, the incoming message's id and wamid.
 */
async function withIncoming() {
  clock = Date.now();
  const { key, accountId } = await createAccount(5);
  const number = addNumber(graph());
  const session = await linkNumber(key, number);
  const wamid = graph().queueIncoming({
    phoneNumberId: number.phoneNumberId,
    from: CONTACT,
    text: "Is the blue one in stock?",
  });
  await deliverWebhooks(graph());
  const row = await (await accountD1(accountId))
    .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
    .bind(accountId)
    .first<{ id: string }>();
  return { key, number, session, incoming: row?.id ?? "", wamid };
}

/** Posts the fake's queued webhooks, each checked against Meta's document first. */
async function deliverChecked() {
  return deliverWebhooks(graph(), (hooks) => {
    for (const hook of hooks) expect(checkWebhook(JSON.parse(hook.body))).toEqual([]);
    return hooks;
  });
}

async function eventsOf<T>(key: string, type: string): Promise<T[]> {
  const res = await call<{ data: { data: T }[] }>("GET", `/v1/events?limit=100&filter[type]=${type}`, {
    key,
  });
  expect(res.status).toBe(200);
  return res.body.data.map((event) => event.data).reverse();
}

const shown = async (key: string, id: string) => (await getMessage(key, id)) as Shown;

describe("Cloud API: a contact edits a message they sent", () => {
  it("an `edit` webhook: new content, the first text in metadata.edits, one message.edited event; redelivered, nothing new", async () => {
    const { key, number, session, incoming, wamid } = await withIncoming();
    clock += 60_000;
    graph().queueIncomingEdit({
      phoneNumberId: number.phoneNumberId,
      from: CONTACT,
      original: wamid,
      text: "Is the red one in stock?",
    });
    const [hook] = await deliverChecked();
    expect(hook?.res.body).toEqual({ success: true, ignored: false });
    await postWebhook(hook?.body ?? "", hook?.signature);

    const message = await shown(key, incoming);
    expect(message).toMatchObject({ direction: "incoming", content: "Is the red one in stock?" });
    expect(message.metadata.edits).toEqual([{ content: "Is the blue one in stock?", at: stamp(clock) }]);
    expect(message.metadata.edited_at).toBe(stamp(clock));
    expect(await eventsOf(key, "message.edited")).toEqual([
      {
        message_id: incoming,
        session_id: session,
        content: "Is the red one in stock?",
        previous_content: "Is the blue one in stock?",
        edited_at: stamp(clock),
      },
    ]);
  });

  it("orders edits by their timestamp: the older one, delivered last, changes nothing", async () => {
    const { key, number, incoming, wamid } = await withIncoming();
    const edit = (text: string) =>
      graph().queueIncomingEdit({
        phoneNumberId: number.phoneNumberId,
        from: CONTACT,
        original: wamid,
        text,
      });
    const start = clock;
    clock = start + 2_000;
    edit("Is the green one in stock?");
    clock = start + 4_000;
    edit("Is the red one in stock?");
    // Meta delivers the newer edit first.
    await deliverWebhooks(graph(), (hooks) => [...hooks].reverse());
    const message = await shown(key, incoming);
    expect(message.content).toBe("Is the red one in stock?");
    expect(message.metadata.edits).toEqual([
      { content: "Is the blue one in stock?", at: stamp(start + 4_000) },
    ]);
    expect((await eventsOf(key, "message.edited")).length).toBe(1);
  });

  it("ignores an edit or revoke by another user, and a contact's edit of a message the session sent", async () => {
    const { key, number, session, incoming, wamid } = await withIncoming();
    const reply = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: { chatapp_session_id: session, to_number: [CONTACT], type: "text", content: "Yes, it is" },
    });
    expect(reply.status, reply.text).toBe(201);
    const [ours] = await waitForMessages(key, [reply.body.data.messages[0]?.id ?? ""]);
    expect(ours?.status).toBe("sent");
    await graph().takeWebhooks();

    const { phoneNumberId } = number;
    graph().queueIncomingEdit({ phoneNumberId, from: OTHER, original: wamid, text: "Not mine to edit" });
    graph().queueIncomingRevoke({ phoneNumberId, from: OTHER, original: wamid });
    graph().queueIncomingEdit({
      phoneNumberId,
      from: CONTACT,
      original: ours?.provider_message_id ?? "",
      text: "Rewriting the shop's answer",
    });
    for (const { res } of await deliverChecked()) expect(res.body).toEqual({ success: true, ignored: false });

    const theirs = await shown(key, incoming);
    expect(theirs.content).toBe("Is the blue one in stock?");
    expect(theirs.metadata.edits).toBeUndefined();
    expect(theirs.metadata.deleted_at).toBeUndefined();
    const sent = await shown(key, ours?.id ?? "");
    expect(sent.content).toBe("Yes, it is");
    expect(sent.metadata.edits).toBeUndefined();
    expect(await eventsOf(key, "message.edited")).toEqual([]);
    expect(await eventsOf(key, "message.deleted")).toEqual([]);
  });
});

describe("Cloud API: a contact deletes for everyone a message they sent", () => {
  it("a `revoke` webhook: deleted_at, content kept, one message.deleted event; redelivered, nothing new", async () => {
    const { key, number, incoming, wamid } = await withIncoming();
    clock += 30_000;
    graph().queueIncomingRevoke({ phoneNumberId: number.phoneNumberId, from: CONTACT, original: wamid });
    const [hook] = await deliverChecked();
    await postWebhook(hook?.body ?? "", hook?.signature);

    const message = await shown(key, incoming);
    expect(message.content).toBe("Is the blue one in stock?");
    expect(message.metadata.deleted_at).toBe(stamp(clock));
    const deleted = await eventsOf<Shown>(key, "message.deleted");
    expect(deleted.map((event) => [event.id, event.metadata.deleted_at])).toEqual([[incoming, stamp(clock)]]);
  });
});
