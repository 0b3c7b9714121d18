import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runDurableObjectAlarm,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Db } from "../src/db/client";
import { claimAttempt } from "../src/db/queries/otp-attempts";
import type { OtpRow } from "../src/db/queries/otps";
import worker from "../src/index";
import {
  CLAIM_LEASE_MS,
  type FailoverJob,
  OTP_FAILOVER_QUEUE_NAME,
  runFailoverJob,
  verdictOf,
} from "../src/otp/failover";
import { accountD1, accountDb } from "./databases";
import { EVENTS } from "./event-fixtures";
import {
  type ApiResponse,
  call,
  createAccount,
  expectProblem,
  phoneText,
  sessionStub,
  TIMESTAMP,
  waitFor,
} from "./helpers";
import {
  connectedSession,
  driveAlarmUntil,
  getMessage,
  ledgerOf,
  type Message,
  sessionStorage,
} from "./message-fixtures";

// One-time codes on several channels (docs/otp.md, Channels and failover): the first
// connected channel sends, and a code with no delivered ack in time, or whose message failed, goes
// out again, the same code, on the next connected channel. Failover jobs are driven here directly
// (runFailoverJob with the clock of the test), with deadlines already past where a test needs the
// timeout; the queue's own jobs run beside them in the background, with the app's 300 s deadline,
// so they never fail over during a test unless a message fails. What a session decides on its
// alarm (writing a send to D1, a receipt) is driven too; only the queues' deliveries are waited for.

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const TO = "+14155552671";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Attempt {
  session_id: string;
  message_id: string | null;
  send: number;
  status: string | null;
  reason: string | null;
  created_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  read_at: string | null;
  failed_at: string | null;
}

interface Otp {
  id: string;
  status: string;
  message_id: string | null;
  sends_remaining: number;
  attempts: Attempt[];
}

interface Fixture {
  key: string;
  accountId: string;
  sessions: string[];
  appId: string;
  /** The account's database, as Drizzle and as raw D1. */
  db: Db;
  d1: D1Database;
}

/** An account (balance 100) with `count` connected sandbox sessions and an app using them as its channels, in order. */
async function failoverApp(count: number, app: Record<string, unknown> = {}): Promise<Fixture> {
  const { key, accountId } = await createAccount(100);
  const sessions: string[] = [];
  for (let i = 0; i < count; i++) sessions.push((await connectedSession(key)).id);
  const created = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: {
      name: "Acme",
      sender_id: SENDER,
      message_template: "Your {{app_name}} code is {{code}}.",
      channels: sessions,
      failover_after_seconds: 300,
      ...app,
    },
  });
  expect(created.status).toBe(201);
  return {
    key,
    accountId,
    sessions,
    appId: created.body.data.id,
    db: await accountDb(accountId),
    d1: await accountD1(accountId),
  };
}

