import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createAccount } from "./helpers";

interface Work {
  statements: number;
  batches: number;
  rows_read: number;
  rows_written: number;
}

interface Metrics {
  success: boolean;
  data: { isolate: string; d1: Work; databases: Record<string, Work> };
}

const metrics = async () => {
  const res = await call<Metrics>("GET", "/admin/metrics", { key: ADMIN_TOKEN });
  expect(res.status).toBe(200);
  return res.body.data;
};

/**
 * The counters' change across `operation`, which must run in this isolate with nothing else: in
 * all, or in database `database` (a binding's name: `DB`, the directory, or an account database).
 */
async function counted(operation: () => Promise<unknown>, database?: string) {
  const before = await metrics();
  await operation();
  const after = await metrics();
  expect(after.isolate).toBe(before.isolate);
  const none = { statements: 0, batches: 0, rows_read: 0, rows_written: 0 };
  const [was, is] = database
    ? [before.databases[database] ?? none, after.databases[database] ?? none]
    : [before.d1, after.d1];
  return {
    statements: is.statements - was.statements,
    batches: is.batches - was.batches,
    rowsRead: is.rows_read - was.rows_read,
    rowsWritten: is.rows_written - was.rows_written,
  };
}

/** The account database that holds account `id` (its admin record's `database`). */
async function databaseOf(id: string): Promise<string> {
  const res = await call<{ data: { account: { database: string } } }>("GET", `/admin/accounts/${id}`, {
    key: ADMIN_TOKEN,
  });
  return res.body.data.account.database;
}

describe("GET /admin/metrics", () => {
  it("answers the isolate's D1 counters, and reading them runs no statement", async () => {
    const first = await metrics();
    expect(first).toEqual({
      isolate: expect.stringMatching(/^[0-9a-f-]{36}$/),
      d1: {
        statements: expect.any(Number),
        batches: expect.any(Number),
        rows_read: expect.any(Number),
        rows_written: expect.any(Number),
      },
      databases: expect.any(Object),
    });
    expect(await counted(() => metrics())).toEqual({
      statements: 0,
      batches: 0,
      rowsRead: 0,
      rowsWritten: 0,
    });
  });

  it("counts each statement of a batch: an account with an opening balance is one batch of four", async () => {
    // Its account database: the account, its key, the credit's ledger entry and the balance, one
    // batch (src/db/open-account.ts). The directory: the count per database, the account's place
    // and number, its key's routes.
    let accountId = "";
    const before = await metrics();
    const all = await counted(async () => {
      accountId = (await createAccount(5)).accountId;
    });
    const database = await databaseOf(accountId);
    const after = await metrics();
    const own = {
      statements:
        (after.databases[database]?.statements ?? 0) - (before.databases[database]?.statements ?? 0),
      batches: (after.databases[database]?.batches ?? 0) - (before.databases[database]?.batches ?? 0),
    };
    // Before the batch, the database was asked whether its migrations are all applied; the admin
    // read of the account came after: two single queries.
    expect(own).toEqual({ statements: 1 + 4 + 1, batches: 1 + 1 + 1 });
    expect(all.statements).toBe(3 + 1 + 4);
    expect(all.batches).toBe(3 + 1 + 1);
    expect(all.rowsWritten).toBeGreaterThanOrEqual(4 + 3);
  });

  it("counts single queries and batches alike: a credit is a batch of three, then the account read", async () => {
    const { accountId } = await createAccount(0);
    const database = await databaseOf(accountId);
    const change = await counted(
      () => call("POST", `/admin/accounts/${accountId}/credits`, { key: ADMIN_TOKEN, body: { amount: 1 } }),
      database,
    );
    expect(change).toMatchObject({ statements: 4, batches: 2 });
    expect(change.rowsRead).toBeGreaterThanOrEqual(1);
    // Its place in the directory was read by the first call, and this isolate keeps it; the
    // directory is read once more each time for the account's move, which the record shows.
    expect(
      await counted(
        () => call("POST", `/admin/accounts/${accountId}/credits`, { key: ADMIN_TOKEN, body: { amount: 1 } }),
        "DB",
      ),
    ).toMatchObject({ statements: 1, batches: 1, rowsWritten: 0 });
    const show = await counted(() => call("GET", `/admin/accounts/${accountId}`, { key: ADMIN_TOKEN }));
    expect(show).toMatchObject({ statements: 2, batches: 2, rowsWritten: 0 });
  });

  it("counts the statements of a request that fails", async () => {
    // An unknown account: the directory is asked where it is, and nothing more runs.
    const unknown = "00000000-0000-4000-8000-000000000000";
    const change = await counted(() =>
      call("POST", `/admin/accounts/${unknown}/credits`, { key: ADMIN_TOKEN, body: { amount: 1 } }),
    );
    expect(change).toMatchObject({ statements: 1, batches: 1, rowsWritten: 0 });
  });
});
