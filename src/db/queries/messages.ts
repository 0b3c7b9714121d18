import { and, asc, desc, eq, getTableColumns, inArray, isNotNull, lt, type SQL, sql } from "drizzle-orm";
import type { ContactIdentity } from "../../lib/contact-identity";
import type { MessagePayload } from "../../lib/message-payload";
import { formatNullableTimestamp, formatTimestamp } from "../../lib/time";
import type { Db } from "../client";
import { type ContactRow, type MessageRow, type MessageType, messages } from "../schema";
import { accountNumberOf } from "./accounts";
import { messageContactColumn } from "./contacts";

/** Outgoing messages to create: one per recipient, with what they share. */
export interface NewMessages {
  accountId: string;
  sessionId: string;
  type: MessageType;
  /** What the message shows (for a one-time code, the text with the code masked). */
  content: string | null;
  /** The messages' initial `metadata` (JSON object), `{}` when absent: a template message's template. */
  metadata?: string;
  /** The message they quote or react to (our id), or null. */
  replyTo?: string | null;
  /** The caller's `media_url`, as shown. */
  mediaUrl: string | null;
  /** The stored copy the gateway is given (its `MEDIA` key and content type), or null. */
  mediaKey: string | null;
  mediaContentType: string | null;
  /** Milliseconds between this session's gateway calls. */
  delayBetween: number;
  /** Epoch ms, or null to send now. */
  scheduledAt: number | null;
  /** Price of one message, minor units. */
  price: number;
  otpId: string | null;
  /** The charge that pays for them (its ledger entry id). */
  chargeId: string;
  /** Ids and E.164 recipients, in the order of the request; a campaign's carry their own values. */
  recipients: NewRecipientMessage[];
  /** The campaign they belong to, or null. */
  campaignId?: string | null;
  /** Whether each shows "typing…" first (the messages' `simulate_typing`); false when absent. */
  simulateTyping?: boolean;
  /** Epoch ms. */
  now: number;
}

/**
 * One recipient's message. A campaign's also carries what differs per recipient (its session in
 * the round-robin, its filled-in template, its random gap, its `seq` as send index, and for a
 * template campaign its `metadata` holding the template filled for it); absent fields take the
 * send's value, and the send index defaults to the position in the list.
 */
export interface NewRecipientMessage {
  id: string;
  to: string;
  sessionId?: string;
  content?: string | null;
  /** The message's initial `metadata` (JSON object text), instead of the send's. */
  metadata?: string;
  delayBetween?: number;
  sendIndex?: number;
}

/**
 * The statements that create every message of a send, from a JSON array (two statements however
 * many recipients), run only when `condition` holds (the charge that pays for them was made), to
 * run in this order in one D1 batch:
 * 1. {@link countOutgoingStatement}: the send's count in its hour's `account_usage` row;
 * 2. the INSERT of the messages. Each recipient's `to` is its address: an E.164 number or a user id
 *    (docs/contacts.md, Contacts); the message names the contact the session knows by it, if any.
 * Every outgoing message is created here (sends, one-time codes, campaign steps), so the counters
 * of `GET /v1/account/usage` count each exactly once (test/usage.test.ts).
 */
export function insertOutgoingStatements(send: NewMessages, condition: SQL): [SQL, SQL] {
  return [countOutgoingStatement(send, condition), insertOutgoingStatement(send, condition)];
}

/** The status a send's messages start in: `scheduled` with a time, else `queued`. */
function initialStatus(send: NewMessages): "queued" | "scheduled" {
  return send.scheduledAt === null ? "queued" : "scheduled";
}

/** `FROM` the send's recipients (`r`, a `json_each` row: `value` is one {@link NewRecipientMessage}) `WHERE condition`. */
function recipientsWhere(send: NewMessages, condition: SQL): SQL {
  return sql`FROM json_each(${JSON.stringify(send.recipients)}) AS r WHERE ${condition}`;
}

/**
 * The upsert that counts the messages {@link insertOutgoingStatement} is about to create (placed
 * just before it, with the same `condition`: those of its recipients not stored yet, as its
 * `OR IGNORE` skips the others) in `account_usage`, as the trigger `messages_usage_insert` of
 * migrations/accounts/0016_account_usage.sql did per row: in the counter of their status, and their cost,
 * under the UTC hour of their `created_at` and their type. The messages of one send share all
 * three, so the send writes one counter row, not one per message. Writes nothing when none is new.
 */
