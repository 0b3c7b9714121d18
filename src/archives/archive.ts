import { readConfig } from "../config";
import type { Db } from "../db/client";
import {
  type ArchivableMessage,
  type ArchiveRule,
  archivableMessages,
  recordArchive,
  resizeArchive,
  retentionOfAccounts,
} from "../db/queries/archives";
import { EVENT_TYPES } from "../events/catalogue";
import { FINISHED_CAMPAIGN_STATUSES } from "../moves/campaign";
import { WAITING_STATUSES } from "../moves/message";
import { toMessageRecord } from "../presenters/message";
import { gzipLines } from "./ndjson";

// The hourly job `archive_messages` (src/jobs/hourly.ts; README, Message archives): each account's
// final messages older than its `message_retention_days` go to the `ARCHIVES` R2 bucket as gzipped
// NDJSON, one object per account and UTC day per run, and leave D1.

const DAY_MS = 86_400_000;

/** Messages read per query. */
const READ_BATCH = 1_000;

/** Most lines one archive object holds: a busier day gets several objects. */
const MAX_LINES = 10_000;

/** Most messages one run archives (all accounts): what is left waits for the next hour. */
const MAX_PER_RUN = 100_000;

/** The event types that point at a message (src/db/queries/events.ts `eventsForRows`). */
const MESSAGE_EVENT_TYPES = EVENT_TYPES.filter((type) => type.startsWith("message."));

/**
 * Epoch ms before which an account keeping messages `days` days archives them at `now`: the start
 * of the UTC day `days` days ago, so that a day goes in one run (a message stays at least `days`
 * days, at most one more); 0 days: `now`, as soon as final.
 */
export function archiveCutoff(now: number, days: number): number {
  if (days === 0) return now;
  const then = now - days * DAY_MS;
  return then - (then % DAY_MS);
}

/** What one run of {@link archiveMessages} did. */
export interface ArchiveRun {
  /** Archive objects written. */
  archives: number;
  /** Messages moved out of D1 into them. */
  messages: number;
}

/**
 * The UTC day (`YYYY-MM-DD`) of epoch-ms `ms`: the day an archive groups a message by (its
 * `created_at`).
 */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Archives every account's messages that its retention lets go (src/db/queries/archives.ts
 * `archivableMessages`: final, created before {@link archiveCutoff} of `message_retention_days` —
 * or `MESSAGE_RETENTION_DAYS` — no stored media left, outside running campaigns), oldest first, at
 * most {@link MAX_PER_RUN} a run. Each object is written to R2 before its rows are deleted, so a
 * failure leaves the rows for the next run (and at worst an object no archive row lists).
 * @param now epoch ms. @throws Error when R2 or D1 refuses (the cron job's log; the next hour
 *   tries again).
 */
export async function archiveMessages(env: Env, db: Db, now: number): Promise<ArchiveRun> {
  const done: ArchiveRun = { archives: 0, messages: 0 };
  const fallback = readConfig(env).MESSAGE_RETENTION_DAYS;
  for (const account of await retentionOfAccounts(db, fallback)) {
    const rule: ArchiveRule = {
      before: archiveCutoff(now, account.days),
      waiting: WAITING_STATUSES,
      finishedCampaign: FINISHED_CAMPAIGN_STATUSES,
      messageEventTypes: MESSAGE_EVENT_TYPES,
    };
    let after: ArchivableMessage | null = null;
    let pending: ArchivableMessage[] = [];
    while (done.messages + pending.length < MAX_PER_RUN) {
      const rows: ArchivableMessage[] = await archivableMessages(db, account.id, rule, after, READ_BATCH);
      for (const row of rows) {
        const first = pending[0];
        if (first && (utcDay(first.createdAt) !== utcDay(row.createdAt) || pending.length >= MAX_LINES)) {
          await archiveDay(env, db, pending, now, rule, done);
          pending = [];
        }
        pending.push(row);
      }
      after = rows.at(-1) ?? after;
      if (rows.length < READ_BATCH) break;
    }
    if (pending.length > 0) await archiveDay(env, db, pending, now, rule, done);
    if (done.messages >= MAX_PER_RUN) break;
  }
  return done;
}

/**
 * Writes `rows` (one account's, one UTC day's) as one archive object, then records the archive
 * and deletes the rows; a row that changed in between stays in D1 and its line is taken out of
 * the object again. Adds what it did to `done`.
 */
async function archiveDay(
  env: Env,
  db: Db,
  rows: ArchivableMessage[],
  now: number,
  rule: ArchiveRule,
  done: ArchiveRun,
): Promise<void> {
  const [first] = rows;
  if (!first) return;
  const id = `arc_${crypto.randomUUID().replaceAll("-", "")}`;
  const day = utcDay(first.createdAt);
  const objectKey = `${first.accountId}/${day}/${id}.ndjson.gz`;
  const lines = (kept: ArchivableMessage[]) => kept.map((row) => JSON.stringify(toMessageRecord(row)));
  const body = await gzipLines(lines(rows));
  await env.ARCHIVES.put(objectKey, body, { httpMetadata: ARCHIVE_HTTP_METADATA });
  const archive = {
    id,
    accountId: first.accountId,
    day,
    objectKey,
    messageCount: rows.length,
    bytes: body.byteLength,
    createdAt: now,
  };
  let deleted: Set<string>;
  try {
    deleted = new Set(
      await recordArchive(
        db,
        archive,
        rows.map((row) => ({ id: row.id, updatedAt: row.updatedAt })),
        rule,
      ),
    );
  } catch (error) {
    await env.ARCHIVES.delete(objectKey);
    throw error;
  }
  if (deleted.size < rows.length) {
    const kept = rows.filter((row) => deleted.has(row.id));
    const rewritten = await gzipLines(lines(kept));
    await env.ARCHIVES.put(objectKey, rewritten, { httpMetadata: ARCHIVE_HTTP_METADATA });
    await resizeArchive(db, id, kept.length, rewritten.byteLength);
  }
  done.archives += 1;
  done.messages += deleted.size;
}

/** How an archive object is stored: NDJSON, gzip-encoded (what `GET /v1/account/archives/{id}` serves). */
export const ARCHIVE_HTTP_METADATA = { contentType: "application/x-ndjson", contentEncoding: "gzip" };
