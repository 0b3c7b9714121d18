import { z } from "zod";
import type { Db } from "../db/client";
import { databaseFor } from "../db/databases";
import { type AppRow, findApp } from "../db/queries/apps";
import {
  type AttemptWithMessage,
  attemptsOfCode,
  claimAttempt,
  completeAttempt,
  findAttempt,
  findAttemptOn,
  messageOfClaim,
  type OtpAttemptRow,
  releaseClaim,
  takeOverClaim,
} from "../db/queries/otp-attempts";
import { findOtp, type OtpRow } from "../db/queries/otps";
import { ApiError } from "../errors";
import { log } from "../lib/log";
import { dropPoison, redeliveryDelaySeconds } from "../lib/queue";
import { sendMessages } from "../messages/send";
import {
  type Channel,
  canAddress,
  canCarryCode,
  channelIdsAfter,
  channelsOf,
  codeChannelOf,
  reachesNumber,
} from "./channels";
import { codeSendRequest } from "./code-message";
import { otpStatusAt } from "./status";

// Failover of a code to the app's next channel (docs/otp.md, Channels and failover).
//
// Each attempt that has a channel after it is watched by a job on the failover queue, sent with
// `delaySeconds`. A job decides from facts only: the OTP's row and the status of the attempt's
// message in D1 ({@link verdictOf}). Delivered or read: stop. Failed, or no delivered ack by the
// deadline (`failover_after_seconds` after the attempt): the same code goes out on the next
// connected channel after the attempt's own, in list order, and a job watches that attempt.
// Otherwise the job checks again, at growing intervals (1, 2, 4, … s, capped at the deadline), so a
// failed send fails over within seconds and a slow ack costs a few cheap reads.
//
// The code is stored only as an HMAC, so the clear code travels in the job, as it travels in the
// outbound queue message; it is never written to D1 or logged.
//
// Exactly one message per attempt: the next attempt is claimed first, with one conditional INSERT
// (otp_attempts: unique (otp_id, send_seq, session_id), so one code goes out on a channel once),
// only while the OTP is pending, unexpired and on the job's code; only the job whose INSERT took
// sends the message, then sets the attempt's message_id. A redelivered or duplicate job finds the
// attempt already there: with its message, it goes on watching it; without one (its maker may
// still be sending), it waits until the claim is {@link CLAIM_LEASE_MS} old and then takes it over
// with a compare-and-set on the claim's time. The taker first looks for a message the first maker
// made before it stopped (the OTP's message on that session since the claim), adopts it if there
// is one, and sends only if there is none. So a job that crashed between the claim and the send
// is finished by its redelivery, and the same attempt is never sent twice unless a send outlives
// the lease (30 s, against a send's few D1 statements and one queue call).

/** Name of the failover queue (wrangler.toml). */
export const OTP_FAILOVER_QUEUE_NAME = "chatapp-otp-failover";

/** How long a claim without its message belongs to its maker before another job may take it over. */
export const CLAIM_LEASE_MS = 30_000;

/** Seconds before the first check of an attempt (then 2, 4, 8, … until the deadline). */
const FIRST_CHECK_SECONDS = 1;

/** A failover queue message: watch attempt `attemptSeq` of code number `sendSeq` of an OTP. */
export interface FailoverJob {
  otpId: string;
  accountId: string;
  /** The code's number (`otps.sends` when it was sent): a resend makes the job stale. */
  sendSeq: number;
  /** The attempt watched (`otp_attempts.seq`). */
  attemptSeq: number;
  /** The code in clear: only here and in the outbound queue message, never in D1. */
  code: string;
  /** Epoch ms: without a `delivered` (or `read`) ack by then, the code goes to the next channel. */
  deadline: number;
  /** Seconds of the last wait; the next one doubles it (capped at the deadline). */
  wait: number;
}

const JobSchema = z.object({
  otpId: z.uuid(),
  accountId: z.uuid(),
  sendSeq: z.int().min(1),
  attemptSeq: z.int().min(1),
  code: z.string().regex(/^[0-9]{1,64}$/),
  deadline: z.int(),
  wait: z.int().min(1),
}) satisfies z.ZodType<FailoverJob>;

