import { and, asc, desc, eq, gte, inArray, lte, type SQL, sql } from "drizzle-orm";
import type { MessageRow } from "../../messages/message-record";
import type { ListQuery } from "../../messages/list-query";
import type { Db } from "../client";
import { messages } from "../schema";

/**
 * The query of one page of the account's messages, newest first, by keyset on `(created_at, id)`:
 * each filter has an index `(account_id, <filter>, created_at, id)`, so a page reads about as many
 * rows as it returns however deep it is. It asks for one row more than the page, to know whether
 * another page follows; a `prev` cursor reads oldest first (`listMessages` turns the page round).
 * Exposed as a query builder so that tests can run its SQL and read D1's `meta.rows_read`.
 */
export function buildListQuery(db: Db, accountId: string, query: ListQuery) {
  const { filters, cursor, limit } = query;
  const where: (SQL | undefined)[] = [eq(messages.accountId, accountId)];
  if (filters.toNumbers) where.push(inArray(messages.toNumber, filters.toNumbers));
  if (filters.fromNumber) where.push(eq(messages.fromNumber, filters.fromNumber));
  if (filters.status) where.push(eq(messages.status, filters.status));
  if (filters.direction) where.push(eq(messages.direction, filters.direction));
  if (filters.type) where.push(eq(messages.type, filters.type));
  if (filters.sessionId) where.push(eq(messages.chatappSessionId, filters.sessionId));
  const backwards = cursor?.direction === "prev";
  // SQLite seeks an index range with one bound per side. The cursor and `time_to` (reading
  // forward) or `time_from` (reading back) bound the same side, and a planner that picks the time
  // bound reads every row between it and the cursor; so only the tighter of the two is kept (it
  // implies the other, so the rows are the same).
  let { timeFrom, timeTo } = filters;
  if (cursor) {
    const keysetIsTighter = backwards
      ? timeFrom === undefined || cursor.createdAt >= timeFrom
      : timeTo === undefined || cursor.createdAt <= timeTo;
    if (keysetIsTighter && backwards) {
      timeFrom = undefined;
      where.push(sql`(${messages.createdAt}, ${messages.id}) > (${cursor.createdAt}, ${cursor.id})`);
    } else if (keysetIsTighter) {
      timeTo = undefined;
      where.push(sql`(${messages.createdAt}, ${messages.id}) < (${cursor.createdAt}, ${cursor.id})`);
    }
  }
  if (timeFrom !== undefined) where.push(gte(messages.createdAt, timeFrom));
  if (timeTo !== undefined) where.push(lte(messages.createdAt, timeTo));
  const order = backwards ? [asc(messages.createdAt), asc(messages.id)] : [desc(messages.createdAt), desc(messages.id)];
  return db
    .select()
    .from(messages)
    .where(and(...where))
    .orderBy(...order)
    .limit(limit + 1);
}

/**
 * One page of the account's messages (see {@link buildListQuery}).
 *
 * @returns the page in newest-first order, and whether more rows lie beyond it in the direction read.
 */
export async function listMessages(db: Db, accountId: string, query: ListQuery): Promise<{ rows: MessageRow[]; more: boolean }> {
  const rows = await buildListQuery(db, accountId, query);
  const more = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  return { rows: query.cursor?.direction === "prev" ? page.reverse() : page, more };
}
