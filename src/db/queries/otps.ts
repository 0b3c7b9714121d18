import { and, eq, gt, inArray, type SQL, sql } from "drizzle-orm";
import { isPhoneAddress } from "../../lib/contact-identity";
import { batchSql, type Db } from "../client";
import { apps, otps } from "../schema";
import { addressesOfContact } from "./contacts";
import { senderFailures } from "./reverse-guesses";

// Every state change below is one conditional statement (or one D1 batch, a transaction): the
// WHERE clause re-checks the rule it enforces, so two concurrent requests cannot both pass a
// check that only one of them may pass (two right codes, a sixth wrong code, a resend inside
// 30 seconds, a sixth code to one number in an hour). D1 runs statements one at a time. The
// rules' numbers come from the caller (src/otp/code.ts `OTP_RULES`, `OTP_MAX_PER_NUMBER_PER_HOUR`).

export type OtpRow = typeof otps.$inferSelect;

/** The row as D1 returns it from raw SQL (snake_case columns). */
type RawOtpRow = {
  id: string;
  account_id: string;
  app_id: string;
  message_id: string | null;
  mode: OtpRow["mode"];
  session_id: string | null;
  code_lookup: string | null;
  verified_number: string | null;
  verified_user_id: string | null;
  to_number: string | null;
  code_hmac: string;
  status: OtpRow["status"];
  failed_attempts: number;
  sends: number;
  last_sent_at: number;
  expires_at: number;
  verified_at: number | null;
  created_at: number;
  updated_at: number;
};

