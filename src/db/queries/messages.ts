import { and, eq, type SQL, sql } from "drizzle-orm";
import { ApiError } from "../../errors";
import type { AckKind, AckStatus } from "../../gateways/gateway";
import type { MessageRow, MessageType } from "../../messages/message-record";
import { batchSql, type Db } from "../client";
import { messages } from "../schema";

/** One outgoing message to create: its id and its E.164 recipient. */
export interface NewRecipient {
  id: string;
  to: string;
}

export interface NewSend {
  accountId: string;
  sessionId: string;
  type: MessageType;
  content: string | null;
  mediaUrl: string | null;
  /** Milliseconds between this session's gateway calls. */
  delayBetween: number;
  /** Epoch ms, or null to send now. */
  scheduledAt: number | null;
  /** Price of one message, minor units. */
  price: number;
  otpId: string | null;
  recipients: NewRecipient[];
}

/**
 * Charges the account for the whole send and creates its message rows, atomically: one D1 batch
 * (a transaction) that lowers the balance, writes the `charge` ledger entry with the balance
 * after it, and inserts every message (from a JSON array, one statement however many
 * recipients). The `accounts_balance_non_negative` CHECK constraint aborts the batch when the
 * balance does not cover it, so concurrent sends can never overdraw.
 *
 * @returns the new balance (minor units) and the created rows.
 * @throws ApiError `insufficient_balance` (402) when the balance is short; nothing is written.
 */
export async function chargeAndCreate(
  db: Db,
  send: NewSend,
  now: number,
): Promise<{ balance: number; rows: MessageRow[] }> {
  const count = send.recipients.length;
  const total = send.price * count;
  const chargeId = crypto.randomUUID();
  const status = send.scheduledAt === null ? "queued" : "scheduled";
  try {
    const [charged] = await batchSql<{ balance: number }>(db, [
      sql`UPDATE accounts SET balance = balance - ${total}, updated_at = ${now} WHERE id = ${send.accountId} RETURNING balance`,
      sql`INSERT INTO ledger_entries (id, account_id, kind, amount, balance_after, message_count, created_at)
        SELECT ${chargeId}, id, 'charge', ${-total}, balance, ${count}, ${now} FROM accounts WHERE id = ${send.accountId}`,
      sql`INSERT INTO messages (id, account_id, chatapp_session_id, otp_id, to_number, type, content, media_url,
          status, direction, cost, delay_between, send_index, scheduled_at, metadata, charge_id, created_at, updated_at)
        SELECT json_extract(value, '$.id'), ${send.accountId}, ${send.sessionId}, ${send.otpId}, json_extract(value, '$.to'),
          ${send.type}, ${send.content}, ${send.mediaUrl}, ${status}, 'outgoing', ${send.price}, ${send.delayBetween},
          key, ${send.scheduledAt}, '{}', ${chargeId}, ${now}, ${now}
        FROM json_each(${JSON.stringify(send.recipients)})`,
    ]);
    const balance = charged?.results[0]?.balance;
    if (balance === undefined) throw new ApiError("not_found", "No such account.");
    const rows: MessageRow[] = send.recipients.map((r, index) => ({
      id: r.id,
      accountId: send.accountId,
      chatappSessionId: send.sessionId,
      campaignId: null,
      otpId: send.otpId,
      providerMessageId: null,
      fromNumber: null,
      toNumber: r.to,
      type: send.type,
      content: send.content,
      mediaUrl: send.mediaUrl,
      status,
      direction: "outgoing",
      reason: null,
      cost: send.price,
      delayBetween: send.delayBetween,
      sendIndex: index,
      scheduledAt: send.scheduledAt,
      sentAt: null,
      deliveredAt: null,
      readAt: null,
      metadata: "{}",
      chargeId,
      refundId: null,
      createdAt: now,
      updatedAt: now,
    }));
    return { balance, rows };
  } catch (error) {
    if (
      error instanceof Error &&
      /CHECK constraint failed/.test(`${error.message} ${String(error.cause ?? "")}`)
    ) {
      throw new ApiError(
        "insufficient_balance",
        `This send costs ${total} minor units, more than the balance.`,
      );
    }
    throw error;
  }
}

