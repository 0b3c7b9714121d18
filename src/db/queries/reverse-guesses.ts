import { type SQL, sql } from "drizzle-orm";
import { batchSql, type Db } from "../client";
import { type REVERSE_GUESS_OUTCOMES, reverseGuesses } from "../schema";
import { type Purge, type PurgeBudget, purgeBefore } from "./purge";

// The candidate codes of incoming messages that verified no reverse OTP (schema/otp.ts
// `reverseGuesses`), and what they count toward (src/otp/reverse.ts `REVERSE_RULES`). Every write
// is `INSERT … ON CONFLICT DO NOTHING` on (session, message, candidate), so a message the gateway
// delivers again counts once; every count is read in the statement that acts on it.

export type ReverseGuessOutcome = (typeof REVERSE_GUESS_OUTCOMES)[number];

/** The outcomes that are failed guesses, counted against their sender. */
const FAILED: readonly ReverseGuessOutcome[] = ["no_match", "wrong_sender"];

/**
 * SQL: how many failed guesses (`no_match`, `wrong_sender`) `sender` (E.164) sent session
 * `sessionId` from `since` on, the current message's included; `since` is SQL (e.g. a column,
 * `otps.created_at`) or epoch ms. One seek on `reverse_guesses_sender`.
 */
export function senderFailures(sessionId: string, sender: string, since: SQL | number): SQL {
  return sql`(SELECT COUNT(*) FROM reverse_guesses WHERE session_id = ${sessionId} AND sender = ${sender}
    AND at >= ${since} AND outcome IN (${sql.join(
      FAILED.map((outcome) => sql`${outcome}`),
      sql`, `,
    )}))`;
}

/** One message's candidate codes that verified nothing, as {@link recordReverseGuesses} takes them. */
export interface ReverseGuessMessage {
  accountId: string;
  sessionId: string;
  /** The gateway's id of the message. */
  messageKey: string;
  /** E.164. */
  sender: string;
}

/** A candidate code of the message and what became of it. */
export interface ReverseGuess {
  /** src/otp/code.ts `codeLookup` of the session and the candidate. */
  codeLookup: string;
  outcome: Exclude<ReverseGuessOutcome, "over_limit">;
  /** The OTP the candidate matched; null for `no_match`. */
  otpId: string | null;
}

/** SQL: session `sessionId` of account `accountId` has a live (pending, unexpired) reverse OTP at `now`. */
function hasLiveReverse(accountId: string, sessionId: string, now: number): SQL {
  return sql`EXISTS (SELECT 1 FROM otps WHERE session_id = ${sessionId} AND status = 'pending'
    AND expires_at > ${now} AND mode = 'reverse' AND account_id = ${accountId})`;
}

/**
 * SQL: sets each OTP of `otpIds` `failed_attempts` to the candidates recorded against it (a reverse
 * OTP's refused messages), `updated_at` `now` when that changes it. A count, not an increment, so
 * running it again changes nothing.
 */
function recount(otpIds: string[], now: number): SQL {
  const counted = sql`(SELECT COUNT(*) FROM reverse_guesses WHERE otp_id = otps.id)`;
  return sql`UPDATE otps SET failed_attempts = ${counted}, updated_at = ${now}
    WHERE id IN (${sql.join(
      otpIds.map((id) => sql`${id}`),
      sql`, `,
    )}) AND mode = 'reverse' AND failed_attempts <> ${counted}`;
}

/**
 * Records the candidates of `message` that verified nothing, read at `now` (epoch ms), in one D1
 * batch: each only while the session has a live reverse OTP (with none there is nothing to guess,
 * and ordinary chat numbers are not stored), each once per message and candidate; the OTPs they
 * matched have their `failed_attempts` recounted.
 */
export async function recordReverseGuesses(
  db: Db,
  message: ReverseGuessMessage,
  guesses: ReverseGuess[],
  now: number,
): Promise<void> {
  if (guesses.length === 0) return;
  const live = hasLiveReverse(message.accountId, message.sessionId, now);
  const inserts = guesses.map(
    (
      guess,
    ) => sql`INSERT INTO reverse_guesses (session_id, message_key, code_lookup, sender, otp_id, outcome, at)
      SELECT ${message.sessionId}, ${message.messageKey}, ${guess.codeLookup}, ${message.sender}, ${guess.otpId},
        ${guess.outcome}, ${now}
      WHERE ${live}
      ON CONFLICT DO NOTHING`,
  );
  const otpIds = [...new Set(guesses.flatMap((guess) => (guess.otpId === null ? [] : [guess.otpId])))];
  await batchSql(db, [...inserts, ...(otpIds.length > 0 ? [recount(otpIds, now)] : [])]);
}

/**
 * Records that `message` carried the code (`codeLookup`) of live reverse OTP `otpId` but its
 * sender is past `maxFailures` failed guesses since the OTP was created (`over_limit`), and
 * recounts the OTP's `failed_attempts`, in one D1 batch. Writes nothing unless both still hold
 * at `now` (epoch ms): run it after a verification that did not happen, whatever the reason.
 *
 * @returns whether it recorded the refusal (false also for a message recorded before).
 */
export async function recordOverLimit(
  db: Db,
  message: ReverseGuessMessage,
  refused: { otpId: string; codeLookup: string },
  maxFailures: number,
  now: number,
): Promise<boolean> {
  const [inserted] = await batchSql(db, [
    sql`INSERT INTO reverse_guesses (session_id, message_key, code_lookup, sender, otp_id, outcome, at)
      SELECT session_id, ${message.messageKey}, code_lookup, ${message.sender}, id, 'over_limit', ${now} FROM otps
      WHERE id = ${refused.otpId} AND account_id = ${message.accountId} AND session_id = ${message.sessionId}
        AND code_lookup = ${refused.codeLookup} AND mode = 'reverse' AND status = 'pending' AND expires_at > ${now}
        AND ${senderFailures(message.sessionId, message.sender, sql`otps.created_at`)} >= ${maxFailures}
      ON CONFLICT DO NOTHING`,
    recount([refused.otpId], now),
  ]);
  return (inserted?.meta.changes ?? 0) > 0;
}

/**
 * Deletes the rows read before `before` (epoch ms): the hourly sweep, once no OTP they could count
 * against is live (src/otp/reverse.ts `REVERSE_RULES.guessRetentionMs`), in bounded chunks through
 * `reverse_guesses_at`.
 */
export function purgeReverseGuesses(db: Db, before: number, budget?: PurgeBudget): Promise<Purge> {
  return purgeBefore(db, reverseGuesses, reverseGuesses.at, before, budget);
}
