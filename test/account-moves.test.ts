import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { countRows, pageQuery } from "../src/db/account-copy";
import { ACCOUNT_TABLES } from "../src/db/account-tables";
import { directoryOf } from "../src/db/databases";
import { accountPlaceOf } from "../src/db/queries/directory";
import { driveMove, firstAccountD1, otherDatabase } from "./databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem, TIMESTAMP } from "./helpers";
import { connectedSession, type Message, sendText, waitForMessages } from "./message-fixtures";
import { createEndpoint, deliveriesOf, useWebhookReceiver } from "./webhook-fixtures";

// An account's move between account databases: POST /admin/accounts/{id}/move
// (src/account-moves/; docs/databases.md, Databases, Moving an account).

const receiver = useWebhookReceiver();

interface Move {
  from_database: string;
  to_database: string;
  phase: string;
  table: string | null;
  rows_copied: number;
  rows_deleted: number;
  error: string | null;
  switched_at: string | null;
}

interface AdminAccount {
  id: string;
  balance: number;
  database: string;
  move: Move | null;
}

const DATABASES = ["DB_ACCOUNTS_0", "DB_ACCOUNTS_1"];
const d1Named = (name: string) => (env as unknown as Record<string, D1Database>)[name] as D1Database;

async function adminAccount(id: string): Promise<AdminAccount> {
  const res = await call<{ data: { account: AdminAccount } }>("GET", `/admin/accounts/${id}`, {
    key: ADMIN_TOKEN,
  });
  expect(res.status).toBe(200);
  return res.body.data.account;
}

function postMove(id: string, database: string) {
  return call<{ data: { account: AdminAccount } }>("POST", `/admin/accounts/${id}/move`, {
    key: ADMIN_TOKEN,
    body: { database },
  });
}

/** Account `accountId`'s rows in database `name`, by table (only the tables that hold some). */
async function rowsIn(name: string, accountId: string): Promise<Record<string, number>> {
  const account = { id: accountId, number: (await accountPlaceOf(directoryOf(env), accountId))?.number ?? 0 };
  const counts: Record<string, number> = {};
  for (const table of ACCOUNT_TABLES) {
    const n = await countRows(d1Named(name), table, account);
    if (n > 0) counts[table.name] = n;
  }
  return counts;
}

