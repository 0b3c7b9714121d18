import type { SQL } from "drizzle-orm";
import { databaseNamed, directoryOf } from "./databases";
import { type AccountLimitSettings, type AccountRow, createAccount } from "./queries/accounts";
import { mintApiKey } from "./queries/api-keys";
import { addRoutes, keyRoutes, placeAccount } from "./queries/directory";

/**
 * Opens an account: places it in account database `input.database` (a binding's name the caller
 * chose: src/db/databases.ts `databaseForNewAccount`, or the admin's, checked) and gives it its number, both in the directory,
 * with the routes of its first API key (scopes `*`, named `default`); then writes the account,
 * the key and the statements `opening` builds for it (its opening credit) in one batch of its
 * database. An account whose batch failed is in the directory only: it has no rows, no key works
 * for it, and the admin API answers 404 for it.
 * @returns the account as created (before `opening`), its database's binding name and the key's
 *   plaintext (shown once).
 */
export async function openAccount(
  env: { DB: D1Database },
  input: { name: string; database: string } & AccountLimitSettings,
  now: number,
  opening: (accountId: string) => SQL[],
): Promise<{ account: AccountRow; database: string; apiKey: string }> {
  const id = crypto.randomUUID();
  const directory = directoryOf(env);
  const { database } = input;
  const number = await placeAccount(directory, id, database, now);
  const key = await mintApiKey(id, { name: "default", scopes: ["*"], expiresAt: null }, now);
  await addRoutes(directory, keyRoutes(key.row));
  const account = await createAccount(
    databaseNamed(env, database),
    { ...input, id, number },
    key.row,
    now,
    opening,
  );
  return { account, database, apiKey: key.plaintext };
}
