import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import { batchSql, type Db } from "../client";
import { type ErasureRow, erasures } from "../schema";
import { accountNumberOf } from "./accounts";
import { addressesOfContact } from "./contacts";
import { eventsForRows, messagePointedAt } from "./events";
import { pageOf, pageWindow, readOrder } from "./keyset";

export type { ErasureRow };

/*
 * The statements of an erasure (docs/contacts.md, Erasure; src/erasures/erase.ts puts them in order). An
 * erasure names the person by their clear addresses and contact ids (`ErasureScope`), and each
 * statement finds what is still theirs by those: once a row is erased it holds only the hashes, so
 * a statement run again finds nothing, and an erasure of a contact erased before erases nothing.
 */

/**
 * Who an erasure erases and by what rules: account `accountId`'s rows made at or before
 * `createdAt` (epoch ms, the erasure's time: what the person sends later is not the erasure's)
 * that name one of `hashes`' addresses (each E.164 number or user id → its erased form) or one of
 * `contactIds`. `waiting` are the statuses of a message that may still be sent (src/moves/:
 * erased once it left), `active` those of a campaign that still makes messages (its pending
 * recipients wait for theirs).
 */
export interface ErasureScope {
  id: string;
  accountId: string;
  createdAt: number;
  hashes: ReadonlyMap<string, string>;
  contactIds: readonly string[];
  waiting: readonly string[];
  active: readonly string[];
}

/** SQL pieces of a scope, each list bound as one JSON parameter (D1 binds at most 100). */
function piecesOf(scope: ErasureScope) {
  const hashes = JSON.stringify(Object.fromEntries(scope.hashes));
  const inList = (values: readonly string[]) => sql`(SELECT value FROM json_each(${JSON.stringify(values)}))`;
  return {
    /** The JSON object of each address and its erased form, for a `json_each` that drives a join. */
    hashes,
    addresses: sql`(SELECT key FROM json_each(${hashes}))`,
    waiting: inList(scope.waiting),
    active: inList(scope.active),
    /** SQL: `column`'s erased form when it is one of the addresses, else `column` as it is. */
    hashOf: (column: SQL) =>
      sql`coalesce((SELECT value FROM json_each(${hashes}) WHERE key = ${column}), ${column})`,
    /**
     * The JSON strings an event or a stored answer names the person by: each address and contact
     * id in quotes, so `+1415555010` does not match inside `+14155550101`.
     */
    needles: sql`(SELECT value, json_quote(value) AS quoted
      FROM json_each(${JSON.stringify([...scope.hashes.keys(), ...scope.contactIds])}))`,
  };
}

/**
 * SQL over `m` (a `messages` alias): the message is the person's and the erasure's, by its clear
 * addresses: one sent to one of them, or one they sent (from one of them, or by one of their
 * contacts), made at or before the erasure.
 */
function personsMessage(scope: ErasureScope, m: string): SQL {
  // One index seek per address or contact (messages_account_to, _from, _contact), driven from the
  // list (CROSS JOIN keeps SQLite from walking the account's messages instead; the unary `+` from
  // reading all incoming ones by messages_account_direction, https://sqlite.org/optoverview.html#uplus).
  const by = (list: string, condition: SQL) => sql`SELECT x.id FROM json_each(${list}) j CROSS JOIN messages x
    ON x.account_number = ${accountNumberOf(scope.accountId)} AND ${condition} AND x.created_at <= ${scope.createdAt}`;
  const { hashes: addresses } = piecesOf(scope);
  return sql`${sql.raw(m)}.id IN (${by(addresses, sql`x.to_number = j.key AND +x.direction = 'outgoing'`)}
    UNION ALL ${by(addresses, sql`x.from_number = j.key AND +x.direction = 'incoming'`)}
    UNION ALL ${by(JSON.stringify(scope.contactIds), sql`x.contact_id = j.value AND +x.direction = 'incoming'`)})`;
}

/** SQL over `m`: {@link personsMessage}, and no longer waiting to be sent (erasable now). */
function erasableMessage(scope: ErasureScope, m: string): SQL {
  return sql`${personsMessage(scope, m)} AND ${sql.raw(m)}.status NOT IN ${piecesOf(scope).waiting}`;
}

/**
 * SQL over `r` (a `campaign_recipients` alias) of a started campaign: the recipient is the
 * person's and may be erased now: neither still pending in a campaign that makes messages nor
 * with a message that waits to be sent.
 */
