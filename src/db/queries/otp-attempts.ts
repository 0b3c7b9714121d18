import { type SQL, sql } from "drizzle-orm";
import { batchSql, type Db, type Statement } from "../client";
import type { MessageStatus, otpAttempts } from "../schema";

// The attempts of an OTP's codes, one per channel a code went out on (src/otp/failover.ts). Every
// change is one conditional statement (or one D1 batch): the claim of an attempt re-checks, in its
// own WHERE clause, that the OTP is still pending, unexpired and on the same code, and the unique
// index (otp_id, send_seq, session_id) lets one code go out on a channel once.

export type OtpAttemptRow = typeof otpAttempts.$inferSelect;

/** The row as D1 returns it from raw SQL (snake_case columns). */
type RawAttemptRow = {
  otp_id: string;
  seq: number;
  send_seq: number;
  session_id: string;
  message_id: string | null;
  created_at: number;
};

function fromRaw(row: RawAttemptRow): OtpAttemptRow {
  return {
    otpId: row.otp_id,
    seq: row.seq,
    sendSeq: row.send_seq,
    sessionId: row.session_id,
    messageId: row.message_id,
    createdAt: row.created_at,
  };
}

/** SQL: the next attempt number of OTP `otpId` (1 for its first). */
function nextSeq(otpId: string): SQL {
  return sql`(SELECT COALESCE(MAX(seq), 0) + 1 FROM otp_attempts WHERE otp_id = ${otpId})`;
}

/** SQL: OTP `otpId` of `accountId` is pending, unexpired at `now` (epoch ms) and on code number `sendSeq`. */
function onCode(otp: { otpId: string; accountId: string; sendSeq: number }, now: number): SQL {
  return sql`id = ${otp.otpId} AND account_id = ${otp.accountId} AND status = 'pending'
    AND expires_at > ${now} AND sends = ${otp.sendSeq}`;
}

/**
 * Records a code's message that the caller has already created (a first send or a resend, whose
 * OTP row was written just before): attempt number MAX+1 of the OTP, on `sessionId`, carrying code
 * number `sendSeq`, and the message as the OTP's latest (`otps.message_id`), both only while the
 * OTP still is on that code (a later resend keeps its own). One D1 batch.
 * @returns the attempt's `seq`, or null when the OTP has moved on to another code (nothing written).
 */
export async function recordSentAttempt(
  db: Db,
  attempt: {
    accountId: string;
    otpId: string;
    sendSeq: number;
    sessionId: string;
    messageId: string;
    /** Epoch ms. */
    now: number;
  },
): Promise<number | null> {
  const { accountId, otpId, sendSeq } = attempt;
  const [inserted] = await batchSql<{ seq: number }>(db, [
    sql`INSERT INTO otp_attempts (otp_id, seq, send_seq, session_id, message_id, created_at)
      SELECT id, ${nextSeq(otpId)}, sends, ${attempt.sessionId}, ${attempt.messageId}, ${attempt.now}
      FROM otps WHERE id = ${otpId} AND account_id = ${accountId} AND sends = ${sendSeq}
      ON CONFLICT DO NOTHING
      RETURNING seq`,
    sql`UPDATE otps SET message_id = ${attempt.messageId}
      WHERE id = ${otpId} AND account_id = ${accountId} AND sends = ${sendSeq}`,
  ]);
  return inserted?.results[0]?.seq ?? null;
}

/**
 * Claims the attempt of code number `sendSeq` on session `sessionId` before its message is made:
 * inserts it (next `seq`, `message_id` null, `created_at` now) only while the OTP is pending,
 * unexpired at `now` (epoch ms) and still on that code, and only if that code has not gone out on
 * that session already (unique index).
 *
 * @returns the claimed attempt, or null when nothing was inserted (the OTP moved on, or the
 *   attempt exists: see {@link findAttemptOn}).
 */