/**
 * Fails the given messages of one account that are still before `delivered` (queued, scheduled
 * or sent) with `reason`, and refunds their cost, in one D1 batch: the messages are tagged with
 * the id of the refund's ledger entry, the balance rises by their summed cost, and the ledger
 * entry records it with the balance after. Messages already failed, delivered or read are left
 * as they are, so calling it twice refunds once.
 *
 * @returns how many messages it failed.
 */
export async function failAndRefund(
  db: Db,
  accountId: string,
  ids: string[],
  reason: string,
  now: number,
): Promise<number> {
  if (ids.length === 0) return 0;
  const target = sql`id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND status IN ('queued', 'scheduled', 'sent')`;
  return failAndRefundWhere(db, accountId, target, reason, now);
}

/**
 * {@link failAndRefund} for every message of a session that has not left yet (queued or
 * scheduled), wherever it waits: used when the session is deleted, so that messages whose queue
 * message never reached the session object are refunded too.
 */
export function failWaitingOfSession(
  db: Db,
  accountId: string,
  sessionId: string,
  reason: string,
  now: number,
) {
  const target = sql`chatapp_session_id = ${sessionId} AND direction = 'outgoing' AND status IN ('queued', 'scheduled')`;
  return failAndRefundWhere(db, accountId, target, reason, now);
}

async function failAndRefundWhere(
  db: Db,
  accountId: string,
  target: SQL,
  reason: string,
  now: number,
): Promise<number> {
  const refundId = crypto.randomUUID();
  const [failed] = await batchSql(db, [
    sql`UPDATE messages SET status = 'failed', reason = ${reason}, refund_id = ${refundId}, updated_at = ${now},
        metadata = json_set(metadata, '$.failed_at', ${now})
      WHERE account_id = ${accountId} AND ${target}`,
    sql`UPDATE accounts SET balance = balance + (SELECT COALESCE(SUM(cost), 0) FROM messages WHERE refund_id = ${refundId}),
        updated_at = ${now} WHERE id = ${accountId}`,
    sql`INSERT INTO ledger_entries (id, account_id, kind, amount, balance_after, message_count, created_at)
      SELECT ${refundId}, ${accountId}, 'refund', SUM(cost), (SELECT balance FROM accounts WHERE id = ${accountId}), COUNT(*), ${now}
      FROM messages WHERE refund_id = ${refundId} HAVING COUNT(*) > 0`,
  ]);
  return failed?.meta.changes ?? 0;
}

/**
 * Records the gateway's acceptance of messages, in one D1 batch: `sent` with `sent_at`, the
 * gateway's message id and the session's number. Only a queued or scheduled message moves, so
 * writing the same outcome twice changes nothing.
 */
export async function markSent(
  db: Db,
  sent: {
    id: string;
    at: number;
    providerMessageId: string;
    fromNumber: string | null;
    attempts: number;
    gateway: string;
  }[],
): Promise<void> {
  if (sent.length === 0) return;
  await batchSql(
    db,
    sent.map(
      (
        m,
      ) => sql`UPDATE messages SET status = 'sent', sent_at = ${m.at}, provider_message_id = ${m.providerMessageId},
          from_number = ${m.fromNumber}, updated_at = ${m.at},
          metadata = json_set(metadata, '$.attempts', ${m.attempts}, '$.gateway', ${m.gateway})
        WHERE id = ${m.id} AND status IN ('queued', 'scheduled')`,
    ),
  );
}

/** Records a failed attempt that will be retried: attempts, last error, next attempt time. */
export async function recordRetry(
  db: Db,
  id: string,
  retry: { attempts: number; error: string; nextAttemptAt: number | null; at: number },
) {
  await db.run(sql`UPDATE messages SET updated_at = ${retry.at},
      metadata = json_set(metadata, '$.attempts', ${retry.attempts}, '$.last_error', ${retry.error},
        '$.next_attempt_at', ${retry.nextAttemptAt})
    WHERE id = ${id} AND status IN ('queued', 'scheduled')`);
}

