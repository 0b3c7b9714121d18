import { and, asc, desc, eq, gte, inArray, lte, type SQL, sql } from "drizzle-orm";
import type { MessageRow } from "../../messages/message-record";
import type { ListQuery } from "../../messages/list-query";
import type { Db } from "../client";
import { messages } from "../schema";

/**
 * One page of the account's messages, newest first, read by keyset on `(created_at, id)`: each
 * filter has an index `(account_id, <filter>, created_at, id)`, so a page reads about as many
 * rows as it returns however deep it is. Reads one row more than the page to know if another
 * page follows.
 *
 * @returns the page in newest-first order, and whether more rows lie beyond it in the direction read.
 */
export async function listMessages(db: Db, accountId: string, query: ListQuery): Promise<{ rows: MessageRow[]; more: boolean }> {
  const { filters, cursor, limit } = query;
  const where: (SQL | undefined)[] = [eq(messages.accountId, accountId)];
  if (filters.toNumbers) where.push(inArray(messages.toNumber, filters.toNumbers));
  if (filters.fromNumber) where.push(eq(messages.fromNumber, filters.fromNumber));
  if (filters.status) where.push(eq(messages.status, filters.status));
  if (filters.direction) where.push(eq(messages.direction, filters.direction));
  if (filters.type) where.push(eq(messages.type, filters.type));
  if (filters.sessionId) where.push(eq(messages.chatappSessionId, filters.sessionId));
  if (filters.timeFrom !== undefined) where.push(gte(messages.createdAt, filters.timeFrom));
  if (filters.timeTo !== undefined) where.push(lte(messages.createdAt, filters.timeTo));
  const backwards = cursor?.direction === "prev";
  if (cursor) {
    where.push(
      backwards
        ? sql`(${messages.createdAt}, ${messages.id}) > (${cursor.createdAt}, ${cursor.id})`
        : sql`(${messages.createdAt}, ${messages.id}) < (${cursor.createdAt}, ${cursor.id})`,
    );
  }
  const order = backwards ? [asc(messages.createdAt), asc(messages.id)] : [desc(messages.createdAt), desc(messages.id)];
  const rows = await db
    .select()
    .from(messages)
    .where(and(...where))
    .orderBy(...order)
    .limit(limit + 1);
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  return { rows: backwards ? page.reverse() : page, more };
}
