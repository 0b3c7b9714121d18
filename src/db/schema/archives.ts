import { sql } from "drizzle-orm";
import { blob, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Archives in R2 and the tombstones of the records they hold. Conventions of every table: see
// index.ts.

/**
 * What an archive holds, one per line: Messages, OTPs, or a campaign's recipients (docs/retention.md,
 * Archives).
 */
export const ARCHIVE_KINDS = ["messages", "otps", "campaign_recipients"] as const;

/** One of {@link ARCHIVE_KINDS}. */
export type ArchiveKind = (typeof ARCHIVE_KINDS)[number];

/**
 * One archive: a gzipped NDJSON object in the `ARCHIVES` R2 bucket holding final records of one
 * `kind` of one account made on one UTC `day` (`YYYY-MM-DD`), one record (a Message, an OTP, or a
 * recipient of campaign `campaign_id`, as the API shows it) per line; the hourly job
 * `archive_messages` writes it and deletes the rows (src/archives/archive.ts). A day may have
 * several archives: each run archives what became due since the last. `seq` is the compact key tombstones point with; `id` (`arc_` and 32 hex digits)
 * is what the API shows. `message_count` is the number of lines, whatever their kind.
 */
export const messageArchives = sqliteTable(
  "message_archives",
  {
    seq: integer().primaryKey({ autoIncrement: true }),
    id: text().notNull().unique(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    kind: text({ enum: ARCHIVE_KINDS }).notNull().default("messages"),
    /** An archive of `campaign_recipients`: their campaign (each campaign's recipients archived apart); else null. */
    campaignId: text(),
    day: text().notNull(),
    /** The object's key in `ARCHIVES`: `<account id>/<day>/<id>.ndjson.gz`. */
    objectKey: text().notNull(),
    messageCount: integer().notNull(),
    /** The object's size in bytes (gzipped). */
    bytes: integer().notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [
    // The list (`GET /v1/account/archives`, newest first) and the archives of a day.
    index("message_archives_account").on(t.accountId, t.createdAt, t.id),
    index("message_archives_day").on(t.accountId, t.day),
    // The archives of a campaign's recipients (`GET /v1/chatapp/campaigns/{id}/recipients` names them).
    index("message_archives_campaign").on(t.campaignId).where(sql`${t.campaignId} IS NOT NULL`),
  ],
);

/**
 * What is left in D1 of an archived message: its id (the uuid's 16 bytes) and the archive that
 * holds it, so that `GET /v1/chatapp/messages/{id}` answers 404 `message_archived` with the
 * archive's id. About 30 bytes a message (docs/retention.md, Archives); erasure keeps it (it names no one).
 */
export const archivedMessages = sqliteTable("archived_messages", {
  messageId: blob({ mode: "buffer" }).primaryKey(),
  archiveSeq: integer()
    .notNull()
    .references(() => messageArchives.seq),
});

/**
 * What is left in D1 of an archived OTP: its id (the uuid's 16 bytes) and the archive that holds
 * it, so that `GET /v1/otp/{id}` answers 404 `otp_archived` with the archive's id. `WITHOUT ROWID`
 * (migrations/accounts/0056_otp_archives.sql), as {@link archivedMessages}.
 */
export const archivedOtps = sqliteTable("archived_otps", {
  otpId: blob({ mode: "buffer" }).primaryKey(),
  archiveSeq: integer()
    .notNull()
    .references(() => messageArchives.seq),
});

/** A row of {@link messageArchives}, as Drizzle reads it. */
export type MessageArchiveRow = typeof messageArchives.$inferSelect;
