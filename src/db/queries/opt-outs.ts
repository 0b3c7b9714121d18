import { and, eq, type SQL, sql } from "drizzle-orm";
import { ERASED_PREFIX } from "../../lib/contact-identity";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { type OptOutRow, optOuts } from "../schema";
import { addressesOfContact } from "./contacts";
import { beyond, type KeysetColumns, pageOf, readOrder } from "./keyset";

export type { OptOutRow };

/** The list's keyset columns: `(created_at, to_number)`, the number standing in for an id. */
const KEYSET: KeysetColumns = { createdAt: optOuts.createdAt, id: optOuts.toNumber };

/** The first string after every erased form (`erased;` follows `erased:`), for a key range. */
const ERASED_UPPER = `${ERASED_PREFIX.slice(0, -1)};`;

const owned = (accountId: string, toNumber: string) =>
  and(eq(optOuts.accountId, accountId), eq(optOuts.toNumber, toNumber));

/**
 * Adds `toNumber` (E.164, or a user id) to the account's list through the API at `now` (epoch ms),
 * with every other address of the person it names (contacts.ts `addressesOfContact`: their number
 * and user ids, as a keyword would list them; docs/contacts.md, Contacts), unless each is there already. The
 * inserts and the read are one D1 batch, so the answer is the row as stored.
 * @returns `toNumber`'s row, and whether this call created it (false: it was there, whatever its source).
 */
export async function addOptOut(
  db: Db,
  accountId: string,
  toNumber: string,
  now: number,
): Promise<{ row: OptOutRow; created: boolean }> {
  const [inserted, , found] = await db.batch([
    db
      .insert(optOuts)
      .values({ accountId, toNumber, source: "api", keyword: null, createdAt: now })
      .onConflictDoNothing()
      .returning({ toNumber: optOuts.toNumber }),
    db
      .insert(optOuts)
      .select(
        // `WHERE true`: SQLite would read the upsert's ON as a join constraint without it.
        sql`SELECT ${accountId}, value, 'api', NULL, ${now} FROM (${addressesOfContact(accountId, toNumber)}) WHERE true`,
      )
      .onConflictDoNothing(),
    db.select().from(optOuts).where(owned(accountId, toNumber)).limit(1),
  ]);
  const row = found[0];
  if (!row) throw new Error("an opt-out inserted or found in one batch was not read back");
  return { row, created: inserted.length > 0 };
}

/**
 * The statement that adds a contact who texted an opt-out keyword, for a D1 batch: every address
 * the contact `contactId` (SQL for its id) is known by, its number and its user ids (docs/contacts.md,
 * Contacts), with source `keyword` and `keyword` (as matched), at `at` (epoch ms), only if the
 * incoming message `messageId` is stored at this point of the batch. A message the gateway
 * delivers again is not stored again, so its replay adds nothing; an address already on the list
 * keeps its row (`INSERT OR IGNORE` on the primary key).
 */
export function optOutByKeywordStatement(input: {
  accountId: string;
  contactId: SQL;
  keyword: string;
  messageId: string;
  at: number;
}): SQL {
  return sql`INSERT OR IGNORE INTO opt_outs (account_id, to_number, source, keyword, created_at)
    SELECT ${input.accountId}, ci.value, 'keyword', ${input.keyword}, ${input.at}
    FROM contact_identifiers ci
    WHERE ci.contact_id = ${input.contactId} AND ci.kind IN ('phone_number', 'user_id')
      AND EXISTS (SELECT 1 FROM messages WHERE id = ${input.messageId})`;
}

/**
 * The statement that keeps an opted-out contact opted out by every address it is known by: when
 * one of the addresses of contact `contactId` (SQL for its id) is on account `accountId`'s list,
 * the others join it, with that row's source, keyword and time. Run after a contact learns an
 * identifier (src/contacts/learn.ts): a user who wrote STOP by username and later gives their
 * number is not messaged at that number.
 */
export function optOutFollowsContactStatement(accountId: string, contactId: SQL): SQL {
  return sql`INSERT OR IGNORE INTO opt_outs (account_id, to_number, source, keyword, created_at)
    SELECT o.account_id, ci.value, o.source, o.keyword, o.created_at
    FROM contact_identifiers ci
    JOIN opt_outs o ON o.account_id = ${accountId} AND o.to_number IN (
      SELECT known.value FROM contact_identifiers known
      WHERE known.contact_id = ${contactId} AND known.kind IN ('phone_number', 'user_id'))
    WHERE ci.contact_id = ${contactId} AND ci.kind IN ('phone_number', 'user_id')`;
}

/**
 * Whether account `accountId`'s list holds contact `contactId` by any address it is known by: its
 * number or one of its user ids, the addresses {@link optOutByKeywordStatement} lists (docs/contacts.md,
 * Contacts), or by one of `erased`, the erased forms of those addresses (an erasure keeps an
 * opt-out as one: docs/contacts.md, Erasure). A contact known by a user id alone that texted STOP is on the
 * list by that id.
 */
export async function contactOptedOut(
  db: Db,
  accountId: string,
  contactId: string,
  erased: readonly string[] = [],
): Promise<boolean> {
  const row = await db.get<{ listed: number } | undefined>(sql`SELECT EXISTS (SELECT 1
    FROM contact_identifiers ci JOIN opt_outs o ON o.account_id = ${accountId} AND o.to_number = ci.value
    WHERE ci.contact_id = ${contactId} AND ci.kind IN ('phone_number', 'user_id'))
    OR EXISTS (SELECT 1 FROM opt_outs WHERE account_id = ${accountId}
      AND to_number IN (SELECT value FROM json_each(${JSON.stringify(erased)}))) AS listed`);
  return row?.listed === 1;
}

