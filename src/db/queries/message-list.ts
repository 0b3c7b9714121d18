import { and, eq, getTableColumns, inArray, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import {
  type ContactRow,
  LISTED_CONDITION,
  LISTED_DIRECTION,
  LISTED_STATUSES,
  type MessageRow,
  type MessageStatus,
  type MessageType,
  messages,
  UNLISTED_TYPE,
} from "../schema";
import { accountNumberOf } from "./accounts";
import { contactsKnownBy, messageContactColumn } from "./contacts";
import { pageOf, pageWindow, readOrder } from "./keyset";

/** The list's filters, normalised: E.164 numbers, a lower-case session uuid, epoch ms bounds. */
export interface MessageFilters {
  toNumbers?: string[];
  fromNumber?: string;
  /** A user id: the messages of the contacts known by it ({@link listMessages} resolves it to `contactIds`). */
  userId?: string;
  /** Contact ids: the messages naming one of them. */
  contactIds?: string[];
  status?: MessageStatus;
  direction?: "incoming" | "outgoing";
  type?: MessageType;
  /** Session uuid. */
  sessionId?: string;
  /** Epoch ms bounds on `created_at`, inclusive. */
  timeFrom?: number;
  timeTo?: number;
}

/** One page request of the message list, as {@link listMessages} takes it. */
export interface ListQuery {
  filters: MessageFilters;
  limit: number;
  cursor: Cursor | null;
}

/**
 * For a filter value a partial index holds, its condition (src/db/schema/messages.ts
 * `LISTED_CONDITION`); none for another value, whose page reads `messages_account_created`.
 */
const listedBy = {
  status: (status: MessageStatus): SQL[] =>
    (LISTED_STATUSES as readonly string[]).includes(status) ? [sql.raw(LISTED_CONDITION.status)] : [],
  direction: (direction: string): SQL[] =>
    direction === LISTED_DIRECTION ? [sql.raw(LISTED_CONDITION.direction)] : [],
  type: (type: MessageType): SQL[] => (type === UNLISTED_TYPE ? [] : [sql.raw(LISTED_CONDITION.type)]),
};

/**
 * The query of one page of the account's messages, newest first, by keyset on `(created_at, id)`:
 * each filter has an index `(account_number, <filter>, created_at, id)`, so a page reads about as
 * many rows as it returns however deep it is; a status, direction or type most messages have reads the
 * account's messages newest first instead ({@link listedBy}), about `limit` ÷ its share of them. Each row comes with its contact (by primary key). It asks for one row more than the page, to know whether
 * another page follows; a `prev` cursor reads oldest first (`listMessages` turns the page round).
 * Exposed as a query builder so that tests can run its SQL and read D1's `meta.rows_read`.
 */
export function buildListQuery(db: Db, accountId: string, query: ListQuery) {
  const { filters, cursor, limit } = query;
  // A session is one account's: its page reads `messages_session`, and the account is checked on
  // the rows it reads (no index leads with the account's id, so the planner is not drawn away).
  const where: (SQL | undefined)[] = [
    filters.sessionId
      ? eq(messages.accountId, accountId)
      : eq(messages.accountNumber, accountNumberOf(accountId)),
  ];
  if (filters.toNumbers) where.push(inArray(messages.toNumber, filters.toNumbers));
  if (filters.fromNumber) where.push(eq(messages.fromNumber, filters.fromNumber));
  if (filters.contactIds) where.push(inArray(messages.contactId, filters.contactIds));
  if (filters.status) where.push(eq(messages.status, filters.status), ...listedBy.status(filters.status));
  if (filters.direction)
    where.push(eq(messages.direction, filters.direction), ...listedBy.direction(filters.direction));
  if (filters.type) where.push(eq(messages.type, filters.type), ...listedBy.type(filters.type));
  if (filters.sessionId) where.push(eq(messages.chatappSessionId, filters.sessionId));
  where.push(...pageWindow(messages, cursor, { from: filters.timeFrom, to: filters.timeTo }));
  return db
    .select({ ...getTableColumns(messages), contact: messageContactColumn() })
    .from(messages)
    .where(and(...where))
    .orderBy(...readOrder(messages, cursor))
    .limit(limit + 1);
}

/**
 * The queries that read one page: one, or with several `to_number` values (or contacts) one per
 * number (or contact). An
 * `IN` list on the index's second column would make SQLite read every row of those numbers to
 * sort them; one keyset query per number reads at most `limit + 1` rows each.
 */
export function buildListQueries(db: Db, accountId: string, query: ListQuery) {
  const numbers = query.filters.toNumbers ?? [];
  const contacts = query.filters.contactIds ?? [];
  if (contacts.length > 1)
    return contacts.map((id) =>
      buildListQuery(db, accountId, { ...query, filters: { ...query.filters, contactIds: [id] } }),
    );
  if (numbers.length <= 1) return [buildListQuery(db, accountId, query)];
  return numbers.map((n) =>
    buildListQuery(db, accountId, { ...query, filters: { ...query.filters, toNumbers: [n] } }),
  );
}

/**
 * One page of the account's messages (see {@link buildListQueries}): the queries run as one D1
 * batch and their rows are merged in keyset order.
 *
 * @returns the page in newest-first order, and whether more rows lie beyond it in the direction read.
 */
export async function listMessages(
  db: Db,
  accountId: string,
  query: ListQuery,
): Promise<{ rows: (MessageRow & { contact: ContactRow | null })[]; more: boolean }> {
  if (query.filters.userId !== undefined) {
    const contactIds = await contactsKnownBy(db, accountId, query.filters.userId);
    if (contactIds.length === 0) return { rows: [], more: false };
    query = { ...query, filters: { ...query.filters, userId: undefined, contactIds } };
  }
  const [first, ...rest] = buildListQueries(db, accountId, query);
  if (!first) return { rows: [], more: false };
  const results = rest.length === 0 ? [await first] : await db.batch([first, ...rest]);
  return pageOf(results, query.limit, query.cursor);
}