/** A job to put on the failover queue, `delaySeconds` from now. */
export interface NextJob {
  job: FailoverJob;
  delaySeconds: number;
}

/** What a job decides from the facts ({@link verdictOf}). */
export type Verdict =
  | {
      kind: "stop";
      reason: "otp_gone" | "verified" | "failed" | "expired" | "code_replaced" | "no_message" | "delivered";
    }
  | { kind: "fail_over"; reason: "message_failed" | "no_ack_in_time" }
  | { kind: "wait"; seconds: number };

/**
 * What a job watching an attempt decides at `now` (epoch ms), from the OTP's row and the attempt
 * with its message's status (null when gone):
 * - stop when the OTP is gone, no longer pending (verified, failed, expired, also when
 *   `expires_at` has passed unrecorded), or on another code (a resend: `sends` ≠ the job's
 *   `sendSeq`), or the attempt has no message, or its message is `delivered` or `read`;
 * - fail over when the message is `failed`, or when the deadline has come without a delivered ack
 *   (a message still `queued` or `sent`, its gateway's answer unknown or its phone offline, is no
 *   failure before that);
 * - else wait: twice the last wait, at most the seconds left until the deadline, at least 1.
 */
export function verdictOf(
  job: FailoverJob,
  otp: OtpRow | null,
  attempt: AttemptWithMessage | null,
  now: number,
): Verdict {
  if (!otp) return { kind: "stop", reason: "otp_gone" };
  const status = otpStatusAt(otp, now);
  if (status !== "pending") return { kind: "stop", reason: status };
  if (otp.sends !== job.sendSeq) return { kind: "stop", reason: "code_replaced" };
  if (!attempt?.messageId || !attempt.status) return { kind: "stop", reason: "no_message" };
  if (attempt.status === "delivered" || attempt.status === "read")
    return { kind: "stop", reason: "delivered" };
  if (attempt.status === "failed") return { kind: "fail_over", reason: "message_failed" };
  if (now >= job.deadline) return { kind: "fail_over", reason: "no_ack_in_time" };
  const left = Math.ceil((job.deadline - now) / 1000);
  return { kind: "wait", seconds: Math.max(1, Math.min(job.wait * 2, left)) };
}

/**
 * The first job watching attempt `attemptSeq` of a code that just went out, or null when the
 * attempt's channel is the app's last (nothing to fail over to): deadline `failover_after_seconds`
 * from `sentAt` (epoch ms), first check in {@link FIRST_CHECK_SECONDS}.
 */
export function firstWatch(
  app: AppRow,
  attempt: { otpId: string; sendSeq: number; attemptSeq: number; sessionId: string; sentAt: number },
  code: string,
): NextJob | null {
  if (channelIdsAfter(app, attempt.sessionId).length === 0) return null;
  return {
    job: {
      otpId: attempt.otpId,
      accountId: app.accountId,
      sendSeq: attempt.sendSeq,
      attemptSeq: attempt.attemptSeq,
      code,
      deadline: attempt.sentAt + app.failoverAfterSeconds * 1000,
      wait: FIRST_CHECK_SECONDS,
    },
    delaySeconds: FIRST_CHECK_SECONDS,
  };
}

/** Puts `next` on the failover queue. */
export async function queueFailoverJob(env: Env, next: NextJob): Promise<void> {
  await env.OTP_FAILOVER_QUEUE.send(next.job, { delaySeconds: next.delaySeconds });
}

/**
 * Failover queue consumer: runs each job ({@link runFailoverJob}), queues the job it leads to (the
 * same attempt checked again, or the next attempt watched), then acks it. A job whose handling
 * throws (D1 or the queue unavailable) is retried with exponential backoff; a job redelivered or
 * run twice changes nothing twice. Poison messages are acked and logged.
 */
export async function handleOtpFailoverBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of dropPoison(batch, JobSchema)) {
    try {
      const db = await databaseFor(env, message.body.accountId);
      const next = await runFailoverJob(env, db, message.body, Date.now());
      if (next) await queueFailoverJob(env, next);
      message.ack();
    } catch (error) {
      log.error("otp_failover_failed", {
        otp_id: message.body.otpId,
        attempt: message.body.attemptSeq,
        error,
      });
      message.retry({ delaySeconds: redeliveryDelaySeconds(message.attempts) });
    }
  }
}

