import { and, eq, inArray, type SQL } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { sessions } from "../schema";
import { beyond, type KeysetColumns, pageOf, readOrder } from "./keyset";

type SessionRow = typeof sessions.$inferSelect;

/** The account's session with this uuid, or null (also for another account's session). */
export async function findSession(db: Db, accountId: string, id: string) {
  const [row] = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.id, id), eq(sessions.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

const KEYSET: KeysetColumns = { createdAt: sessions.createdAt, id: sessions.id };

/**
 * One page of the account's sessions, newest first, by keyset on `(created_at, id)` (the
 * `sessions_account` index).
 */
export async function listSessions(
  db: Db,
  accountId: string,
  page: { limit: number; cursor: Cursor | null },
): Promise<{ rows: SessionRow[]; more: boolean }> {
  const where: SQL[] = [eq(sessions.accountId, accountId)];
  if (page.cursor) where.push(beyond(KEYSET, page.cursor));
  const rows = await db
    .select()
    .from(sessions)
    .where(and(...where))
    .orderBy(...readOrder(KEYSET, page.cursor))
    .limit(page.limit + 1);
  return pageOf([rows], page.limit, page.cursor);
}

/** The account's sessions among `ids` (at most 100), in no particular order; others are left out. */
export function findSessions(db: Db, accountId: string, ids: string[]) {
  return db
    .select()
    .from(sessions)
    .where(and(eq(sessions.accountId, accountId), inArray(sessions.id, ids)));
}

/** The ids of all of the account's sessions, in no particular order. */
export async function listSessionIds(db: Db, accountId: string): Promise<string[]> {
  const rows = await db.select({ id: sessions.id }).from(sessions).where(eq(sessions.accountId, accountId));
  return rows.map((row) => row.id);
}
