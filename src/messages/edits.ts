import { batchSql, type Db } from "../db/client";
import { databaseFor } from "../db/databases";
import { contactsNamed } from "../db/queries/contacts";
import {
  editStatement,
  findMessage,
  messageOfProviderIds,
  messageWithMetadata,
  metadataIs,
  swapMetadataStatement,
} from "../db/queries/messages";
import { messages } from "../db/schema";
import { publishEvents } from "../events/publish";
import { eventsForRows, insertKeyedEventStatement, newEventId, recordedIn } from "../events/record";
import type { ContactIdentity } from "../lib/contact-identity";
import { log } from "../lib/log";
import { formatTimestamp } from "../lib/time";
import { metadataObject, metadataText, parseMessageMetadata } from "./metadata";

/*
 * A message's text changed or its deletion for everyone, written once with its event (docs/messages.md,
 * Chat actions): the one home of `metadata.deleted_at`, `metadata.edits` and `metadata.edited_at`.
 * The session's own deletes and edits (src/chat-actions/delete.ts, edit.ts) and a contact's of the
 * messages they sent (a gateway's `edited` and `revoked` events, src/gateways/gateway.ts
 * `GatewayEvent`) both write through here.
 */

/** The account's message as src/db/queries/messages.ts `findMessage` reads it, with its contact. */
export type StoredMessage = NonNullable<Awaited<ReturnType<typeof findMessage>>>;

/** What a write here came to: the message as it now stands, and whether this call changed it. */
export interface Written {
  row: StoredMessage;
  changed: boolean;
}

/** Times the message is read again when a concurrent change (a receipt) moved its metadata. */
const MAX_TRIES = 5;

/**
 * Marks `row` deleted for everyone at `at` (epoch ms): its `metadata.deleted_at`, with one
 * `message.deleted` event (`data` the Message; the event's key names the message, so a message
 * records it once), in one D1 batch, then publishes the event. Its `content` stays. A message
 * already deleted is left as it is. The write is a compare-and-swap on the metadata (`now`, epoch
 * ms, its `updated_at`): a concurrent change makes it read the message again, up to
 * {@link MAX_TRIES} times; the event is written only when the swap happened.
 * @throws Error when the metadata changed on every try.
 */
export async function writeDeleted(
  env: { WEBHOOK_QUEUE: Queue },
  db: Db,
  row: StoredMessage,
  at: number,
  now: number,
): Promise<Written> {
  let current = row;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    if (parseMessageMetadata(current.metadata).deleted_at) return { row: current, changed: false };
    const next = metadataText({ ...metadataObject(current.metadata), deleted_at: formatTimestamp(at) });
    const results = await batchSql(db, [
      swapMetadataStatement(current.id, current.metadata, next, now),
      eventsForRows("message.deleted", messages, messageWithMetadata(current.id, next)),
    ]);
    const swapped = (results[0]?.meta.changes ?? 0) > 0;
    if (swapped) await publishEvents(env, recordedIn(results, [1]));
    current = (await findMessage(db, current.accountId, current.id)) ?? current;
    if (swapped) return { row: current, changed: true };
  }
  throw new Error(`the metadata of message ${row.id} changed ${MAX_TRIES} times while it was deleted`);
}

/** An edit of a message's text (or a media message's caption), for {@link writeEdit}. */
export interface TextEdit {
  /** The session the message is on (the event's `session_id`). */
  sessionId: string;
  /** The new text. */
  content: string;
  /** When the edit was made, epoch ms: the `at` of the `edits` entry, `edited_at` and the event's `edited_at`. */
  at: number;
  /**
   * The latest edit wins: an edit not newer than the message's `edited_at` changes nothing. For a
   * contact's edits, whose webhooks may arrive in any order; the session's own are applied as made.
   */
  latestWins?: boolean;
}

/**
 * Edits `row`'s text to `edit.content`: `content` becomes it, `metadata.edits` gains `{ content,
 * at }` (the text it replaced) and `metadata.edited_at` is set, with one `message.edited` event
 * `{ message_id, session_id, content, previous_content, edited_at }` (keyed
 * `message.edited:<message>:<at>`, so one edit records one event), in one D1 batch, then publishes
 * the event. Nothing changes for the text the message already has, for a message deleted for
 * everyone, or (with `latestWins`) for an edit older than its last. Compare-and-swap and tries as
 * {@link writeDeleted}.
 * @throws Error when the metadata changed on every try.
 */