/**
 * One failover job at `now` (epoch ms): reads the OTP and the watched attempt, decides
 * ({@link verdictOf}) and, on failover, sends the code on the next channel ({@link failOver}).
 * @returns the job to queue next, or null when the watch is over.
 */
export async function runFailoverJob(
  env: Env,
  db: Db,
  job: FailoverJob,
  now: number,
): Promise<NextJob | null> {
  const otp = await findOtp(db, job.accountId, job.otpId);
  const attempt = otp && (await findAttempt(db, job.accountId, job.otpId, job.attemptSeq));
  const verdict = verdictOf(job, otp, attempt, now);
  if (verdict.kind === "wait")
    return { job: { ...job, wait: verdict.seconds }, delaySeconds: verdict.seconds };
  if (verdict.kind === "stop" || !otp || !attempt) return null;
  return failOver(env, db, { job, otp, from: attempt }, now);
}

/** What one step of a failover led to. */
type Step =
  | { kind: "watch"; attempt: OtpAttemptRow; sessionId: string }
  | { kind: "again"; delaySeconds: number }
  | { kind: "refused" }
  | { kind: "stop" };

/**
 * Sends the job's code on the next channel after attempt `from`: the first of the app's channels
 * after `from`'s session, in list order, that is `connected`, can carry the code
 * ({@link canCarryCode}: a Cloud API session without the app's `otp_template` is skipped) and has
 * not had this code yet. A channel that refuses the send (disconnected meanwhile, deleted, its
 * template missing) is given back and the next one tried; a short balance (402) ends the failover.
 * When this job (an earlier run of it, or a duplicate) already made the next attempt, it carries
 * on from that one instead.
 * @returns the job watching the new attempt (null when it is on the app's last channel, or no
 *   channel is left), or this job again when another job holds the claim.
 */
async function failOver(
  env: Env,
  db: Db,
  step: { job: FailoverJob; otp: OtpRow; from: AttemptWithMessage },
  now: number,
): Promise<NextJob | null> {
  const { job, otp, from } = step;
  const app = await findApp(db, job.accountId, otp.appId);
  const to = otp.toNumber;
  if (!app || to === null) return null;
  const tried = await attemptsOfCode(db, job.otpId, job.sendSeq);
  const made = tried.find((a) => a.seq > job.attemptSeq);
  if (made) return nextJob(app, job, await resume(env, db, { app, otp, job, attempt: made }, now), now);

  const later = new Set(channelIdsAfter(app, from.sessionId));
  const triedOn = new Set(tried.map((a) => a.sessionId));
  const candidates = (await channelsOf(env, db, app)).filter(
    (c) =>
      later.has(c.sessionId) &&
      !triedOn.has(c.sessionId) &&
      c.status === "connected" &&
      canCarryCode(c, app) &&
      canAddress(c, to),
  );
  for (const channel of candidates) {
    if (!(await reachesNumber(db, channel, to, now))) continue;
    const claim = {
      accountId: job.accountId,
      otpId: job.otpId,
      sendSeq: job.sendSeq,
      sessionId: channel.sessionId,
    };
    const claimed = await claimAttempt(db, claim, now);
    let result: Step;
    if (claimed) {
      result = await send(env, db, { app, otp, job, attempt: claimed, channel });
    } else {
      const existing = await findAttemptOn(db, job.otpId, job.sendSeq, channel.sessionId);
      // Nothing to claim: the OTP moved on (verified, expired, resent) since it was read.
      if (!existing) return null;
      result = await resume(env, db, { app, otp, job, attempt: existing }, now);
    }
    if (result.kind === "refused") continue;
    return nextJob(app, job, result, now);
  }
  // No channel left: the code stays on the channels it went out on.
  return null;
}

