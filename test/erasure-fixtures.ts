import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { accountD1, everyAccountD1 } from "./databases";
import { call } from "./helpers";

// Reading erasures back (docs/contacts.md, Erasure) and looking for a contact's traces everywhere the
// service keeps data: every table of every D1 database, the MEDIA bucket, and the API's own answers.

/** An erasure as `GET /v1/erasures/{id}` shows it (src/presenters/erasure.ts). */
export interface Erasure {
  id: string;
  address: string;
  status: "pending" | "completed";
  counts: Record<
    | "messages"
    | "media_objects"
    | "otps"
    | "campaign_recipients"
    | "contacts"
    | "opt_outs"
    | "events"
    | "archived_messages"
    | "archived_otps"
    | "archived_campaign_recipients",
    number
  >;
  created_at: string;
  completed_at: string | null;
}

/** Counts of an erasure that erased nothing. */
export const NOTHING = {
  messages: 0,
  media_objects: 0,
  otps: 0,
  campaign_recipients: 0,
  contacts: 0,
  opt_outs: 0,
  events: 0,
  archived_messages: 0,
  archived_otps: 0,
  archived_campaign_recipients: 0,
};

/** The erased form of an address: `erased:` and 64 hex digits. */
export const ERASED = /^erased:[0-9a-f]{64}$/;

/** `POST /v1/erasures` with `body`; asserts 201 and returns the erasure. */
export async function erase(key: string, body: Record<string, unknown>): Promise<Erasure> {
  const res = await call<{ data: Erasure }>("POST", "/v1/erasures", { key, body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** Erasure `id` as `GET /v1/erasures/{id}` shows it (asserts 200). */
export async function shownErasure(key: string, id: string): Promise<Erasure> {
  const res = await call<{ data: Erasure }>("GET", `/v1/erasures/${id}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/**
 * Every row of every table of the D1 databases (the directory and every account database) holding
 * one of `needles`, as `table: row JSON` (SQLite's and D1's own tables aside: they hold no data of
 * the service).
 */
export async function rowsNaming(needles: readonly string[]): Promise<string[]> {
  // A set: a deployment without account databases keeps its accounts in the directory's.
  const databases = new Set([env.DB, ...everyAccountD1()]);
  const names = new Set<string>();
  const found: string[] = [];
  for (const d1 of databases) {
    const { results: tables } = await d1
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table'
       AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations'`,
      )
      .all<{ name: string }>();
    for (const { name } of tables) {
      names.add(name);
      const { results } = await d1.prepare(`SELECT * FROM "${name}"`).all();
      for (const row of results) {
        const text = JSON.stringify(row);
        if (needles.some((needle) => text.includes(needle))) found.push(`${name}: ${text}`);
      }
    }
  }
  expect([...names]).toEqual(expect.arrayContaining(["messages", "otps", "erasures"]));
  return found;
}

/** The account's money as D1 holds it: balance, ledger, hourly usage, campaign counters, message costs and statuses. */
export async function moneyOf(accountId: string): Promise<unknown[]> {
  const queries = [
    "SELECT balance FROM accounts WHERE id = ?1",
    "SELECT * FROM ledger_entries WHERE account_id = ?1 ORDER BY id",
    "SELECT * FROM account_usage WHERE account_id = ?1 ORDER BY hour, type",
    // A draft's `total` is no money: an erasure takes the contact off drafts.
    `SELECT id, CASE WHEN status = 'draft' THEN NULL ELSE total END AS total, queued, sent, delivered, read, failed, replied, skipped, cost, refunded, price, charge_id
       FROM campaigns WHERE account_id = ?1 ORDER BY id`,
    "SELECT id, status, cost, charge_id, refund_id FROM messages WHERE account_id = ?1 ORDER BY id",
  ];
  const d1 = await accountD1(accountId);
  return Promise.all(queries.map(async (query) => (await d1.prepare(query).bind(accountId).all()).results));
}
