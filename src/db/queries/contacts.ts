import { and, eq, inArray, isNotNull, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { ContactIdentity } from "../../lib/contact-identity";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { type ContactRow, contactIdentifiers, contacts, type IdentifierKind, messages } from "../schema";
import { pageOf, pageWindow, readOrder } from "./keyset";
import { rowJson } from "./row-json";

// The statements that keep contacts (src/db/schema/contacts.ts); src/contacts/learn.ts puts them
// in order, with their events, in the batch of the message that taught them.

/**
 * SQL: JSON of the contact row of the message row at hand (`messages.contact_id`, camelCase keys
 * as Drizzle reads a row), or NULL: what a message event's snapshot keeps of its contact.
 */
export function contactJsonOfMessage(): SQL {
  return sql`(SELECT ${rowJson(contacts)} FROM ${contacts} WHERE ${contacts.id} = ${messages.contactId})`;
}

/**
 * A message read's `contact` column: the contact row of the message ({@link contactJsonOfMessage}),
 * read back as a row, or null.
 */
export function messageContactColumn() {
  return contactJsonOfMessage().mapWith((json: string | null) =>
    json === null ? null : (JSON.parse(json) as ContactRow),
  );
}

/** The identifiers of `identity` a contact is found by, in the order they are trusted. */
export function identifiersOf(identity: ContactIdentity): [IdentifierKind, string][] {
  const found: [IdentifierKind, string | null | undefined][] = [
    ["phone_number", identity.phoneNumber],
    ["user_id", identity.userId],
    ["parent_user_id", identity.parentUserId],
    ["user_id", identity.previousUserId],
  ];
  return found.filter((pair): pair is [IdentifierKind, string] => Boolean(pair[1]));
}

/**
 * The columns a learnt identity may set: for each, its row key and SQL for the value it takes.
 * A name or username given replaces the one held; an identifier replaces the one held only when
 * it is new to the session (not linked yet): a message by a user's older BSUID finds them without
 * making it their current one again.
 */
function learntColumns(learnt: LearntContact) {
  const { identity, sessionId } = learnt;
  const identifier = (column: SQLiteColumn, kind: IdentifierKind, value: string | null | undefined) =>
    value
      ? sql`CASE WHEN NOT EXISTS (SELECT 1 FROM ${contactIdentifiers} WHERE ${contactIdentifiers.chatappSessionId} = ${sessionId}
          AND ${contactIdentifiers.kind} = ${kind} AND ${contactIdentifiers.value} = ${value}) THEN ${value} ELSE ${column} END`
      : null;
  const display = (column: SQLiteColumn, value: string | null | undefined) =>
    value ? sql`coalesce(${value}, ${column})` : null;
  const all = [
    {
      column: contacts.phoneNumber,
      key: "phoneNumber",
      name: "phone_number",
      next: identifier(contacts.phoneNumber, "phone_number", identity.phoneNumber),
    },
    {
      column: contacts.userId,
      key: "userId",
      name: "user_id",
      next: identifier(contacts.userId, "user_id", identity.userId),
    },
    {
      column: contacts.parentUserId,
      key: "parentUserId",
      name: "parent_user_id",
      next: identifier(contacts.parentUserId, "parent_user_id", identity.parentUserId),
    },
    {
      column: contacts.username,
      key: "username",
      name: "username",
      next: display(contacts.username, identity.username),
    },
    { column: contacts.name, key: "name", name: "name", next: display(contacts.name, identity.name) },
  ];
  return all.flatMap(({ next, ...rest }) => (next ? [{ ...rest, next }] : []));
}

/** SQL over `contact_identifiers`: the row is one of `identity`'s identifiers (at least one). */
function anyIdentifierOf(identity: ContactIdentity): SQL {
  const pairs = identifiersOf(identity).map(
    ([kind, value]) => sql`(${contactIdentifiers.kind} = ${kind} AND ${contactIdentifiers.value} = ${value})`,
  );
  return sql`(${sql.join(pairs, sql` OR `)})`;
}

/**
 * SQL: the id of session `sessionId`'s contact that one of `identity`'s identifiers names (by
 * phone number first, then user id, then parent user id), or NULL. At least one identifier.
 */
export function contactOf(sessionId: string, identity: ContactIdentity): SQL {
  return sql`(SELECT ${contactIdentifiers.contactId} FROM ${contactIdentifiers}
    WHERE ${contactIdentifiers.chatappSessionId} = ${sessionId} AND ${anyIdentifierOf(identity)}
    ORDER BY ${contactIdentifiers.kind} = 'phone_number' DESC, ${contactIdentifiers.kind} = 'user_id' DESC
    LIMIT 1)`;
}

/** The ids of the contacts of session `sessionId` that `identity`'s identifiers name, oldest first. */
export async function contactsNamed(db: Db, sessionId: string, identity: ContactIdentity): Promise<string[]> {
  if (identifiersOf(identity).length === 0) return [];
  const rows = await db
    .selectDistinct({ id: contacts.id, createdAt: contacts.createdAt })
    .from(contactIdentifiers)
    .innerJoin(contacts, eq(contacts.id, contactIdentifiers.contactId))
    .where(and(eq(contactIdentifiers.chatappSessionId, sessionId), anyIdentifierOf(identity)))
    .orderBy(contacts.createdAt, contacts.id);
  return rows.map((row) => row.id);
}

/**
 * The phone number of session `sessionId`'s contact that `identity` names ({@link contactOf}):
 * the number, null when the contact has none, or undefined when no contact is named.
 */
export async function phoneNumberOfContact(
  db: Db,
  sessionId: string,
  identity: ContactIdentity,
): Promise<string | null | undefined> {
  if (identifiersOf(identity).length === 0) return undefined;
  const [row] = await db
    .select({ phoneNumber: contacts.phoneNumber })
    .from(contacts)
    .where(sql`${contacts.id} = ${contactOf(sessionId, identity)}`)
    .limit(1);
  return row ? row.phoneNumber : undefined;
}

/** What a contact is learnt from: its account and session, who they are, and when (epoch ms). */
export interface LearntContact {
  accountId: string;
  sessionId: string;
  identity: ContactIdentity;
  at: number;
}

/** Creates contact `id` from `learnt` unless one of its identifiers names a contact already. */
export function newContactStatement(id: string, learnt: LearntContact): SQL {
  const { identity, at } = learnt;
  return sql`INSERT INTO ${contacts} (id, account_id, chatapp_session_id, phone_number, user_id, parent_user_id, username, name, created_at, updated_at)
    SELECT ${id}, ${learnt.accountId}, ${learnt.sessionId}, ${identity.phoneNumber ?? null}, ${identity.userId ?? null},
      ${identity.parentUserId ?? null}, ${identity.username ?? null}, ${identity.name ?? null}, ${at}, ${at}
    WHERE ${contactOf(learnt.sessionId, identity)} IS NULL`;
}

/**
 * Links every identifier of `learnt` to the contact one of them names, else to `newId` (the
 * contact {@link newContactStatement} just made): an identifier linked already keeps its contact.
 */
export function linkIdentifierStatements(newId: string, learnt: LearntContact): SQL[] {
  const owner = sql`coalesce(${contactOf(learnt.sessionId, learnt.identity)}, ${newId})`;
  return identifiersOf(learnt.identity).map(
    ([
      kind,
      value,
    ]) => sql`INSERT OR IGNORE INTO ${contactIdentifiers} (chatapp_session_id, kind, value, contact_id, created_at)
      VALUES (${learnt.sessionId}, ${kind}, ${value}, ${owner}, ${learnt.at})`,
  );
}

/** The condition that selects contact `id`. */
export function contactIdIs(id: string): SQL {
  return eq(contacts.id, id);
}

/** The dedupe key of a `contact.updated` event that message (or event) `sourceRef` caused. */
export function updatedDedupeKey(sourceRef: string): SQL {
  return sql`'contact.updated:' || ${contacts.id} || ':' || ${sourceRef}`;
}

/**
 * SQL: the contact row `learnt` names would change ({@link learntColumns}). Runs before `learnt`'s
 * identifiers are linked, so that a new one is told from one known already.
 */
export function contactChanged(learnt: LearntContact): SQL {
  const differs = learntColumns(learnt).map(({ column, next }) => sql`${column} IS NOT ${next}`);
  if (differs.length === 0) return sql`0`;
  return sql`${contacts.id} = ${contactOf(learnt.sessionId, learnt.identity)} AND (${sql.join(differs, sql` OR `)})`;
}

/**
 * SQL building a `contact.updated` snapshot from a contact row's JSON (camelCase keys, as Drizzle
 * reads the row): `{ contact: <the row as {@link updateContactStatement} leaves it>, previous: <the row> }`.
 */
export function updatedSnapshot(learnt: LearntContact): (row: SQL) => SQL {
  return (row) => {
    const after = [...learntColumns(learnt), { key: "updatedAt", next: sql`${learnt.at}` }].reduce(
      (json, { key, next }) => sql`json_set(${json}, ${`$.${key}`}, ${next})`,
      row,
    );
    return sql`json_object('contact', json(${after}), 'previous', json(${row}))`;
  };
}

/** Writes `learnt`'s values over the contact it names, where they change ({@link contactChanged}). */
export function updateContactStatement(learnt: LearntContact): SQL {
  const set = learntColumns(learnt).map(({ name, next }) => sql`${sql.identifier(name)} = ${next}`);
  if (set.length === 0) return sql`SELECT 0`;
  return sql`UPDATE ${contacts} SET ${sql.join(set, sql`, `)}, updated_at = ${learnt.at} WHERE ${contactChanged(learnt)}`;
}

/** Moves the first and last message times of the contact `learnt` names to take in `at`. */
export function noteContactMessageStatement(learnt: LearntContact): SQL {
  const at = learnt.at;
  return sql`UPDATE ${contacts}
    SET first_message_at = min(coalesce(first_message_at, ${at}), ${at}), last_message_at = max(coalesce(last_message_at, ${at}), ${at})
    WHERE ${contacts.id} = ${contactOf(learnt.sessionId, learnt.identity)}`;
}

/**
 * Makes the contacts `others` one with `keep` (they turned out to be one person): their
 * identifiers and messages move to `keep`, which takes each value it lacks from them, and they
 * are deleted.
 */
export function mergeContactStatements(keep: string, others: string[], at: number): SQL[] {
  const from = inArray(contacts.id, others);
  const lacking = (name: string) =>
    sql`${sql.identifier(name)} = coalesce(${sql.identifier(name)}, (SELECT ${sql.identifier(name)} FROM ${contacts} AS c WHERE c.id IN ${others} AND c.${sql.identifier(name)} IS NOT NULL ORDER BY c.updated_at DESC LIMIT 1))`;
  return [
    sql`UPDATE ${contacts} SET ${sql.join(
      ["phone_number", "user_id", "parent_user_id", "username", "name"].map(lacking),
      sql`, `,
    )},
      first_message_at = (SELECT min(first_message_at) FROM ${contacts} AS c WHERE c.id = ${keep} OR c.id IN ${others}),
      last_message_at = (SELECT max(last_message_at) FROM ${contacts} AS c WHERE c.id = ${keep} OR c.id IN ${others}),
      updated_at = ${at}
      WHERE id = ${keep}`,
    sql`UPDATE ${contactIdentifiers} SET contact_id = ${keep} WHERE ${inArray(contactIdentifiers.contactId, others)}`,
    sql`UPDATE ${messages} SET contact_id = ${keep} WHERE ${inArray(messages.contactId, others)}`,
    sql`DELETE FROM ${contacts} WHERE ${from}`,
  ];
}

/**
 * When the contact each of `addresses` names on session `sessionId` last wrote to it (epoch ms, the
 * gateway's time of their latest stored message): an address is an E.164 number or a user id, and
 * any identifier the contact was ever known by finds them, so a contact who wrote by user id is
 * in their window when answered by number, once known, and the other way round. An address whose
 * contact never wrote (or that names none) is not in the map. The caller has checked that the
 * session is its account's. What the Cloud API's customer service window (messages/service-window.ts)
 * and a limited session's cold-contact rule (messages/session-limits.ts) read.
 */
export async function lastMessageOf(
  db: Db,
  sessionId: string,
  addresses: string[],
): Promise<Map<string, number>> {
  if (addresses.length === 0) return new Map();
  const rows = await db
    .select({ address: contactIdentifiers.value, lastMessageAt: contacts.lastMessageAt })
    .from(contactIdentifiers)
    .innerJoin(contacts, eq(contacts.id, contactIdentifiers.contactId))
    .where(
      and(
        eq(contactIdentifiers.chatappSessionId, sessionId),
        inArray(contactIdentifiers.kind, ["phone_number", "user_id"]),
        // One bound parameter however many addresses (D1 binds at most 100 per statement).
        sql`${contactIdentifiers.value} IN (SELECT value FROM json_each(${JSON.stringify(addresses)}))`,
        isNotNull(contacts.lastMessageAt),
      ),
    );
  return new Map(
    rows.flatMap((row) => (row.lastMessageAt === null ? [] : [[row.address, row.lastMessageAt]])),
  );
}

/**
 * SQL: a subquery of the addresses (E.164 numbers and user ids) that reach the person `address`
 * names in account `accountId`: `address` itself, and every phone number and user id (old BSUIDs
 * included) of each of the account's contacts ever known by it, on any session. What a limit that
 * counts the contact, not the string, compares `to_number` with (docs/contacts.md, Contacts). Index seeks
 * through `contact_identifiers_value` and `contact_identifiers_contact`.
 */
export function addressesOfContact(accountId: string, address: string): SQL {
  return sql`SELECT ${address} AS value UNION SELECT linked.value FROM contact_identifiers AS known
    JOIN contacts ON contacts.id = known.contact_id AND contacts.account_id = ${accountId}
    JOIN contact_identifiers AS linked ON linked.contact_id = known.contact_id
      AND linked.kind IN ('phone_number', 'user_id')
    WHERE known.value = ${address}`;
}

/**
 * The phone number (E.164) of the person user id `userId` names in account `accountId`
 * ({@link addressesOfContact}), or null when none of their contacts has one yet.
 */
export async function phoneNumberOfUser(db: Db, accountId: string, userId: string): Promise<string | null> {
  const row = await db.get<{ value: string } | undefined>(
    sql`SELECT value FROM (${addressesOfContact(accountId, userId)}) WHERE value LIKE '+%' LIMIT 1`,
  );
  return row?.value ?? null;
}

/**
 * The ids of account `accountId`'s contacts ever known by user id `userId` (one per session that
 * met them), through `contact_identifiers_value`.
 */
export async function contactsKnownBy(db: Db, accountId: string, userId: string): Promise<string[]> {
  const rows = await db
    .select({ id: contacts.id })
    .from(contactIdentifiers)
    .innerJoin(contacts, eq(contacts.id, contactIdentifiers.contactId))
    .where(
      and(
        eq(contactIdentifiers.kind, "user_id"),
        eq(contactIdentifiers.value, userId),
        eq(contacts.accountId, accountId),
      ),
    );
  return [...new Set(rows.map((row) => row.id))];
}

/** Contact `id` of account `accountId`, or null. */
export async function findContact(db: Db, accountId: string, id: string): Promise<ContactRow | null> {
  const [row] = await db
    .select()
    .from(contacts)
    .where(and(eq(contacts.id, id), eq(contacts.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

/** Every identifier contact `id` was known by, oldest first. */
export async function identifiersOfContact(
  db: Db,
  id: string,
): Promise<{ kind: IdentifierKind; value: string; createdAt: number }[]> {
  return db
    .select({
      kind: contactIdentifiers.kind,
      value: contactIdentifiers.value,
      createdAt: contactIdentifiers.createdAt,
    })
    .from(contactIdentifiers)
    .where(eq(contactIdentifiers.contactId, id))
    .orderBy(contactIdentifiers.createdAt, contactIdentifiers.kind, contactIdentifiers.value);
}

/** The contact list's filters: a session uuid, and identifiers as given. */
export interface ContactFilters {
  sessionId?: string;
  phoneNumber?: string;
  userId?: string;
  username?: string;
}

/**
 * One page of the account's contacts, newest first, by keyset on `(created_at, id)` through
 * `contacts_account_created` (or `contacts_account_session_created` with a session). An identifier
 * filter matches every identifier the contact was ever known by (D1 `contact_identifiers`).
 */
export async function listContacts(
  db: Db,
  accountId: string,
  query: { filters: ContactFilters; limit: number; cursor: Cursor | null },
): Promise<{ rows: ContactRow[]; more: boolean }> {
  const { filters, limit, cursor } = query;
  const known = (kind: IdentifierKind, value: string) =>
    sql`EXISTS (SELECT 1 FROM ${contactIdentifiers} WHERE ${contactIdentifiers.contactId} = ${contacts.id} AND ${contactIdentifiers.kind} = ${kind} AND ${contactIdentifiers.value} = ${value})`;
  const where: (SQL | undefined)[] = [eq(contacts.accountId, accountId)];
  if (filters.sessionId) where.push(eq(contacts.chatappSessionId, filters.sessionId));
  if (filters.phoneNumber) where.push(known("phone_number", filters.phoneNumber));
  if (filters.userId) where.push(known("user_id", filters.userId));
  if (filters.username) where.push(eq(contacts.username, filters.username));
  where.push(...pageWindow(contacts, cursor, {}));
  const rows = await db
    .select()
    .from(contacts)
    .where(and(...where))
    .orderBy(...readOrder(contacts, cursor))
    .limit(limit + 1);
  return pageOf([rows], limit, cursor);
}
