import { type AccountKey, copyPage, countRows, deletePage } from "../db/account-copy";
import { ACCOUNT_TABLES } from "../db/account-tables";
import { databaseNamed, directoryOf, forgetPlace, PLACE_TTL_MS } from "../db/databases";
import type { MovePhase } from "../db/directory-schema";
import { advanceMove, beginMove, type MoveRow, moveOf, switchMove } from "../db/queries/account-moves";
import { accountPlaceOf } from "../db/queries/directory";

// An account's move between account databases (docs/databases.md, Databases, Moving an account): hold,
// copy, count, switch, delete. Each step is one page of one table, and checks in the directory
// that the move still stands where it read it, so a step run twice (a redelivered queue
// message) changes nothing twice.

/**
 * How long a move refuses the account before it copies (ms): three times an isolate's hold on a
 * place (src/db/databases.ts `PLACE_TTL_MS`), so that every isolate has read the account as moving,
 * and every request or queue message that read it before has written what it had to.
 */
export const ACCOUNT_MOVE_HOLD_MS = 3 * PLACE_TTL_MS;
/**
 * Rows one step copies: at most this many statements (a row of a table with a number given
 * afresh is a statement of its own; others share one, within D1's 100 bound values), so that a
 * queue message's steps stay within D1's 1,000 queries per Worker invocation
 * (https://developers.cloudflare.com/d1/platform/limits/; src/account-moves/queue.ts).
 */
export const COPY_PAGE_ROWS = 200;
/** Rows one step deletes. */
export const DELETE_PAGE_ROWS = 1_000;

/** What a step leaves to do: the next step after `after` ms (0: at once; the rest of the hold), or nothing (null). */
export type MoveNext = { after: number } | null;

/**
 * Begins moving account `accountId` (of number `number`) from database `from` to `to`: the account
 * is refused from now (this isolate at once, the others within {@link PLACE_TTL_MS}), and copying
 * starts after {@link ACCOUNT_MOVE_HOLD_MS}.
 * @returns the move, or null when a move of the account is already under way.
 */
export async function beginAccountMove(
  env: Env,
  move: { accountId: string; from: string; to: string },
  now: number,
): Promise<MoveRow | null> {
  const begun = await beginMove(directoryOf(env), { ...move, holdUntil: now + ACCOUNT_MOVE_HOLD_MS }, now);
  forgetPlace(move.accountId);
  return begun;
}

/**
 * Runs the next step of account `accountId`'s move at time `now` (epoch ms):
 * - `holding`: once `hold_until` has passed, the copy begins.
 * - `copying`: one page of the current table is copied; past the last table, every table's rows of
 *   the account are counted on both sides: equal, the directory switches the account to the target
 *   and the move goes on `deleting` from the source; different, it goes on `unwinding`.
 * - `deleting` (source) and `unwinding` (target): one page of the current table is deleted, the
 *   tables backwards; past the first, the move is `done` or `failed`.
 * @returns what is left: null when the move ended (or another step ran this one), else when to
 *   run the next step (ms from now).
 */
export async function runMoveStep(env: Env, accountId: string, now: number): Promise<MoveNext> {
  const directory = directoryOf(env);
  const move = await moveOf(directory, accountId);
  if (!move) return null;
  const at = { phase: move.phase, step: move.step, cursor: move.cursor };
  const account = { id: accountId, number: (await accountPlaceOf(directory, accountId))?.number ?? 0 };
  switch (move.phase) {
    case "holding":
      if (now < move.holdUntil) return { after: move.holdUntil - now };
      return (await advanceMove(directory, accountId, at, { phase: "copying", step: 0, cursor: null }, now))
        ? { after: 0 }
        : null;
    case "copying":
      return copyStep(env, move, account, now);
    case "deleting":
    case "unwinding":
      return deleteStep(env, move, account, now);
    default:
      return null;
  }
}

/**
 * Ends account `accountId`'s copy as failed with `why`: the move goes on `unwinding`, which
 * deletes the target's partial copy; the account is the source's again at once.
 * @returns whether the move was still copying.
 */
export async function unwindAccountMove(env: Env, move: MoveRow, why: string, now: number): Promise<boolean> {
  if (move.phase !== "copying" && move.phase !== "holding") return false;
  const at = { phase: move.phase, step: move.step, cursor: move.cursor };
  const to = { phase: "unwinding" as const, step: ACCOUNT_TABLES.length - 1, cursor: null, error: why };
  const unwound = await advanceMove(directoryOf(env), move.accountId, at, to, now);
  forgetPlace(move.accountId);
  return unwound;
}

async function copyStep(env: Env, move: MoveRow, account: AccountKey, now: number): Promise<MoveNext> {
  const directory = directoryOf(env);
  const at = { phase: move.phase, step: move.step, cursor: move.cursor };
  const source = databaseNamed(env, move.fromDatabase).$client;
  const target = databaseNamed(env, move.toDatabase).$client;
  const table = ACCOUNT_TABLES[move.step];
  if (table) {
    const page = await copyPage(source, target, table, account, move.cursor, COPY_PAGE_ROWS);
    const to =
      page.cursor === null ? { step: move.step + 1, cursor: null } : { step: move.step, cursor: page.cursor };
    return (await advanceMove(directory, account.id, at, { phase: "copying", ...to, copied: page.rows }, now))
      ? { after: 0 }
      : null;
  }
  const differing = await differingCounts(source, target, account);
  if (differing) {
    await unwindAccountMove(env, move, differing, now);
    return { after: 0 };
  }
  const switched = await switchMove(
    directory,
    account.id,
    at,
    { phase: "deleting", step: ACCOUNT_TABLES.length - 1, cursor: null },
    now,
  );
  forgetPlace(account.id);
  return switched ? { after: 0 } : null;
}

async function deleteStep(env: Env, move: MoveRow, account: AccountKey, now: number): Promise<MoveNext> {
  const at = { phase: move.phase, step: move.step, cursor: move.cursor };
  const from = move.phase === "deleting" ? move.fromDatabase : move.toDatabase;
  const table = ACCOUNT_TABLES[move.step];
  const deleted = table
    ? await deletePage(databaseNamed(env, from).$client, table, account, DELETE_PAGE_ROWS)
    : 0;
  const ended: MovePhase = move.phase === "deleting" ? "done" : "failed";
  const to =
    deleted > 0
      ? { phase: move.phase, step: move.step, cursor: String(move.deleted + deleted) }
      : move.step > 0
        ? { phase: move.phase, step: move.step - 1, cursor: null }
        : { phase: ended, step: 0, cursor: null };
  const advanced = await advanceMove(directoryOf(env), account.id, at, { ...to, deleted }, now);
  return advanced && to.phase !== ended ? { after: 0 } : null;
}

/** Why the copy differs from the source (the first table whose counts of the account's rows differ), or null when none does. */
async function differingCounts(
  source: D1Database,
  target: D1Database,
  account: AccountKey,
): Promise<string | null> {
  for (const table of ACCOUNT_TABLES) {
    const [there, here] = await Promise.all([
      countRows(source, table, account),
      countRows(target, table, account),
    ]);
    if (there !== here) return `${table.name}: ${there} rows in the source, ${here} in the target`;
  }
  return null;
}
