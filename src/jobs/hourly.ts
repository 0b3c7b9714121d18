import { archiveMessages } from "../archives/archive";
import { resumeStalledCampaigns } from "../campaigns/materialise";
import { readConfig } from "../config";
import type { Db } from "../db/client";
import { accountDatabasesAtRest, directoryOf } from "../db/databases";
import { purgeChecks } from "../db/queries/contact-checks";
import { purgeExpiredRoutes } from "../db/queries/directory";
import { purgeEvents } from "../db/queries/events";
import { purgeExpiredIdempotencyKeys } from "../db/queries/idempotency";
import { purgeLinkTokens } from "../db/queries/link-tokens";
import { purgeOtpSends } from "../db/queries/otp-sends";
import { purgeReverseGuesses } from "../db/queries/reverse-guesses";
import { purgeDeliveryHistory } from "../db/queries/webhook-deliveries";
import { requeueStale } from "../delivery/reconcile";
import { completePendingErasures } from "../erasures/erase";
import { EVENT_RETENTION_MS } from "../events/record";
import { republishUndelivered } from "../events/sweep";
import { log } from "../lib/log";
import { LINK_TOKEN_RETENTION_MS } from "../links/tokens";
import { sweepIncomingMedia, sweepOutgoingMedia } from "../messages/media-retention";
import { completeFinishedCampaigns } from "../moves/campaign";
import { CONTACT_CHECK_TTL_MS } from "../number-checks/check";
import { OTP_RULES } from "../otp/code";
import { REVERSE_RULES } from "../otp/reverse";
import { sealClearSecrets } from "../webhooks/secret";
import { requeueOverdueDeliveries } from "../webhooks/sweep";

// The hourly housekeeping: the Worker's cron trigger runs every job (src/index.ts), and
// `POST /admin/jobs/{name}` runs one now (docs/retention.md, Hourly jobs), for operators and
// for `wrangler dev`, which runs no cron.

/**
 * One hourly housekeeping job: `name` (snake_case) is how its failure is logged; `run` does its
 * work in one account database, and `directory`, when it has one, its work in the directory
 * (`DB`), once per run before the account databases'.
 */
export interface HousekeepingJob {
  name: string;
  run(env: Env, db: Db): Promise<unknown>;
  directory?(env: Env): Promise<unknown>;
}

/**
 * The hourly housekeeping jobs, in the order they run; each reads the clock (epoch ms) when it
 * starts. None depends on another having run: each is a sweep that the next hour repeats. The
 * `purge_*` jobs enforce the retentions of docs/retention.md, Data retention; those built on
 * src/db/queries/purge.ts `purgeBefore` delete in bounded chunks and answer `{ deleted, more }`.
 */
export const HOURLY_JOBS: readonly HousekeepingJob[] = [
  {
    name: "purge_idempotency_keys",
    run: (_env, db) => purgeExpiredIdempotencyKeys(db, Date.now()),
    // The admin API's (src/middleware/idempotency.ts `adminIdempotency`).
    directory: (env) => purgeExpiredIdempotencyKeys(directoryOf(env), Date.now()),
  },
  { name: "purge_events", run: (_env, db) => purgeEvents(db, Date.now() - EVENT_RETENTION_MS) },
  {
    name: "purge_delivery_history",
    run: (_env, db) => purgeDeliveryHistory(db, Date.now() - EVENT_RETENTION_MS),
  },
  { name: "purge_contact_checks", run: (_env, db) => purgeChecks(db, Date.now() - CONTACT_CHECK_TTL_MS) },
  {
    name: "purge_reverse_guesses",
    run: (_env, db) => purgeReverseGuesses(db, Date.now() - REVERSE_RULES.guessRetentionMs),
  },
  { name: "purge_otp_sends", run: (_env, db) => purgeOtpSends(db, Date.now() - OTP_RULES.perNumberWindowMs) },
  {
    name: "purge_link_tokens",
    run: (_env, db) => purgeLinkTokens(db, Date.now() - LINK_TOKEN_RETENTION_MS),
    // Their routes (src/db/directory-schema.ts `directoryRoutes`).
    directory: (env) => purgeExpiredRoutes(directoryOf(env), Date.now()),
  },
  { name: "requeue_stale_messages", run: (env, db) => requeueStale(env, db, Date.now()) },
  { name: "republish_undelivered_events", run: (env, db) => republishUndelivered(env, db, Date.now()) },
  { name: "requeue_overdue_deliveries", run: (env, db) => requeueOverdueDeliveries(env, db, Date.now()) },
  { name: "seal_webhook_secrets", run: (env, db) => sealClearSecrets(env, db) },
  { name: "resume_stalled_campaigns", run: (env, db) => resumeStalledCampaigns(env, db, Date.now()) },
  { name: "complete_finished_campaigns", run: (env, db) => completeFinishedCampaigns(env, db) },
  {
    name: "expire_incoming_media",
    run: (env, db) => sweepIncomingMedia(env.MEDIA, db, Date.now(), readConfig(env).MEDIA_RETENTION_DAYS),
  },
  {
    name: "expire_outgoing_media",
    run: (env, db) => sweepOutgoingMedia(env.MEDIA, db, Date.now(), readConfig(env).MEDIA_RETENTION_DAYS),
  },
  { name: "complete_erasures", run: (env, db) => completePendingErasures(env, db, Date.now()) },
  // After the media sweeps: a message whose stored media is still kept waits for them.
  { name: "archive_messages", run: (env, db) => archiveMessages(env, db, Date.now()) },
];

