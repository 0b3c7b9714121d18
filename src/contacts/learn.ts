import { batchSql, type Db, type Statement } from "../db/client";
import { databaseFor } from "../db/databases";
import {
  contactChanged,
  contactIdIs,
  contactOf,
  contactsNamed,
  identifiersOf,
  type LearntContact,
  linkIdentifierStatements,
  mergeContactStatements,
  newContactStatement,
  noteContactMessageStatement,
  phoneNumberOfContact,
  updateContactStatement,
  updatedDedupeKey,
  updatedSnapshot,
} from "../db/queries/contacts";
import { optOutFollowsContactStatement } from "../db/queries/opt-outs";
import { contacts } from "../db/schema";
import { publishEvents } from "../events/publish";
import { eventsForRows, eventsForRowsAs, recordedIn } from "../events/record";
import { type ContactIdentity, namesSomeone } from "../lib/contact-identity";

export type { LearntContact } from "../db/queries/contacts";

/** A statement of a batch, and whether it records an event (its RETURNING rows are events). */
export interface BatchItem {
  statement: Statement;
  event: boolean;
}

/** A fresh contact id: `ct_` and 32 hex digits. */
export function newContactId(): string {
  return `ct_${crypto.randomUUID().replaceAll("-", "")}`;
}

/**
 * What a message (or any event naming a user) teaches about its contact, as statements for the
 * batch that stores it (docs/contacts.md, Contacts), in order:
 *
 * 1. a new contact, with `contact.created`, when none of the identity's identifiers names one;
 * 2. `contact.updated` (`{ contact, previous }`), then the new values, when the identity gives a
 *    value the contact lacks or holds otherwise: a number learnt, a new BSUID (the old one stays
 *    linked, and a later message by it does not make it current again), a username or name
 *    changed. Its dedupe key names `sourceRef` (the gateway's message id), so a replay records
 *    nothing twice; the change itself is idempotent.
 * 3. every identifier linked to the contact (one linked already stays with its own);
 * 4. an opted-out contact's new identifiers join the opt-out list (db/queries/opt-outs.ts);
 * 5. with `message`, the contact's first and last message times.
 *
 * When the identifiers name two contacts already (a LID chat and a number chat that turn out to
 * be one person), they are merged first, into the oldest, in a batch of their own.
 *
 * @returns the items, and `contactId`, SQL for the contact's id once they ran (for the message row).
 */
export async function learnContact(
  db: Db,
  learnt: LearntContact,
  options: { sourceRef: string; message: boolean },
): Promise<{ items: BatchItem[]; contactId: Statement } | null> {
  if (!namesSomeone(learnt.identity)) return null;
  // Only two identifiers or more can name two contacts: a message by one alone reads nothing more.
  if (identifiersOf(learnt.identity).length > 1) {
    const [keep, ...others] = await contactsNamed(db, learnt.sessionId, learnt.identity);
    if (keep && others.length > 0) await batchSql(db, mergeContactStatements(keep, others, learnt.at));
  }
  const id = newContactId();
  const contactId = contactOf(learnt.sessionId, learnt.identity);
  const items: BatchItem[] = [
    { statement: newContactStatement(id, learnt), event: false },
    { statement: eventsForRows("contact.created", contacts, contactIdIs(id)), event: true },
    {
      statement: eventsForRowsAs(
        "contact.updated",
        contacts,
        contactChanged(learnt),
        updatedDedupeKey(options.sourceRef),
        updatedSnapshot(learnt),
        learnt.at,
      ),
      event: true,
    },
    { statement: updateContactStatement(learnt), event: false },
    // Last: an identifier is told new (it becomes the contact's current one) before it is linked.
    ...linkIdentifierStatements(id, learnt).map((statement) => ({ statement, event: false })),
    // A contact on the opt-out list stays on it by its new identifiers too.
    { statement: optOutFollowsContactStatement(learnt.accountId, contactId), event: false },
  ];
  if (options.message) items.push({ statement: noteContactMessageStatement(learnt), event: false });
  return { items, contactId };
}

/**
 * Learns `learnt` from a gateway event that names a user without a message (GatewayEvent
 * `contact`), in a batch of its own, and publishes its events. `ref` names the event, so a
 * redelivery records nothing twice.
 */
export async function recordContact(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  learnt: LearntContact,
  ref: string,
): Promise<void> {
  const db = await databaseFor(env, learnt.accountId);
  const learned = await learnContact(db, learnt, { sourceRef: ref, message: false });
  if (!learned) return;
  const results = await batchSql(
    db,
    learned.items.map((item) => item.statement),
  );
  await publishEvents(env, recordedIn(results, eventIndexes(learned.items)));
}

/** The positions of the items that record events, for `recordedIn`. */
export function eventIndexes(items: BatchItem[]): number[] {
  return items.flatMap((item, index) => (item.event ? [index] : []));
}

/**
 * Whether session `sessionId`'s contact known by user id `userId` lacks a phone number
 * (src/lib/contact-identity.ts `ContactIdentity`): true when it has none, false when it has one or no contact has that id. The session
 * object asks it before asking the gateway who a user id is (`ChatGateway.resolveUserId`).
 */
export async function lacksPhoneNumber(
  env: { DB: D1Database },
  accountId: string,
  sessionId: string,
  userId: string,
): Promise<boolean> {
  const identity: ContactIdentity = { userId };
  return (await phoneNumberOfContact(await databaseFor(env, accountId), sessionId, identity)) === null;
}