/** Sends `to` a text, trying again while the account is refused (503 `account_moving`), as a client following `Retry-After` would. */
async function sendThrough(
  key: string,
  sessionId: string,
  to: string[],
): Promise<{ ids: string[]; refused: number }> {
  let refused = 0;
  for (;;) {
    const res = await sendText(key, sessionId, to, { delay_between: 0 });
    if (res.status === 201) return { ids: res.body.data.messages.map((m) => m.id), refused };
    expectProblem(res, 503, "account_moving");
    expect(res.headers.get("retry-after")).toBe("10");
    refused++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const FINAL = (m: Message) => m.status !== "queued" && m.status !== "scheduled" && m.status !== "sent";

describe("the tables a move copies", () => {
  it("names every table of an account database, once", async () => {
    const { results } = await firstAccountD1()
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations'",
      )
      .all<{ name: string }>();
    const names = ACCOUNT_TABLES.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(results.map((r) => r.name).sort());
  });

  it("finds one account's rows of each table through an index or the primary key", async () => {
    for (const table of ACCOUNT_TABLES) {
      const page = pageQuery(
        firstAccountD1(),
        table,
        { id: "a", number: 1 },
        table.order.map(() => "x"),
        500,
      );
      const { results } = await firstAccountD1()
        .prepare(`EXPLAIN QUERY PLAN ${(page as unknown as { statement: string }).statement}`)
        .bind(...(page as unknown as { params: unknown[] }).params)
        .all<{ detail: string }>();
      const plan = results.map((r) => r.detail);
      // No walk of a whole table; a sort of every row of the account only where an account has few
      // (keys, apps); a sort of ties within an index's order ("LAST TERM") is cheap.
      expect(
        plan.filter((line) => line.startsWith("SCAN")),
        table.name,
      ).toEqual([]);
      if (plan.includes("USE TEMP B-TREE FOR ORDER BY")) expect(["api_keys", "apps"]).toContain(table.name);
    }
  });
});

describe("POST /admin/accounts/{id}/move", () => {
  it("refuses the account while it is held and copied, then serves it from the new database, every row once", async () => {
    const { accountId, key } = await createAccount(50);
    const from = (await adminAccount(accountId)).database;
    const to = otherDatabase(from);
    const session = await connectedSession(key);
    const endpoint = await createEndpoint(key, "moved", receiver);
    const sent = await sendText(key, session.id, ["+14155550101", "+14155550102", "+14155550103"], {
      delay_between: 0,
    });
    expect(sent.status).toBe(201);
    const ids = sent.body.data.messages.map((m) => m.id);
    await waitForMessages(key, ids, FINAL, 30_000);
    expect(await call("POST", "/v1/opt-outs", { key, body: { to_number: "+14155550199" } })).toMatchObject({
      status: 201,
    });
    const deliveries = await deliveriesOf(endpoint.id);
    expect(deliveries.length).toBeGreaterThan(0);
    const before = await rowsIn(from, accountId);
    expect(before).toMatchObject({
      accounts: 1,
      messages: 3,
      sessions: 1,
      opt_outs: 1,
      webhook_endpoints: 1,
    });
    expect(await rowsIn(to, accountId)).toEqual({});
    const balance = (await adminAccount(accountId)).balance;

    const begun = await postMove(accountId, to);
    expect(begun.status).toBe(202);
    expect(begun.body.data.account).toMatchObject({
      database: from,
      move: {
        from_database: from,
        to_database: to,
        phase: "holding",
        rows_copied: 0,
        error: null,
        switched_at: null,
      },
    });
    // Refused: the account's keys, the admin's changes; another target; the jobs leave both databases.
    const refused = await call("GET", "/v1/account", { key });
    expectProblem(refused, 503, "account_moving");
    expect(refused.headers.get("retry-after")).toBe("10");
    expectProblem(
      await call("POST", `/admin/accounts/${accountId}/credits`, { key: ADMIN_TOKEN, body: { amount: 5 } }),
      503,
      "account_moving",
    );
    expectProblem(await postMove(accountId, from), 409, "account_move_in_progress");
    const job = await call<{ data: { databases: { database: string; skipped: boolean }[] } }>(
      "POST",
      "/admin/jobs/purge_idempotency_keys",
      { key: ADMIN_TOKEN },
    );
    // The directory's part of the job runs; both account databases are left for the next run.
    expect(job.body.data.databases).toEqual([
      expect.objectContaining({ database: "DB", skipped: false }),
      ...DATABASES.map((database) => expect.objectContaining({ database, skipped: true })),
    ]);
    // The same move posted again resumes it.
    expect((await postMove(accountId, to)).body.data.account.move).toMatchObject({ phase: "holding" });

    await driveMove(accountId);
    const after = await adminAccount(accountId);
    const copied = Object.values(before).reduce((a, b) => a + b, 0);
    expect(after).toMatchObject({
      database: to,
      balance,
      move: {
        phase: "done",
        table: null,
        rows_copied: copied,
        rows_deleted: copied,
        error: null,
        switched_at: expect.stringMatching(TIMESTAMP),
      },
    });
    expect(await rowsIn(to, accountId)).toEqual(before);
    expect(await rowsIn(from, accountId)).toEqual({});
    // Served again, from the new database: its messages, and its endpoint's deliveries under the
    // endpoint's new number there.
    const account = await call<{ data: { id: string } }>("GET", "/v1/account", { key });
    expect(account.status).toBe(200);
    expect((await waitForMessages(key, ids, FINAL)).map((m) => m.id)).toEqual(ids);
    expect(await deliveriesOf(endpoint.id)).toEqual(deliveries);
    const jobAfter = await call<{ data: { databases: { skipped: boolean }[] } }>(
      "POST",
      "/admin/jobs/purge_idempotency_keys",
      { key: ADMIN_TOKEN },
    );
    expect(jobAfter.body.data.databases.map((d) => d.skipped)).toEqual([false, false, false]);
  });

  it("moves an account during sends and loses no message, charge or ledger entry", async () => {
    const { accountId, key } = await createAccount(100);
    const from = (await adminAccount(accountId)).database;
    const to = otherDatabase(from);
    const session = await connectedSession(key);
    const recipients = (batch: number) =>
      Array.from(
        { length: 5 },
        (_, i) => `+1415555${String(batch).padStart(2, "0")}${String(i).padStart(2, "0")}`,
      );
    const accepted: string[] = [];
    let refused = 0;
    // Two sends land before the move begins; the rest are sent while it runs, each tried again
    // while the account is refused.
    for (const batch of [0, 1]) accepted.push(...(await sendThrough(key, session.id, recipients(batch))).ids);
    expect((await postMove(accountId, to)).status).toBe(202);
    let batch = 2;
    await driveMove(accountId, async () => {
      if (batch >= 12) return;
      const res = await sendText(key, session.id, recipients(batch), { delay_between: 0 });
      if (res.status === 201) {
        accepted.push(...res.body.data.messages.map((m) => m.id));
        batch++;
      } else {
        expectProblem(res, 503, "account_moving");
        refused++;
      }
    });
    while (batch < 12) {
      const sent = await sendThrough(key, session.id, recipients(batch++));
      accepted.push(...sent.ids);
      refused += sent.refused;
    }
    expect(refused).toBeGreaterThan(0);
    expect(accepted).toHaveLength(60);
    const messages = await waitForMessages(key, accepted, FINAL, 90_000);
    expect((await adminAccount(accountId)).database).toBe(to);

    // Every message accepted is in the new database once, and none is left in the old.
    const target = d1Named(to);
    const stored = await target
      .prepare("SELECT id, status, cost FROM messages WHERE account_id = ? ORDER BY id")
      .bind(accountId)
      .all<{ id: string; status: string; cost: number }>();
    expect(stored.results.map((m) => m.id)).toEqual([...accepted].sort());
    expect(await rowsIn(from, accountId)).toEqual({});
    // The money: each send charged once, each failure refunded once, the balance the ledger's last.
    const ledger = await target
      .prepare(
        "SELECT kind, amount, balance_after, message_count FROM ledger_entries WHERE account_id = ? ORDER BY created_at, rowid",
      )
      .bind(accountId)
      .all<{ kind: string; amount: number; balance_after: number; message_count: number }>();
    const charges = ledger.results.filter((e) => e.kind === "charge");
    expect(charges.reduce((n, e) => n + e.message_count, 0)).toBe(60);
    const failed = messages.filter((m) => m.status === "failed").length;
    const refunds = ledger.results.filter((e) => e.kind === "refund");
    expect(refunds.reduce((n, e) => n + e.message_count, 0)).toBe(failed);
    const sum = ledger.results.reduce((n, e) => n + e.amount, 0);
    const account = await target
      .prepare("SELECT balance FROM accounts WHERE id = ?")
      .bind(accountId)
      .first<{ balance: number }>();
    expect(account?.balance).toBe(sum);
    expect(ledger.results.at(-1)?.balance_after).toBe(sum);
    // The usage counters agree with the messages, counted once though each was copied.
    const usage = await target
      .prepare(
        'SELECT sum(queued + scheduled + sent + delivered + "read" + failed) AS n FROM account_usage WHERE account_id = ?',
      )
      .bind(accountId)
      .first<{ n: number }>();
    expect(usage?.n).toBe(60);
  });

  it("unwinds a copy whose counts differ, and leaves the account where it was", async () => {
    const { accountId, key } = await createAccount(10);
    const from = (await adminAccount(accountId)).database;
    const to = otherDatabase(from);
    expect((await call("POST", "/v1/opt-outs", { key, body: { to_number: "+14155550177" } })).status).toBe(
      201,
    );
    const before = await rowsIn(from, accountId);
    expect((await postMove(accountId, to)).status).toBe(202);
    // A row of the account written into the target behind the copy's back.
    const optOuts = ACCOUNT_TABLES.findIndex((t) => t.name === "opt_outs");
    await driveMove(accountId, async () => {
      const { move } = await adminAccount(accountId);
      if (move?.phase === "copying" && ACCOUNT_TABLES[optOuts + 1]?.name === move.table) {
        await d1Named(to)
          .prepare(
            "INSERT OR IGNORE INTO opt_outs (account_id, to_number, source, created_at) VALUES (?, '+14155550178', 'api', 0)",
          )
          .bind(accountId)
          .run();
      }
    });
    const after = await adminAccount(accountId);
    expect(after).toMatchObject({
      database: from,
      move: { phase: "failed", error: "opt_outs: 1 rows in the source, 2 in the target", switched_at: null },
    });
    expect(await rowsIn(to, accountId)).toEqual({});
    expect(await rowsIn(from, accountId)).toEqual(before);
    expect((await call("GET", "/v1/account", { key })).status).toBe(200);
  });

  it("refuses an unknown account, an unknown database and the account's own", async () => {
    const { accountId } = await createAccount(1);
    const own = (await adminAccount(accountId)).database;
    expectProblem(await postMove(crypto.randomUUID(), "DB_ACCOUNTS_1"), 404, "not_found");
    const unknown = expectProblem(await postMove(accountId, "DB_ACCOUNTS_7"), 422, "validation_failed");
    expect(unknown.errors).toEqual({ database: [expect.stringContaining("is not an account database")] });
    const same = expectProblem(await postMove(accountId, own), 422, "validation_failed");
    expect(same.errors).toEqual({ database: ["already holds the account"] });
    expect((await adminAccount(accountId)).move).toBeNull();
  });
});
