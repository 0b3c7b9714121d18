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
import { OTP_RULES } from "../otp/code";
import { toMessageRecord } from "../presenters/message";
import { RECIPIENT_SOURCE } from "./campaign-recipients";
import { gzipLines } from "./ndjson";
import { OTP_SOURCE } from "./otps";
import type { ArchivableRow, ArchiveSource } from "./source";

// The hourly job `archive_messages` (src/jobs/hourly.ts; docs/retention.md, Archives): each account's final
// OTPs, messages and campaign recipients older than its `message_retention_days` go to the
// `ARCHIVES` R2 bucket as gzipped NDJSON, one object per account, kind and UTC day (and campaign)
// per run, and leave D1.

const DAY_MS = 86_400_000;

/** Records read per query. */
const READ_BATCH = 1_000;

/** Most lines one archive object holds: a busier day gets several objects. */
const MAX_LINES = 10_000;

/** Most records one run archives (all accounts): what is left waits for the next hour. */
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
  /** OTPs (with their attempts) moved out of D1 into them. */
  otps: number;
  /** Campaign recipients moved out of D1 into them. */
  campaign_recipients: number;
}

/** Records a run has archived so far, of every kind. */
function archived(done: ArchiveRun): number {
  return done.messages + done.otps + done.campaign_recipients;
}

/**
 * The UTC day (`YYYY-MM-DD`) of epoch-ms `ms`: the day an archive groups a record by (its
 * `created_at`).
 */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Messages (src/db/queries/archives.ts). */
const MESSAGE_SOURCE: ArchiveSource<ArchivableMessage> = {
  kind: "messages",
  read: archivableMessages,
  line: (row) => JSON.stringify(toMessageRecord(row)),
  record: recordArchive,
};

/**
 * Archives every account's records that its retention lets go, kind by kind (OTPs, messages,
 * campaign recipients: src/db/queries/otp-archives.ts `archivableOtps`,
 * src/db/queries/archives.ts `archivableMessages`, src/db/queries/recipient-archives.ts
 * `archivableRecipients`: final, made — or, a campaign's recipients, finished — before
 * {@link archiveCutoff} of `message_retention_days` — or `MESSAGE_RETENTION_DAYS`), oldest first,
 * at most {@link MAX_PER_RUN} a run. Each object is written to R2 before its rows are deleted, so
 * a failure leaves the rows for the next run (and at worst an object no archive row lists).
 * @param now epoch ms. @throws Error when R2 or D1 refuses (the cron job's log; the next hour
 *   tries again).
 */
export async function archiveMessages(env: Env, db: Db, now: number): Promise<ArchiveRun> {
  const done: ArchiveRun = { archives: 0, messages: 0, otps: 0, campaign_recipients: 0 };
  const fallback = readConfig(env).MESSAGE_RETENTION_DAYS;
  for (const account of await retentionOfAccounts(db, fallback)) {
    const rule: ArchiveRule = {
      before: archiveCutoff(now, account.days),
      now,
      otpSendWindowMs: OTP_RULES.perNumberWindowMs,
      waiting: WAITING_STATUSES,
      finishedCampaign: FINISHED_CAMPAIGN_STATUSES,
      messageEventTypes: MESSAGE_EVENT_TYPES,
    };
    // OTPs before messages (an OTP's messages stay while it does), messages before campaign
    // recipients (a campaign's stay while any of its messages does): a run can move all three.
    await archiveAccount(env, db, account.id, OTP_SOURCE, rule, done);
    await archiveAccount(env, db, account.id, MESSAGE_SOURCE, rule, done);
    await archiveAccount(env, db, account.id, RECIPIENT_SOURCE, rule, done);
    if (archived(done) >= MAX_PER_RUN) break;
  }
  return done;
}

/**
 * Archives the account's rows of `source` that `rule` lets go, one object per group (UTC day, and
 * campaign: {@link groupOf}) or per {@link MAX_LINES}, while the run is under {@link MAX_PER_RUN}.
 * Adds what it did to `done`.
 */
async function archiveAccount<Row extends ArchivableRow>(
  env: Env,
  db: Db,
  accountId: string,
  source: ArchiveSource<Row>,
  rule: ArchiveRule,
  done: ArchiveRun,
): Promise<void> {
  let after: Row | null = null;
  let pending: Row[] = [];
  while (archived(done) + pending.length < MAX_PER_RUN) {
    const rows: Row[] = await source.read(db, accountId, rule, after, READ_BATCH);
    for (const row of rows) {
      const first = pending[0];
      if (first && (groupOf(source, first) !== groupOf(source, row) || pending.length >= MAX_LINES)) {
        await archiveDay(env, db, source, pending, rule, done);
        pending = [];
      }
      pending.push(row);
    }
    after = rows.at(-1) ?? after;
    if (rows.length < READ_BATCH) break;
  }
  if (pending.length > 0) await archiveDay(env, db, source, pending, rule, done);
}

/**
 * What puts rows in one archive: their UTC day, and their campaign when the source archives
 * campaigns apart.
 */
function groupOf<Row extends ArchivableRow>(source: ArchiveSource<Row>, row: Row): string {
  return `${utcDay(row.createdAt)} ${source.campaignOf?.(row) ?? ""}`;
}

/**
 * Writes `rows` (one account's, of one kind and one group, {@link groupOf}) as one archive object,
 * then records the archive and deletes the rows; a row that changed in between stays in D1 and its
 * line is taken out of the object again. Adds what it did to `done`.
 */
async function archiveDay<Row extends ArchivableRow>(
  env: Env,
  db: Db,
  source: ArchiveSource<Row>,
  rows: Row[],
  rule: ArchiveRule,
  done: ArchiveRun,
): Promise<void> {
  const [first] = rows;
  if (!first) return;
  const id = `arc_${crypto.randomUUID().replaceAll("-", "")}`;
  const day = utcDay(first.createdAt);
  const objectKey = `${first.accountId}/${day}/${id}.ndjson.gz`;
  const lines = (kept: Row[]) => kept.map((row) => source.line(row, rule.now));
  const body = await gzipLines(lines(rows));
  await env.ARCHIVES.put(objectKey, body, { httpMetadata: ARCHIVE_HTTP_METADATA });
  const archive = {
    id,
    accountId: first.accountId,
    kind: source.kind,
    campaignId: source.campaignOf?.(first) ?? null,
    day,
    objectKey,
    messageCount: rows.length,
    bytes: body.byteLength,
    createdAt: rule.now,
  };
  let deleted: Set<string>;
  try {
    deleted = new Set(await source.record(db, archive, rows, rule));
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
  done[source.kind] += deleted.size;
}

/** How an archive object is stored: NDJSON, gzip-encoded (what `GET /v1/account/archives/{id}` serves). */
export const ARCHIVE_HTTP_METADATA = { contentType: "application/x-ndjson", contentEncoding: "gzip" };
