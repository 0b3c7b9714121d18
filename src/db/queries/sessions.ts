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

/**
 * The session with this uuid, whatever its account, or null: for the pairing page, which knows
 * the session by its pair token (src/routes/sandbox).
 */
export async function sessionById(db: Db, id: string): Promise<SessionRow | null> {
  return (await db.query.sessions.findFirst({ where: (s, { eq }) => eq(s.id, id) })) ?? null;
}

/** Deletes the session row with this uuid (its own object does, src/sessions/session-link.ts). */
export async function deleteSession(db: Db, id: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, id));
}

/** The statement that writes a session object's row through to D1 (insert, or update all columns). */
export function upsertSessionStatement(db: Db, row: typeof sessions.$inferInsert): SQL {
  return db.insert(sessions).values(row).onConflictDoUpdate({ target: sessions.id, set: row }).getSQL();
}
