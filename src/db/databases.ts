import { createDb, type Db } from "./client";
import { accountsPerDatabase, databaseNameOf, routeOf } from "./queries/directory";
import type { RouteKind } from "./schema";

// Which D1 database serves what (README, Databases): `DB` is the directory (src/db/schema/
// directory.ts); each account lives in one account database, a D1 binding named `DB_ACCOUNTS_<n>`
// in wrangler.toml. A deployment that lists none keeps every account in `DB` itself.

/** The D1 bindings of a Worker's `env`, by name (the generated `Env` names only those it saw). */
type Bindings = { DB: D1Database } & Record<string, unknown>;

/** Names of the account databases' bindings: `DB_ACCOUNTS_<n>`, by `n`. */
const ACCOUNT_DATABASE = /^DB_ACCOUNTS_(\d+)$/;

/**
 * The binding names of the account databases, in order of their number (`DB_ACCOUNTS_0`,
 * `DB_ACCOUNTS_1`, …), or `["DB"]` when wrangler.toml lists none.
 */
export function accountDatabaseNames(env: object): string[] {
  const names = Object.keys(env)
    .map((name) => ({ name, n: ACCOUNT_DATABASE.exec(name)?.[1] }))
    .filter((b): b is { name: string; n: string } => b.n !== undefined)
    .sort((a, b) => Number(a.n) - Number(b.n))
    .map((b) => b.name);
  return names.length > 0 ? names : ["DB"];
}

/** The directory: accounts' places, API key hashes, and the keys gateways and links route by. */
export function directoryOf(env: { DB: D1Database }): Db {
  return drizzleOf(env.DB);
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
  return drizzleOf(binding as D1Database);
}

/** Every account database with its binding name, for work that spans accounts (jobs, admin lists). */
export function everyAccountDatabase(env: object): { name: string; db: Db }[] {
  return accountDatabaseNames(env).map((name) => ({ name, db: databaseNamed(env, name) }));
}

/**
 * The one way code gets the database of an account's data: a request after authentication, a
 * queue message, a session object or a job names the account, and this finds its database in the
 * directory (once per isolate: an account never moves on its own). An account the directory does
 * not know has no rows anywhere: its queries run on the first account database and find nothing.
 */
export async function databaseFor(env: { DB: D1Database }, accountId: string): Promise<Db> {
  let name = placed.get(accountId);
  if (name === undefined) {
    name = (await databaseNameOf(directoryOf(env), accountId)) ?? undefined;
    if (name !== undefined) remember(accountId, name);
  }
  return databaseNamed(env, name ?? (accountDatabaseNames(env)[0] as string));
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
 * The account database a new account goes to: the one with the fewest accounts (the first of
 * those on a tie), so that databases fill evenly.
 */
export async function databaseForNewAccount(env: { DB: D1Database }): Promise<string> {
  const counts = await accountsPerDatabase(directoryOf(env));
  const names = accountDatabaseNames(env);
  let best = names[0] as string;
  for (const name of names) if ((counts.get(name) ?? 0) < (counts.get(best) ?? 0)) best = name;
  return best;
}

/** Accounts' databases, and routes, as this isolate last read them; each cleared whole past {@link PLACES_KEPT}. */
const placed = new Map<string, string>();
const routes = new Map<string, { accountId: string; sessionId: string | null }>();
const PLACES_KEPT = 100_000;

function remember(accountId: string, name: string): void {
  if (placed.size >= PLACES_KEPT) placed.clear();
  placed.set(accountId, name);
}

/**
 * One Drizzle instance per D1 binding for the isolate's life: building one walks the whole schema
 * (its relational config), which costs more than a short request's own work. A binding object
 * lives as long as the isolate's `env`; a test's fresh binding gets its own instance.
 */
const drizzles = new WeakMap<D1Database, Db>();

function drizzleOf(d1: D1Database): Db {
  let db = drizzles.get(d1);
  if (!db) {
    db = createDb(d1);
    drizzles.set(d1, db);
  }
  return db;
}
