import { env } from "cloudflare:workers";
import { type SQL, sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { d1Counts } from "../src/db/d1-counter";
import {
  findEvent,
  listEvents,
  purgeEventsStatement,
  undeliveredEventsQuery,
} from "../src/db/queries/events";
import { EVENT_TYPE_CODES } from "../src/db/schema";
import { EVENT_TYPES } from "../src/events/catalogue";
import { newEventId } from "../src/events/record";
import { formatTimestamp } from "../src/lib/time";
import { applyMoves } from "../src/moves/apply";
import { accountD1, accountDb, everyAccountD1, firstAccountD1 } from "./databases";
import { insertEvent } from "./event-fixtures";
import { call, createAccount } from "./helpers";
import { getMessage, seedMessages } from "./message-fixtures";

// How events are stored (src/db/schema/events.ts): a WITHOUT ROWID table keyed by the id's 16
// bytes, the account by its number, the type by its code; what reads them uses the indexes.

const dialect = new SQLiteAsyncDialect({ casing: "snake_case" });

async function planOf(statement: SQL): Promise<string> {
  const query = dialect.sqlToQuery(statement);
  const plan = await firstAccountD1()
    .prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
    .bind(...query.params)
    .all<{ detail: string }>();
  return plan.results.map((row) => row.detail).join("\n");
}

describe("events as stored", () => {
  it("give every catalogue type a code of its own, and no type outside it one", () => {
    expect(Object.keys(EVENT_TYPE_CODES).sort()).toEqual([...EVENT_TYPES].sort());
    const codes = Object.values(EVENT_TYPE_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    for (const name of Object.keys(EVENT_TYPE_CODES)) expect(name).toMatch(/^[a-z_]+\.[a-z_]+$/);
  });

  it("are a WITHOUT ROWID table with the id as its key and three indexes, the type's partial", async () => {
    const d1 = firstAccountD1();
    const table = await d1
      .prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'events'")
      .first<{
        sql: string;
      }>();
    expect(table?.sql).toMatch(/`id` blob PRIMARY KEY NOT NULL/);
    expect(table?.sql).toMatch(/\) WITHOUT ROWID$/);
    const { results } = await d1
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'events' ORDER BY name")
      .all<{ name: string }>();
    expect(results.map((row) => row.name)).toEqual([
      "events_account_created",
      "events_account_type",
      "events_dedupe_key",
    ]);
    const typeIndex = await d1
      .prepare("SELECT sql FROM sqlite_schema WHERE name = 'events_account_type'")
      .first<{ sql: string }>();
    expect(typeIndex?.sql).toMatch(/WHERE type_code NOT IN \(1, 2, 3\)$/);
  });

  it("number accounts one past the highest, each its own", async () => {
    const numberOf = async (id: string) =>
      (
        await (
          await accountD1(id)
        )
          .prepare("SELECT number FROM accounts WHERE id = ?")
          .bind(id)
          .first<{ number: number }>()
      )?.number;
    const first = await numberOf((await createAccount()).accountId);
    const second = await numberOf((await createAccount()).accountId);
    // Every account's number, from every account database: unique across all of them.
    const numbers: number[] = [];
    for (const d1 of everyAccountD1()) {
      const { results } = await d1.prepare("SELECT number FROM accounts").all<{ number: number }>();
      numbers.push(...results.map((row) => row.number));
    }
    expect(first).toBeGreaterThan(0);
    expect(second).toBe((first ?? 0) + 1);
    expect(Math.max(...numbers)).toBe(second);
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it("list a page of one type reading about as many rows as it returns", async () => {
    const { accountId } = await createAccount();
    const other = await createAccount();
    const at = Date.UTC(2026, 10, 1);
    // 60 events over two types, and another account's, each a millisecond apart.
    for (let i = 0; i < 60; i++)
      await insertEvent({
        id: newEventId(),
        accountId: i % 3 === 0 ? other.accountId : accountId,
        type: i % 2 === 0 ? "otp.verified" : "otp.failed",
        snapshot: "{}",
        createdAt: at + i,
      });
    const db = await accountDb(accountId);
    const before = d1Counts().rowsRead;
    const page = await listEvents(db, accountId, { types: ["otp.failed"], limit: 5, cursor: null });
    const read = d1Counts().rowsRead - before;
    expect(page.rows.map((row) => [row.type, row.accountId, row.createdAt])).toEqual(
      [59, 55, 53, 49, 47].map((i) => ["otp.failed", accountId, at + i]),
    );
    expect(page.more).toBe(true);
    // The page's 6 index entries (one more than the page) and the account's number.
    expect(read).toBeLessThanOrEqual(8);
  });

  it("list a page of a type most events have from the account's events, about limit ÷ its share", async () => {
    const { accountId } = await createAccount();
    const at = Date.UTC(2026, 10, 2);
    // Half of 60 events are message.sent (not in events_account_type).
    for (let i = 0; i < 60; i++)
      await insertEvent({
        id: newEventId(),
        accountId,
        type: i % 2 === 0 ? "message.sent" : "otp.failed",
        snapshot: "{}",
        createdAt: at + i,
      });
    const db = await accountDb(accountId);
    const before = d1Counts().rowsRead;
    const page = await listEvents(db, accountId, { types: ["message.sent"], limit: 5, cursor: null });
    const read = d1Counts().rowsRead - before;
    expect(page.rows.map((row) => [row.type, row.createdAt])).toEqual(
      [58, 56, 54, 52, 50].map((i) => ["message.sent", at + i]),
    );
    // 6 of the type among the newest 11 or 12, and the account's number.
    expect(read).toBeLessThanOrEqual(14);
  });

  it("are purged, and swept for missed deliveries, through each account's index, not a scan", async () => {
    const purge = await planOf(purgeEventsStatement(Date.now()));
    expect(purge).toMatch(
      /SEARCH events USING (COVERING )?INDEX events_account_created \(account_number=\? AND created_at<\?\)/,
    );
    expect(purge).not.toMatch(/SCAN events/);
    const sweep = await planOf(undeliveredEventsQuery({ from: 0, to: Date.now() }, 10));
    expect(sweep).toMatch(
      /SEARCH e USING (COVERING )?INDEX events_account_created \(account_number=\? AND created_at>\? AND created_at<\?\)/,
    );
    expect(sweep).not.toMatch(/SCAN e\b/);
  });

  it("show an id as `evt_` and its 32 hex digits, and find none for a malformed one", async () => {
    const { accountId } = await createAccount();
    const id = newEventId();
    await insertEvent({ id, accountId, type: "otp.failed", snapshot: "{}", createdAt: 1 });
    const db = await accountDb(accountId);
    const stored = await (await accountD1(accountId))
      .prepare("SELECT typeof(id) AS kind, length(id) AS bytes FROM events WHERE id = unhex(substr(?, 5))")
      .bind(id)
      .first<{ kind: string; bytes: number }>();
    expect(stored).toEqual({ kind: "blob", bytes: 16 });
    const shown = await db.all<{ id: string }>(
      sql`SELECT 'evt_' || lower(hex(id)) AS id FROM events WHERE id = unhex(substr(${id}, 5))`,
    );
    expect(shown).toEqual([{ id }]);
    expect((await findEvent(db, accountId, id))?.id).toBe(id);
    for (const malformed of ["evt_zz", `msg_${id.slice(4)}`, id.slice(4), "evt_"])
      expect(await findEvent(db, accountId, malformed)).toBeNull();
  });

  it("keep a message's metadata as its receipt count until a key written later is in it, and render each event as the message was", async () => {
    const { key, accountId } = await createAccount(1);
    const session = "22222222-2222-4222-8222-222222222222";
    const [id] = await seedMessages([
      { accountId, sessionId: session, toNumber: "+14155552671", createdAt: Date.now() - 60_000 },
    ]);
    const at = Date.now() - 30_000;
    const receipt = { sessionId: session, providerMessageId: `gw-${id}` };
    const views: Record<string, unknown>[] = [];
    const view = async () => views.push((await getMessage(key, id!)) as unknown as Record<string, unknown>);
    await applyMoves(env, accountId, [
      {
        kind: "sent",
        id: id!,
        at,
        providerMessageId: `gw-${id}`,
        fromNumber: "+14155550100",
        attempts: 1,
        gateway: "sandbox",
        settledBy: "answer",
      },
    ]);
    await view();
    // The gateway's clock behind ours: the receipt keeps both times.
    await applyMoves(env, accountId, [
      { kind: "delivered", target: receipt, at: at + 1000, gatewayAt: at + 400 },
    ]);
    await view();
    const pricing = { category: "service", billable: false, pricing_model: "PMP" };
    await applyMoves(env, accountId, [{ kind: "priced", target: receipt, pricing, at: at + 1500 }]);
    await applyMoves(env, accountId, [
      { kind: "read", target: receipt, at: at + 2000, gatewayAt: at + 2000 },
    ]);
    await view();

    const d1 = await accountD1(accountId);
    const stored = await d1
      .prepare(
        `SELECT json_extract(snapshot, '$[5]') AS metadata FROM events
        WHERE account_number = (SELECT number FROM accounts WHERE id = ?) ORDER BY created_at`,
      )
      .bind(accountId)
      .all<{ metadata: number | string }>();
    // Sent and delivered: the receipt count alone; read, once priced: the metadata, receipts counted.
    expect(stored.results.map((row) => row.metadata)).toEqual([
      0,
      1,
      JSON.stringify({ attempts: 1, gateway: "sandbox", settled_by: "answer", events: 2, pricing }),
    ]);
    const receipts = await d1
      .prepare("SELECT json_extract(metadata, '$.events') AS events FROM messages WHERE id = ?")
      .bind(id)
      .first<string>("events");
    expect(JSON.parse(receipts!)).toEqual([
      { type: "delivered", at: at + 1000, gateway_at: at + 400 },
      { type: "read", at: at + 2000 },
    ]);

    // A reaction after every event: no event shows it, each shows the message as it was.
    await d1
      .prepare(
        `UPDATE messages SET metadata = json_set(metadata, '$.reactions', json('[{"from":"+14155552671","emoji":"👍","at":"2026-11-28T00:00:00.000000Z"}]')) WHERE id = ?`,
      )
      .bind(id)
      .run();
    const page = await call<{ data: { type: string; data: Record<string, unknown> }[] }>(
      "GET",
      "/v1/events?limit=10",
      {
        key,
      },
    );
    expect(page.body.data.map((event) => event.type)).toEqual([
      "message.read",
      "message.delivered",
      "message.sent",
    ]);
    expect(page.body.data.map((event) => event.data).reverse()).toEqual(views);
    expect((views[1]!.metadata as { events: unknown[] }).events).toEqual([
      { type: "delivered", at: formatTimestamp(at + 1000), gateway_at: formatTimestamp(at + 400) },
    ]);
    expect(views[0]!.metadata).toEqual({ attempts: 1, gateway: "sandbox", settled_by: "answer" });
  });
});
