import { and, desc, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { Cursor } from "../../lib/cursor";
import { batchSql, type Db } from "../client";
import {
  accounts,
  type CampaignRow,
  type ContactRow,
  type MessageArchiveRow,
  type MessageRow,
  type MessageStatus,
  messageArchives,
  messages,
} from "../schema";
import { accountNumberOf } from "./accounts";
import { messageContactColumn } from "./contacts";
import { materialiseMessageEventsStatement } from "./events";
import { beyond, pageOf, readOrder } from "./keyset";
import { statusIn } from "./status-in";

// Message archives (src/archives/archive.ts moves the rows; the rules of what may go are its own,
// passed in as an ArchiveRule). A message leaves a tombstone (`archived_messages`: its id's 16
// bytes and the archive's `seq`).

/** What decides whether a message may be archived; the caller states the rules. */
export interface ArchiveRule {
  /** Epoch ms: only messages created before it. */
  before: number;
  /** The statuses of a message that may still change by a send (never archived). */
  waiting: readonly MessageStatus[];
  /** The statuses of a campaign that makes and sends no more messages (its messages may go). */
  finishedCampaign: readonly CampaignRow["status"][];
  /** The event types that point at a message (src/events/catalogue.ts), rendered whole before it goes. */
  messageEventTypes: readonly string[];
}

/** A message as an archive line renders it: the row and its contact. */
export type ArchivableMessage = MessageRow & { contact: ContactRow | null };

/** Every account with its message retention in days: its own, else `fallbackDays`. */
export async function retentionOfAccounts(
  db: Db,
  fallbackDays: number,
): Promise<{ id: string; days: number }[]> {
  return db
    .select({
      id: accounts.id,
      days: sql<number>`coalesce(${accounts.messageRetentionDays}, ${fallbackDays})`,
    })
    .from(accounts);
}

/**
 * Up to `limit` of the account's messages that `rule` lets go, oldest first after `after` (the
 * last `(created_at, id)` of the previous call, so rows that stay are not read again), with their
 * contact: created before `rule.before`, not waiting to be sent (nor waiting on an unknown outcome,
 * `metadata.outcome`), their stored media already gone (`media_key` null: the media sweeps own
 * those objects), carrying no one-time code, and outside any campaign that still runs. Reads
 * `messages_account_created`.
 */
export async function archivableMessages(
  db: Db,
  accountId: string,
  rule: ArchiveRule,
  after: { createdAt: number; id: string } | null,
  limit: number,
): Promise<ArchivableMessage[]> {
  const where: SQL[] = [
    eq(messages.accountNumber, accountNumberOf(accountId)),
    sql`${messages.createdAt} < ${rule.before}`,
    sql`NOT ${statusIn("messages.status", rule.waiting)}`,
    sql`${messages.mediaKey} IS NULL`,
    // A one-time code's attempts read their message (otp-attempts.ts `attemptsJson`): its messages
    // stay while the OTP does.
    sql`${messages.otpId} IS NULL`,
    sql`(${messages.metadata} ->> ${"$.outcome"}) IS NOT 'unknown'`,
    sql`(${messages.campaignId} IS NULL OR EXISTS (SELECT 1 FROM campaigns c WHERE c.id = ${messages.campaignId}
      AND ${statusIn("c.status", rule.finishedCampaign)}))`,
  ];
  if (after) where.push(sql`(${messages.createdAt}, ${messages.id}) > (${after.createdAt}, ${after.id})`);
  return db
    .select({ ...getTableColumns(messages), contact: messageContactColumn() })
    .from(messages)
    .where(and(...where))
    .orderBy(messages.createdAt, messages.id)
    .limit(limit);
}

/** A message as archived: its id and the `updated_at` of the row the archive line shows. */
export interface ArchivedVersion {
  id: string;
  updatedAt: number;
}

/** SQL: the rows of `messages` (aliased `m`) that are `versions` exactly (id and `updated_at`). */
function sameVersions(accountId: string, versions: ArchivedVersion[]): SQL {
  const list = JSON.stringify(versions.map((version) => [version.id, version.updatedAt]));
  // By primary key (`+` keeps the planner off the account's index, which would read all its rows).
  return sql`m.id IN (SELECT x.id FROM json_each(${list}) j
      JOIN messages x ON x.id = j.value ->> 0 AND x.updated_at = j.value ->> 1)
    AND +m.account_id = ${accountId}`;
}

/**
 * Records archive `archive` and moves its messages out of D1, in one D1 batch: the archive row;
 * a tombstone for each of `versions` still as archived (a message that changed since it was read
 * stays, for a later archive); the events that point at those messages rendered into whole
 * snapshots (src/db/queries/events.ts); their campaign recipients given their final status and
 * reason; the messages deleted.
 * @returns the ids deleted (those of `versions` that had not changed).
 */
export async function recordArchive(
  db: Db,
  archive: Omit<MessageArchiveRow, "seq">,
  versions: ArchivedVersion[],
  rule: Pick<ArchiveRule, "messageEventTypes">,
): Promise<string[]> {
  const matched = sameVersions(archive.accountId, versions);
  const ids = sql`(SELECT m.id FROM messages m WHERE ${matched})`;
  const results = await batchSql<{ id: string }>(db, [
    db.insert(messageArchives).values(archive).getSQL(),
    sql`INSERT INTO archived_messages (message_id, archive_seq)
      SELECT unhex(replace(m.id, '-', '')), (SELECT seq FROM message_archives WHERE id = ${archive.id})
      FROM messages m WHERE ${matched}`,
    materialiseMessageEventsStatement(archive.accountId, ids, rule.messageEventTypes),
    // A campaign recipient shows its message's status and reason: it keeps them as the message goes
    // (a campaign message's `send_index` is its recipient's `seq`).
    sql`UPDATE campaign_recipients AS r SET status = m.status, reason = m.reason
      FROM messages m WHERE ${matched} AND m.campaign_id IS NOT NULL
        AND r.campaign_id = m.campaign_id AND r.seq = m.send_index AND r.message_id = m.id`,
    sql`DELETE FROM messages AS m WHERE ${matched} RETURNING id`,
  ]);
  return (results.at(-1)?.results ?? []).map((row) => row.id);
}

/**
 * Corrects archive `id`'s count and size after a rewrite of its object (fewer lines than first
 * written, when some messages changed before they could be deleted).
 */
export async function resizeArchive(db: Db, id: string, messageCount: number, bytes: number): Promise<void> {
  await db.update(messageArchives).set({ messageCount, bytes }).where(eq(messageArchives.id, id));
}

/** One page of the account's archives, newest first (keyset on `(created_at, id)`). */
export async function listArchives(
  db: Db,
  accountId: string,
  query: { limit: number; cursor: Cursor | null },
): Promise<{ rows: MessageArchiveRow[]; more: boolean }> {
  const where: SQL[] = [eq(messageArchives.accountId, accountId)];
  if (query.cursor) where.push(beyond(messageArchives, query.cursor));
  const rows = await db
    .select()
    .from(messageArchives)
    .where(and(...where))
    .orderBy(...readOrder(messageArchives, query.cursor))
    .limit(query.limit + 1);
  return pageOf([rows], query.limit, query.cursor);
}

/** The account's archive with this id, or null. */
export async function findArchive(db: Db, accountId: string, id: string): Promise<MessageArchiveRow | null> {
  const [row] = await db
    .select()
    .from(messageArchives)
    .where(and(eq(messageArchives.id, id), eq(messageArchives.accountId, accountId)))
    .limit(1);
  return row ?? null;
}

/**
 * The id of the account's archive that holds message `messageId` (a uuid), or null when the
 * message was never archived (or is another account's). One primary-key read of the tombstone.
 */
export async function archiveOfMessage(db: Db, accountId: string, messageId: string): Promise<string | null> {
  const row = await db.get<{ id: string } | undefined>(sql`SELECT a.id AS id FROM archived_messages t
    JOIN message_archives a ON a.seq = t.archive_seq
    WHERE t.message_id = unhex(replace(${messageId}, '-', '')) AND a.account_id = ${accountId}`);
  return row?.id ?? null;
}

/** The account's archives, newest first: what the erasure of a contact rewrites. */
export async function archivesOfAccount(db: Db, accountId: string): Promise<MessageArchiveRow[]> {
  return db
    .select()
    .from(messageArchives)
    .where(eq(messageArchives.accountId, accountId))
    .orderBy(desc(messageArchives.createdAt));
}
