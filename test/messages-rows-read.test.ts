import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/db/client";
import type { ListQuery } from "../src/db/queries/message-list";
import { buildListQueries, buildListQuery, listMessages } from "../src/db/queries/message-list";
import { toE164 } from "../src/lib/phone";
import { MessageListQuery, toListQuery } from "../src/routes/messages/messages.schemas";
import { accountD1, accountDb } from "./databases";
import { createAccount } from "./helpers";
import { connectedSession, type SeedRow, seedMessages } from "./message-fixtures";

// This API's target for reading: with 10,000 messages stored, every filter of the list reads about
// as many rows as a page returns — D1's `meta.rows_read` stays within `limit + 5` — on the first
// page and on a deep one. The test builds the query exactly as the API does (the route's query
// schema, toListQuery, then buildListQuery, which listMessages runs) and executes its SQL on D1 to
// read the meta.

const TOTAL = 10_000;
const STATUSES = ["queued", "sent", "delivered", "read", "failed", "scheduled"] as const;
const TYPES = ["text", "image", "video", "audio", "document"] as const;
const BASE = Date.UTC(2026, 0, 1);

/** Deterministic pseudo-random numbers (mulberry32), so every run seeds the same table. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const numbers = Array.from({ length: 200 }, (_, i) => `+1415555${String(2600 + i).padStart(4, "0")}`);

let accountA = "";
let sessionsA: { id: string; sessionId: string; phone: string }[] = [];
/** Account A's database, as Drizzle and as D1. */
let db: Db;
let d1: D1Database;

/** An account in the same database as `accountId`, so that its messages share the table read. */
async function neighbourOf(accountId: string): Promise<{ accountId: string; key: string }> {
  const home = await accountD1(accountId);
  for (let i = 0; i < 4; i++) {
    const other = await createAccount(10);
    if ((await accountD1(other.accountId)) === home) return other;
  }
  throw new Error(`no new account landed in the database of ${accountId}`);
}

beforeAll(async () => {
  for (const n of numbers) expect(toE164(n)).toBe(n);
  const a = await createAccount(10);
  const b = await neighbourOf(a.accountId);
  accountA = a.accountId;
  db = await accountDb(accountA);
  d1 = await accountD1(accountA);
  sessionsA = [await connectedSession(a.key), await connectedSession(a.key)];
  const sessionB = await connectedSession(b.key);
  const next = random(42);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const rows: SeedRow[] = [];
  for (let i = 0; i < TOTAL; i++) {
    const inA = next() < 0.5;
    const session = inA ? pick(sessionsA) : sessionB;
    const direction = next() < 0.2 ? "incoming" : "outgoing";
    // A few numbers take 40% of the traffic, so that one number has pages to walk through.
    const contact = next() < 0.4 ? pick(numbers.slice(0, 4)) : pick(numbers);
    rows.push({
      accountId: inA ? a.accountId : b.accountId,
      sessionId: session.id,
      direction,
      status: direction === "incoming" ? "delivered" : pick(STATUSES),
      type: pick(TYPES),
      toNumber: direction === "incoming" ? session.phone : contact,
      fromNumber: direction === "incoming" ? contact : session.phone,
      createdAt: BASE + i * 1000,
    });
  }
  await seedMessages(rows);
  const count = await d1.prepare("SELECT COUNT(*) AS n FROM messages").first<{ n: number }>();
  expect(count?.n).toBeGreaterThanOrEqual(TOTAL);
}, 120_000);

/** Runs the list query's SQL on D1; returns the ids read and D1's rows_read. */
async function measure(query: ListQuery): Promise<{ ids: string[]; rowsRead: number }> {
  const { sql, params } = buildListQuery(db, accountA, query).toSQL();
  const result = await d1
    .prepare(sql)
    .bind(...params)
    .all<{ id: string }>();
  // The same query through the function the API calls returns the same rows.
  const page = await listMessages(db, accountA, query);
  const ids = result.results.map((r) => r.id).slice(0, query.limit);
  expect(query.cursor?.direction === "prev" ? [...ids].reverse() : ids).toEqual(page.rows.map((r) => r.id));
  return { ids, rowsRead: result.meta.rows_read };
}