export async function claimAttempt(
  db: Db,
  claim: { accountId: string; otpId: string; sendSeq: number; sessionId: string },
  now: number,
): Promise<OtpAttemptRow | null> {
  const row = await db.get<RawAttemptRow | undefined>(sql`INSERT INTO otp_attempts
      (otp_id, seq, send_seq, session_id, message_id, created_at)
    SELECT id, ${nextSeq(claim.otpId)}, sends, ${claim.sessionId}, NULL, ${now}
    FROM otps WHERE ${onCode(claim, now)}
    ON CONFLICT DO NOTHING
    RETURNING *`);
  return row ? fromRaw(row) : null;
}

/**
 * Takes over a claim whose maker never finished it (no `message_id`, claimed at `claimedAt`, epoch
 * ms, at least `leaseMs` before `now`): moves its `created_at` to `now`, only while the claim is
 * still as read and the OTP still pending, unexpired and on the claim's code. Two takers cannot
 * both succeed: the first one moves `created_at`.
 *
 * @returns whether this caller now holds the claim.
 */
export async function takeOverClaim(
  db: Db,
  claim: { accountId: string; otpId: string; seq: number; sendSeq: number; claimedAt: number },
  leaseMs: number,
  now: number,
): Promise<boolean> {
  const result = await db.run(sql`UPDATE otp_attempts SET created_at = ${now}
    WHERE otp_id = ${claim.otpId} AND seq = ${claim.seq} AND message_id IS NULL
      AND created_at = ${claim.claimedAt} AND created_at <= ${now - leaseMs}
      AND EXISTS (SELECT 1 FROM otps WHERE ${onCode(claim, now)})`);
  return (result.meta.changes ?? 0) > 0;
}

/** Gives back a claim whose message could not be made (`message_id` still null), so nothing stays claimed. */
export async function releaseClaim(db: Db, otpId: string, seq: number): Promise<void> {
  await db.run(sql`DELETE FROM otp_attempts WHERE otp_id = ${otpId} AND seq = ${seq} AND message_id IS NULL`);
}

/**
 * Completes claimed attempt `seq` with its message: sets its `message_id` (once), and makes the
 * message the OTP's latest while the OTP is still on code number `sendSeq`. One D1 batch.
 */
export async function completeAttempt(
  db: Db,
  attempt: { accountId: string; otpId: string; seq: number; sendSeq: number; messageId: string },
): Promise<void> {
  await batchSql(db, [
    sql`UPDATE otp_attempts SET message_id = ${attempt.messageId}
      WHERE otp_id = ${attempt.otpId} AND seq = ${attempt.seq} AND message_id IS NULL`,
    sql`UPDATE otps SET message_id = ${attempt.messageId}
      WHERE id = ${attempt.otpId} AND account_id = ${attempt.accountId} AND sends = ${attempt.sendSeq}`,
  ]);
}

/** The attempt of code number `sendSeq` of OTP `otpId` on session `sessionId`, or null. */
export async function findAttemptOn(
  db: Db,
  otpId: string,
  sendSeq: number,
  sessionId: string,
): Promise<OtpAttemptRow | null> {
  const row = await db.get<RawAttemptRow | undefined>(sql`SELECT * FROM otp_attempts
    WHERE otp_id = ${otpId} AND send_seq = ${sendSeq} AND session_id = ${sessionId}`);
  return row ? fromRaw(row) : null;
}

/** The attempts of code number `sendSeq` of OTP `otpId`, oldest first. */
export async function attemptsOfCode(db: Db, otpId: string, sendSeq: number): Promise<OtpAttemptRow[]> {
  const rows = await db.all<RawAttemptRow>(sql`SELECT * FROM otp_attempts
    WHERE otp_id = ${otpId} AND send_seq = ${sendSeq} ORDER BY seq`);
  return rows.map(fromRaw);
}

/** An attempt with what its message row says now (the status and reason are null without a message). */
export interface AttemptWithMessage extends OtpAttemptRow {
  status: MessageStatus | null;
  reason: string | null;
}

