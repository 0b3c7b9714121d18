import { beforeEach, describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { call, createAccount } from "../helpers";
import { getMessage } from "../message-fixtures";
import { useNetwork } from "../network";
import {
  connectedWahaSession,
  FakeWaha,
  postWahaEvent,
  wahaEditedPayload,
  wahaRevokedPayload,
  wahaTextPayload,
} from "./fake-waha";

// A contact's own edits and deletes for everyone of the messages they sent (docs/messages.md, Chat actions:
// "Contacts' own edits and deletes"), through WAHA's `message.edited` and `message.revoked`
// webhooks (fake-waha.ts builds them in WAHA's documented shapes).

useNetwork();

const CONTACT = "+14155550123";
const CHAT = "14155550123@c.us";

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

interface Shown {
  id: string;
  direction: string;
  from_number: string | null;
  content: string | null;
  metadata: {
    deleted_at?: string;
    edited_at?: string;
    edits?: { content: string | null; at: string }[];
  };
}

/** An API timestamp (src/lib/time.ts `formatTimestamp`) of epoch ms `ms`. */
const stamp = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");

/**
 * An account with a connected WAHA session and the contact's text `Table for two at 7?` (WAHA id
 * `false_<chat>_AAAM1`) stored as an incoming message: its id, `incoming`.
 */
async function withIncoming(chat = CHAT) {
  const { key, accountId } = await createAccount(1);
  const session = await connectedWahaSession(waha, key);
  const res = await postWahaEvent(
    session.name,
    "message",
    wahaTextPayload(chat, "Table for two at 7?", "AAAM1"),
  );
  expect(res.body).toEqual({ success: true, ignored: false });
  const incoming = await incomingId(accountId);
  return { key, accountId, session, incoming };
}

/** Our id of the account's one incoming message. */
async function incomingId(accountId: string): Promise<string> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
    .bind(accountId)
    .first<{ id: string }>();
  expect(row).not.toBeNull();
  return row?.id ?? "";
}

async function eventsOf<T>(key: string, type: string): Promise<T[]> {
  const res = await call<{ data: { type: string; data: T }[] }>(
    "GET",
    `/v1/events?limit=100&filter[type]=${type}`,
    { key },
  );
  expect(res.status).toBe(200);
  return res.body.data.map((event) => event.data).reverse();
}

const shown = async (key: string, id: string) => (await getMessage(key, id)) as unknown as Shown;