const send = (f: Fixture, to = TO) =>
  call<{ data: Otp }>("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body: { to_number: to } });
const show = async (f: Fixture, id: string): Promise<Otp> => {
  const res = await call<{ data: Otp }>("GET", `/v1/otp/${id}`, { key: f.key });
  expect(res.status).toBe(200);
  return res.body.data;
};

async function setPhone(f: Fixture, session: string, online: boolean): Promise<void> {
  const res = await call("POST", `/sandbox/sessions/${session}/phone`, { key: f.key, body: { online } });
  expect(res.status).toBe(200);
}

/** Sends a code that must be accepted; returns the OTP. */
async function sent(f: Fixture, to = TO): Promise<Otp> {
  const res = await send(f, to);
  expect(res.status).toBe(201);
  return res.body.data;
}

/** The code message `messageId` carried, read where the recipient reads it: the sandbox phone of `session`. */
async function codeOn(session: string, messageId: string | null, to = TO): Promise<string> {
  const match = /^Your Acme code is (\d+)\.$/.exec(await phoneText(session, to, messageId));
  expect(match?.[1], `message ${messageId} on ${session}`).toMatch(/^\d+$/);
  return match?.[1] ?? "";
}

/**
 * Message `id` once D1 has it `sent` by `session`: the outbound queue hands it to the session
 * (the runtime delivers it: waited for), then the session's alarm is driven, so the send is
 * written to D1 now rather than after the object's coalescing delay.
 */
async function sentOn(f: Fixture, session: string, id: string | null): Promise<Message> {
  await waitFor(async () => (await sessionStorage(session)).outbox.some((entry) => entry.id === id), {
    reason: `message ${id} to reach session ${session} (the outbound queue)`,
  });
  await driveAlarmUntil(session, async () => (await getMessage(f.key, id ?? "")).status === "sent");
  return getMessage(f.key, id ?? "");
}

/** A failover job watching attempt `attemptSeq` of code `sendSeq`, its deadline `deadline` (default: already past). */
function jobFor(f: Fixture, otp: Otp, code: string, over: Partial<FailoverJob> = {}): FailoverJob {
  return {
    otpId: otp.id,
    accountId: f.accountId,
    sendSeq: 1,
    attemptSeq: 1,
    code,
    deadline: Date.now() - 1,
    wait: 1,
    ...over,
  };
}

/** The OTP's attempts straight from D1, oldest first. */
async function storedAttempts(f: Fixture, otpId: string) {
  const { results } = await f.d1
    .prepare("SELECT seq, send_seq, session_id, message_id FROM otp_attempts WHERE otp_id = ? ORDER BY seq")
    .bind(otpId)
    .all<{ seq: number; send_seq: number; session_id: string; message_id: string | null }>();
  return results;
}

/** The OTP's messages straight from D1, oldest first. */
async function otpMessages(f: Fixture, otpId: string) {
  const { results } = await f.d1
    .prepare(
      "SELECT id, chatapp_session_id, status, cost FROM messages WHERE otp_id = ? ORDER BY created_at, rowid",
    )
    .bind(otpId)
    .all<{ id: string; chatapp_session_id: string; status: string; cost: number }>();
  return results;
}

/**
 * Asserts that no row of the OTP's messages, attempts, its own row or the account's events holds
 * `code` (uuids and timestamps taken out first: six digits can occur in them by chance).
 */
async function expectCodeNowhereInD1(f: Fixture, otpId: string, code: string): Promise<void> {
  const tables = await f.d1.batch([
    f.d1.prepare("SELECT * FROM messages WHERE otp_id = ?").bind(otpId),
    f.d1.prepare("SELECT * FROM otps WHERE id = ?").bind(otpId),
    f.d1.prepare("SELECT * FROM otp_attempts WHERE otp_id = ?").bind(otpId),
    f.d1.prepare(`SELECT * FROM ${EVENTS} WHERE account_id = ?`).bind(f.accountId),
  ]);
  const text = JSON.stringify(tables.map((t) => t.results))
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/g, "<timestamp>")
    .replace(/evt_[0-9a-f]{32}/g, "<event>")
    // Epoch-ms times: a code's digits could occur inside one by chance.
    .replace(/\d{10,}/g, "<time>");
  expect(text).not.toContain(code);
}