function erasableRecipient(scope: ErasureScope, r: string): SQL {
  const p = piecesOf(scope);
  const at = sql.raw(r);
  return sql`${at}.to_number IN ${p.addresses} AND ${at}.campaign_id IN (SELECT id FROM campaigns
      WHERE account_id = ${scope.accountId} AND status <> 'draft' AND created_at <= ${scope.createdAt})
    AND NOT EXISTS (SELECT 1 FROM campaigns c WHERE c.id = ${at}.campaign_id AND ${at}.status = 'pending'
      AND c.status IN ${p.active})
    AND NOT EXISTS (SELECT 1 FROM messages w WHERE w.id = ${at}.message_id AND w.status IN ${p.waiting})`;
}

/** SQL over `r`: a recipient of one of the account's drafts made before the erasure, by an address of the person. */
function draftRecipient(scope: ErasureScope, r: string): SQL {
  const at = sql.raw(r);
  return sql`${at}.to_number IN ${piecesOf(scope).addresses} AND ${at}.campaign_id IN (SELECT id FROM campaigns
    WHERE account_id = ${scope.accountId} AND status = 'draft' AND created_at <= ${scope.createdAt})`;
}

/**
 * SQL over `e` (an `events` alias): the event is the person's: one of their erased messages'
 * (src/db/queries/events.ts `messagePointedAt`), or one whose snapshot or dedupe key names one of their addresses or contacts
 * (OTPs, reactions, `contact.*`), recorded at or before the erasure.
 */
function personsEvent(scope: ErasureScope, e: string): SQL {
  const at = sql.raw(e);
  const p = piecesOf(scope);
  return sql`${at}.account_number = ${accountNumberOf(scope.accountId)} AND ${at}.created_at <= ${scope.createdAt} AND (
    ${messagePointedAt(at)} IN (SELECT m.id FROM messages m WHERE ${erasableMessage(scope, "m")})
    OR EXISTS (SELECT 1 FROM ${p.needles} n WHERE instr(${at}.snapshot, n.quoted) > 0
      OR substr(${at}.dedupe_key, -length(n.value) - 1) = ':' || n.value))`;
}

/** SQL over `o` (an `otps` alias): the OTP names one of the person's addresses. */
function personsOtp(scope: ErasureScope, o: string): SQL {
  const at = sql.raw(o);
  const { addresses } = piecesOf(scope);
  return sql`${at}.account_id = ${scope.accountId} AND ${at}.created_at <= ${scope.createdAt} AND (
    ${at}.to_number IN ${addresses} OR ${at}.verified_number IN ${addresses} OR ${at}.verified_user_id IN ${addresses})`;
}

/** SQL over `o` (an `opt_outs` alias): the opt-out lists one of the person's addresses. */
function personsOptOut(scope: ErasureScope, o: string): SQL {
  // A primary-key seek per address, driven from the list (an account's list may be long).
  return sql`${sql.raw(o)}.rowid IN (SELECT x.rowid FROM json_each(${piecesOf(scope).hashes}) j
    CROSS JOIN opt_outs x ON x.account_id = ${scope.accountId} AND x.to_number = j.key
    WHERE x.created_at <= ${scope.createdAt})`;
}

/** SQL over `c` (a `contacts` alias): one of the person's contacts. */
function personsContact(scope: ErasureScope, c: string): SQL {
  return sql`${sql.raw(c)}.id IN (SELECT x.id FROM json_each(${JSON.stringify(scope.contactIds)}) j
    CROSS JOIN contacts x ON x.id = j.value AND x.account_id = ${scope.accountId})`;
}

/**
 * Who `address` (an E.164 number or a user id) is in account `accountId`: every address of the
 * person (contacts.ts `addressesOfContact`: the address, and the numbers and user ids of each
 * contact ever known by it, on any session) and those contacts' ids.
 */
export async function personOf(
  db: Db,
  accountId: string,
  address: string,
): Promise<{ addresses: string[]; contactIds: string[] }> {
  const [addresses, contacts] = await batchSql<{ value: string }>(db, [
    sql`SELECT value FROM (${addressesOfContact(accountId, address)})`,
    sql`SELECT DISTINCT c.id AS value FROM contact_identifiers known
      JOIN contacts c ON c.id = known.contact_id AND c.account_id = ${accountId}
      WHERE known.value IN (${addressesOfContact(accountId, address)})`,
  ]);
  return {
    addresses: [...new Set((addresses?.results ?? []).map((row) => row.value))],
    contactIds: (contacts?.results ?? []).map((row) => row.value),
  };
}