/**
 * Runs the directory's part of each of `jobs` (`directory`), then `jobs` one after another on every
 * account database (src/db/databases.ts), each on its own: a job that throws (D1 refusing its statement, a queue refusing its messages) is logged as
 * one JSON line on `console.error`, `{ level: "error", event: "cron_job_failed", job, database,
 * error, cause? }` (`cause` when the error has one, such as D1's own message under drizzle's),
 * and the next runs. Never throws; a failed job's work waits for the next hour's run. One at a
 * time within a database, as before (a D1 database has one writer); the databases side by side. A
 * database a move under way copies an account from or to is left alone until the next run
 * (src/db/databases.ts `accountDatabasesAtRest`).
 */
export async function runHousekeeping(env: Env, jobs: readonly HousekeepingJob[]): Promise<void> {
  let databases: Awaited<ReturnType<typeof accountDatabasesAtRest>>;
  try {
    databases = await accountDatabasesAtRest(env);
  } catch (error) {
    // Without the directory no database is known to be at rest: the next hour's run does the work.
    return log.error("cron_job_failed", { job: "*", database: "DB", error });
  }
  for (const job of jobs) {
    try {
      await job.directory?.(env);
    } catch (error) {
      logFailure(job, "DB", error);
    }
  }
  await Promise.all(
    databases.map(async ({ name, db, moving }) => {
      if (moving) return log.info("cron_database_skipped", { database: name, reason: "account_move" });
      for (const job of jobs) {
        try {
          await job.run(env, db);
        } catch (error) {
          logFailure(job, name, error);
        }
      }
    }),
  );
}

/** A job's failure in database `database`, logged as `cron_job_failed` (with D1's own message as `cause` when the error has one). */
function logFailure(job: HousekeepingJob, database: string, error: unknown): void {
  const cause = error instanceof Error && error.cause !== undefined ? String(error.cause) : undefined;
  log.error("cron_job_failed", { job: job.name, database, error, cause });
}

/** What running one job now did: its name, when it started and ended (epoch ms), and what it returned. */
export interface JobRun {
  name: string;
  startedAt: number;
  finishedAt: number;
  /**
   * The job's own answer (a count, `{ deleted, more }`, the ids it touched…) over every database:
   * their answers added up ({@link combined}); null when it gives none.
   */
  result: unknown;
  /**
   * Each database's own answer, by the binding's name: the directory's (`DB`) first for a job that
   * has work there, then each account database's; `skipped` when a move under way left it alone.
   */
  databases: { database: string; result: unknown; skipped: boolean }[];
}

/**
 * Runs the hourly job `name` ({@link HOURLY_JOBS}) once, now, on every account database in turn.
 * @returns what it did, or null when no job has that name.
 * @throws what the job throws (D1 refusing its statement, a queue refusing its messages).
 */
export async function runJob(env: Env, name: string): Promise<JobRun | null> {
  const job = HOURLY_JOBS.find((each) => each.name === name);
  if (!job) return null;
  const startedAt = Date.now();
  const databases: JobRun["databases"] = [];
  if (job.directory)
    databases.push({ database: "DB", result: (await job.directory(env)) ?? null, skipped: false });
  for (const { name: database, db, moving } of await accountDatabasesAtRest(env))
    databases.push({ database, result: moving ? null : ((await job.run(env, db)) ?? null), skipped: moving });
  const result = databases
    .filter((d) => d.database !== "DB")
    .map((d) => d.result)
    .reduce(combined, null);
  return { name, startedAt, finishedAt: Date.now(), result, databases };
}

/**
 * Two databases' answers of one job as one: numbers added, booleans or-ed (`more`), lists joined,
 * objects field by field; null gives way to the other.
 */
export function combined(a: unknown, b: unknown): unknown {
  if (a === null || a === undefined) return b ?? null;
  if (b === null || b === undefined) return a;
  if (typeof a === "number" && typeof b === "number") return a + b;
  if (typeof a === "boolean" && typeof b === "boolean") return a || b;
  if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
  if (typeof a === "object" && typeof b === "object") {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [key, value] of Object.entries(b as Record<string, unknown>))
      out[key] = combined(out[key], value);
    return out;
  }
  return b;
}
