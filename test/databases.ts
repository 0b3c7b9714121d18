import { env } from "cloudflare:workers";
import { ACCOUNT_MOVE_HOLD_MS, runMoveStep } from "../src/account-moves/move";
import type { Db } from "../src/db/client";
import { accountDatabaseNames, databaseFor, directoryOf } from "../src/db/databases";
import { moveOf } from "../src/db/queries/account-moves";
import { accountPlaceOf } from "../src/db/queries/directory";

/**
 * The account database that holds account `accountId` (src/db/databases.ts `databaseFor`): the
 * one place tests read and seed an account's rows in, as the service does.
 */
export function accountDb(accountId: string): Promise<Db> {
  return databaseFor(env, accountId);
}

/** The raw D1 binding of account `accountId`'s database, for SQL a test writes itself. */
export async function accountD1(accountId: string): Promise<D1Database> {
  const name = (await accountPlaceOf(directoryOf(env), accountId))?.database;
  if (!name) throw new Error(`account ${accountId} is not in the directory`);
  return (env as unknown as Record<string, D1Database>)[name] as D1Database;
}

/**
 * Every account database's raw D1 binding (src/db/databases.ts `accountDatabaseNames`), for a
 * test that looks across accounts (a count over every row, a table's schema in each).
 */
export function everyAccountD1(): D1Database[] {
  return accountDatabaseNames(env).map(
    (name) => (env as unknown as Record<string, D1Database>)[name] as D1Database,
  );
}

/** The first account database's raw D1 binding: where a test reads a schema or a query plan. */
export function firstAccountD1(): D1Database {
  return everyAccountD1()[0] as D1Database;
}

/**
 * Every table of the directory and of every account database, its rows as JSON text: where a test
 * looks for a secret or a code that must be in clear nowhere in D1.
 */
export async function everyTable(): Promise<{ name: string; rows: string }[]> {
  const tables: { name: string; rows: string }[] = [];
  for (const d1 of new Set([env.DB, ...everyAccountD1()])) {
    const names = await d1
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
      )
      .all<{ name: string }>();
    for (const { name } of names.results) {
      const rows = await d1.prepare(`SELECT * FROM "${name}"`).all();
      tables.push({ name, rows: JSON.stringify(rows.results) });
    }
  }
  return tables;
}

/**
 * Runs account `accountId`'s move (POST /admin/accounts/{id}/move) to its end, step by step, on a
 * clock past its hold: the queue's own messages run the same steps on the wall clock, and each
 * step checks where the move stands, so the two never do one twice. `between` runs after each step.
 * @returns the move's last phase (`done` or `failed`).
 */
export async function driveMove(
  accountId: string,
  between: () => Promise<void> = async () => {},
): Promise<string> {
  for (let steps = 0; steps < 5_000; steps++) {
    await runMoveStep(env, accountId, Date.now() + ACCOUNT_MOVE_HOLD_MS + 1_000);
    await between();
    const phase = (await moveOf(directoryOf(env), accountId))?.phase;
    if (phase === "done" || phase === "failed") return phase;
  }
  throw new Error(`the move of ${accountId} did not end in 5,000 steps`);
}

/** The other local account database than `name` (of `DB_ACCOUNTS_0` and `DB_ACCOUNTS_1`). */
export function otherDatabase(name: string): string {
  return accountDatabaseNames(env).find((each) => each !== name) as string;
}