/** A cursor at the row `offset` rows into the filter's newest-first result. */
async function deepCursor(query: ListQuery, offset: number, direction: "next" | "prev"): Promise<ListQuery> {
  const rows = await buildListQuery(db, accountA, { ...query, limit: offset + 1 });
  const at = rows[offset];
  if (!at) throw new Error(`the filter matches fewer than ${offset + 1} rows`);
  return { ...query, cursor: { createdAt: at.createdAt, id: at.id, direction } };
}

const filters: [string, () => string][] = [
  ["no filter", () => ""],
  ["filter[to_number] (one number)", () => `filter[to_number]=${encodeURIComponent(numbers[1] ?? "")}`],
  ["filter[from_number]", () => `filter[from_number]=${encodeURIComponent(sessionsA[0]?.phone ?? "")}`],
  ["filter[status]", () => "filter[status]=failed"],
  ["filter[direction]", () => "filter[direction]=incoming"],
  ["filter[type]", () => "filter[type]=video"],
  ["session_id (uuid)", () => `session_id=${sessionsA[1]?.id}`],
  ["session_id (session_<uuid>)", () => `session_id=${sessionsA[0]?.sessionId}`],
  [
    "time_from and time_to",
    () =>
      `time_from=${new Date(BASE + 2000 * 1000).toISOString()}&time_to=${new Date(BASE + 6000 * 1000).toISOString()}`,
  ],
];

const measured: Record<string, Record<string, number>> = {};
/** Over every page measured: the rows D1 read, and the rows the page's statements had to return. */
const totals = { read: 0, needed: 0 };

/** Keeps a case's figures for the report; each page's statements had to return `needed` rows. */
function record(name: string, pages: Record<string, number>, needed: number): void {
  measured[name] = pages;
  for (const rowsRead of Object.values(pages)) {
    totals.read += rowsRead;
    totals.needed += needed;
  }
}

/** Parses a query string as the list route does: Hono's query object, then the route's schema. */
function parseListQuery(search: string): ListQuery {
  const params = new URLSearchParams(search);
  // Hono's query validator: one string per parameter, an array for a repeated one.
  const raw = Object.fromEntries(
    [...new Set(params.keys())].map((key) => {
      const values = params.getAll(key);
      return [key, values.length === 1 ? values[0] : values];
    }),
  );
  return toListQuery(MessageListQuery.parse(raw));
}

describe.each(filters)("%s", (name, search) => {
  for (const limit of [10, 100]) {
    it(`reads at most limit + 5 rows per page (limit ${limit}): first page, deep page forward and back`, async () => {
      const query = parseListQuery(`${search()}&limit=${limit}`);
      const matching = await buildListQuery(db, accountA, { ...query, limit: TOTAL });
      // Enough rows for a deep page, so the bound is not met trivially.
      expect(matching.length).toBeGreaterThan(limit * 2 + 10);

      const first = await measure(query);
      expect(first.ids).toHaveLength(limit);
      const deepOffset = Math.floor(matching.length / 2);
      const forward = await measure(await deepCursor(query, deepOffset, "next"));
      expect(forward.ids).toEqual(matching.slice(deepOffset + 1, deepOffset + 1 + limit).map((r) => r.id));
      const back = await measure(await deepCursor(query, deepOffset, "prev"));
      expect([...back.ids].reverse()).toEqual(
        matching.slice(deepOffset - limit, deepOffset).map((r) => r.id),
      );

      record(
        `${name} @${limit}`,
        { first: first.rowsRead, deep_next: forward.rowsRead, deep_prev: back.rowsRead },
        limit,
      );
      expect(first.rowsRead).toBeLessThanOrEqual(limit + 5);
      expect(forward.rowsRead).toBeLessThanOrEqual(limit + 5);
      expect(back.rowsRead).toBeLessThanOrEqual(limit + 5);
    });
  }
});

