import { and, eq, inArray, isNull, notInArray, sql } from "drizzle-orm";
import type { Db } from "../client";
import { directoryAccounts, directoryMoves, type MovePhase } from "../directory-schema";

// The directory's record of accounts' moves between account databases
// (src/db/directory-schema.ts `directoryMoves`; docs/databases.md, Databases, Moving an account). Each takes
// the directory's Db (src/db/databases.ts `directoryOf`).

export type MoveRow = typeof directoryMoves.$inferSelect;

/** Where a move stands: its phase, the table it is at and its cursor there. Updates check it. */
export type MovePosition = Pick<MoveRow, "phase" | "step" | "cursor">;

/** The phases of a move that is still under way (every phase but `done` and `failed`). */
const UNDER_WAY: MovePhase[] = ["holding", "copying", "deleting", "unwinding"];

/** Account `accountId`'s newest move, or null when it never moved. */
export async function moveOf(directory: Db, accountId: string): Promise<MoveRow | null> {
  const [row] = await directory.select().from(directoryMoves).where(eq(directoryMoves.accountId, accountId));
  return row ?? null;
}

/**
 * Records a move of account `accountId` from database `from` to `to`, `holding` until
 * `holdUntil` (epoch ms), in place of its previous move, unless a move of it is under way.
 * @returns the new move, or null when one is already under way.
 */
export async function beginMove(
  directory: Db,
  move: { accountId: string; from: string; to: string; holdUntil: number },
  now: number,
): Promise<MoveRow | null> {
  const row = {
    accountId: move.accountId,
    fromDatabase: move.from,
    toDatabase: move.to,
    phase: "holding" as const,
    step: 0,
    cursor: null,
    copied: 0,
    deleted: 0,
    error: null,
    holdUntil: move.holdUntil,
    switchedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  const [begun] = await directory
    .insert(directoryMoves)
    .values(row)
    .onConflictDoUpdate({
      target: directoryMoves.accountId,
      set: { ...row, accountId: undefined },
      setWhere: notInArray(directoryMoves.phase, UNDER_WAY),
    })
    .returning();
  return begun ?? null;
}

/**
 * Moves account `accountId`'s move from position `at` to position `to`, adding `copied` and
 * `deleted` rows to its counts, and setting `error` when given. Only one of several callers that
 * saw the same position wins (a redelivered queue message changes nothing twice).
 * @returns whether this call moved it.
 */
export async function advanceMove(
  directory: Db,
  accountId: string,
  at: MovePosition,
  to: MovePosition & { copied?: number; deleted?: number; error?: string },
  now: number,
): Promise<boolean> {
  const { copied = 0, deleted = 0, ...position } = to;
  const moved = await directory
    .update(directoryMoves)
    .set({
      ...position,
      copied: sql`${directoryMoves.copied} + ${copied}`,
      deleted: sql`${directoryMoves.deleted} + ${deleted}`,
      updatedAt: now,
    })
    .where(atPosition(accountId, at))
    .returning({ accountId: directoryMoves.accountId });
  return moved.length === 1;
}

/**
 * The switch: account `accountId` is now in its move's target database, and the move goes on to
 * `to` (`deleting`, from the last table), both in one batch, if the move is still at `at`.
 * @returns whether this call switched it.
 */
export async function switchMove(
  directory: Db,
  accountId: string,
  at: MovePosition,
  to: MovePosition,
  now: number,
): Promise<boolean> {
  const [placed, moved] = await directory.batch([
    directory
      .update(directoryAccounts)
      .set({
        database: sql`(SELECT ${directoryMoves.toDatabase} FROM ${directoryMoves} WHERE ${atPosition(accountId, at)})`,
      })
      .where(
        and(
          eq(directoryAccounts.id, accountId),
          sql`EXISTS (SELECT 1 FROM ${directoryMoves} WHERE ${atPosition(accountId, at)})`,
        ),
      )
      .returning({ id: directoryAccounts.id }),
    directory
      .update(directoryMoves)
      .set({ ...to, switchedAt: now, updatedAt: now })
      .where(atPosition(accountId, at))
      .returning({ accountId: directoryMoves.accountId }),
  ]);
  return placed.length === 1 && moved.length === 1;
}

/** The moves under way, for the jobs that leave their databases alone until they end. */
export async function movesUnderWay(directory: Db): Promise<MoveRow[]> {
  return directory.select().from(directoryMoves).where(inArray(directoryMoves.phase, UNDER_WAY));
}

function atPosition(accountId: string, at: MovePosition) {
  return and(
    eq(directoryMoves.accountId, accountId),
    eq(directoryMoves.phase, at.phase),
    eq(directoryMoves.step, at.step),
    at.cursor === null ? isNull(directoryMoves.cursor) : eq(directoryMoves.cursor, at.cursor),
  );
}
