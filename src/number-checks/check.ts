import type { Db } from "../db/client";
import { freshChecks, saveChecks } from "../db/queries/contact-checks";
import { MAX_NUMBER_CHECK } from "../gateways/gateway";
import { log } from "../lib/log";
import { unwrap } from "../sessions/result";
import type { NumberAnswer } from "../sessions/session-link";
import { sessionStub } from "../sessions/stub";

/**
 * How long an answer is used without asking the gateway again: 7 days, in ms (the rule,
 * and the time Meta's On-Premises API cached its own contact checks for: "Contacts",
 * developers.facebook.com/docs/whatsapp/api/contacts).
 */
export const CONTACT_CHECK_TTL_MS = 7 * 24 * 3_600_000;

/** Whether a number is on the chat network (null: the gateway could not tell), as of `checkedAt` (epoch ms). */
export interface NumberCheck {
  number: string;
  onChatapp: boolean | null;
  checkedAt: number;
}

/**
 * What a failed question to a session does: `throw` its failure as an ApiError (404 `not_found`,
 * 409 `session_not_connected`: the route), or leave the batch `unknown` (a campaign, which sends
 * what it cannot check).
 */
export type OnSessionFailure = "throw" | "unknown";

/**
 * Whether each of `numbers` (E.164) is on the chat network for account `accountId` (docs/sessions.md,
 * Number checks). An answer the account got less than {@link CONTACT_CHECK_TTL_MS} before `now`
 * (epoch ms) is used as it is (D1 `contact_checks`); the others are asked through the session
 * objects of `sessionIds` (the account's, in order), {@link MAX_NUMBER_CHECK} numbers a call, the
 * batches spread over the sessions in turn, one after another. New true/false answers are stored
 * as checked at `now`; a null one is not, so the next check asks again. With no session, or a
 * question that fails (`onFailure` `unknown`), those numbers are null.
 *
 * @returns a check per distinct number, by number.
 * @throws ApiError the session's failure when `onFailure` is `throw`.
 */
export async function checkNumbers(
  env: Env,
  db: Db,
  accountId: string,
  sessionIds: string[],
  numbers: string[],
  now: number,
  onFailure: OnSessionFailure,
): Promise<Map<string, NumberCheck>> {
  const distinct = [...new Set(numbers)];
  const checks = new Map<string, NumberCheck>();
  for (const [number, stored] of await freshChecks(db, accountId, distinct, now - CONTACT_CHECK_TTL_MS)) {
    checks.set(number, { number, ...stored });
  }
  const missing = distinct.filter((number) => !checks.has(number));
  for (let start = 0; start < missing.length; start += MAX_NUMBER_CHECK) {
    const batch = missing.slice(start, start + MAX_NUMBER_CHECK);
    const sessionId = sessionIds[(start / MAX_NUMBER_CHECK) % Math.max(1, sessionIds.length)];
    const answers = sessionId ? await ask(env, sessionId, batch, onFailure) : [];
    const known = new Map(answers.map((answer) => [answer.number, answer.onChatapp]));
    for (const number of batch)
      checks.set(number, { number, onChatapp: known.get(number) ?? null, checkedAt: now });
    await saveChecks(
      db,
      accountId,
      answers.flatMap((a) => (a.onChatapp === null ? [] : [{ number: a.number, onChatapp: a.onChatapp }])),
      now,
    );
  }
  return checks;
}

/** One batch asked of session `sessionId`'s object; a failure as `onFailure` says (none answered). */
async function ask(
  env: Env,
  sessionId: string,
  numbers: string[],
  onFailure: OnSessionFailure,
): Promise<NumberAnswer[]> {
  if (onFailure === "throw") return unwrap(await sessionStub(env, sessionId).checkNumbers(numbers));
  try {
    const result = await sessionStub(env, sessionId).checkNumbers(numbers);
    if (result.ok) return result.value;
    log.warn("number_check_refused", { session: sessionId, code: result.code });
  } catch (error) {
    log.error("number_check_failed", { session: sessionId, error });
  }
  return [];
}