function countOutgoingStatement(send: NewMessages, condition: SQL): SQL {
  const status = sql.raw(initialStatus(send));
  const hour = send.now - (send.now % 3_600_000);
  return sql`INSERT INTO account_usage (account_id, hour, type, ${status}, cost)
    SELECT ${send.accountId}, ${hour}, ${send.type}, n, n * ${send.price}
    FROM (SELECT COUNT(DISTINCT json_extract(r.value, '$.id')) AS n ${recipientsWhere(send, condition)}
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = json_extract(r.value, '$.id')))
    WHERE n > 0
    ON CONFLICT (account_id, hour, type) DO UPDATE SET ${status} = ${status} + excluded.${status},
      cost = cost + excluded.cost`;
}

/** The INSERT of every message of a send (see {@link insertOutgoingStatements}). */
function insertOutgoingStatement(send: NewMessages, condition: SQL): SQL {
  const status = initialStatus(send);
  const own = (field: keyof NewRecipientMessage, otherwise: SQL) =>
    sql`CASE WHEN json_type(value, ${`$.${field}`}) IS NULL THEN ${otherwise} ELSE json_extract(value, ${`$.${field}`}) END`;
  // OR IGNORE: a campaign's message ids are derived from (campaign, seq), so making one twice is a no-op.
  // The recipient's contact, when the session keeps one known by that address (a number or a user id).
  const contact = sql`(SELECT ci.contact_id FROM contact_identifiers ci
      WHERE ci.chatapp_session_id = coalesce(json_extract(r.value, '$.sessionId'), ${send.sessionId})
      AND ci.kind IN ('phone_number', 'user_id') AND ci.value = json_extract(r.value, '$.to') LIMIT 1)`;
  return sql`INSERT OR IGNORE INTO messages (id, account_id, account_number, chatapp_session_id, campaign_id, otp_id, to_number, type,
      content, reply_to, media_url, media_key, media_content_type, status, direction, cost, delay_between, send_index, scheduled_at, metadata, charge_id,
      created_at, updated_at, simulate_typing, contact_id)
    SELECT json_extract(value, '$.id'), ${send.accountId}, ${accountNumberOf(send.accountId)}, ${own("sessionId", sql`${send.sessionId}`)},
      ${send.campaignId ?? null}, ${send.otpId}, json_extract(value, '$.to'), ${send.type},
      ${own("content", sql`${send.content}`)}, ${send.replyTo ?? null}, ${send.mediaUrl}, ${send.mediaKey},
      ${send.mediaContentType}, ${status}, 'outgoing', ${send.price},
      ${own("delayBetween", sql`${send.delayBetween}`)}, ${own("sendIndex", sql`key`)}, ${send.scheduledAt},
      ${own("metadata", sql`${send.metadata ?? "{}"}`)},
      ${send.chargeId}, ${send.now}, ${send.now},
      ${send.simulateTyping ? 1 : 0}, ${contact}
    ${recipientsWhere(send, condition)}`;
}

/** The rows {@link insertOutgoingStatements} writes, as read back. */
export function outgoingRows(send: NewMessages): MessageRow[] {
  const status = initialStatus(send);
  return send.recipients.map((r, index) => ({
    id: r.id,
    accountId: send.accountId,
    chatappSessionId: r.sessionId ?? send.sessionId,
    campaignId: send.campaignId ?? null,
    otpId: send.otpId,
    providerMessageId: null,
    fromNumber: null,
    contactId: null,
    toNumber: r.to,
    type: send.type,
    content: r.content === undefined ? send.content : r.content,
    replyTo: send.replyTo ?? null,
    mediaUrl: send.mediaUrl,
    mediaKey: send.mediaKey,
    mediaContentType: send.mediaContentType,
    status,
    direction: "outgoing",
    reason: null,
    cost: send.price,
    delayBetween: r.delayBetween ?? send.delayBetween,
    sendIndex: r.sendIndex ?? index,
    scheduledAt: send.scheduledAt,
    simulateTyping: send.simulateTyping ?? false,
    acceptedAt: null,
    sentAt: null,
    deliveredAt: null,
    readAt: null,
    metadata: r.metadata ?? send.metadata ?? "{}",
    chargeId: send.chargeId,
    refundId: null,
    createdAt: send.now,
    updatedAt: send.now,
  }));
}

/**
 * A session object claims these messages before it takes them into its outbox: it sets
 * `accepted_at` (a message claimed before keeps its first time) on those still `queued` or
 * `scheduled` on session `sessionId`, so the reconciliation sweep and the dead-letter consumer,
 * which fail only unclaimed messages, never fail one an object may send, and an object never
 * sends one they failed, a cancel failed, or that failover moved to another session.
 * @returns the ids claimed (those the object may send).
 */
