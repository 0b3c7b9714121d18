import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../client";
import { sessions } from "../schema";

/** The account's session with this uuid, or null (also for another account's session). */
export async function findSession(db: Db, accountId: string, id: string) {
  const [row] = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.id, id), eq(sessions.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

/** All of the account's sessions, newest first. */
export function listSessions(db: Db, accountId: string) {
  return db
    .select()
    .from(sessions)
    .where(eq(sessions.accountId, accountId))
    .orderBy(desc(sessions.createdAt), desc(sessions.id));
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
