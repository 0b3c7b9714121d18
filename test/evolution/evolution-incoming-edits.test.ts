import { beforeEach, describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { call, createAccount, createSession } from "../helpers";
import { getMessage } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// A contact's own edits and deletes for everyone of the messages they sent (docs/messages.md, Chat actions:
// "Contacts' own edits and deletes"), through Evolution API's webhooks: an edit comes in a
// `messages.update` carrying `message.editedMessage`, a delete in a `messages.delete`
// (src/gateways/evolution/events.ts `editEvents`, `revokeEvents`; fake-evolution.ts
// `incomingEdit`, `incomingRevoke` build them as Evolution's Baileys channel sends them).

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const OTHER = "+14155550999";
const LID = "207935014371343@lid";
const ID = "3EB0C0FFEE000001";

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
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

async function connectedSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
    sender: OWNER_JID,
  });
  return { id: session.id, name };
}

/**
 * An account with a connected Evolution session and the contact's text `Table for two at 7?`
 * (Baileys id {@link ID}) stored as an incoming message: from {@link CONTACT}'s number, or from the
 * user of {@link LID} with that number in `remoteJidAlt` (`lid`).
 */
async function withIncoming(lid = false) {
  const { key, accountId } = await createAccount(1);
  const session = await connectedSession(key);
  const data = lid
    ? evolution.incomingFromLid(session.name, ID, LID, "Table for two at 7?", { phone: CONTACT })
    : evolution.incomingText(session.name, ID, CONTACT, "Table for two at 7?");
  const res = await postEvolutionEvent(session.name, "messages.upsert", data);
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

describe("Evolution API: a contact edits a message they sent", () => {
  it("content becomes the new text, metadata.edits keeps the first, one message.edited event; redelivered, nothing new", async () => {
    const { key, session, incoming } = await withIncoming();
    const at = Date.now();
    const data = evolution.incomingEdit(session.name, ID, CONTACT, "Table for three at 7?");
    for (let i = 0; i < 3; i++) {
      const res = await postEvolutionEvent(session.name, "messages.update", data, { at });
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

  it("edits are ordered by the webhook's time: an older edit arriving after a newer one changes nothing", async () => {
    const { key, session, incoming } = await withIncoming();
    const at = Date.now();
    const edit = (text: string, ms: number) =>
      postEvolutionEvent(
        session.name,
        "messages.update",
        evolution.incomingEdit(session.name, ID, CONTACT, text),
        {
          at: ms,
        },
      );
    await edit("Table for four at 7?", at + 2_000);
    await edit("Table for three at 7?", at + 1_000);
    let message = await shown(key, incoming);
    expect(message.content).toBe("Table for four at 7?");
    expect(message.metadata.edits).toEqual([{ content: "Table for two at 7?", at: stamp(at + 2_000) }]);

    await edit("Table for four at 8?", at + 3_000);
    message = await shown(key, incoming);
    expect(message.content).toBe("Table for four at 8?");
    expect(message.metadata.edits).toEqual([
      { content: "Table for two at 7?", at: stamp(at + 2_000) },
      { content: "Table for four at 7?", at: stamp(at + 3_000) },
    ]);
    expect(message.metadata.edited_at).toBe(stamp(at + 3_000));
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

  it("an edit from a @lid chat applies to that user's message through their contact", async () => {
    const { key, session, incoming } = await withIncoming(true);
    const at = Date.now();
    await postEvolutionEvent(
      session.name,
      "messages.update",
      evolution.incomingEdit(session.name, ID, LID, "Table for six?"),
      { at },
    );
    const message = await shown(key, incoming);
    expect(message).toMatchObject({ from_number: CONTACT, content: "Table for six?" });
    expect(message.metadata.edits).toEqual([{ content: "Table for two at 7?", at: stamp(at) }]);
  });

  it("an edit of a caption (imageMessage.caption) becomes the content", async () => {
    const { key, session, incoming } = await withIncoming();
    await postEvolutionEvent(
      session.name,
      "messages.update",
      evolution.incomingEdit(session.name, ID, CONTACT, "Now with a caption", { caption: true }),
    );
    expect((await shown(key, incoming)).content).toBe("Now with a caption");
  });

  it("an edit before its message is dropped; the session's own (fromMe) edit and another chat's change nothing", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    const early = await postEvolutionEvent(
      session.name,
      "messages.update",
      evolution.incomingEdit(session.name, ID, CONTACT, "Table for three at 7?"),
    );
    expect(early.body).toEqual({ success: true, ignored: false });
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingText(session.name, ID, CONTACT, "Table for two at 7?"),
    );
    const incoming = await incomingId(accountId);
    for (const data of [
      evolution.incomingEdit(session.name, ID, CONTACT, "Edited on our phone", { fromMe: true }),
      evolution.incomingEdit(session.name, ID, OTHER, "Not my message"),
      evolution.incomingEdit(session.name, "3EB0UNKNOWN00001", CONTACT, "No such message"),
    ])
      await postEvolutionEvent(session.name, "messages.update", data);
    const message = await shown(key, incoming);
    expect(message.content).toBe("Table for two at 7?");
    expect(message.metadata.edits).toBeUndefined();
    expect(message.metadata.edited_at).toBeUndefined();
    expect(await eventsOf(key, "message.edited")).toEqual([]);
  });
});

describe("Evolution API: a contact deletes for everyone a message they sent", () => {
  it("deleted_at set, content kept, one message.deleted event; again, nothing new; a later edit changes nothing", async () => {
    const { key, session, incoming } = await withIncoming();
    const at = Date.now();
    const data = evolution.incomingRevoke(ID, CONTACT);
    for (let i = 0; i < 2; i++) {
      const res = await postEvolutionEvent(session.name, "messages.delete", data, { at: at + i * 1_000 });
      expect(res.body).toEqual({ success: true, ignored: false });
    }
    const message = await shown(key, incoming);
    expect(message.content).toBe("Table for two at 7?");
    expect(message.metadata.deleted_at).toBe(stamp(at));
    const deleted = await eventsOf<Shown>(key, "message.deleted");
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ id: incoming, direction: "incoming" });
    expect(deleted[0]?.metadata.deleted_at).toBe(stamp(at));

    await postEvolutionEvent(
      session.name,
      "messages.update",
      evolution.incomingEdit(session.name, ID, CONTACT, "Too late"),
      { at: at + 5_000 },
    );
    expect((await shown(key, incoming)).content).toBe("Table for two at 7?");
    expect(await eventsOf(key, "message.edited")).toEqual([]);
  });

  it("a delete from a @lid chat (with remoteJidAlt) applies to that user's message", async () => {
    const { key, session, incoming } = await withIncoming(true);
    const at = Date.now();
    await postEvolutionEvent(
      session.name,
      "messages.delete",
      evolution.incomingRevoke(ID, LID, { phone: CONTACT }),
      {
        at,
      },
    );
    expect((await shown(key, incoming)).metadata.deleted_at).toBe(stamp(at));
    expect(await eventsOf(key, "message.deleted")).toHaveLength(1);
  });

  it("the session's own deletes, another chat's and an unknown message change nothing", async () => {
    const { key, session, incoming } = await withIncoming();
    for (const data of [
      evolution.incomingRevoke(ID, CONTACT, { fromMe: true }),
      evolution.incomingRevoke(ID, OTHER),
      evolution.incomingRevoke("3EB0UNKNOWN00001", CONTACT),
      // `deleteMessage`'s own webhook for a delete made through Evolution's API.
      {
        id: "cmx0000000000000000000001",
        key: { remoteJid: "14155550123@s.whatsapp.net", fromMe: true, id: ID },
        messageType: "conversation",
        status: "DELETED",
      },
    ])
      await postEvolutionEvent(session.name, "messages.delete", data);
    expect((await shown(key, incoming)).metadata.deleted_at).toBeUndefined();
    expect(await eventsOf(key, "message.deleted")).toEqual([]);
  });
});