export async function claimMessages(
  db: Db,
  sessionId: string,
  ids: string[],
  at: number,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.all<{ id: string }>(sql`UPDATE messages SET accepted_at = COALESCE(accepted_at, ${at})
    WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND chatapp_session_id = ${sessionId}
      AND status IN ('queued', 'scheduled') RETURNING id`);
  return new Set(rows.map((row) => row.id));
}

/**
 * What a send attempt that did not end in `sent` came to, as `metadata.send_attempts[].outcome`
 * holds it (docs/exactly-once.md, Exactly once): `rejected` (the gateway refused it), `unknown` (the call may
 * or may not have sent it), `absent` (asked, the gateway had not), `unreachable` (it could not be asked).
 */
export const SEND_ATTEMPT_OUTCOMES = ["rejected", "unknown", "absent", "unreachable"] as const;

/** One of {@link SEND_ATTEMPT_OUTCOMES}. */
export type SendAttemptOutcome = (typeof SEND_ATTEMPT_OUTCOMES)[number];

/**
 * Records a send attempt that did not end in `sent` in the message's metadata: `attempts`,
 * `last_error`, `next_attempt_at`, the attempt appended to `send_attempts` (`{ at, outcome,
 * reason }`), and `outcome: "unknown"` while the gateway may hold the message unsettled.
 */
export async function recordRetry(
  db: Db,
  id: string,
  retry: {
    attempts: number;
    error: string;
    nextAttemptAt: number | null;
    at: number;
    /** What the attempt came to; `unknown` and `unreachable` leave the message's outcome unknown. */
    outcome: SendAttemptOutcome;
  },
) {
  const entry = JSON.stringify({
    at: formatTimestamp(retry.at),
    outcome: retry.outcome,
    reason: retry.error,
  });
  const noted = sql`json_insert(json_set(metadata, '$.attempts', ${retry.attempts}, '$.last_error', ${retry.error},
        '$.next_attempt_at', ${formatNullableTimestamp(retry.nextAttemptAt)}), '$.send_attempts[#]', json(${entry}))`;
  const unknown = retry.outcome === "unknown" || retry.outcome === "unreachable";
  await db.run(sql`UPDATE messages SET updated_at = ${retry.at},
      metadata = ${unknown ? sql`json_set(${noted}, '$.outcome', 'unknown')` : sql`json_remove(${noted}, '$.outcome')`}
    WHERE id = ${id} AND status IN ('queued', 'scheduled')`);
}