/** Attempt `seq` of OTP `otpId` with its message's status, or null when there is no such attempt. */
export async function findAttempt(
  db: Db,
  accountId: string,
  otpId: string,
  seq: number,
): Promise<AttemptWithMessage | null> {
  const row = await db.get<
    (RawAttemptRow & { status: MessageStatus | null; reason: string | null }) | undefined
  >(sql`SELECT a.*, m.status, m.reason FROM otp_attempts a
      LEFT JOIN messages m ON m.id = a.message_id AND m.account_id = ${accountId}
    WHERE a.otp_id = ${otpId} AND a.seq = ${seq}`);
  return row ? { ...fromRaw(row), status: row.status, reason: row.reason } : null;
}

/**
 * The message an unfinished claim made before its maker stopped, if it got that far: the OTP's
 * message on session `sessionId` created at or after `since` (epoch ms, the claim's time), newest
 * first. Read through the `messages_session` index.
 */
export async function messageOfClaim(
  db: Db,
  claim: { accountId: string; otpId: string; sessionId: string; since: number },
): Promise<string | null> {
  const row = await db.get<{ id: string } | undefined>(sql`SELECT id FROM messages
    WHERE account_id = ${claim.accountId} AND chatapp_session_id = ${claim.sessionId}
      AND created_at >= ${claim.since} AND otp_id = ${claim.otpId}
    ORDER BY created_at DESC LIMIT 1`);
  return row?.id ?? null;
}

/**
 * One attempt as the OTP record shows it (src/presenters/otp.ts): the attempt, and its message's
 * status and times as the message row holds them (epoch ms; `failedAt` the API timestamp string
 * the message's `metadata.failed_at` holds). Message fields are null without a message.
 */
export interface AttemptView {
  sessionId: string;
  messageId: string | null;
  sendSeq: number;
  createdAt: number;
  status: MessageStatus | null;
  reason: string | null;
  sentAt: number | null;
  deliveredAt: number | null;
  readAt: number | null;
  failedAt: string | null;
}

/**
 * SQL: a JSON array of the attempts of the OTP whose id `otpId` gives (a value, or a column such
 * as `otps.id` of the surrounding statement), oldest first, each an {@link AttemptView}. Used both
 * to read an OTP's attempts and inside the `otp.*` event statements, so that an event's snapshot
 * holds them as the OTP's GET shows them.
 */
export function attemptsJson(otpId: SQL | string): SQL {
  return sql`(SELECT json_group_array(json(attempt)) FROM (SELECT json_object('sessionId', a.session_id,
      'messageId', a.message_id, 'sendSeq', a.send_seq, 'createdAt', a.created_at, 'status', m.status,
      'reason', m.reason, 'sentAt', m.sent_at, 'deliveredAt', m.delivered_at, 'readAt', m.read_at,
      'failedAt', json_extract(m.metadata, '$.failed_at')) AS attempt
    FROM otp_attempts a LEFT JOIN messages m ON m.id = a.message_id
    WHERE a.otp_id = ${otpId} ORDER BY a.seq))`;
}

/** The attempts of OTP `otpId`, oldest first (see {@link attemptsJson}). */
export async function listAttempts(db: Db, otpId: string): Promise<AttemptView[]> {
  const row = await db.get<{ attempts: string | null } | undefined>(
    sql`SELECT ${attemptsJson(otpId)} AS attempts`,
  );
  return row?.attempts ? (JSON.parse(row.attempts) as AttemptView[]) : [];
}

/** {@link attemptsJson} of the `otps` row an event statement reads (src/otp/verify.ts). */
export function eventRowAttemptsJson(): SQL {
  return attemptsJson(sql`otps.id`);
}

/**
 * The statement that deletes the attempts of the OTPs `otpIds` (SQL: a subquery of OTP ids), by
 * the primary key `(otp_id, seq)`. An OTP's attempts are what `GET /v1/otp/{id}`, its events and
 * the OTP statistics show of it, so they stay as long as the OTP does; this goes in the batch that
 * archives the OTPs (src/db/queries/otp-archives.ts), before their own delete (the foreign key
 * `otp_attempts.otp_id` refuses it while an attempt remains), with otp-sends.ts `deleteOtpSendsOf`.
 */
export function deleteOtpAttemptsOf(otpIds: SQL): Statement {
  return sql`DELETE FROM otp_attempts WHERE otp_id IN ${otpIds}`;
}
