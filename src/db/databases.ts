import { ACCOUNT_DATABASE_BINDING } from "../config";
import { createDb, type Db } from "./client";
import type { RouteKind } from "./directory-schema";
import { movesUnderWay } from "./queries/account-moves";
import { accountPlaceOf, accountsPerDatabase, routeOf } from "./queries/directory";

// Which D1 database serves what (docs/databases.md, Databases): `DB` is the directory
// (src/db/directory-schema.ts); each account lives in one account database, a D1 binding named
// `DB_ACCOUNTS_<n>` in wrangler.toml (src/config.ts `ACCOUNT_DATABASE_BINDING`).

/** The D1 bindings of a Worker's `env`, by name (the generated `Env` names only those it saw). */
type Bindings = { DB: D1Database } & Record<string, unknown>;

/**
 * The binding names of the account databases, in order of their number (`DB_ACCOUNTS_0`,
 * `DB_ACCOUNTS_1`, …); src/config.ts `readConfig` refuses a deployment that lists none.
 */
export function accountDatabaseNames(env: object): string[] {
  return Object.keys(env)
    .map((name) => ({ name, n: ACCOUNT_DATABASE_BINDING.exec(name)?.[1] }))
    .filter((b): b is { name: string; n: string } => b.n !== undefined)
    .sort((a, b) => Number(a.n) - Number(b.n))
    .map((b) => b.name);
}

/** The directory: accounts' places, API key hashes, and the keys gateways and links route by. */
export function directoryOf(env: { DB: D1Database }): Db {
  return drizzleOf(env.DB, "DB");
}

/**
 * The database of binding `name`, which must be the directory's or an account database's.
 * @throws Error when `env` has no D1 binding of that name (a directory row naming a database the
 *   deployment no longer lists).
 */
export function databaseNamed(env: object, name: string): Db {
  const binding = (env as Bindings)[name];
  if (typeof binding !== "object" || binding === null || !("prepare" in binding))
    throw new Error(`No D1 binding named ${name}: wrangler.toml must list every account database.`);
  return drizzleOf(binding as D1Database, name);
}

/**
 * Every account database with its binding name, and whether a move under way copies an account
 * from or to it (`moving`): the hourly jobs leave those alone until the move ends, since they work
 * on a database's rows whatever their account (docs/databases.md, Databases, Moving an account).
 */
export async function accountDatabasesAtRest(env: {
  DB: D1Database;
}): Promise<{ name: string; db: Db; moving: boolean }[]> {
  const moves = await movesUnderWay(directoryOf(env));
  const touched = new Set(moves.flatMap((m) => [m.fromDatabase, m.toDatabase]));
  return everyAccountDatabase(env).map((each) => ({ ...each, moving: touched.has(each.name) }));
}

/** Every account database with its binding name, for work that spans accounts (jobs, admin lists). */
export function everyAccountDatabase(env: object): { name: string; db: Db }[] {
  return accountDatabaseNames(env).map((name) => ({ name, db: databaseNamed(env, name) }));
}

/**
 * Refused access to an account while it moves between databases: its `holding` and `copying`
 * phases (src/db/directory-schema.ts `MOVE_PHASES`; docs/databases.md, Databases, Moving an account). A
 * request answers 503 `account_moving` with `Retry-After` ({@link ACCOUNT_MOVING_RETRY_SECONDS}); a queue
 * consumer or a session object retries later, as for any refused D1 write.
 */
export class AccountMoving extends Error {
  constructor(readonly accountId: string) {
    super(`Account ${accountId} is moving between databases; try again shortly.`);
    this.name = "AccountMoving";
  }
}

/** Seconds a refused caller should wait before it tries an account that is moving again. */
export const ACCOUNT_MOVING_RETRY_SECONDS = 10;

/**
 * How long an isolate keeps an account's place (ms): a move waits a few times this before it copies
 * (src/account-moves/move.ts `ACCOUNT_MOVE_HOLD_MS`), so no isolate still writes to the source
 * once the copy starts; work that writes to the database it found for longer than this (a
 * campaign job's steps) finds it again. A place read while the account moves is kept {@link MOVING_PLACE_TTL_MS}.
 */
export const PLACE_TTL_MS = 10_000;
const MOVING_PLACE_TTL_MS = 1_000;

/**
 * The one way code gets the database of an account's data: a request after authentication, a
 * queue message, a session object or a job names the account, and this finds its database in the
 * directory ({@link placeOf}). An account the directory does not know has no rows anywhere: its
 * queries run on the first account database and find nothing.
 * @throws AccountMoving while the account moves between databases, before the switch.
 */
export async function databaseFor(env: { DB: D1Database }, accountId: string): Promise<Db> {
  const place = await placeEntry(env, accountId);
  if (place?.moving) throw new AccountMoving(accountId);
  return databaseNamed(env, place?.database ?? (accountDatabaseNames(env)[0] as string));
}

/**
 * The binding name of account `accountId`'s database, or null when the directory does not know
 * the account; while the account moves, the source's (which it is read from until the switch).
 * Kept by the isolate for {@link PLACE_TTL_MS}.
 */
