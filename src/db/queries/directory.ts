import { and, eq, isNotNull, lt, sql } from "drizzle-orm";
import type { Db } from "../client";
import { directoryAccounts, directoryMoves, directoryRoutes, type RouteKind } from "../directory-schema";

// The directory's reads and writes (src/db/directory-schema.ts). Each takes the directory's Db
// (src/db/databases.ts `directoryOf`), never an account database.

/** One key of the directory → its account (and session, where the key names one). */
export interface Route {
  kind: RouteKind;
  key: string;
  accountId: string;
  sessionId?: string | null;
  /** Epoch ms after which the hourly job may forget it (a link token's); absent: never. */
  expiresAt?: number | null;
}

/**
 * Records account `id` in database `database` (a D1 binding's name) and gives it its number: one
 * past the highest of every database (src/db/schema/accounts.ts `number`).
 * @returns the account's number.
 */
export async function placeAccount(
  directory: Db,
  id: string,
  database: string,
  now: number,
): Promise<number> {
  const [row] = await directory
    .insert(directoryAccounts)
    .values({
      id,
      database,
      number: sql`(SELECT COALESCE(MAX(number), 0) + 1 FROM directory_accounts)`,
      createdAt: now,
    })
    .returning({ number: directoryAccounts.number });
  if (!row) throw new Error("placeAccount: the insert returned no number");
  return row.number;
}

/**
 * Where account `id` is, one read of the directory: its database (binding name), its number, and
 * whether it is moving (a move of it is `holding` or `copying`: src/db/directory-schema.ts
 * `directoryMoves`); null when the directory lacks it.
 */
export async function accountPlaceOf(
  directory: Db,
  id: string,
): Promise<{ database: string; number: number; moving: boolean } | null> {
  const [row] = await directory
    .select({
      database: directoryAccounts.database,
      number: directoryAccounts.number,
      phase: directoryMoves.phase,
    })
    .from(directoryAccounts)
    .leftJoin(directoryMoves, eq(directoryMoves.accountId, directoryAccounts.id))
    .where(eq(directoryAccounts.id, id))
    .limit(1);
  if (!row) return null;
  const { phase, ...place } = row;
  return { ...place, moving: phase === "holding" || phase === "copying" };
}

/** How many accounts each database holds (binding name → count); a database without any is absent. */
export async function accountsPerDatabase(directory: Db): Promise<Map<string, number>> {
  const rows = await directory
    .select({ database: directoryAccounts.database, n: sql<number>`count(*)` })
    .from(directoryAccounts)
    .groupBy(directoryAccounts.database);
  return new Map(rows.map((r) => [r.database, r.n]));
}

/** The account (and session) key `key` of kind `kind` reaches, or null. One read by primary key. */
export async function routeOf(
  directory: Db,
  kind: RouteKind,
  key: string,
): Promise<{ accountId: string; sessionId: string | null } | null> {
  const [row] = await directory
    .select({ accountId: directoryRoutes.accountId, sessionId: directoryRoutes.sessionId })
    .from(directoryRoutes)
    .where(and(eq(directoryRoutes.kind, kind), eq(directoryRoutes.key, key)))
    .limit(1);
  return row ?? null;
}

/** Records `routes`; a key already held keeps its route. */
export async function addRoutes(directory: Db, routes: Route[]): Promise<void> {
  if (routes.length === 0) return;
  await directory
    .insert(directoryRoutes)
    .values(routes.map((r) => ({ ...r, sessionId: r.sessionId ?? null, expiresAt: r.expiresAt ?? null })))
    .onConflictDoNothing();
}

/**
 * Claims key `route.key` for its account and session: true when it is now theirs (newly, or it
 * was already), false when another account or session holds it.
 */
export async function claimRoute(directory: Db, route: Route): Promise<boolean> {
  await addRoutes(directory, [route]);
  const held = await routeOf(directory, route.kind, route.key);
  return held?.accountId === route.accountId && held.sessionId === (route.sessionId ?? null);
}

/** Forgets key `key` of kind `kind` if session `sessionId` holds it (a deleted session's number). */
export async function releaseRoute(
  directory: Db,
  kind: RouteKind,
  key: string,
  sessionId: string,
): Promise<void> {
  await directory
    .delete(directoryRoutes)
    .where(
      and(
        eq(directoryRoutes.kind, kind),
        eq(directoryRoutes.key, key),
        eq(directoryRoutes.sessionId, sessionId),
      ),
    );
}

/**
 * Forgets up to `limit` routes that expired before `before` (epoch ms): link tokens' routes, once
 * their tokens are purged (src/links/tokens.ts `LINK_TOKEN_RETENTION_MS`).
 * @returns how many it deleted.
 */
export async function purgeExpiredRoutes(directory: Db, before: number, limit = 1000): Promise<number> {
  const gone = await directory
    .delete(directoryRoutes)
    .where(
      sql`(${directoryRoutes.kind}, ${directoryRoutes.key}) IN (SELECT kind, key FROM directory_routes
        WHERE ${and(isNotNull(directoryRoutes.expiresAt), lt(directoryRoutes.expiresAt, before))} LIMIT ${limit})`,
    )
    .returning({ key: directoryRoutes.key });
  return gone.length;
}

/** The routes of an API key (src/db/schema/accounts.ts `api_keys`): by its hash, and by its id. */
export function keyRoutes(key: { id: string; keyHash: string; accountId: string }): Route[] {
  return [
    { kind: "api_key", key: key.keyHash, accountId: key.accountId },
    { kind: "api_key_id", key: key.id, accountId: key.accountId },
  ];
}