describe("filter[to_number] with several numbers", () => {
  for (const limit of [10, 100]) {
    it(`reads at most limit + 1 rows per number and page (limit ${limit})`, async () => {
      const search = numbers
        .slice(0, 3)
        .map((n) => `filter[to_number][]=${encodeURIComponent(n)}`)
        .join("&");
      const query = parseListQuery(`${search}&limit=${limit}`);
      let rowsRead = 0;
      for (const statement of buildListQueries(db, accountA, query)) {
        const { sql, params } = statement.toSQL();
        const result = await d1
          .prepare(sql)
          .bind(...params)
          .all();
        rowsRead += result.meta.rows_read;
      }
      // One statement per number, each returning up to `limit` rows for the merge.
      record(`filter[to_number] (three numbers) @${limit}`, { first: rowsRead }, 3 * limit);
      expect(rowsRead).toBeLessThanOrEqual(3 * (limit + 1) + 5);
      // The merged page is the newest `limit` of the three numbers' messages, in order.
      const page = await listMessages(db, accountA, query);
      const all = await buildListQuery(db, accountA, { ...query, limit: TOTAL });
      expect(page.rows.map((r) => r.id)).toEqual(all.slice(0, limit).map((r) => r.id));
      expect(page.more).toBe(true);
      const deep = await listMessages(db, accountA, {
        ...query,
        cursor: { createdAt: all[limit * 2]!.createdAt, id: all[limit * 2]!.id, direction: "prev" },
      });
      expect(deep.rows.map((r) => r.id)).toEqual(all.slice(limit, limit * 2).map((r) => r.id));
    });
  }
});

// A status, direction or type most messages have is in no index of its own (src/db/schema/messages.ts
// LISTED_STATUSES, LISTED_DIRECTION, UNLISTED_TYPE): its page reads the account's messages newest
// first and keeps those that match, about `limit` ÷ the value's share of the account's messages.
describe.each([
  ["filter[status]=read", "filter[status]=read", "status = 'read'"],
  ["filter[direction]=outgoing", "filter[direction]=outgoing", "direction = 'outgoing'"],
  ["filter[type]=text", "filter[type]=text", "type = 'text'"],
])("%s (a value most messages have)", (_name, search, condition) => {
  it("reads the account's messages newest first, about limit ÷ the value's share of them", async () => {
    const shares = await d1
      .prepare(`SELECT avg(${condition}) AS share FROM messages WHERE account_id = ?`)
      .bind(accountA)
      .first<{ share: number }>();
    const share = shares?.share ?? 0;
    expect(share).toBeGreaterThan(0.1);
    const query = parseListQuery(`${search}&limit=50`);
    const first = await measure(query);
    expect(first.ids).toHaveLength(50);
    const deep = await measure(await deepCursor(query, 500, "next"));
    expect(deep.ids).toHaveLength(50);
    // Within a fifth of what the share predicts, and 5 rows.
    for (const { rowsRead } of [first, deep]) expect(rowsRead).toBeLessThanOrEqual((51 / share) * 1.2 + 5);
  });
});

// The whole table in one figure: rows read per row needed, over every page above. The code reads
// one row more than a page needs (two on a deep page), about 1.03 in all; a filter that scanned,
// or pages reading more than a tenth over what they need, would fail it.
it("reads at most 1.1 rows per row its pages need, over every case measured", () => {
  console.log(JSON.stringify({ ...measured, totals }, null, 1));
  expect(Object.keys(measured)).toHaveLength(filters.length * 2 + 2);
  expect(totals.read / totals.needed).toBeLessThanOrEqual(1.1);
});