/** Inserts `row`, a new erasure. */
export async function insertErasure(db: Db, row: typeof erasures.$inferInsert): Promise<void> {
  await db.insert(erasures).values(row);
}

/** The account's erasure `id`, or null. */
export async function findErasure(db: Db, accountId: string, id: string): Promise<ErasureRow | null> {
  const [row] = await db
    .select()
    .from(erasures)
    .where(and(eq(erasures.id, id), eq(erasures.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

/** One page of the account's erasures, newest first, by keyset on `(created_at, id)`. */
export async function listErasures(
  db: Db,
  accountId: string,
  page: { limit: number; cursor: Cursor | null },
): Promise<{ rows: ErasureRow[]; more: boolean }> {
  const rows = await db
    .select()
    .from(erasures)
    .where(and(eq(erasures.accountId, accountId), ...pageWindow(erasures, page.cursor, {})))
    .orderBy(...readOrder(erasures, page.cursor))
    .limit(page.limit + 1);
  return pageOf([rows], page.limit, page.cursor);
}

/** Up to `limit` pending erasures of every account made before `before` (epoch ms), oldest first. */
export async function pendingErasures(db: Db, before: number, limit: number): Promise<ErasureRow[]> {
  return db
    .select()
    .from(erasures)
    .where(sql`${erasures.status} = 'pending' AND ${erasures.createdAt} < ${before}`)
    .orderBy(erasures.createdAt)
    .limit(limit);
}

/**
 * The `MEDIA` keys of the person's erasable messages whose stored file no other message needs:
 * no outgoing message but the person's erasable ones holds the key, nor any campaign (a send's
 * copy is shared by its recipients, a campaign's by its messages; src/media/store.ts).
 */
export async function unsharedMediaOf(db: Db, scope: ErasureScope): Promise<string[]> {
  const rows = await db.all<{ key: string }>(sql`SELECT DISTINCT m.media_key AS key FROM messages m
    WHERE ${erasableMessage(scope, "m")} AND m.media_key IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM messages o WHERE o.direction = 'outgoing' AND o.media_key = m.media_key
        AND NOT (${erasableMessage(scope, "o")}))
      AND NOT EXISTS (SELECT 1 FROM campaigns c WHERE c.media_key = m.media_key)`);
  return rows.map((row) => row.key);
}

/**
 * The ids of the person's erasable messages made since `since` (epoch ms): what a stored answer
 * of a send kept for its `Idempotency-Key` may show (src/middleware/idempotency.ts).
 */
export async function recentErasableMessages(db: Db, scope: ErasureScope, since: number): Promise<string[]> {
  const rows = await db.all<{ id: string }>(sql`SELECT m.id AS id FROM messages m
    WHERE ${erasableMessage(scope, "m")} AND m.created_at >= ${since}`);
  return rows.map((row) => row.id);
}

/**
 * The account's stored answers (`idempotency_keys`, done) that name the person (an address or a
 * contact id, in quotes) or one of `messageIds`, with their body as stored. Sealed answers
 * (src/middleware/idempotency.ts) name nothing readable and are not found.
 */
export async function storedAnswersNaming(
  db: Db,
  scope: ErasureScope,
  messageIds: readonly string[],
): Promise<{ key: string; responseBody: string }[]> {
  const { needles } = piecesOf(scope);
  return db.all<{ key: string; responseBody: string }>(sql`SELECT key, response_body AS responseBody
    FROM idempotency_keys k WHERE k.account_id = ${scope.accountId} AND k.response_body IS NOT NULL
      AND (EXISTS (SELECT 1 FROM ${needles} n WHERE instr(k.response_body, n.quoted) > 0)
        OR EXISTS (SELECT 1 FROM json_each(${JSON.stringify(messageIds)}) i
          WHERE instr(k.response_body, json_quote(i.value)) > 0))`);
}

/** Replaces the account's stored answer under `key` by `after`, if it is still `before`. */
export async function replaceStoredAnswer(
  db: Db,
  accountId: string,
  key: string,
  before: string,
  after: string,
): Promise<void> {
  await db.run(sql`UPDATE idempotency_keys SET response_body = ${after}
    WHERE account_id = ${accountId} AND key = ${key} AND response_body = ${before}`);
}

/**
 * The statements that erase, in one D1 batch (one transaction), the person's rows the erasure
 * may erase now ({@link ErasureScope}), first adding to the erasure's counts what they will
 * change (read in the same transaction, so the counts are exact) and `mediaObjects`, the stored
 * files deleted just before (src/erasures/phases.ts `rowsPhase`):
 * - webhook attempts and deliveries of their events, then the events (`events`);
 * - messages (`messages`): `to_number` and `from_number` replaced by their erased form where they
 *   were the person's, text, media and contact gone, `metadata` without what names anyone (`removed`
 *   paths) and with `erased_at` at `erasedAt` (an API timestamp);
 * - OTPs (`otps`): their numbers and user id hashed, their send log too; reverse-OTP guesses
 *   from them deleted;
 * - campaign recipients (`campaign_recipients`): the address hashed and variables gone in started
 *   campaigns, deleted from drafts (whose `total` is counted again);
 * - opt-outs (`opt_outs`): each kept as its erased form, with its source, keyword and time;
 * - number checks; contacts (`contacts`) with their identifiers (and so their window).
 * The last statement reads whether anything of the person still waits (a message to send, a
 * pending recipient of a running campaign): `waiting` 1 or 0. Money is not touched: no status,
 * cost, charge or refund changes, so no counter trigger fires.
 */
export function eraseRowsStatements(
  scope: ErasureScope,
  media: { mediaObjects: number; erasedAt: string; removed: readonly string[]; now: number },
): SQL[] {
  const p = piecesOf(scope);
  const count = (from: string, where: SQL) => sql`(SELECT count(*) FROM ${sql.raw(from)} WHERE ${where})`;
  const endpoints = sql`(SELECT number FROM webhook_endpoints WHERE account_id = ${scope.accountId})`;
  // Events and webhook history name an event by its id's 16 bytes (src/db/schema/events.ts).
  const doomed = sql`(SELECT e.id FROM events e WHERE ${personsEvent(scope, "e")})`;
  const erasedMetadata = sql`json_set(json_remove(m.metadata, ${sql.join(
    media.removed.map((path) => sql`${path}`),
    sql`, `,
  )}), ${"$.erased_at"}, ${media.erasedAt})`;
  return [
    sql`UPDATE erasures SET
        messages = messages + ${count("messages m", erasableMessage(scope, "m"))},
        media_objects = media_objects + ${media.mediaObjects},
        otps = otps + ${count("otps o", personsOtp(scope, "o"))},
        campaign_recipients = campaign_recipients + ${count("campaign_recipients r", erasableRecipient(scope, "r"))}
          + ${count("campaign_recipients r", draftRecipient(scope, "r"))},
        contacts = contacts + ${count("contacts c", personsContact(scope, "c"))},
        opt_outs = opt_outs + ${count("opt_outs o", personsOptOut(scope, "o"))},
        events = events + ${count("events e", personsEvent(scope, "e"))},
        updated_at = ${media.now}
      WHERE id = ${scope.id}`,
    sql`DELETE FROM webhook_attempts WHERE endpoint_number IN ${endpoints} AND event_id IN ${doomed}`,
    // By key: a delivery's created_at is its event's time.
    sql`DELETE FROM webhook_deliveries WHERE (endpoint_number, created_at, event_id) IN
      (SELECT w.number, e.created_at, e.id FROM webhook_endpoints w, events e
        WHERE w.account_id = ${scope.accountId} AND ${personsEvent(scope, "e")})`,
    sql`DELETE FROM events WHERE id IN ${doomed}`,
    sql`UPDATE messages AS m SET to_number = ${p.hashOf(sql`m.to_number`)}, from_number = ${p.hashOf(sql`m.from_number`)},
        contact_id = NULL, content = NULL, media_url = NULL, media_key = NULL, media_content_type = NULL,
        metadata = ${erasedMetadata}
      WHERE ${erasableMessage(scope, "m")}`,
    sql`UPDATE otps AS o SET to_number = ${p.hashOf(sql`o.to_number`)}, verified_number = ${p.hashOf(sql`o.verified_number`)},
        verified_user_id = ${p.hashOf(sql`o.verified_user_id`)}
      WHERE ${personsOtp(scope, "o")}`,
    sql`UPDATE otp_sends SET to_number = ${p.hashOf(sql`otp_sends.to_number`)}
      WHERE to_number IN ${p.addresses} AND sent_at <= ${scope.createdAt}
        AND app_id IN (SELECT id FROM apps WHERE account_id = ${scope.accountId})`,
    // Guesses go whole: their message key is the gateway's message id, which may name the chat.
    sql`DELETE FROM reverse_guesses WHERE sender IN ${p.addresses} AND at <= ${scope.createdAt}
        AND session_id IN (SELECT id FROM sessions WHERE account_id = ${scope.accountId})`,
    sql`UPDATE campaign_recipients AS r SET to_number = ${p.hashOf(sql`r.to_number`)}, variables = NULL
      WHERE ${erasableRecipient(scope, "r")}`,
    sql`DELETE FROM campaign_recipients AS r WHERE ${draftRecipient(scope, "r")}`,
    sql`UPDATE campaigns SET total = (SELECT count(*) FROM campaign_recipients r WHERE r.campaign_id = campaigns.id)
      WHERE account_id = ${scope.accountId} AND status = 'draft' AND created_at <= ${scope.createdAt}
        AND total <> (SELECT count(*) FROM campaign_recipients r WHERE r.campaign_id = campaigns.id)`,
    sql`INSERT OR IGNORE INTO opt_outs (account_id, to_number, source, keyword, created_at)
      SELECT o.account_id, ${p.hashOf(sql`o.to_number`)}, o.source, o.keyword, o.created_at FROM opt_outs o
      WHERE ${personsOptOut(scope, "o")}`,
    sql`DELETE FROM opt_outs AS o WHERE ${personsOptOut(scope, "o")}`,
    sql`DELETE FROM contact_checks WHERE rowid IN (SELECT x.rowid FROM json_each(${p.hashes}) j
      CROSS JOIN contact_checks x ON x.account_id = ${scope.accountId} AND x.number = j.key
      WHERE x.checked_at <= ${scope.createdAt})`,
    sql`DELETE FROM contact_identifiers WHERE contact_id IN (SELECT c.id FROM contacts c WHERE ${personsContact(scope, "c")})`,
    sql`DELETE FROM contacts AS c WHERE ${personsContact(scope, "c")}`,
    // What is left of the person after the statements above is what still waits.
    sql`SELECT EXISTS (SELECT 1 FROM messages m WHERE ${personsMessage(scope, "m")})
      OR EXISTS (SELECT 1 FROM campaign_recipients r WHERE r.to_number IN ${p.addresses}
        AND r.campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${scope.accountId} AND created_at <= ${scope.createdAt}))
      AS waiting`,
  ];
}

/** Runs {@link eraseRowsStatements}. @returns whether something of the person still waits. */
export async function eraseRows(
  db: Db,
  scope: ErasureScope,
  media: Parameters<typeof eraseRowsStatements>[1],
): Promise<{ waiting: boolean }> {
  const results = await batchSql<{ waiting: number }>(db, eraseRowsStatements(scope, media));
  return { waiting: results.at(-1)?.results[0]?.waiting === 1 };
}

/**
 * Completes pending erasure `id` at `now` (epoch ms): `completed`, `completed_at`, its sealed
 * addresses forgotten, and its `contact.erased` event (the erasure as it then stands), in one D1
 * batch. A completed erasure changes nothing. @returns the D1 results (the event's at index 1).
 */
export function completeErasure(db: Db, id: string, now: number): Promise<D1Result[]> {
  return batchSql(db, [
    sql`UPDATE erasures SET status = 'completed', completed_at = ${now}, updated_at = ${now}, sealed_addresses = NULL
      WHERE id = ${id} AND status = 'pending'`,
    eventsForRows(
      "contact.erased",
      erasures,
      sql`${erasures.id} = ${id} AND ${erasures.status} = 'completed' AND ${erasures.completedAt} = ${now}`,
    ),
  ]);
}

/**
 * Adds archived records erased (lines of rewritten archives, by kind) to erasure `id`'s counts
 * `archived_messages`, `archived_otps` and `archived_campaign_recipients`.
 */
export async function countErasedArchived(
  db: Db,
  id: string,
  count: { messages: number; otps: number; campaign_recipients: number },
  now: number,
): Promise<void> {
  await db
    .update(erasures)
    .set({
      archivedMessages: sql`${erasures.archivedMessages} + ${count.messages}`,
      archivedOtps: sql`${erasures.archivedOtps} + ${count.otps}`,
      archivedCampaignRecipients: sql`${erasures.archivedCampaignRecipients} + ${count.campaign_recipients}`,
      updatedAt: now,
    })
    .where(eq(erasures.id, id));
}