describe("the first connected channel", () => {
  it("sends on the first connected channel, skipping one that is not, and records the attempt", async () => {
    const f = await failoverApp(3);
    const [a, b] = f.sessions as [string, string, string];
    const off = await call("PATCH", `/v1/chatapp/sessions/${a}/disconnect`, { key: f.key });
    expect(off.status).toBe(200);

    const otp = await sent(f);
    expect(otp.attempts).toEqual([
      {
        session_id: b,
        message_id: otp.message_id,
        send: 1,
        status: "queued",
        reason: null,
        created_at: expect.stringMatching(TIMESTAMP),
        sent_at: null,
        delivered_at: null,
        read_at: null,
        failed_at: null,
      },
    ]);
    expect(await otpMessages(f, otp.id)).toEqual([
      { id: otp.message_id, chatapp_session_id: b, status: expect.any(String), cost: 1 },
    ]);
    expect(await storedAttempts(f, otp.id)).toEqual([
      { seq: 1, send_seq: 1, session_id: b, message_id: otp.message_id },
    ]);
  });

  it("is 409 session_not_connected when no channel is connected, and keeps nothing", async () => {
    const f = await failoverApp(2);
    for (const session of f.sessions)
      await call("PATCH", `/v1/chatapp/sessions/${session}/disconnect`, { key: f.key });
    const res = await send(f);
    const problem = expectProblem(res as ApiResponse, 409, "session_not_connected");
    expect(problem.detail).toBe(
      "None of the app's channels is connected (disconnected, disconnected); one must be to send.",
    );
    const count = await f.d1
      .prepare("SELECT COUNT(*) AS n FROM otps WHERE account_id = ?")
      .bind(f.accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
    expect(await ledgerOf(f.accountId)).toEqual([expect.objectContaining({ kind: "credit" })]);
  });
});

describe("channels the network limits (docs/sessions.md, Session health)", () => {
  const timelock = (f: Fixture, session: string) =>
    call("POST", `/sandbox/sessions/${session}/health`, {
      key: f.key,
      body: { timelock: { active: true, until: null }, cap: null, quality: null },
    });

  it("a code to a cold number passes over a limited first channel; one who wrote to it is sent there", async () => {
    const f = await failoverApp(2);
    const [a, b] = f.sessions as [string, string];
    expect((await timelock(f, a)).status).toBe(200);
    const cold = await sent(f);
    expect(cold.attempts.map((x) => x.session_id)).toEqual([b]);

    const warm = "+14155552672";
    const inbound = await call("POST", `/sandbox/sessions/${a}/inbound`, {
      key: f.key,
      body: { from_number: warm, type: "text", content: "hi" },
    });
    expect(inbound.status).toBe(201);
    expect((await sent(f, warm)).attempts.map((x) => x.session_id)).toEqual([a]);
  });

  it("with every connected channel limited, a cold number is 409 session_limited and nothing is kept", async () => {
    const f = await failoverApp(2);
    for (const session of f.sessions) expect((await timelock(f, session)).status).toBe(200);
    const problem = expectProblem((await send(f)) as ApiResponse, 409, "session_limited");
    expect(problem).toMatchObject({ limit: "timelock", until: null, cold: [TO] });
    const count = await f.d1
      .prepare("SELECT COUNT(*) AS n FROM otps WHERE account_id = ?")
      .bind(f.accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });

  it("a failover passes over a limited channel to the next", async () => {
    const f = await failoverApp(3);
    const [a, b, c] = f.sessions as [string, string, string];
    await setPhone(f, a, false);
    const otp = await sent(f);
    await sentOn(f, a, otp.message_id);
    const code = await codeOn(a, otp.message_id);
    expect((await timelock(f, b)).status).toBe(200);
    expect(await runFailoverJob(env, f.db, jobFor(f, otp, code), Date.now())).toBeNull();
    expect((await storedAttempts(f, otp.id)).map((x) => x.session_id)).toEqual([a, c]);
  });
});

describe("failover after failover_after_seconds without a delivered ack", () => {
  it("sends the same code on the next connected channel, then the next, until one delivers", async () => {
    const f = await failoverApp(3);
    const [a, b, c] = f.sessions as [string, string, string];
    await setPhone(f, a, false);
    await setPhone(f, b, false);
    const otp = await sent(f);
    const first = await sentOn(f, a, otp.message_id);
    expect(first?.status).toBe("sent");
    const code = await codeOn(a, otp.message_id);

    // Before the deadline, a message still `sent` (its ack held) is no failure: check again later,
    // twice as late (2 s), at most until the deadline.
    const early = jobFor(f, otp, code, { deadline: Date.now() + 300_000 });
    expect(await runFailoverJob(env, f.db, early, Date.now())).toEqual({
      job: { ...early, wait: 2 },
      delaySeconds: 2,
    });
    expect(
      await runFailoverJob(env, f.db, { ...early, wait: 256, deadline: Date.now() + 30_500 }, Date.now()),
    ).toMatchObject({ delaySeconds: 31, job: { wait: 31 } });
    expect(await storedAttempts(f, otp.id)).toHaveLength(1);

    // Past the deadline: the code goes out on b, and a job watches b (c comes after it).
    const before = Date.now();
    const next = await runFailoverJob(env, f.db, jobFor(f, otp, code), Date.now());
    const attempts = await storedAttempts(f, otp.id);
    expect(attempts).toEqual([
      { seq: 1, send_seq: 1, session_id: a, message_id: otp.message_id },
      { seq: 2, send_seq: 1, session_id: b, message_id: expect.stringMatching(UUID) },
    ]);
    const onB = attempts[1]?.message_id ?? "";
    expect(next).toEqual({
      job: {
        otpId: otp.id,
        accountId: f.accountId,
        sendSeq: 1,
        attemptSeq: 2,
        code,
        deadline: expect.any(Number),
        wait: 1,
      },
      delaySeconds: 1,
    });
    // 300 s (the app's failover_after_seconds) after the attempt.
    expect(next?.job.deadline).toBeGreaterThanOrEqual(before + 300_000);
    expect(next?.job.deadline).toBeLessThanOrEqual(Date.now() + 300_000);
    // The same code, not a new one; the OTP's message is the latest.
    expect(await codeOn(b, onB)).toBe(code);
    expect((await show(f, otp.id)).message_id).toBe(onB);

    // b's phone is offline too: past its deadline, c. c is the last channel: nothing more to watch.
    await sentOn(f, b, onB);
    expect(await runFailoverJob(env, f.db, jobFor(f, otp, code, { attemptSeq: 2 }), Date.now())).toBeNull();
    const onC = (await storedAttempts(f, otp.id))[2]?.message_id ?? "";
    expect(await codeOn(c, onC)).toBe(code);
    await driveAlarmUntil(c, async () => (await show(f, otp.id)).attempts[2]?.status === "read");

    const shown = await show(f, otp.id);
    expect(shown.message_id).toBe(onC);
    expect(shown.attempts).toEqual([
      expect.objectContaining({ session_id: a, message_id: otp.message_id, send: 1, status: "sent" }),
      expect.objectContaining({
        session_id: b,
        message_id: onB,
        send: 1,
        status: "sent",
        delivered_at: null,
      }),
      {
        session_id: c,
        message_id: onC,
        send: 1,
        status: "read",
        reason: null,
        created_at: expect.stringMatching(TIMESTAMP),
        sent_at: expect.stringMatching(TIMESTAMP),
        delivered_at: expect.stringMatching(TIMESTAMP),
        read_at: expect.stringMatching(TIMESTAMP),
        failed_at: null,
      },
    ]);

    // Each message was charged once, as any message: 3 × 0.01.
    const charges = (await ledgerOf(f.accountId)).filter((e) => e.kind === "charge");
    expect(charges).toEqual([
      expect.objectContaining({ amount: -1, message_count: 1, balance_after: 9999 }),
      expect.objectContaining({ amount: -1, message_count: 1, balance_after: 9998 }),
      expect.objectContaining({ amount: -1, message_count: 1, balance_after: 9997 }),
    ]);

    // The code verifies, and the otp.verified event carries the attempts as the GET shows them.
    const verified = await call<{ data: Otp }>("POST", `/v1/otp/${otp.id}/verify`, {
      key: f.key,
      body: { code },
    });
    expect(verified.body.data.status).toBe("verified");
    expect(verified.body.data.attempts.map((x) => x.session_id)).toEqual([a, b, c]);
    const events = await call<{ data: { data: Otp }[] }>("GET", "/v1/events?filter[type]=otp.verified", {
      key: f.key,
    });
    expect(events.body.data[0]?.data.attempts).toEqual(verified.body.data.attempts);
    await expectCodeNowhereInD1(f, otp.id, code);
  });

  it("passes over channels that are not connected, and stops when none is left", async () => {
    const f = await failoverApp(3);
    const [a, b, c] = f.sessions as [string, string, string];
    await setPhone(f, a, false);
    const otp = await sent(f);
    await sentOn(f, a, otp.message_id);
    const code = await codeOn(a, otp.message_id);
    await call("PATCH", `/v1/chatapp/sessions/${b}/disconnect`, { key: f.key });

    // b is disconnected: c takes the code.
    expect(await runFailoverJob(env, f.db, jobFor(f, otp, code), Date.now())).toBeNull();
    expect((await storedAttempts(f, otp.id)).map((x) => x.session_id)).toEqual([a, c]);

    // Once c is down too and b still is, a second failover from a finds nothing left.
    await call("PATCH", `/v1/chatapp/sessions/${c}/disconnect`, { key: f.key });
    expect(await runFailoverJob(env, f.db, jobFor(f, otp, code, { attemptSeq: 2 }), Date.now())).toBeNull();
    expect(await storedAttempts(f, otp.id)).toHaveLength(2);
    expect(await otpMessages(f, otp.id)).toHaveLength(2);
  });
});

describe("failover when the message fails", () => {
  it("sends the code on the next channel within seconds, without waiting for the deadline", async () => {
    // The sandbox fails every message to a number ending in 0000 (recipient_not_on_chatapp); the
    // queue's own failover jobs (first check after 1 s) do the work here: the runtime delivers
    // them and the outbound queue's messages, so the test waits for those; each session's
    // failure is written to D1 on its alarm, which the test drives.
    const f = await failoverApp(2);
    const [a, b] = f.sessions as [string, string];
    const to = "+14155550000";
    const sentAt = Date.now();
    const otp = await sent(f, to);
    const shown = await waitFor(
      async () => {
        for (const session of [a, b]) await runDurableObjectAlarm(sessionStub(session));
        const current = await show(f, otp.id);
        return current.attempts.length === 2 && current.attempts[1]?.status === "failed"
          ? current
          : undefined;
      },
      { reason: "the failover queue's job to send the code on b, and that message to fail", intervalMs: 50 },
    );
    // Well before failover_after_seconds (300 s).
    expect(Date.now() - sentAt).toBeLessThan(15_000);
    expect(shown.attempts).toEqual([
      {
        session_id: a,
        message_id: otp.message_id,
        send: 1,
        status: "failed",
        reason: "recipient_not_on_chatapp",
        created_at: expect.stringMatching(TIMESTAMP),
        sent_at: null,
        delivered_at: null,
        read_at: null,
        failed_at: expect.stringMatching(TIMESTAMP),
      },
      expect.objectContaining({
        session_id: b,
        message_id: expect.stringMatching(UUID),
        send: 1,
        status: "failed",
        reason: "recipient_not_on_chatapp",
        failed_at: expect.stringMatching(TIMESTAMP),
      }),
    ]);
    expect(shown.message_id).toBe(shown.attempts[1]?.message_id);
    // Each attempt charged once and, failed, refunded once.
    const ledger = await waitFor(
      async () => {
        const rows = await ledgerOf(f.accountId);
        return rows.filter((e) => e.kind === "refund").length === 2 ? rows : undefined;
      },
      { reason: "both refunds" },
    );
    expect(ledger.filter((e) => e.kind === "charge")).toHaveLength(2);
    expect(ledger.at(-1)?.balance_after).toBe(10_000);
  });

  it("decides to fail over at once on a failed message, from facts only", () => {
    const otp = { status: "pending", sends: 1, expiresAt: 2_000_000, id: "x" } as OtpRow;
    const job: FailoverJob = {
      otpId: "x",
      accountId: "y",
      sendSeq: 1,
      attemptSeq: 1,
      code: "123456",
      deadline: 1_300_000,
      wait: 1,
    };
    const attempt = (status: string | null, messageId: string | null = "m") =>
      ({
        otpId: "x",
        seq: 1,
        sendSeq: 1,
        sessionId: "s",
        messageId,
        createdAt: 0,
        status,
        reason: null,
      }) as never;
    const now = 1_000_000;
    expect(verdictOf(job, otp, attempt("failed"), now)).toEqual({
      kind: "fail_over",
      reason: "message_failed",
    });
    expect(verdictOf(job, otp, attempt("sent"), now)).toEqual({ kind: "wait", seconds: 2 });
    expect(verdictOf(job, otp, attempt("queued"), 1_300_000)).toEqual({
      kind: "fail_over",
      reason: "no_ack_in_time",
    });
    expect(verdictOf({ ...job, wait: 64 }, otp, attempt("sent"), 1_299_500)).toEqual({
      kind: "wait",
      seconds: 1,
    });
    expect(verdictOf(job, otp, attempt("delivered"), 1_300_000)).toEqual({
      kind: "stop",
      reason: "delivered",
    });
    expect(verdictOf(job, otp, attempt("read"), now)).toEqual({ kind: "stop", reason: "delivered" });
    expect(verdictOf(job, otp, attempt(null, null), now)).toEqual({ kind: "stop", reason: "no_message" });
    expect(verdictOf(job, otp, null, now)).toEqual({ kind: "stop", reason: "no_message" });
    expect(verdictOf(job, null, attempt("failed"), now)).toEqual({ kind: "stop", reason: "otp_gone" });
    for (const status of ["verified", "failed", "expired"] as const)
      expect(verdictOf(job, { ...otp, status }, attempt("failed"), now)).toEqual({
        kind: "stop",
        reason: status,
      });
    // Past expires_at, even before a verify has stored `expired`.
    expect(verdictOf(job, otp, attempt("failed"), 2_000_000)).toEqual({ kind: "stop", reason: "expired" });
    expect(verdictOf(job, { ...otp, sends: 2 }, attempt("failed"), now)).toEqual({
      kind: "stop",
      reason: "code_replaced",
    });
  });
});

describe("no failover once the code is settled", () => {
  /** An OTP on a, whose phone is offline, with b after it; its code read from a's phone. */
  async function waiting() {
    const f = await failoverApp(2);
    const [a] = f.sessions as [string, string];
    await setPhone(f, a, false);
    const otp = await sent(f);
    await sentOn(f, a, otp.message_id);
    return { f, otp, code: await codeOn(a, otp.message_id) };
  }

  async function expectNothingSent(f: Fixture, otp: Otp, job: FailoverJob, attempts: number) {
    expect(await runFailoverJob(env, f.db, job, Date.now())).toBeNull();
    expect(await storedAttempts(f, otp.id)).toHaveLength(attempts);
    expect(await otpMessages(f, otp.id)).toHaveLength(attempts);
    expect((await ledgerOf(f.accountId)).filter((e) => e.kind === "charge")).toHaveLength(attempts);
  }

  it("sends nothing once the OTP is verified", async () => {
    const { f, otp, code } = await waiting();
    const ok = await call("POST", `/v1/otp/${otp.id}/verify`, { key: f.key, body: { code } });
    expect(ok.status).toBe(200);
    await expectNothingSent(f, otp, jobFor(f, otp, code), 1);
  });

  it("sends nothing once the OTP has expired", async () => {
    const { f, otp, code } = await waiting();
    await f.d1
      .prepare("UPDATE otps SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, otp.id)
      .run();
    await expectNothingSent(f, otp, jobFor(f, otp, code), 1);
  });

  it("sends nothing once the OTP has failed", async () => {
    const { f, otp, code } = await waiting();
    await f.d1
      .prepare("UPDATE otps SET status = 'failed', failed_attempts = 5 WHERE id = ?")
      .bind(otp.id)
      .run();
    await expectNothingSent(f, otp, jobFor(f, otp, code), 1);
  });

  it("sends nothing for a code a resend replaced; the resend starts on the first connected channel", async () => {
    const { f, otp, code } = await waiting();
    const [a] = f.sessions as [string, string];
    await f.d1.prepare("UPDATE otps SET last_sent_at = last_sent_at - 31000 WHERE id = ?").bind(otp.id).run();
    const resent = await call<{ data: Otp }>("POST", `/v1/otp/${otp.id}/resend`, { key: f.key });
    expect(resent.status).toBe(200);
    expect(resent.body.data.attempts).toEqual([
      expect.objectContaining({ session_id: a, send: 1, message_id: otp.message_id }),
      expect.objectContaining({ session_id: a, send: 2, message_id: resent.body.data.message_id }),
    ]);
    await expectNothingSent(f, otp, jobFor(f, otp, code), 2);
  });
});

describe("exactly once", () => {
  it("sends nothing twice when the same job runs again, or twice at once", async () => {
    const f = await failoverApp(3);
    const [a, b] = f.sessions as [string, string, string];
    await setPhone(f, a, false);
    const otp = await sent(f);
    await sentOn(f, a, otp.message_id);
    const code = await codeOn(a, otp.message_id);
    const job = jobFor(f, otp, code);

    const results = await Promise.all([0, 1, 2].map(() => runFailoverJob(env, f.db, job, Date.now())));
    const again = await runFailoverJob(env, f.db, job, Date.now());
    const attempts = await storedAttempts(f, otp.id);
    expect(attempts.map((x) => x.session_id)).toEqual([a, b]);
    // Each run carries on with the attempt on b (watching it) or comes back once the claim is
    // settled: none makes another.
    for (const next of [...results, again]) expect(next?.job).toMatchObject({ otpId: otp.id, code });
    expect(again?.job.attemptSeq).toBe(2);
    expect(await otpMessages(f, otp.id)).toHaveLength(2);
    expect((await ledgerOf(f.accountId)).filter((e) => e.kind === "charge")).toHaveLength(2);
  });

  it("finishes a claim whose job stopped before sending, once its lease has passed", async () => {
    const f = await failoverApp(2);
    const [a, b] = f.sessions as [string, string];
    await setPhone(f, a, false);
    const otp = await sent(f);
    await sentOn(f, a, otp.message_id);
    const code = await codeOn(a, otp.message_id);
    // A job claimed b and stopped before sending (the Worker was killed).
    const claim = { accountId: f.accountId, otpId: otp.id, sendSeq: 1, sessionId: b };
    const claimed = await claimAttempt(f.db, claim, Date.now());
    expect(claimed).toMatchObject({ seq: 2, messageId: null });
    expect((await show(f, otp.id)).attempts[1]).toMatchObject({
      session_id: b,
      message_id: null,
      status: null,
    });

    // Its redelivery comes back when the lease ends, and sends nothing meanwhile.
    const job = jobFor(f, otp, code);
    const early = await runFailoverJob(env, f.db, job, Date.now());
    expect(early).toEqual({ job, delaySeconds: expect.any(Number) });
    expect(early?.delaySeconds).toBeGreaterThan(CLAIM_LEASE_MS / 1000 - 5);
    expect(await otpMessages(f, otp.id)).toHaveLength(1);

    // After the lease, it takes the claim over and sends once.
    await f.d1
      .prepare("UPDATE otp_attempts SET created_at = created_at - ? WHERE otp_id = ? AND seq = 2")
      .bind(CLAIM_LEASE_MS + 1, otp.id)
      .run();
    expect(await runFailoverJob(env, f.db, job, Date.now())).toBeNull();
    const attempts = await storedAttempts(f, otp.id);
    expect(attempts[1]).toEqual({
      seq: 2,
      send_seq: 1,
      session_id: b,
      message_id: expect.stringMatching(UUID),
    });
    expect(await codeOn(b, attempts[1]?.message_id ?? null)).toBe(code);
    expect(await otpMessages(f, otp.id)).toHaveLength(2);
    expect((await ledgerOf(f.accountId)).filter((e) => e.kind === "charge")).toHaveLength(2);
  });

  it("adopts the message a stopped job made before it could record it, sending nothing again", async () => {
    const f = await failoverApp(2);
    const [a, b] = f.sessions as [string, string];
    await setPhone(f, a, false);
    const otp = await sent(f);
    await sentOn(f, a, otp.message_id);
    const code = await codeOn(a, otp.message_id);
    const job = jobFor(f, otp, code);
    expect(await runFailoverJob(env, f.db, job, Date.now())).toBeNull();
    const made = (await storedAttempts(f, otp.id))[1]?.message_id;
    // As if the job had stopped between the send and recording its message, a lease ago.
    await f.d1
      .prepare(
        "UPDATE otp_attempts SET message_id = NULL, created_at = created_at - ? WHERE otp_id = ? AND seq = 2",
      )
      .bind(CLAIM_LEASE_MS + 1, otp.id)
      .run();

    expect(await runFailoverJob(env, f.db, job, Date.now())).toBeNull();
    expect(await storedAttempts(f, otp.id)).toEqual([
      expect.objectContaining({ seq: 1, session_id: a }),
      { seq: 2, send_seq: 1, session_id: b, message_id: made },
    ]);
    expect(await otpMessages(f, otp.id)).toHaveLength(2);
    expect((await ledgerOf(f.accountId)).filter((e) => e.kind === "charge")).toHaveLength(2);
  });
});

describe("the failover queue consumer", () => {
  it("acks each job, queues the next check, and drops a poison message", async () => {
    const f = await failoverApp(2);
    const [a] = f.sessions as [string, string];
    await setPhone(f, a, false);
    const otp = await sent(f);
    await sentOn(f, a, otp.message_id);
    const code = await codeOn(a, otp.message_id);
    const batch = createMessageBatch<unknown>(OTP_FAILOVER_QUEUE_NAME, [
      {
        id: "j-1",
        timestamp: new Date(),
        attempts: 1,
        body: jobFor(f, otp, code, { deadline: Date.now() + 60_000 }),
      },
      { id: "j-2", timestamp: new Date(), attempts: 1, body: { otpId: "not-a-job" } },
    ]);
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, createExecutionContext());
    expect(result.explicitAcks.sort()).toEqual(["j-1", "j-2"]);
    expect(result.retryMessages).toEqual([]);
    expect(await storedAttempts(f, otp.id)).toHaveLength(1);
  });
});