describe("WAHA: a contact edits a message they sent", () => {
  it("content becomes the new text, metadata.edits keeps the first, one message.edited event; redelivered, nothing new", async () => {
    const { key, session, incoming } = await withIncoming();
    const at = Date.now();
    const payload = wahaEditedPayload(CHAT, "AAAM1", "Table for three at 7?");
    for (let i = 0; i < 3; i++) {
      const res = await postWahaEvent(session.name, "message.edited", payload, { timestamp: at });
      expect(res.body).toEqual({ success: true, ignored: false });
    }
    const message = await shown(key, incoming);
    expect(message).toMatchObject({
      direction: "incoming",
      from_number: CONTACT,
      content: "Table for three at 7?",
    });
    expect(message.metadata.edits).toEqual([{ content: "Table for two at 7?", at: stamp(at) }]);
    expect(message.metadata.edited_at).toBe(stamp(at));
    expect(await eventsOf(key, "message.edited")).toEqual([
      {
        message_id: incoming,
        session_id: session.id,
        content: "Table for three at 7?",
        previous_content: "Table for two at 7?",
        edited_at: stamp(at),
      },
    ]);
  });

  it("edits are ordered by their time: an older edit arriving after a newer one changes nothing", async () => {
    const { key, session, incoming } = await withIncoming();
    const at = Date.now();
    const edit = (body: string, ms: number) =>
      postWahaEvent(session.name, "message.edited", wahaEditedPayload(CHAT, "AAAM1", body), {
        timestamp: ms,
      });
    await edit("Table for four at 7?", at + 2_000);
    await edit("Table for three at 7?", at + 1_000);
    let message = await shown(key, incoming);
    expect(message.content).toBe("Table for four at 7?");
    expect(message.metadata.edits).toEqual([{ content: "Table for two at 7?", at: stamp(at + 2_000) }]);
    expect(message.metadata.edited_at).toBe(stamp(at + 2_000));

    await edit("Table for four at 8?", at + 3_000);
    message = await shown(key, incoming);
    expect(message.content).toBe("Table for four at 8?");
    expect(message.metadata.edits).toEqual([
      { content: "Table for two at 7?", at: stamp(at + 2_000) },
      { content: "Table for four at 7?", at: stamp(at + 3_000) },
    ]);
    expect(
      (await eventsOf<{ content: string; previous_content: string }>(key, "message.edited")).map((e) => [
        e.previous_content,
        e.content,
      ]),
    ).toEqual([
      ["Table for two at 7?", "Table for four at 7?"],
      ["Table for four at 7?", "Table for four at 8?"],
    ]);
  });

  it("an edit of a LID contact's message applies through their contact", async () => {
    const lid = "4639135154355@lid";
    const { key, session, incoming } = await withIncoming(lid);
    const at = Date.now();
    await postWahaEvent(session.name, "message.edited", wahaEditedPayload(lid, "AAAM1", "Table for six?"), {
      timestamp: at,
    });
    const message = await shown(key, incoming);
    expect(message.content).toBe("Table for six?");
    expect(message.metadata.edits).toEqual([{ content: "Table for two at 7?", at: stamp(at) }]);
  });

  it("an edit arriving before its message is dropped; the session's own (fromMe) edits are skipped", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedWahaSession(waha, key);
    const early = await postWahaEvent(
      session.name,
      "message.edited",
      wahaEditedPayload(CHAT, "AAAM1", "Table for three at 7?"),
    );
    expect(early.body).toEqual({ success: true, ignored: false });
    await postWahaEvent(session.name, "message", wahaTextPayload(CHAT, "Table for two at 7?", "AAAM1"));
    const incoming = await incomingId(accountId);
    await postWahaEvent(
      session.name,
      "message.edited",
      wahaEditedPayload(CHAT, "AAAM1", "Edited on our phone", { fromMe: true }),
    );
    const message = await shown(key, incoming);
    expect(message.content).toBe("Table for two at 7?");
    expect(message.metadata.edits).toBeUndefined();
    expect(message.metadata.edited_at).toBeUndefined();
    expect(await eventsOf(key, "message.edited")).toEqual([]);
  });

  it("an edit naming another contact's chat finds no message of theirs and changes nothing", async () => {
    const { key, session, incoming } = await withIncoming();
    await postWahaEvent(
      session.name,
      "message.edited",
      wahaEditedPayload("14155550999@c.us", "AAAM1", "Not my message"),
    );
    expect((await shown(key, incoming)).content).toBe("Table for two at 7?");
    expect(await eventsOf(key, "message.edited")).toEqual([]);
  });
});

describe("WAHA: a contact deletes for everyone a message they sent", () => {
  it("deleted_at set, content kept, one message.deleted event; again, nothing new; a later edit changes nothing", async () => {
    const { key, session, incoming } = await withIncoming();
    const at = Date.now();
    const payload = wahaRevokedPayload(CHAT, "AAAM1");
    for (let i = 0; i < 2; i++) {
      const res = await postWahaEvent(session.name, "message.revoked", payload, {
        timestamp: at + i * 1_000,
      });
      expect(res.body).toEqual({ success: true, ignored: false });
    }
    const message = await shown(key, incoming);
    expect(message.content).toBe("Table for two at 7?");
    expect(message.metadata.deleted_at).toBe(stamp(at));
    const deleted = await eventsOf<Shown>(key, "message.deleted");
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ id: incoming, direction: "incoming" });
    expect(deleted[0]?.metadata.deleted_at).toBe(stamp(at));

    await postWahaEvent(session.name, "message.edited", wahaEditedPayload(CHAT, "AAAM1", "Too late"), {
      timestamp: at + 5_000,
    });
    expect((await shown(key, incoming)).content).toBe("Table for two at 7?");
    expect(await eventsOf(key, "message.edited")).toEqual([]);
  });

  it("the session's own delete on its phone (fromMe) and one from another chat change nothing", async () => {
    const { key, session, incoming } = await withIncoming();
    await postWahaEvent(session.name, "message.revoked", wahaRevokedPayload(CHAT, "AAAM1", { fromMe: true }));
    await postWahaEvent(session.name, "message.revoked", wahaRevokedPayload("14155550999@c.us", "AAAM1"));
    expect((await shown(key, incoming)).metadata.deleted_at).toBeUndefined();
    expect(await eventsOf(key, "message.deleted")).toEqual([]);
  });
});