/** The account's message with this id, with its contact (null when none is known), or null. */
export async function findMessage(
  db: Db,
  accountId: string,
  id: string,
): Promise<(MessageRow & { contact: ContactRow | null }) | null> {
  const [row] = await db
    .select({ ...getTableColumns(messages), contact: messageContactColumn() })
    .from(messages)
    .where(and(eq(messages.id, id), eq(messages.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

/**
 * The stored `content` of those of `ids` that are the account's one-time-code messages (`otp_id`
 * set): the text with the code masked (src/otp/code-message.ts), keyed by message id. Ids of
 * other messages, or of another account's, are absent from the map. At most 50 ids (the sandbox
 * phone's `PHONE_KEEPS`), within D1's 100 bound parameters.
 */
export async function otpMessageContents(
  db: Db,
  accountId: string,
  ids: string[],
): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: messages.id, content: messages.content })
    .from(messages)
    .where(and(eq(messages.accountId, accountId), inArray(messages.id, ids), isNotNull(messages.otpId)));
  return new Map(rows.map((row) => [row.id, row.content]));
}

/** A message received on a session, to store; times in epoch ms. */
export interface NewIncoming {
  /** Our id for it; a fresh one when absent (the sandbox's inbound route chooses it, to derive its provider id). */
  id?: string;
  accountId: string;
  sessionId: string;
  providerMessageId?: string | null;
  toNumber: string;
  /**
   * Who wrote, as the gateway named them: the row's `from_number` is their phone number (null when
   * the network gave only their user id), and its contact is learnt from it (docs/contacts.md, Contacts).
   */
  contact: ContactIdentity;
  type: MessageType;
  content: string | null;
  mediaUrl: string | null;
  /** Media not passed on by URL, kept in `metadata.media` (see GatewayEvent `incoming`). */
  media?: { mimetype: string | null } | null;
  /** A structured message's own object (a `location`'s point), kept in `metadata` under its key. */
  payload?: MessagePayload;
  /** Our id of the message it quotes, when the session knows it (messages/receive.ts resolves it), else null. */
  replyTo?: string | null;
  at: number;
}

/**
 * The row an incoming message is stored as: `incoming`, status `delivered`, cost 0; `metadata`
 * holds `media` when the message carried media it does not show by URL, and a structured
 * message's object under its key (`location`).
 */
export function incomingRow(input: NewIncoming): MessageRow {
  return {
    id: input.id ?? crypto.randomUUID(),
    accountId: input.accountId,
    chatappSessionId: input.sessionId,
    campaignId: null,
    otpId: null,
    providerMessageId: input.providerMessageId ?? null,
    fromNumber: input.contact.phoneNumber ?? null,
    toNumber: input.toNumber,
    contactId: null,
    type: input.type,
    content: input.content,
    replyTo: input.replyTo ?? null,
    mediaUrl: input.mediaUrl,
    mediaKey: null,
    mediaContentType: null,
    status: "delivered",
    direction: "incoming",
    reason: null,
    cost: 0,
    delayBetween: 0,
    sendIndex: 0,
    scheduledAt: null,
    simulateTyping: false,
    acceptedAt: null,
    sentAt: null,
    deliveredAt: input.at,
    readAt: null,
    metadata: JSON.stringify({ ...input.payload, ...(input.media ? { media: input.media } : {}) }),
    chargeId: null,
    refundId: null,
    createdAt: input.at,
    updatedAt: input.at,
  };
}

/**
 * The INSERT of an incoming message row. With a `providerMessageId`, a message the gateway
 * already delivered is not stored again (`messages_incoming_provider_id`): the statement then
 * changes nothing.
 */
export function insertIncomingStatement(db: Db, row: MessageRow, contactId: SQL | null): SQL {
  return db
    .insert(messages)
    .values({ ...row, accountNumber: accountNumberOf(row.accountId), ...(contactId ? { contactId } : {}) })
    .onConflictDoNothing()
    .getSQL();
}

/**
 * The gateway's id of the latest message contact `contact` (E.164) sent session `sessionId` of
 * account `accountId`, or null when none is stored: what the Cloud API's typing indicator answers
 * (ChatGateway `typing`). Read through `messages_account_from`; of messages dated alike, the one
 * stored last.
 */
export async function lastIncomingMessageId(
  db: Db,
  accountId: string,
  sessionId: string,
  contact: string,
): Promise<string | null> {
  const [row] = await db
    .select({ id: messages.providerMessageId })
    .from(messages)
    .where(
      and(
        eq(messages.accountNumber, accountNumberOf(accountId)),
        eq(messages.fromNumber, contact),
        // Unary `+`: the contact's number, not every incoming message, leads the read
        // (https://sqlite.org/optoverview.html#uplus).
        sql`+${messages.direction} = 'incoming'`,
        eq(messages.chatappSessionId, sessionId),
        isNotNull(messages.providerMessageId),
      ),
    )
    // Gateways date messages to the second: of two in one second, the one stored last.
    .orderBy(desc(messages.createdAt), sql`rowid DESC`)
    .limit(1);
  return row?.id ?? null;
}

/**
 * Our id of the account's message on the session that the gateway knows by one of `refs` (its ids of the
 * message, as the gateway's event gives them; several when the event gives a short form that
 * more than one stored form could end in: WAHA's reply), or null when the session has none.
 * Messages of both directions count: a contact may quote or react to our message or their own.
 * Read through `messages_provider_id` (the unary `+` keeps SQLite from reading the session's
 * messages instead, https://sqlite.org/optoverview.html#uplus).
 */
export async function messageOfProviderIds(
  db: Db,
  session: { accountId: string; sessionId: string },
  refs: readonly string[],
): Promise<{ id: string; accountId: string; metadata: string } | null> {
  if (refs.length === 0) return null;
  const [row] = await db.all<{ id: string; accountId: string; metadata: string }>(
    sql`SELECT id, account_id AS accountId, metadata FROM messages
      WHERE provider_message_id IN (SELECT value FROM json_each(${JSON.stringify(refs)}))
        AND +account_id = ${session.accountId} AND +chatapp_session_id = ${session.sessionId}
      ORDER BY created_at LIMIT 1`,
  );
  return row ?? null;
}

/** The account's message with our id `id` on the session, or null. */
export async function messageOfId(
  db: Db,
  session: { accountId: string; sessionId: string },
  id: string,
): Promise<{ id: string; accountId: string; metadata: string } | null> {
  const [row] = await db.all<{ id: string; accountId: string; metadata: string }>(
    sql`SELECT id, account_id AS accountId, metadata FROM messages
      WHERE id = ${id} AND account_id = ${session.accountId} AND chatapp_session_id = ${session.sessionId}`,
  );
  return row ?? null;
}

/**
 * The compare-and-set of a message's `metadata` (JSON): it becomes `next` only while it is still
 * `current`, so a concurrent change makes this statement change nothing.
 */
export function swapMetadataStatement(id: string, current: string, next: string, now: number): SQL {
  return sql`UPDATE messages SET metadata = ${next}, updated_at = ${now}
        WHERE id = ${id} AND metadata = ${current}`;
}

/**
 * The UPDATE of an edit of message `id` (src/chat-actions/edit.ts): its `content` and `metadata`
 * become `content` and `next`, only while its metadata is still `current` (a compare-and-swap: a
 * receipt that changed it meanwhile makes the edit read the message again).
 */
export function editStatement(id: string, current: string, next: string, content: string, now: number): SQL {
  return sql`UPDATE messages SET content = ${content}, metadata = ${next}, updated_at = ${now}
        WHERE id = ${id} AND metadata = ${current}`;
}

/** The condition that message `id`'s `metadata` is `metadata` at this point of the batch. */
export function metadataIs(id: string, metadata: string): SQL {
  return sql`EXISTS (SELECT 1 FROM messages WHERE id = ${id} AND metadata = ${metadata})`;
}

/**
 * The condition selecting message `id` while its `metadata` is `metadata` (for the event of a
 * change a compare-and-swap made: no event when the swap did not happen).
 */
export function messageWithMetadata(id: string, metadata: string): SQL {
  return sql`id = ${id} AND metadata = ${metadata}`;
}

/** The condition selecting the message with id `id` (for its event statement). */
export function messageWithId(id: string): SQL {
  return sql`id = ${id}`;
}

/**
 * Moves the account's messages of `plan` (JSON `[{ id, to }]`: each message and the session it
 * moves to) off session `fromSessionId`, those still `queued` or `scheduled`: each gets its new
 * session, a cleared `accepted_at` and a `metadata.failover` entry (`reason`, `at`: an API
 * timestamp of `now`, epoch ms). One statement (src/delivery/failover.ts).
 * @returns the moved messages, as a dispatch request reads them (`T`, camelCase).
 */
export async function moveToSessions<T>(
  db: Db,
  move: { accountId: string; fromSessionId: string; plan: string; reason: string; now: number; at: string },
): Promise<T[]> {
  // MATERIALIZED: the list drives the join, one primary-key lookup per message.
  return db.all<T>(sql`WITH p AS MATERIALIZED (SELECT json_extract(value, '$.id') AS mid,
          json_extract(value, '$.to') AS to_id FROM json_each(${move.plan}))
      UPDATE messages SET chatapp_session_id = p.to_id, accepted_at = NULL, updated_at = ${move.now},
        metadata = json_insert(metadata, '$.failover[#]', json_object('from_session_id', ${move.fromSessionId},
          'to_session_id', p.to_id, 'reason', ${move.reason}, 'at', ${move.at}))
      FROM p
      WHERE messages.id = p.mid AND account_id = ${move.accountId} AND chatapp_session_id = ${move.fromSessionId}
        AND status IN ('queued', 'scheduled')
      RETURNING id, account_id AS accountId, chatapp_session_id AS chatappSessionId, campaign_id AS campaignId,
        to_number AS toNumber, type, content, media_url AS mediaUrl, media_key AS mediaKey,
        media_content_type AS mediaContentType, delay_between AS delayBetween,
        created_at AS createdAt, charge_id AS chargeId, send_index AS sendIndex, scheduled_at AS scheduledAt,
        simulate_typing AS simulateTyping, metadata`);
}

/**
 * The outgoing messages no session object has accepted (`accepted_at` null) and last changed (or
 * `scheduled_at`) before `before` (epoch ms), oldest first, at most `limit`: the reconciliation
 * sweep's query (src/delivery/reconcile.ts).
 */
export function staleUnacceptedQuery(db: Db, before: number, limit: number) {
  return db
    .select()
    .from(messages)
    .where(
      and(
        // Literal, not bound: SQLite uses the partial index messages_unaccepted only when the
        // query states its condition as written.
        sql`${messages.status} IN ('queued', 'scheduled') AND ${messages.acceptedAt} IS NULL`,
        lt(messages.updatedAt, before),
        eq(messages.direction, "outgoing"),
        sql`COALESCE(${messages.scheduledAt}, 0) < ${before}`,
      ),
    )
    .orderBy(asc(messages.updatedAt))
    .limit(limit);
}

/** The condition selecting the account's incoming message `id` (for its event statement). */
export function ownIncomingMessage(id: string, accountId: string): SQL {
  return sql`id = ${id} AND account_id = ${accountId} AND direction = 'incoming'`;
}