export async function placeOf(env: { DB: D1Database }, accountId: string): Promise<string | null> {
  return (await placeEntry(env, accountId))?.database ?? null;
}

/** Forgets this isolate's copy of account `accountId`'s place (a move of it began or switched). */
export function forgetPlace(accountId: string): void {
  placed.delete(accountId);
}

async function placeEntry(env: { DB: D1Database }, accountId: string): Promise<Place | null> {
  const now = Date.now();
  const kept = placed.get(accountId);
  if (kept && kept.until > now) return kept;
  const row = await accountPlaceOf(directoryOf(env), accountId);
  if (!row) return null;
  const place = {
    database: row.database,
    moving: row.moving,
    until: now + (row.moving ? MOVING_PLACE_TTL_MS : PLACE_TTL_MS),
  };
  if (placed.size >= PLACES_KEPT) placed.clear();
  placed.set(accountId, place);
  return place;
}

/** Every account database: its binding name, how many accounts it holds, and its size in bytes as D1 reports it (null when it does not). */
export async function describeDatabases(env: {
  DB: D1Database;
}): Promise<{ name: string; accounts: number; sizeBytes: number | null }[]> {
  const counts = await accountsPerDatabase(directoryOf(env));
  return Promise.all(
    everyAccountDatabase(env).map(async ({ name, db }) => {
      // D1 reports the database's size with every result (`meta.size_after`).
      const { meta } = await db.$client.prepare("SELECT 1").run();
      const size = (meta as { size_after?: number }).size_after;
      return { name, accounts: counts.get(name) ?? 0, sizeBytes: typeof size === "number" ? size : null };
    }),
  );
}

/**
 * The account (and session) key `key` of kind `kind` reaches, from the directory, or null. The
 * kinds whose keys never change hands (a key's hash, a session's or a token's id) are kept for the
 * isolate's life once found; a Cloud API number may pass to another session and is read each time.
 */
export async function routeFor(
  env: { DB: D1Database },
  kind: RouteKind,
  key: string,
): Promise<{ accountId: string; sessionId: string | null } | null> {
  const kept = kind === "phone_number_id" ? undefined : routes.get(`${kind}:${key}`);
  if (kept) return kept;
  const found = await routeOf(directoryOf(env), kind, key);
  if (found && kind !== "phone_number_id") {
    if (routes.size >= PLACES_KEPT) routes.clear();
    routes.set(`${kind}:${key}`, found);
  }
  return found;
}

/**
 * The newest migration of migrations/accounts/: an account database takes new accounts only once
 * it is applied (docs/databases.md, Databases). test/databases.test.ts checks that this names the newest
 * file.
 */
export const NEWEST_ACCOUNT_MIGRATION = "0058_campaign_payload.sql";

/**
 * Whether account database `name` has every migration applied (its `d1_migrations`, which
 * `wrangler d1 migrations apply` keeps, lists {@link NEWEST_ACCOUNT_MIGRATION}).
 */
export async function isMigrated(env: object, name: string): Promise<boolean> {
  try {
    const row = await databaseNamed(env, name)
      .$client.prepare("SELECT 1 AS ok FROM d1_migrations WHERE name = ?")
      .bind(NEWEST_ACCOUNT_MIGRATION)
      .first<{ ok: number }>();
    return row?.ok === 1;
  } catch {
    // No d1_migrations table: no migration was ever applied.
    return false;
  }
}

/**
 * The account database a new account goes to: among those with every migration applied
 * ({@link isMigrated}), the one with the fewest accounts (the first of those on a tie), so that
 * databases fill evenly; null when none is ready.
 */
export async function databaseForNewAccount(env: { DB: D1Database }): Promise<string | null> {
  const counts = await accountsPerDatabase(directoryOf(env));
  const byCount = accountDatabaseNames(env)
    .map((name, order) => ({ name, order, accounts: counts.get(name) ?? 0 }))
    .sort((a, b) => a.accounts - b.accounts || a.order - b.order);
  for (const { name } of byCount) if (await isMigrated(env, name)) return name;
  return null;
}

/** An account's place as this isolate read it: its database, whether it is moving, and until when (epoch ms) it is kept. */
interface Place {
  database: string;
  moving: boolean;
  until: number;
}

/** Accounts' places, and routes, as this isolate last read them; each cleared whole past {@link PLACES_KEPT}. */
const placed = new Map<string, Place>();
const routes = new Map<string, { accountId: string; sessionId: string | null }>();
const PLACES_KEPT = 100_000;

/**
 * One Drizzle instance per D1 binding for the isolate's life: building one walks the whole schema
 * (its relational config), which costs more than a short request's own work. A binding object
 * lives as long as the isolate's `env`; a test's fresh binding gets its own instance.
 */
const drizzles = new WeakMap<D1Database, Db>();

function drizzleOf(d1: D1Database, name: string): Db {
  let db = drizzles.get(d1);
  if (!db) {
    db = createDb(d1, name);
    drizzles.set(d1, db);
  }
  return db;
}
