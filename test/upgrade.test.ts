import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createAccount } from "./helpers";
import { connectedSession } from "./message-fixtures";

// A deployment made before the directory (docs/databases.md, Upgrading a single-database deployment): its one
// database held every account. Here DB_ACCOUNTS_0 plays it: the directory's migrations applied over its
// account tables, then migrations/upgrade/single-database.sql. The directory it builds must be the one the
// service itself wrote (in DB) for the accounts that database holds.

type Row = Record<string, unknown>;

/** Runs the upgrade script on `d1`: its statements one by one, as `wrangler d1 execute` does. */
async function upgrade(d1: D1Database): Promise<void> {
  const statements = env.TEST_UPGRADE_SQL.split(/;\s*\n/)
    .map((s) => s.replace(/^--.*$/gm, "").trim())
    .filter(Boolean);
  expect(statements).toHaveLength(6);
  for (const statement of statements) await d1.prepare(statement).run();
}

async function directoryOf(d1: D1Database, accountIds: string[]) {
  const marks = accountIds.map(() => "?").join(", ");
  const accounts = await d1
    .prepare(`SELECT id, database, number FROM directory_accounts WHERE id IN (${marks}) ORDER BY id`)
    .bind(...accountIds)
    .all<Row>();
  const routes = await d1
    .prepare(
      `SELECT kind, key, account_id, session_id, expires_at FROM directory_routes WHERE account_id IN (${marks})
       ORDER BY kind, key`,
    )
    .bind(...accountIds)
    .all<Row>();
  return { accounts: accounts.results, routes: routes.results };
}

describe("upgrading a deployment of one database", () => {
  it("fills the directory from the accounts it holds, as the service writes it, once", async () => {
    const legacy = env.DB_ACCOUNTS_0;
    const held: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await call<{ data: { account: { id: string }; api_key: string } }>(
        "POST",
        "/admin/accounts",
        {
          key: ADMIN_TOKEN,
          body: { name: `Before ${i}`, balance: 1, database: "DB_ACCOUNTS_0" },
        },
      );
      expect(res.status).toBe(201);
      const { id } = res.body.data.account;
      const key = res.body.data.api_key;
      held.push(id);
      const session = await connectedSession(key);
      expect(
        (await call("POST", `/v1/chatapp/sessions/${session.id}/link-url`, { key, body: {} })).status,
      ).toBe(201);
      expect(
        (await call("POST", "/v1/api-keys", { key, body: { name: "second", scopes: ["*"] } })).status,
      ).toBe(201);
    }
    // An account of the other database is not the legacy database's to claim.
    const elsewhere = await call<{ data: { account: { id: string } } }>("POST", "/admin/accounts", {
      key: ADMIN_TOKEN,
      body: { name: "Elsewhere", database: "DB_ACCOUNTS_1" },
    });
    const other = elsewhere.body.data.account.id;
    await createAccount(1);

    // The directory's migrations apply over the account tables (idempotency_keys is there already).
    await applyD1Migrations(legacy, env.TEST_DIRECTORY_MIGRATIONS);
    await upgrade(legacy);
    const built = await directoryOf(legacy, held);
    const written = await directoryOf(env.DB, held);
    expect(built.accounts).toEqual(written.accounts);
    expect(built.accounts.map((a) => a.database)).toEqual(["DB_ACCOUNTS_0", "DB_ACCOUNTS_0"]);
    // Per account: two keys (by hash and by id), a session, a link token.
    expect(built.routes.map((r) => r.kind).sort()).toEqual(
      ["api_key", "api_key", "api_key_id", "api_key_id", "link_token", "session"]
        .flatMap((k) => [k, k])
        .sort(),
    );
    expect(built.routes).toEqual(written.routes);
    expect((await directoryOf(legacy, [other])).accounts).toEqual([]);

    // Run again: nothing is added twice.
    await upgrade(legacy);
    expect(await directoryOf(legacy, held)).toEqual(built);
  });
});
