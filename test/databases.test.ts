import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../src/config";
import { isMigrated, NEWEST_ACCOUNT_MIGRATION } from "../src/db/databases";
import { sha256Hex } from "../src/lib/crypto";
import { accountD1, everyAccountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem } from "./helpers";
import { connectedSession, sendText, waitForMessages } from "./message-fixtures";

// The directory (`DB`) and the account databases (`DB_ACCOUNTS_0`, `DB_ACCOUNTS_1`): docs/databases.md,
// Databases; src/db/databases.ts.

interface AdminAccount {
  id: string;
  database: string;
}

interface AccountDatabase {
  name: string;
  accounts: number;
  size_bytes: number | null;
}

const ACCOUNT_DATABASES = ["DB_ACCOUNTS_0", "DB_ACCOUNTS_1"];

async function databases(): Promise<AccountDatabase[]> {
  const res = await call<{ data: AccountDatabase[] }>("GET", "/admin/databases", { key: ADMIN_TOKEN });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function adminAccount(id: string): Promise<AdminAccount> {
  const res = await call<{ data: { account: AdminAccount } }>("GET", `/admin/accounts/${id}`, {
    key: ADMIN_TOKEN,
  });
  expect(res.status).toBe(200);
  return res.body.data.account;
}

/** How many rows of `table` hold `column = value`, in each account database, by binding name. */
async function rowsIn(
  table: string,
  column: string,
  value: string | number,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [i, d1] of everyAccountD1().entries()) {
    const row = await d1
      .prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`)
      .bind(value)
      .first<{ n: number }>();
    counts[ACCOUNT_DATABASES[i] as string] = row?.n ?? 0;
  }
  return counts;
}

/** Two accounts, the second in the other database than the first. */
async function accountsInBoth() {
  const first = await createAccount(10);
  const firstDatabase = (await adminAccount(first.accountId)).database;
  for (;;) {
    const other = await createAccount(10);
    const database = (await adminAccount(other.accountId)).database;
    if (database !== firstDatabase)
      return [
        { ...first, database: firstDatabase },
        { ...other, database },
      ];
  }
}

describe("account databases", () => {
  it("lists the two local account databases, and puts each new account in the one with the fewest", async () => {
    const before = await databases();
    expect(before.map((d) => d.name)).toEqual(ACCOUNT_DATABASES);
    const made: AdminAccount[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call<{ data: { account: AdminAccount } }>("POST", "/admin/accounts", {
        key: ADMIN_TOKEN,
        body: { name: `Spread ${i}` },
      });
      expect(res.status).toBe(201);
      made.push(res.body.data.account);
    }
    const after = await databases();
    // Four accounts on two databases that start at most one apart: each gets two, or the lesser three.
    const gained = after.map((d, i) => d.accounts - (before[i]?.accounts ?? 0));
    expect(gained.reduce((a, b) => a + b)).toBe(4);
    const gap = Math.abs((before[0]?.accounts ?? 0) - (before[1]?.accounts ?? 0));
    expect(Math.abs((after[0]?.accounts ?? 0) - (after[1]?.accounts ?? 0))).toBeLessThanOrEqual(
      Math.max(gap, 1),
    );
    expect(new Set(made.map((a) => a.database))).toEqual(new Set(ACCOUNT_DATABASES));
    for (const account of made) {
      // Its row is in its database, and in no other.
      expect(await rowsIn("accounts", "id", account.id)).toEqual(
        Object.fromEntries(ACCOUNT_DATABASES.map((name) => [name, name === account.database ? 1 : 0])),
      );
      expect(await adminAccount(account.id)).toMatchObject({ id: account.id, database: account.database });
    }
    for (const d of after) expect(d.size_bytes).toBeGreaterThan(0);
  });

  it("keeps each account's messages, ledger and events in its own database only", async () => {
    const accounts = await accountsInBoth();
    for (const account of accounts) {
      const session = await connectedSession(account.key);
      const res = await sendText(account.key, session.id, ["+14155552671", "+14155552672"], {
        delay_between: 0,
      });
      expect(res.status).toBe(201);
      await waitForMessages(
        account.key,
        res.body.data.messages.map((m) => m.id),
      );
    }
    for (const account of accounts) {
      const only = (n: number) =>
        Object.fromEntries(ACCOUNT_DATABASES.map((name) => [name, name === account.database ? n : 0]));
      expect(await rowsIn("messages", "account_id", account.accountId)).toEqual(only(2));
      expect(await rowsIn("sessions", "account_id", account.accountId)).toEqual(only(1));
      // The opening credit and the send's charge.
      expect(await rowsIn("ledger_entries", "account_id", account.accountId)).toEqual(only(2));
      const d1 = await accountD1(account.accountId);
      const number = await d1
        .prepare("SELECT number FROM accounts WHERE id = ?")
        .bind(account.accountId)
        .first<{ number: number }>();
      const events = await rowsIn("events", "account_number", number?.number ?? 0);
      expect(events[account.database]).toBeGreaterThan(0);
      for (const name of ACCOUNT_DATABASES) if (name !== account.database) expect(events[name]).toBe(0);
    }
  });

  it("gives every account a number of its own across the databases", async () => {
    const [a, b] = await accountsInBoth();
    const numbers = await Promise.all(
      [a, b].map(
        async (account) =>
          (
            await (
              await accountD1(account?.accountId ?? "")
            )
              .prepare("SELECT number FROM accounts WHERE id = ?")
              .bind(account?.accountId)
              .first<{ number: number }>()
          )?.number,
      ),
    );
    expect(numbers[0]).toBeGreaterThan(0);
    expect(numbers[1]).not.toBe(numbers[0]);
    const directory = await env.DB.prepare(
      "SELECT id, number FROM directory_accounts WHERE id IN (?, ?) ORDER BY number",
    )
      .bind(a?.accountId, b?.accountId)
      .all<{ id: string; number: number }>();
    expect(directory.results.map((r) => r.number).sort()).toEqual([...numbers].sort());
  });

  it("holds the directory's tables in DB and the accounts' in the account databases, apart", async () => {
    const tables = async (d1: D1Database) =>
      (
        await d1.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all<{ name: string }>()
      ).results.map((r) => r.name);
    const directory = await tables(env.DB);
    expect(directory).toEqual(
      expect.arrayContaining(["directory_accounts", "directory_routes", "idempotency_keys"]),
    );
    expect(directory).not.toContain("messages");
    expect(directory).not.toContain("accounts");
    for (const d1 of everyAccountD1()) {
      const own = await tables(d1);
      expect(own).toEqual(expect.arrayContaining(["accounts", "messages", "ledger_entries", "events"]));
      expect(own).not.toContain("directory_routes");
    }
  });

  it("finds an API key's account through the directory, and refuses a key the directory lacks", async () => {
    const { key, accountId } = await createAccount(1);
    const hash = await sha256Hex(key);
    const route = await env.DB.prepare(
      "SELECT account_id AS accountId FROM directory_routes WHERE kind = 'api_key' AND key = ?",
    )
      .bind(hash)
      .first<{ accountId: string }>();
    expect(route).toEqual({ accountId });
    expect((await call("GET", "/v1/account", { key })).status).toBe(200);
    // A key whose row exists but whose route does not (never routed) is unknown.
    const { key: other } = await createAccount(1);
    await env.DB.prepare("DELETE FROM directory_routes WHERE kind = 'api_key' AND key = ?")
      .bind(await sha256Hex(other))
      .run();
    expectProblem(await call("GET", "/v1/account", { key: other }), 401, "unauthenticated");
  });

  it("puts an account in the database the admin names, and refuses one the deployment does not list", async () => {
    for (const database of [...ACCOUNT_DATABASES].reverse()) {
      const res = await call<{ data: { account: AdminAccount } }>("POST", "/admin/accounts", {
        key: ADMIN_TOKEN,
        body: { name: "Placed", database },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.account.database).toBe(database);
      expect(await rowsIn("accounts", "id", res.body.data.account.id)).toEqual(
        Object.fromEntries(ACCOUNT_DATABASES.map((name) => [name, name === database ? 1 : 0])),
      );
    }
    const before = await databases();
    const refused = expectProblem(
      await call("POST", "/admin/accounts", {
        key: ADMIN_TOKEN,
        body: { name: "Nowhere", database: "DB_ACCOUNTS_9" },
      }),
      422,
      "validation_failed",
    );
    expect(refused.errors).toEqual({
      database: ["is not an account database of this deployment (DB_ACCOUNTS_0, DB_ACCOUNTS_1)"],
    });
    expect(await databases()).toEqual(before.map((d) => ({ ...d, size_bytes: expect.any(Number) })));
  });

  it("counts each database's D1 work apart in the metrics, adding up to the whole", async () => {
    const [a] = await accountsInBoth();
    type Work = { statements: number; batches: number };
    const metrics = async () =>
      (
        await call<{ data: { d1: Work; databases: Record<string, Work> } }>("GET", "/admin/metrics", {
          key: ADMIN_TOKEN,
        })
      ).body.data;
    const before = await metrics();
    expect((await call("GET", "/v1/account", { key: a?.key ?? "" })).status).toBe(200);
    const after = await metrics();
    const own = a?.database ?? "";
    // The directory found the key's account (or its isolate kept it); its database answered.
    expect(after.databases[own]?.statements ?? 0).toBeGreaterThan(before.databases[own]?.statements ?? 0);
    const sum = (key: keyof Work) => Object.values(after.databases).reduce((n, work) => n + work[key], 0);
    expect(sum("statements")).toBe(after.d1.statements);
    expect(sum("batches")).toBe(after.d1.batches);
    expect(Object.keys(after.databases)).toEqual(expect.arrayContaining([own, "DB"]));
  });

  it("names the newest account migration, which a database must have before it takes accounts", () => {
    expect(`${env.TEST_MIGRATIONS.at(-1)?.name}`).toBe(NEWEST_ACCOUNT_MIGRATION);
  });

  it("puts no account in a database whose migrations are not all applied", async () => {
    const [first, second] = everyAccountD1();
    if (!first || !second) throw new Error("two account databases expected");
    const forget = (d1: D1Database) =>
      d1
        .prepare("DELETE FROM d1_migrations WHERE name = ? RETURNING id")
        .bind(NEWEST_ACCOUNT_MIGRATION)
        .first<{ id: number }>();
    const restore = (d1: D1Database, id: number) =>
      d1
        .prepare("INSERT INTO d1_migrations (id, name) VALUES (?, ?)")
        .bind(id, NEWEST_ACCOUNT_MIGRATION)
        .run();
    const gone = await forget(second);
    try {
      for (let i = 0; i < 3; i++)
        expect((await adminAccount((await createAccount(1)).accountId)).database).toBe("DB_ACCOUNTS_0");
      const named = expectProblem(
        await call("POST", "/admin/accounts", {
          key: ADMIN_TOKEN,
          body: { name: "Early", database: "DB_ACCOUNTS_1" },
        }),
        422,
        "validation_failed",
      );
      expect(named.errors).toEqual({
        database: ["has not had its migrations applied (docs/databases.md, Databases)"],
      });
      const alsoGone = await forget(first);
      try {
        expectProblem(
          await call("POST", "/admin/accounts", { key: ADMIN_TOKEN, body: { name: "Nowhere" } }),
          503,
          "service_unavailable",
        );
      } finally {
        await restore(first, alsoGone?.id ?? 0);
      }
    } finally {
      await restore(second, gone?.id ?? 0);
    }
    expect(await isMigrated(env, "DB_ACCOUNTS_1")).toBe(true);
  });

  it("answers 404 for an account the directory does not know", async () => {
    const id = crypto.randomUUID();
    expectProblem(await call("GET", `/admin/accounts/${id}`, { key: ADMIN_TOKEN }), 404, "not_found");
    expectProblem(
      await call("POST", `/admin/accounts/${id}/credits`, { key: ADMIN_TOKEN, body: { amount: 1 } }),
      404,
      "not_found",
    );
  });

  it("runs an hourly job on every account database, and adds up their answers", async () => {
    const res = await call<{ data: { result: unknown; databases: { database: string; result: unknown }[] } }>(
      "POST",
      "/admin/jobs/purge_idempotency_keys",
      { key: ADMIN_TOKEN },
    );
    expect(res.status).toBe(200);
    // The directory's part first (the admin API's keys), then each account database's.
    expect(res.body.data.databases.map((d) => d.database)).toEqual(["DB", ...ACCOUNT_DATABASES]);
    const each = res.body.data.databases.slice(1).map((d) => d.result as { deleted: number; more: boolean });
    expect(res.body.data.result).toEqual({
      deleted: each.reduce((sum, r) => sum + r.deleted, 0),
      more: each.some((r) => r.more),
    });
  });

  it("forgets a link token's route with its token, and keeps a live one's", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    const link = async () => {
      const res = await call<{ url: string }>("POST", `/v1/chatapp/sessions/${session.id}/link-url`, {
        key,
        body: {},
      });
      expect(res.status).toBe(201);
      return sha256Hex(res.body.url.split("/link/")[1] ?? "");
    };
    const [old, live] = [await link(), await link()];
    const route = (hash: string) =>
      env.DB.prepare(
        "SELECT expires_at AS expiresAt FROM directory_routes WHERE kind = 'link_token' AND key = ?",
      )
        .bind(hash)
        .first<{ expiresAt: number }>();
    expect((await route(old))?.expiresAt).toBeGreaterThan(Date.now());
    await env.DB.prepare("UPDATE directory_routes SET expires_at = ? WHERE kind = 'link_token' AND key = ?")
      .bind(Date.now() - 1, old)
      .run();
    const job = await call<{ data: { databases: { database: string; result: unknown }[] } }>(
      "POST",
      "/admin/jobs/purge_link_tokens",
      { key: ADMIN_TOKEN },
    );
    expect(job.status).toBe(200);
    // The directory's routes are purged once, ahead of each account database's tokens.
    const [directory, ...accounts] = job.body.data.databases;
    expect(directory).toMatchObject({ database: "DB", result: expect.any(Number) });
    expect(directory?.result).toBeGreaterThanOrEqual(1);
    expect(accounts.map((d) => d.database)).toEqual(ACCOUNT_DATABASES);
    expect(await route(old)).toBeNull();
    expect(await route(live)).not.toBeNull();
  });

  it("refuses a deployment that lists no account database", () => {
    const bare = Object.fromEntries(
      Object.entries(env).filter(([name]) => !name.startsWith("DB_ACCOUNTS_")),
    ) as unknown as Env;
    expect(() => readConfig(bare)).toThrow(ConfigError);
    expect(() => readConfig(bare)).toThrow(/DB_ACCOUNTS_0 is missing/);
  });
});