function fromRaw(row: RawOtpRow): OtpRow {
  return {
    id: row.id,
    accountId: row.account_id,
    appId: row.app_id,
    messageId: row.message_id,
    mode: row.mode,
    sessionId: row.session_id,
    codeLookup: row.code_lookup,
    verifiedNumber: row.verified_number,
    verifiedUserId: row.verified_user_id,
    toNumber: row.to_number,
    codeHmac: row.code_hmac,
    status: row.status,
    failedAttempts: row.failed_attempts,
    sends: row.sends,
    lastSentAt: row.last_sent_at,
    expiresAt: row.expires_at,
    verifiedAt: row.verified_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The OTP a statement's `RETURNING *` gave (its first row), or null when it matched none. */
function returned(result: D1Result<RawOtpRow> | undefined): OtpRow | null {
  const row = result?.results[0];
  return row ? fromRaw(row) : null;
}

/**
 * The per-number limit: at most `limit` codes to one number from all the apps of one account
 * (deleted apps included) in `windowMs` (rolling).
 */
export interface PerNumberLimit {
  limit: number;
  /** Ms. */
  windowMs: number;
}

/**
 * SQL: the send log of the contact `toNumber` names (an E.164 number or a user id, and every
 * address the account's contacts link to it: contacts.ts `addressesOfContact`), from every app of
 * `accountId`, deleted apps included (a deleted app's codes still count), within the rolling
 * window ending at `now` (epoch ms). So the limit counts the person, whether a code went to their
 * number, their LID or their BSUID. Index seeks per app and address: apps_account_live gives the
 * app ids, otp_sends_app_number the sends.
 */
function accountSends(accountId: string, toNumber: string, windowMs: number, now: number) {
  return sql`otp_sends WHERE app_id IN (SELECT id FROM apps WHERE account_id = ${accountId})
    AND to_number IN (${addressesOfContact(accountId, toNumber)}) AND sent_at > ${now - windowMs}`;
}

/** SQL: how many codes {@link accountSends} holds. */
function sendsInWindow(accountId: string, toNumber: string, windowMs: number, now: number) {
  return sql`(SELECT COUNT(*) FROM ${accountSends(accountId, toNumber, windowMs, now)})`;
}

/** The account's OTP with this uuid, or null (also for another account's OTP). */
export async function findOtp(db: Db, accountId: string, id: string): Promise<OtpRow | null> {
  const [row] = await db
    .select()
    .from(otps)
    .where(and(eq(otps.id, id), eq(otps.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

export interface NewOtp {
  id: string;
  accountId: string;
  appId: string;
  /** The recipient's address: E.164, or a user id (docs/contacts.md, Contacts). */
  toNumber: string;
  codeHmac: string;
  /** Epoch ms. */
  expiresAt: number;
}

/**
 * Creates a `pending` OTP and logs its first send at `now` (epoch ms), atomically and only while
 * `toNumber` has had fewer than `perNumber.limit` codes from the account's apps in the last
 * `perNumber.windowMs`: one D1 batch whose first statement inserts the OTP only under the limit
 * and whose second logs the send only if the first did. The message is not part of it; see
 * {@link deleteOtp}.
 *
 * @returns the new row, or null when the per-number limit is reached (nothing written).
 */
export async function insertOtp(
  db: Db,
  otp: NewOtp,
  perNumber: PerNumberLimit,
  now: number,
): Promise<OtpRow | null> {
  const [inserted] = await batchSql<RawOtpRow>(db, [
    sql`INSERT INTO otps (id, account_id, app_id, message_id, to_number, code_hmac, status, failed_attempts, sends,
        last_sent_at, expires_at, verified_at, created_at, updated_at)
      SELECT ${otp.id}, ${otp.accountId}, ${otp.appId}, NULL, ${otp.toNumber}, ${otp.codeHmac}, 'pending', 0, 1,
        ${now}, ${otp.expiresAt}, NULL, ${now}, ${now}
      WHERE ${sendsInWindow(otp.accountId, otp.toNumber, perNumber.windowMs, now)} < ${perNumber.limit}
      RETURNING *`,
    sql`INSERT INTO otp_sends (otp_id, seq, app_id, to_number, sent_at)
      SELECT id, 1, app_id, to_number, ${now} FROM otps WHERE id = ${otp.id}`,
  ]);
  return returned(inserted);
}

/**
 * Deletes an OTP and its send log: the undo of {@link insertOtp} when its message could not be
 * created (no balance, session not connected or gone), so that a refused send leaves no OTP
 * behind and does not count toward the per-number limit.
 */
export async function deleteOtp(db: Db, accountId: string, id: string): Promise<void> {
  await batchSql(db, [
    sql`DELETE FROM otp_sends WHERE otp_id = (SELECT id FROM otps WHERE id = ${id} AND account_id = ${accountId})`,
    sql`DELETE FROM otps WHERE id = ${id} AND account_id = ${accountId}`,
  ]);
}

/** What a resend is checked against: the per-number limit and the OTP's own send limits. */
export interface ResendLimits {
  perNumber: PerNumberLimit;
  /** Codes one OTP may send, the first one included. */
  maxSends: number;
  /** Shortest gap between two sends of one OTP, ms. */
  resendIntervalMs: number;
}

/**
 * Replaces the code of a resend and logs the send, in one D1 batch, only if all of these still
 * hold at `now` (epoch ms): the OTP is the account's, `pending`, unexpired, has sent exactly
 * `current.sends` codes (fewer than `limits.maxSends`), its last send is at least
 * `limits.resendIntervalMs` old, and its number is under `limits.perNumber`. The new code is
 * `change.codeHmac`, the new expiry `change.expiresAt` (epoch ms); failed attempts are kept (a
 * resend does not buy more guesses). The message id is cleared until the new code's message is
 * recorded (otp-attempts.ts `recordSentAttempt`).
 *
 * @returns the updated row, or null when any condition failed (nothing written).
 */
export async function claimResend(
  db: Db,
  current: OtpRow & { toNumber: string },
  change: { codeHmac: string; expiresAt: number },
  limits: ResendLimits,
  now: number,
): Promise<OtpRow | null> {
  const seq = current.sends + 1;
  const { perNumber } = limits;
  const [, updated] = await batchSql<RawOtpRow>(db, [
    sql`INSERT INTO otp_sends (otp_id, seq, app_id, to_number, sent_at)
      SELECT id, ${seq}, app_id, to_number, ${now} FROM otps
      WHERE id = ${current.id} AND account_id = ${current.accountId} AND status = 'pending' AND expires_at > ${now}
        AND sends = ${current.sends} AND sends < ${limits.maxSends}
        AND last_sent_at <= ${now - limits.resendIntervalMs}
        AND ${sendsInWindow(current.accountId, current.toNumber, perNumber.windowMs, now)} < ${perNumber.limit}
      ON CONFLICT DO NOTHING`,
    sql`UPDATE otps SET code_hmac = ${change.codeHmac}, sends = ${seq}, last_sent_at = ${now},
        expires_at = ${change.expiresAt}, message_id = NULL, updated_at = ${now}
      WHERE id = ${current.id} AND sends = ${current.sends}
        AND EXISTS (SELECT 1 FROM otp_sends WHERE otp_id = ${current.id} AND seq = ${seq} AND sent_at = ${now})
      RETURNING *`,
  ]);
  return returned(updated);
}

/**
 * The undo of {@link claimResend} when the new code's message could not be created: the
 * previous code, counters and expiry come back (the code already delivered stays valid) and the
 * send leaves the log. Applies only while the OTP still holds the claimed code.
 */
export async function undoResend(
  db: Db,
  previous: OtpRow,
  claimedCodeHmac: string,
  now: number,
): Promise<void> {
  await batchSql(db, [
    sql`DELETE FROM otp_sends WHERE otp_id = ${previous.id} AND seq = ${previous.sends + 1}`,
    sql`UPDATE otps SET code_hmac = ${previous.codeHmac}, sends = ${previous.sends}, last_sent_at = ${previous.lastSentAt},
        expires_at = ${previous.expiresAt}, message_id = ${previous.messageId}, updated_at = ${now}
      WHERE id = ${previous.id} AND sends = ${previous.sends + 1} AND code_hmac = ${claimedCodeHmac}`,
  ]);
}

/**
 * When `toNumber` may receive another code from the account's apps: epoch ms at which the send that keeps
 * it at `perNumber.limit` codes leaves the rolling window. Null when it is under the limit at
 * `now`.
 */
export async function perNumberFreeAt(
  db: Db,
  accountId: string,
  toNumber: string,
  perNumber: PerNumberLimit,
  now: number,
): Promise<number | null> {
  // The limit-th newest send in the window: once it leaves the window, limit - 1 remain.
  const row = await db.get<
    { sent_at: number } | undefined
  >(sql`SELECT sent_at FROM ${accountSends(accountId, toNumber, perNumber.windowMs, now)}
    ORDER BY sent_at DESC LIMIT 1 OFFSET ${perNumber.limit - 1}`);
  return row ? row.sent_at + perNumber.windowMs : null;
}

/**
 * A change of an OTP and what its `effects` did: the row its UPDATE returned, and the D1 results
 * of the effect statements, in order.
 */
export interface OtpChange {
  otp: OtpRow;
  effects: D1Result[];
}

/**
 * Accepts the code `codeHmac` (the caller has compared it in constant time): `pending` →
 * `verified`, only if the OTP still holds that code, is unexpired at `now` (epoch ms) and has
 * had fewer than `maxFailedAttempts` wrong codes. Two concurrent verifies of the right code
 * cannot both get the row (accept once only). Runs the statements `effects` builds (the
 * `otp.verified` event) in the same batch, after the UPDATE; they receive the condition, on
 * `otps` columns, that selects the OTP once verified.
 *
 * @returns the verified row and the results of `effects`, or null when a condition no longer holds.
 */
export async function markVerified(
  db: Db,
  accountId: string,
  id: string,
  codeHmac: string,
  maxFailedAttempts: number,
  now: number,
  effects: (verified: SQL) => SQL[],
): Promise<OtpChange | null> {
  const [updated, ...results] = await batchSql<RawOtpRow>(db, [
    sql`UPDATE otps SET status = 'verified', verified_at = ${now}, updated_at = ${now}
      WHERE id = ${id} AND account_id = ${accountId} AND status = 'pending' AND code_hmac = ${codeHmac}
        AND expires_at > ${now} AND failed_attempts < ${maxFailedAttempts}
      RETURNING *`,
    ...effects(sql`id = ${id} AND status = 'verified'`),
  ]);
  const otp = returned(updated);
  return otp && { otp, effects: results };
}

/**
 * Counts a wrong code against a `pending` OTP, unexpired at `now` (epoch ms), that still holds
 * the code `codeHmac` it was compared with; wrong code number `maxFailedAttempts` turns it
 * `failed`. The increment and the limit are one statement, so concurrent wrong codes cannot
 * exceed the limit. Runs the statements `effects` builds (the `otp.failed` event) in the same
 * batch, after the UPDATE; they receive the condition, on `otps` columns, that selects the OTP
 * once failed.
 *
 * @returns the updated row and the results of `effects`, or null when a condition no longer holds
 *   (nothing counted).
 */
export async function recordWrongCode(
  db: Db,
  accountId: string,
  id: string,
  codeHmac: string,
  maxFailedAttempts: number,
  now: number,
  effects: (failed: SQL) => SQL[],
): Promise<OtpChange | null> {
  const max = maxFailedAttempts;
  const [updated, ...results] = await batchSql<RawOtpRow>(db, [
    sql`UPDATE otps SET failed_attempts = failed_attempts + 1,
        status = CASE WHEN failed_attempts + 1 >= ${max} THEN 'failed' ELSE status END, updated_at = ${now}
      WHERE id = ${id} AND account_id = ${accountId} AND status = 'pending' AND code_hmac = ${codeHmac}
        AND expires_at > ${now} AND failed_attempts < ${max}
      RETURNING *`,
    ...effects(sql`id = ${id} AND status = 'failed'`),
  ]);
  const otp = returned(updated);
  return otp && { otp, effects: results };
}

/** Stores `expired` on a `pending` OTP whose `expires_at` has passed at `now` (epoch ms). */
export async function markExpired(db: Db, accountId: string, id: string, now: number): Promise<void> {
  await db.run(sql`UPDATE otps SET status = 'expired', updated_at = ${now}
    WHERE id = ${id} AND account_id = ${accountId} AND status = 'pending' AND expires_at <= ${now}`);
}

// ---- Reverse OTPs: the user sends the code to the session (src/otp/reverse.ts) ----------------

export interface NewReverseOtp {
  id: string;
  accountId: string;
  appId: string;
  /** The session (uuid) whose incoming messages can verify it. */
  sessionId: string;
  /** E.164: the only number whose message can verify it; null for any number. */
  toNumber: string | null;
  codeHmac: string;
  /** src/otp/code.ts `codeLookup` of the session and the code. */
  codeLookup: string;
  /** Epoch ms. */
  expiresAt: number;
}

/** SQL: a reverse OTP of session `sessionId` holding `codeLookup` is live (pending, unexpired) at `now`. */
function liveReverse(sessionId: string, codeLookup: string, now: number): SQL {
  return sql`session_id = ${sessionId} AND code_lookup = ${codeLookup} AND mode = 'reverse'
    AND status = 'pending' AND expires_at > ${now}`;
}

/** SQL: session `sessionId` of account `accountId` holds fewer than `max` live reverse OTPs at `now`. */
function underLiveCap(accountId: string, sessionId: string, max: number, now: number): SQL {
  return sql`(SELECT COUNT(*) FROM otps WHERE session_id = ${sessionId} AND status = 'pending'
    AND expires_at > ${now} AND mode = 'reverse' AND account_id = ${accountId}) < ${max}`;
}

/**
 * How many live (pending, unexpired at `now`, epoch ms) reverse OTPs session `sessionId` of account
 * `accountId` holds. One seek on `otps_session_live`.
 */
export async function liveReverseCount(
  db: Db,
  accountId: string,
  sessionId: string,
  now: number,
): Promise<number> {
  const row = await db.get<{ n: number }>(sql`SELECT COUNT(*) AS n FROM otps WHERE session_id = ${sessionId}
    AND status = 'pending' AND expires_at > ${now} AND mode = 'reverse' AND account_id = ${accountId}`);
  return row?.n ?? 0;
}

/**
 * Creates a `pending` reverse OTP at `now` (epoch ms), only if no live reverse OTP of the same
 * session holds the same `codeLookup` and the session holds fewer than `maxLive` live reverse OTPs
 * (one conditional INSERT, so two concurrent creates cannot both take a code or the last slot).
 * Nothing is sent: `sends` is 0 and no send is logged, so it does not count toward the per-number
 * limit.
 *
 * @returns the new row, or null when the code is taken or the session full (nothing written;
 *   {@link liveReverseCount} tells which).
 */
export async function insertReverseOtp(
  db: Db,
  otp: NewReverseOtp,
  maxLive: number,
  now: number,
): Promise<OtpRow | null> {
  const [inserted] = await batchSql<RawOtpRow>(db, [
    sql`INSERT INTO otps (id, account_id, app_id, message_id, mode, session_id, code_lookup, verified_number,
        to_number, code_hmac, status, failed_attempts, sends, last_sent_at, expires_at, verified_at, created_at, updated_at)
      SELECT ${otp.id}, ${otp.accountId}, ${otp.appId}, NULL, 'reverse', ${otp.sessionId}, ${otp.codeLookup}, NULL,
        ${otp.toNumber}, ${otp.codeHmac}, 'pending', 0, 0, ${now}, ${otp.expiresAt}, NULL, ${now}, ${now}
      WHERE NOT EXISTS (SELECT 1 FROM otps WHERE ${liveReverse(otp.sessionId, otp.codeLookup, now)})
        AND ${underLiveCap(otp.accountId, otp.sessionId, maxLive, now)}
      RETURNING *`,
  ]);
  return returned(inserted);
}

/** A live reverse OTP an incoming message's code found, with its app's `reverse_price` (minor units). */
export interface ReverseCandidate {
  otp: OtpRow;
  reversePrice: number;
}

/**
 * The account's live (pending, unexpired at `now`, epoch ms) reverse OTPs of session `sessionId`
 * whose `code_lookup` is one of `lookups`, each with its app's current `reverse_price` (a deleted
 * app's too). One read on the index `otps_code_lookup`.
 */
export async function liveReverseOtps(
  db: Db,
  accountId: string,
  sessionId: string,
  lookups: string[],
  now: number,
): Promise<ReverseCandidate[]> {
  if (lookups.length === 0) return [];
  return db
    .select({ otp: otps, reversePrice: apps.reversePrice })
    .from(otps)
    .innerJoin(apps, eq(apps.id, otps.appId))
    .where(
      and(
        eq(otps.sessionId, sessionId),
        inArray(otps.codeLookup, lookups),
        eq(otps.accountId, accountId),
        eq(otps.mode, "reverse"),
        eq(otps.status, "pending"),
        gt(otps.expiresAt, now),
      ),
    );
}

/** Which reverse OTP an incoming message verifies, and who sent it. */
export interface ReverseVerification {
  accountId: string;
  id: string;
  sessionId: string;
  /** The lookup of the code the message held. */
  codeLookup: string;
  /**
   * The sender's address: their number (E.164) when known, else their user id (docs/contacts.md, Contacts).
   */
  sender: string;
  /** The sender's user id, when the network gave one. */
  senderUserId: string | null;
  /** The failed guesses past which the sender verifies nothing (src/otp/reverse.ts `REVERSE_RULES`). */
  maxFailures: number;
}

/**
 * SQL: the reverse OTP of `v` can be verified by `v.sender` at `now` (epoch ms): it is the
 * account's, still live with that code on that session, has no `to_number` or has the sender's
 * (their number or their user id),
 * and the sender sent the session fewer than `v.maxFailures` failed guesses since it was created
 * (reverse-guesses.ts {@link senderFailures}, read in the same statement). Holds no more once it
 * is verified.
 */
export function reverseVerifiable(v: ReverseVerification, now: number): SQL {
  return sql`EXISTS (SELECT 1 FROM otps WHERE id = ${v.id} AND account_id = ${v.accountId}
    AND ${liveReverse(v.sessionId, v.codeLookup, now)} AND (to_number IS NULL OR to_number IN (${v.sender}, ${v.senderUserId ?? v.sender}))
    AND ${senderFailures(v.sessionId, v.sender, sql`otps.created_at`)} < ${v.maxFailures})`;
}

/**
 * The statement that verifies the reverse OTP of `v` at `now` (epoch ms): `pending` → `verified`,
 * `verified_number` the sender, `verified_at` now, only while {@link reverseVerifiable} holds and
 * `condition` does (e.g. that its charge was made), `RETURNING *`. Read its result with
 * {@link otpChangeOf}.
 */
export function verifyReverseStatement(v: ReverseVerification, now: number, condition: SQL = sql`1`): SQL {
  const number = isPhoneAddress(v.sender) ? v.sender : null;
  return sql`UPDATE otps SET status = 'verified', verified_number = ${number}, verified_user_id = ${v.senderUserId},
      verified_at = ${now}, updated_at = ${now}
    WHERE id = ${v.id} AND ${reverseVerifiable(v, now)} AND ${condition}
    RETURNING *`;
}

/**
 * The change a batch made, from the results of an OTP UPDATE `RETURNING *` and of the effect
 * statements after it, in order; null when the UPDATE matched nothing.
 */
export function otpChangeOf(results: D1Result[]): OtpChange | null {
  const [updated, ...effects] = results;
  const otp = returned(updated as D1Result<RawOtpRow> | undefined);
  return otp && { otp, effects };
}

/**
 * Verifies the reverse OTP of `v` at `now` (epoch ms) with no charge, by
 * {@link verifyReverseStatement}, and runs the statements `effects` builds (the `otp.verified`
 * event) in the same batch, after it; they receive the condition, on `otps` columns, that selects
 * the OTP once verified.
 *
 * @returns the verified row and the results of `effects`, or null when it can no longer be verified.
 */
export async function markReverseVerified(
  db: Db,
  v: ReverseVerification,
  now: number,
  effects: (verified: SQL) => SQL[],
): Promise<OtpChange | null> {
  const results = await batchSql(db, [
    verifyReverseStatement(v, now),
    ...effects(sql`id = ${v.id} AND status = 'verified'`),
  ]);
  return otpChangeOf(results);
}

/** The condition selecting OTP `id` verified, once `made` holds (a charge's effect). */
export function verifiedOnceMade(id: string, made: SQL): SQL {
  return sql`id = ${id} AND status = 'verified' AND ${made}`;
}