/** scheduled → queued for messages whose time has come (they now enter the fan-out). */
export async function markDue(db: Db, ids: string[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await db.run(sql`UPDATE messages SET status = 'queued', updated_at = ${now}
    WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND status = 'scheduled'`);
}

/**
 * Applies delivery receipts. Status only moves forward (issue 3, "Status lifecycle"): `delivered`
 * applies to a sent message; `read` applies to a sent or delivered one and also fills a missing
 * `delivered_at`. A late or repeated ack changes nothing but the event log in `metadata.events`.
 */
export async function applyAcks(
  db: Db,
  acks: { messageId: string; kind: AckKind; at: number }[],
): Promise<void> {
  if (acks.length === 0) return;
  await batchSql(
    db,
    acks.map((ack) => ackStatement(sql`id = ${ack.messageId}`, ack.kind, ack.at)),
  );
}

/** The UPDATE that applies one receipt to the outgoing message `target` selects. */
function ackStatement(target: SQL, kind: AckKind, at: number): SQL {
  const event = JSON.stringify({ type: kind, at: new Date(at).toISOString() });
  const setEvent = sql`metadata = json_insert(metadata, '$.events[#]', json(${event})), updated_at = ${at}`;
  return kind === "delivered"
    ? sql`UPDATE messages SET ${setEvent},
        status = CASE WHEN status = 'sent' THEN 'delivered' ELSE status END,
        delivered_at = CASE WHEN status IN ('sent', 'delivered', 'read') THEN COALESCE(delivered_at, ${at}) ELSE delivered_at END
        WHERE ${target} AND direction = 'outgoing' AND status <> 'failed'`
    : sql`UPDATE messages SET ${setEvent},
        status = CASE WHEN status IN ('sent', 'delivered') THEN 'read' ELSE status END,
        delivered_at = COALESCE(delivered_at, ${at}),
        read_at = COALESCE(read_at, ${at})
        WHERE ${target} AND direction = 'outgoing' AND status IN ('sent', 'delivered', 'read')`;
}

/** The account's message with this id, or null. */
export async function findMessage(db: Db, accountId: string, id: string): Promise<MessageRow | null> {
  const [row] = await db
    .select()
    .from(messages)
    .where(and(eq(messages.id, id), eq(messages.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

/**
 * Stores a message received on a session: `incoming`, status `delivered`, cost 0. With a
 * `providerMessageId`, a message the gateway already delivered is not stored again
 * (`messages_incoming_provider_id`). @returns the stored row, or null for such a duplicate.
 */
export async function insertIncoming(
  db: Db,
  input: {
    accountId: string;
    sessionId: string;
    providerMessageId?: string | null;
    fromNumber: string;
    toNumber: string;
    type: MessageType;
    content: string | null;
    mediaUrl: string | null;
    at: number;
  },
): Promise<MessageRow | null> {
  const [row] = await db
    .insert(messages)
    .values({
      id: crypto.randomUUID(),
      accountId: input.accountId,
      chatappSessionId: input.sessionId,
      providerMessageId: input.providerMessageId ?? null,
      fromNumber: input.fromNumber,
      toNumber: input.toNumber,
      type: input.type,
      content: input.content,
      mediaUrl: input.mediaUrl,
      status: "delivered",
      direction: "incoming",
      cost: 0,
      deliveredAt: input.at,
      createdAt: input.at,
      updatedAt: input.at,
    })
    .onConflictDoNothing()
    .returning();
  return row ?? null;
}

/**
 * Applies a gateway's receipts for messages sent from `session`, found by the gateway's message
 * id (index `messages_provider_id`), in order: `delivered` and `read` as {@link applyAcks};
 * `failed` fails and refunds a message that was not yet delivered; `sent` changes nothing (a
 * message is `sent` as soon as the gateway accepts it). Receipts for unknown ids match no row.
 * None moves a message backwards.
 */
export async function applyGatewayAcks(
  db: Db,
  session: { id: string; accountId: string },
  acks: { providerMessageId: string; status: AckStatus; reason: string | null; at: number }[],
): Promise<void> {
  let receipts: SQL[] = [];
  for (const ack of acks) {
    const target = sql`chatapp_session_id = ${session.id} AND provider_message_id = ${ack.providerMessageId}`;
    if (ack.status === "delivered" || ack.status === "read") {
      receipts.push(ackStatement(target, ack.status, ack.at));
    } else if (ack.status === "failed") {
      if (receipts.length > 0) await batchSql(db, receipts);
      receipts = [];
      const notDelivered = sql`${target} AND direction = 'outgoing' AND status IN ('queued', 'scheduled', 'sent')`;
      await failAndRefundWhere(
        db,
        session.accountId,
        notDelivered,
        ack.reason ?? "gateway_ack_error",
        ack.at,
      );
    }
  }
  if (receipts.length > 0) await batchSql(db, receipts);
}
