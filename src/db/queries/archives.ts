import { and, desc, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import { ApiError } from "../../errors";
import type { Cursor } from "../../lib/cursor";
import { batchSql, type Db } from "../client";
import {
  type ArchiveKind,
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

// Archives (src/archives/archive.ts moves the rows; the rules of what may go are its own, passed in
// as an ArchiveRule). A message leaves a tombstone (`archived_messages`: its id's 16 bytes and the
// archive's `seq`); OTPs: src/db/queries/otp-archives.ts; campaign recipients:
// src/db/queries/recipient-archives.ts.

/** What decides whether a record may be archived; the caller states the rules. */
export interface ArchiveRule {
  /** Epoch ms: only records created before it. */
  before: number;
  /** Epoch ms: the run's time (a `pending` OTP past its expiry by then is final, `expired`). */
  now: number;
  /**
   * Ms an OTP's sends count toward the per-number limit (`OTP_RULES.perNumberWindowMs`): its send
   * log goes with it, so an OTP stays until its last code is older than that.
   */
  otpSendWindowMs: number;
  /** The statuses of a message that may still change by a send (never archived). */
  waiting: readonly MessageStatus[];
  /** The statuses of a campaign that makes and sends no more messages (its messages, then its recipients, may go). */
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
 * those objects), carrying no code of an OTP still in D1, and outside any campaign that still
 * runs. Reads `messages_account_created`.
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
    // stay while the OTP does (an OTP is archived first, src/db/queries/otp-archives.ts).
    sql`(${messages.otpId} IS NULL OR NOT EXISTS (SELECT 1 FROM otps o WHERE o.id = ${messages.otpId}))`,
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

/**
 * SQL over `alias` (an alias of `table`, `messages` or `otps`): the rows of the account that are
 * `versions` exactly (id and `updated_at`).
 */
export function sameVersions(
  table: "messages" | "otps",
  alias: string,
  accountId: string,
  versions: ArchivedVersion[],
): SQL {
  const list = JSON.stringify(versions.map((version) => [version.id, version.updatedAt]));
  const [t, a] = [sql.raw(table), sql.raw(alias)];
  // By primary key (`+` keeps the planner off the account's index, which would read all its rows).
  return sql`${a}.id IN (SELECT x.id FROM json_each(${list}) j
      JOIN ${t} x ON x.id = j.value ->> 0 AND x.updated_at = j.value ->> 1)
    AND +${a}.account_id = ${accountId}`;
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
  rule: ArchiveRule,
): Promise<string[]> {
  const matched = sameVersions("messages", "m", archive.accountId, versions);
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

/** The kinds whose records leave a tombstone by id (a campaign's recipients: their archives name the campaign). */
export type TombstonedKind = Exclude<ArchiveKind, "campaign_recipients">;

/**
 * The id of the account's archive that holds record `id` (a uuid) of `kind`, or null when it was
 * never archived (or is another account's): one primary-key read of its tombstone
 * (`archived_messages`, `archived_otps`).
 */
export async function archiveHolding(
  db: Db,
  accountId: string,
  kind: TombstonedKind,
  id: string,
): Promise<string | null> {
  const [tombstones, key] =
    kind === "otps"
      ? [sql.raw("archived_otps"), sql.raw("otp_id")]
      : [sql.raw("archived_messages"), sql.raw("message_id")];
  const row = await db.get<{ id: string } | undefined>(sql`SELECT a.id AS id FROM ${tombstones} t
    JOIN message_archives a ON a.seq = t.archive_seq
    WHERE t.${key} = unhex(replace(${id}, '-', '')) AND a.account_id = ${accountId} AND a.kind = ${kind}`);
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

/** What each kind's archived record answers, and what it is called in the error's detail. */
const ARCHIVED = {
  messages: { code: "message_archived", noun: "message" },
  otps: { code: "otp_archived", noun: "OTP" },
} as const satisfies Record<TombstonedKind, { code: string; noun: string }>;

/**
 * The error for a record id (a message's or an OTP's uuid) the account has no row for: 404
 * `message_archived` or `otp_archived` with the archive's id (`archive_id`) when the hourly job
 * moved it to an archive (docs/retention.md, Archives), else 404 `not_found`.
 */
export async function missingRecord(
  db: Db,
  accountId: string,
  kind: TombstonedKind,
  id: string,
): Promise<ApiError> {
  const { code, noun } = ARCHIVED[kind];
  const archiveId = await archiveHolding(db, accountId, kind, id);
  if (!archiveId) return new ApiError("not_found", `No such ${noun}.`);
  return new ApiError(
    code,
    `The ${noun} passed the account's message retention and was moved to archive ${archiveId}: GET /v1/account/archives/${archiveId} downloads it.`,
    { extra: { archive_id: archiveId } },
  );
}