export async function writeEdit(
  env: { WEBHOOK_QUEUE: Queue },
  db: Db,
  row: StoredMessage,
  edit: TextEdit,
  now: number,
): Promise<Written> {
  let current = row;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    if (!changesText(current, edit)) return { row: current, changed: false };
    const at = formatTimestamp(edit.at);
    const next = metadataText({
      ...metadataObject(current.metadata),
      edits: [...(parseMessageMetadata(current.metadata).edits ?? []), { content: current.content, at }],
      edited_at: at,
    });
    const event = {
      id: newEventId(),
      accountId: current.accountId,
      type: "message.edited" as const,
      snapshot: JSON.stringify({
        message_id: current.id,
        session_id: edit.sessionId,
        content: edit.content,
        previous_content: current.content,
        edited_at: at,
      }),
      createdAt: now,
    };
    const results = await batchSql(db, [
      editStatement(current.id, current.metadata, next, edit.content, now),
      insertKeyedEventStatement(
        event,
        `message.edited:${current.id}:${edit.at}`,
        metadataIs(current.id, next),
      ),
    ]);
    const swapped = (results[0]?.meta.changes ?? 0) > 0;
    if (swapped) await publishEvents(env, recordedIn(results, [1]));
    current = (await findMessage(db, current.accountId, current.id)) ?? current;
    if (swapped) return { row: current, changed: true };
  }
  throw new Error(`the metadata of message ${row.id} changed ${MAX_TRIES} times while it was edited`);
}

/** Whether `edit` changes `row` (see {@link writeEdit}). */
function changesText(row: StoredMessage, edit: TextEdit): boolean {
  if (row.content === edit.content) return false;
  const { deleted_at, edited_at } = parseMessageMetadata(row.metadata);
  if (deleted_at) return false;
  return !(edit.latestWins && edited_at !== undefined && edit.at <= msOf(edited_at));
}

/** Epoch ms of an API timestamp (`2026-11-21T09:30:12.345000Z`: the clock's milliseconds and three zeros). */
function msOf(timestamp: string): number {
  return Date.parse(`${timestamp.slice(0, 23)}Z`);
}

/**
 * A contact's edit or deletion for everyone of a message they sent a session, as its gateway
 * reported it (src/gateways/gateway.ts `GatewayEvent` `edited`, `revoked`): the gateway's id of the
 * message, who made the change and when (`at`, epoch ms by the gateway's clock).
 */
export interface ContactChange {
  accountId: string;
  sessionId: string;
  providerMessageId: string;
  from: ContactIdentity;
  at: number;
}

/**
 * Records a contact's edit of a message they sent (docs/messages.md, Chat actions: "Contacts' own edits and
 * deletes") as {@link writeEdit} does the session's own, the latest edit winning: an edit older
 * than the one applied, a redelivered one, or one of a deleted message changes nothing and records
 * no event. The message is found by {@link contactMessage}; none (an edit that arrived before the
 * message itself, a message of another sender, or one the session never stored) drops the edit,
 * logged `contact_edit_unknown_message`: the message, when it comes, has the text it was sent with.
 * @returns our id of the message and whether this call changed it; null when dropped.
 */
export async function receiveEdit(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  change: ContactChange & { content: string },
): Promise<{ messageId: string; changed: boolean } | null> {
  const db = await databaseFor(env, change.accountId);
  const row = await contactMessage(db, change, "edit");
  if (!row) return null;
  const edit = { sessionId: change.sessionId, content: change.content, at: change.at, latestWins: true };
  const written = await writeEdit(env, db, row, edit, Date.now());
  return { messageId: row.id, changed: written.changed };
}

/**
 * Records a contact's deletion for everyone of a message they sent, as {@link writeDeleted} does
 * the session's own: `metadata.deleted_at` (the gateway's time) and one `message.deleted` event;
 * the message keeps its `content`. Again (a redelivery) changes nothing. Found and dropped as
 * {@link receiveEdit} (logged `contact_delete_unknown_message`).
 * @returns our id of the message and whether this call changed it; null when dropped.
 */
export async function receiveRevoke(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  change: ContactChange,
): Promise<{ messageId: string; changed: boolean } | null> {
  const db = await databaseFor(env, change.accountId);
  const row = await contactMessage(db, change, "delete");
  if (!row) return null;
  const written = await writeDeleted(env, db, row, change.at, Date.now());
  return { messageId: row.id, changed: written.changed };
}

/**
 * The incoming message of session `change.sessionId` that the gateway knows by
 * `change.providerMessageId`, when `change.from` sent it: its `from_number` is their number, or
 * its contact is one their identifiers name (a LID or BSUID sender, docs/contacts.md, Contacts). Null (and
 * logged) otherwise.
 */
async function contactMessage(
  db: Db,
  change: ContactChange,
  what: "edit" | "delete",
): Promise<StoredMessage | null> {
  const found = await messageOfProviderIds(db, change, [change.providerMessageId]);
  const row = found ? await findMessage(db, change.accountId, found.id) : null;
  if (row && row.direction === "incoming" && (await sentBy(db, row, change))) return row;
  log.warn(what === "edit" ? "contact_edit_unknown_message" : "contact_delete_unknown_message", {
    session_id: change.sessionId,
    provider_message_id: change.providerMessageId,
    message_id: row?.id ?? null,
  });
  return null;
}

/** Whether `change.from` is who sent `row` (see {@link contactMessage}). */
async function sentBy(db: Db, row: StoredMessage, change: ContactChange): Promise<boolean> {
  if (change.from.phoneNumber && row.fromNumber === change.from.phoneNumber) return true;
  if (!row.contactId) return false;
  return (await contactsNamed(db, change.sessionId, change.from)).includes(row.contactId);
}