/** The queue message a step leads to. */
function nextJob(app: AppRow, job: FailoverJob, step: Step, now: number): NextJob | null {
  switch (step.kind) {
    case "watch":
      return firstWatch(
        app,
        {
          otpId: job.otpId,
          sendSeq: job.sendSeq,
          attemptSeq: step.attempt.seq,
          sessionId: step.sessionId,
          sentAt: Math.min(step.attempt.createdAt, now),
        },
        job.code,
      );
    case "again":
      return { job, delaySeconds: step.delaySeconds };
    case "refused":
      // The attempt this job found was given back: decide again in a second.
      return { job, delaySeconds: 1 };
    case "stop":
      return null;
  }
}

/**
 * Carries on from attempt `attempt` of the job's code, which another run made: watched when it
 * has its message; when it has none, its maker may still be sending, so the job comes back once
 * the claim is {@link CLAIM_LEASE_MS} old, then takes it over and finishes it: adopting the
 * message the maker made if there is one, sending only if there is none.
 */
async function resume(
  env: Env,
  db: Db,
  input: { app: AppRow; otp: OtpRow; job: FailoverJob; attempt: OtpAttemptRow },
  now: number,
): Promise<Step> {
  const { app, job, attempt } = input;
  if (attempt.messageId) return { kind: "watch", attempt, sessionId: attempt.sessionId };
  const leaseEnds = attempt.createdAt + CLAIM_LEASE_MS;
  if (now < leaseEnds)
    return { kind: "again", delaySeconds: Math.max(1, Math.ceil((leaseEnds - now) / 1000)) };
  const claim = { accountId: job.accountId, otpId: job.otpId, seq: attempt.seq, sendSeq: job.sendSeq };
  if (!(await takeOverClaim(db, { ...claim, claimedAt: attempt.createdAt }, CLAIM_LEASE_MS, now)))
    return { kind: "again", delaySeconds: 1 };
  const taken = { ...attempt, createdAt: now };
  const made = await messageOfClaim(db, {
    accountId: job.accountId,
    otpId: job.otpId,
    sessionId: attempt.sessionId,
    since: attempt.createdAt,
  });
  if (made) {
    await completeAttempt(db, { ...claim, messageId: made });
    return { kind: "watch", attempt: taken, sessionId: attempt.sessionId };
  }
  const channel = (await channelsOf(env, db, app)).find((c) => c.sessionId === attempt.sessionId);
  if (channel?.status !== "connected" || !canCarryCode(channel, app)) {
    await releaseClaim(db, job.otpId, attempt.seq);
    return { kind: "refused" };
  }
  return send(env, db, { ...input, attempt: taken, channel });
}

/**
 * Sends the code as claimed attempt `attempt` on `channel` (charged like any message by
 * `sendMessages`) and completes the attempt with its message. A refused send (an ApiError) gives
 * the claim back: `refused`, or `stop` for a short balance. Any other error is thrown with the
 * claim kept: the job's retry takes it over once the lease has passed.
 */
async function send(
  env: Env,
  db: Db,
  input: { app: AppRow; otp: OtpRow; job: FailoverJob; attempt: OtpAttemptRow; channel: Channel },
): Promise<Step> {
  const { app, otp, job, attempt, channel } = input;
  if (otp.toNumber === null) return { kind: "stop" };
  let messageId: string | undefined;
  try {
    const codeChannel = await codeChannelOf(env, db, app, channel);
    const sent = await sendMessages(
      env,
      db,
      codeSendRequest(app, codeChannel, { otpId: otp.id, toNumber: otp.toNumber, code: job.code }),
    );
    messageId = sent.rows[0]?.id;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    await releaseClaim(db, job.otpId, attempt.seq);
    log.warn("otp_failover_refused", { otp_id: job.otpId, session_id: channel.sessionId, error: error.code });
    return error.code === "insufficient_balance" ? { kind: "stop" } : { kind: "refused" };
  }
  if (!messageId) throw new Error(`OTP ${otp.id}: the failover send made no message`);
  await completeAttempt(db, {
    accountId: job.accountId,
    otpId: job.otpId,
    seq: attempt.seq,
    sendSeq: job.sendSeq,
    messageId,
  });
  return { kind: "watch", attempt: { ...attempt, messageId }, sessionId: channel.sessionId };
}
