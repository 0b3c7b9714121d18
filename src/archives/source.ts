import type { Db } from "../db/client";
import type { ArchiveRule } from "../db/queries/archives";
import type { ArchiveKind, MessageArchiveRow } from "../db/schema";

// What the archive job (src/archives/archive.ts) needs of each kind of record it archives.

/** A row an archive can take: the account's, made at `createdAt` (epoch ms; its archive's day). */
export interface ArchivableRow {
  id: string;
  accountId: string;
  createdAt: number;
}

/**
 * One kind of record the job archives (src/db/schema/archives.ts `ARCHIVE_KINDS`): how its rows
 * are read, shown on an archive line, and moved out of D1.
 */
export interface ArchiveSource<Row extends ArchivableRow> {
  kind: ArchiveKind;
  /** Up to `limit` rows the rule lets go, oldest first after `after` (`(created_at, id)`). */
  read(db: Db, accountId: string, rule: ArchiveRule, after: Row | null, limit: number): Promise<Row[]>;
  /** The row as an archive line holds it: as the API shows it (JSON text). */
  line(row: Row, now: number): string;
  /**
   * Records `archive` and deletes those of `rows` still as they were read, in one D1 batch.
   * @returns the ids deleted.
   */
  record(db: Db, archive: Omit<MessageArchiveRow, "seq">, rows: Row[], rule: ArchiveRule): Promise<string[]>;
  /** The campaign a row belongs to, when each campaign's rows are archived apart (the archive names it). */
  campaignOf?(row: Row): string;
}
