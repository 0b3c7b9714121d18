import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createAccount } from "./helpers";

interface Metrics {
  success: boolean;
  data: {
    isolate: string;
    d1: { statements: number; batches: number; rows_read: number; rows_written: number };
  };
}

const metrics = async () => {
  const res = await call<Metrics>("GET", "/admin/metrics", { key: ADMIN_TOKEN });
  expect(res.status).toBe(200);
  return res.body.data;
};

/** The counters' change across `operation`, which must run in this isolate with nothing else. */
async function counted(operation: () => Promise<unknown>) {
  const before = await metrics();
  await operation();
  const after = await metrics();
  expect(after.isolate).toBe(before.isolate);
  return {
    statements: after.d1.statements - before.d1.statements,
    batches: after.d1.batches - before.d1.batches,
    rowsRead: after.d1.rows_read - before.d1.rows_read,
    rowsWritten: after.d1.rows_written - before.d1.rows_written,
  };
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
    });
    expect(await counted(() => metrics())).toEqual({
      statements: 0,
      batches: 0,
      rowsRead: 0,
      rowsWritten: 0,
    });
  });

  it("counts each statement of a batch: an account with an opening balance is one batch of four", async () => {
    // The account, its key, the credit's ledger entry and the balance (src/db/queries/accounts.ts).
    const change = await counted(() => createAccount(5));
    expect(change.statements).toBe(4);
    expect(change.batches).toBe(1);
    expect(change.rowsWritten).toBeGreaterThanOrEqual(4);
  });

  it("counts single queries and batches alike: a credit is a batch of three, then the account read", async () => {
    const { accountId } = await createAccount(0);
    const change = await counted(() =>
      call("POST", `/admin/accounts/${accountId}/credits`, { key: ADMIN_TOKEN, body: { amount: 1 } }),
    );
    expect(change).toMatchObject({ statements: 4, batches: 2 });
    expect(change.rowsRead).toBeGreaterThanOrEqual(1);
    const show = await counted(() => call("GET", `/admin/accounts/${accountId}`, { key: ADMIN_TOKEN }));
    expect(show).toMatchObject({ statements: 1, batches: 1, rowsWritten: 0 });
  });

  it("counts the statements of a request that fails", async () => {
    // An unknown account: the credit's batch runs (and changes nothing), no read follows.
    const unknown = "00000000-0000-4000-8000-000000000000";
    const change = await counted(() =>
      call("POST", `/admin/accounts/${unknown}/credits`, { key: ADMIN_TOKEN, body: { amount: 1 } }),
    );
    expect(change).toMatchObject({ statements: 3, batches: 1, rowsWritten: 0 });
  });
});