/**
 * The account's opt-out of `toNumber` (E.164, or a user id), or else the one an erasure kept as
 * `erased`, its erased form (docs/contacts.md, Erasure); or null.
 */
export async function findOptOut(
  db: Db,
  accountId: string,
  toNumber: string,
  erased?: string,
): Promise<OptOutRow | null> {
  const rows = await db
    .select()
    .from(optOuts)
    .where(
      and(eq(optOuts.accountId, accountId), sql`${optOuts.toNumber} IN (${toNumber}, ${erased ?? toNumber})`),
    );
  return rows.find((row) => row.toNumber === toNumber) ?? rows[0] ?? null;
}

/** Whether account `accountId`'s list holds an erased contact's opt-out (docs/contacts.md, Erasure). */
export async function hasErasedOptOuts(db: Db, accountId: string): Promise<boolean> {
  // A range of the primary key (account_id, to_number): every erased form starts `erased:`.
  const row = await db.get<{ listed: number } | undefined>(sql`SELECT EXISTS (SELECT 1 FROM opt_outs
    WHERE account_id = ${accountId} AND to_number >= ${ERASED_PREFIX} AND to_number < ${ERASED_UPPER}) AS listed`);
  return row?.listed === 1;
}

/**
 * Lists again by its address each of `erased`'s addresses (address → erased form) whose erased
 * form is on account `accountId`'s list, with that entry's source, keyword and time: the account
 * gave an erased contact's address again (a campaign recipient), and the contact stays opted out
 * by it (docs/contacts.md, Erasure). An address listed already keeps its row.
 * @returns how many addresses were listed again.
 */
export async function relistErased(
  db: Db,
  accountId: string,
  erased: ReadonlyMap<string, string>,
): Promise<number> {
  const pairs = JSON.stringify(Object.fromEntries(erased));
  const result =
    await db.run(sql`INSERT OR IGNORE INTO opt_outs (account_id, to_number, source, keyword, created_at)
    SELECT o.account_id, j.key, o.source, o.keyword, o.created_at FROM json_each(${pairs}) j
    JOIN opt_outs o ON o.account_id = ${accountId} AND o.to_number = j.value
    WHERE true`);
  return result.meta.changes;
}

/**
 * Removes `toNumber` (E.164, or a user id) from the account's list, with every other address of
 * the person it names (contacts.ts `addressesOfContact`) and `erased`, its erased form (docs/contacts.md,
 * Erasure): campaigns may message them again, by any of them. Leaving one on the list would opt
 * the others out again as the contact learns an identifier ({@link optOutFollowsContactStatement}).
 * @returns false when none of them was on the list.
 */
export async function deleteOptOut(
  db: Db,
  accountId: string,
  toNumber: string,
  erased?: string,
): Promise<boolean> {
  const result = await db
    .delete(optOuts)
    .where(
      and(
        eq(optOuts.accountId, accountId),
        sql`(${optOuts.toNumber} IN (${addressesOfContact(accountId, toNumber)}) OR ${optOuts.toNumber} = ${erased ?? toNumber})`,
      ),
    );
  return result.meta.changes > 0;
}

/**
 * One page of the account's list, newest first, by keyset on `(created_at, to_number)` (index
 * `opt_outs_account_created`), reading at most `limit + 1` rows.
 * @returns the page newest first, and whether more rows lie beyond it in the direction read.
 */
export async function listOptOuts(
  db: Db,
  accountId: string,
  page: { limit: number; cursor: Cursor | null },
): Promise<{ rows: OptOutRow[]; more: boolean }> {
  const where = [eq(optOuts.accountId, accountId)];
  if (page.cursor) where.push(beyond(KEYSET, page.cursor));
  const rows = await db
    .select()
    .from(optOuts)
    .where(and(...where))
    .orderBy(...readOrder(KEYSET, page.cursor))
    .limit(page.limit + 1);
  const keyed = rows.map((row) => ({ ...row, id: row.toNumber }));
  const { rows: pageRows, more } = pageOf([keyed], page.limit, page.cursor);
  return { rows: pageRows.map(({ id: _id, ...row }) => row), more };
}

/** Most numbers {@link optedOutAmong} takes in one call. */
export const MAX_OPT_OUT_LOOKUP = 10_000;

/**
 * Which of `numbers` (E.164, as stored; duplicates allowed) are on the account's suppression
 * list: what a bulk campaign must skip. One statement whatever the count: D1 binds at most 100
 * parameters per statement, so the numbers travel as one JSON array expanded by `json_each`, and
 * each is looked up by the primary key (account, number).
 * @returns the opted-out numbers among them; empty for an empty list.
 * @throws RangeError for more than {@link MAX_OPT_OUT_LOOKUP} numbers (call again per chunk).
 */
export async function optedOutAmong(db: Db, accountId: string, numbers: string[]): Promise<Set<string>> {
  if (numbers.length > MAX_OPT_OUT_LOOKUP) {
    throw new RangeError(`optedOutAmong takes at most ${MAX_OPT_OUT_LOOKUP} numbers, got ${numbers.length}`);
  }
  if (numbers.length === 0) return new Set();
  const rows = await db.all<{ to_number: string }>(sql`SELECT to_number FROM opt_outs
    WHERE account_id = ${accountId} AND to_number IN (SELECT value FROM json_each(${JSON.stringify(numbers)}))`);
  return new Set(rows.map((row) => row.to_number));
}
