import { sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { batchSql, createDb, type Db } from "../src/db/client";
import { purgeChecks } from "../src/db/queries/contact-checks";
import { purgeExpiredIdempotencyKeys } from "../src/db/queries/idempotency";
import { purgeLinkTokens } from "../src/db/queries/link-tokens";
import { deleteOtpAttemptsOf } from "../src/db/queries/otp-attempts";
import { deleteOtpSendsOf, purgeOtpSends } from "../src/db/queries/otp-sends";
import { PURGE_BUDGET, type Purge } from "../src/db/queries/purge";
import { purgeReverseGuesses } from "../src/db/queries/reverse-guesses";
import { sha256Hex } from "../src/lib/crypto";
import { LINK_TOKEN_RETENTION_MS } from "../src/links/tokens";
import { CONTACT_CHECK_TTL_MS } from "../src/number-checks/check";
import { OTP_RULES } from "../src/otp/code";
import { REVERSE_RULES } from "../src/otp/reverse";
import { accountD1, accountDb, firstAccountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, createSession, expectProblem } from "./helpers";
import { linkUrl } from "./live";

// The retention of the tables that grow with traffic outside messages, OTPs and events (docs/retention.md,
// Data retention): each purge job deletes what is past its retention and keeps the
// rest, in bounded chunks through an index, and answers `{ deleted, more }` through
// POST /admin/jobs/{name}.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The count `query` reads in account `accountId`'s database. */
async function count(accountId: string, query: string, ...params: unknown[]): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare(query)
    .bind(...params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Runs hourly job `name` through the admin API; its answer (`result`). */
async function runJob(name: string): Promise<unknown> {
  const res = await call<{ data: { name: string; result: unknown } }>("POST", `/admin/jobs/${name}`, {
    key: ADMIN_TOKEN,
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.name).toBe(name);
  return res.body.data.result;
}

/** A Db over an account database that records the SQL of every statement it prepares. */
function recordingDb(seen: string[]): Db {
  const d1 = new Proxy(firstAccountD1(), {
    get(target, property) {
      if (property === "prepare")
        return (query: string) => {
          seen.push(query);
          return target.prepare(query);
        };
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return createDb(d1);
}

async function plan(query: string, ...params: unknown[]): Promise<string> {
  const rows = await firstAccountD1()
    .prepare(`EXPLAIN QUERY PLAN ${query}`)
    .bind(...params)
    .all<{ detail: string }>();
  return rows.results.map((row) => row.detail).join("\n");
}

// --- Seeds ---------------------------------------------------------------------------------

async function seedIdempotencyKey(accountId: string, key: string, expiresAt: number): Promise<void> {
  await (await accountD1(accountId))
    .prepare(
      "INSERT INTO idempotency_keys (account_id, key, request_hash, status, response_status, response_body, created_at, expires_at) VALUES (?, ?, 'h', 'done', 200, '{}', ?, ?)",
    )
    .bind(accountId, key, expiresAt - DAY, expiresAt)
    .run();
}

const idempotencyKeysOf = async (accountId: string) =>
  (
    await (
      await accountD1(accountId)
    )
      .prepare("SELECT key FROM idempotency_keys WHERE account_id = ? ORDER BY key")
      .bind(accountId)
      .all<{ key: string }>()
  ).results.map((row) => row.key);

async function seedCheck(accountId: string, number: string, checkedAt: number): Promise<void> {
  await (await accountD1(accountId))
    .prepare("INSERT INTO contact_checks (account_id, number, on_chatapp, checked_at) VALUES (?, ?, 1, ?)")
    .bind(accountId, number, checkedAt)
    .run();
}

/** A guess of session `sessionId` of account `accountId`, in the account's database. */
async function seedGuess(
  accountId: string,
  sessionId: string,
  messageKey: string,
  at: number,
): Promise<void> {
  await (await accountD1(accountId))
    .prepare(
      "INSERT INTO reverse_guesses (session_id, message_key, code_lookup, sender, otp_id, outcome, at) VALUES (?, ?, 'c', '+14155552671', NULL, 'no_match', ?)",
    )
    .bind(sessionId, messageKey, at)
    .run();
}

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";

interface Otp {
  id: string;
  sends_remaining: number;
  attempts: { session_id: string; message_id: string | null }[];
}

/** An account with a connected sandbox session and an app that sends codes through it. */
async function otpApp(): Promise<{ accountId: string; key: string; appId: string; sessionId: string }> {
  const { accountId, key } = await createAccount(100);
  const { session } = await createSession(key);
  const scanned = await call<{ session: { status: string } }>(
    "POST",
    `/sandbox/sessions/${session.id}/scan`,
    {
      key,
      body: {},
    },
  );
  expect(scanned.body.session.status).toBe("connected");
  const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: {
      name: "Acme",
      sender_id: SENDER,
      message_template: "Code {{code}}",
      chatapp_session_id: session.id,
    },
  });
  expect(app.status, app.text).toBe(201);
  return { accountId, key, appId: app.body.data.id, sessionId: session.id };
}

async function sendOtp(f: { key: string; appId: string }, to: string): Promise<Otp> {
  const res = await call<{ data: Otp }>("POST", `/v1/apps/${f.appId}/otp`, {
    key: f.key,
    body: { to_number: to },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

const showOtp = async (key: string, id: string) =>
  (await call<{ data: Otp }>("GET", `/v1/otp/${id}`, { key })).body.data;

/** The send log of OTP `otpId` of account `accountId`. */
const sendsOf = async (accountId: string, otpId: string) =>
  (
    await (
      await accountD1(accountId)
    )
      .prepare("SELECT seq, sent_at FROM otp_sends WHERE otp_id = ? ORDER BY seq")
      .bind(otpId)
      .all<{ seq: number; sent_at: number }>()
  ).results;

// --- Tests -----------------------------------------------------------------------------------

describe("each purge deletes a bounded chunk through an index", () => {
  it("reads the rows past retention by an index, and deletes them by rowid", async () => {
    const purges: [string, (db: Db) => Promise<Purge>][] = [
      ["idempotency_keys_expires", (db) => purgeExpiredIdempotencyKeys(db, 0)],
      ["contact_checks_checked", (db) => purgeChecks(db, 0)],
      ["reverse_guesses_at", (db) => purgeReverseGuesses(db, 0)],
      ["otp_sends_sent", (db) => purgeOtpSends(db, 0)],
      ["link_tokens_expires", (db) => purgeLinkTokens(db, 0)],
    ];
    for (const [index, purge] of purges) {
      const seen: string[] = [];
      expect(await purge(recordingDb(seen))).toEqual({ deleted: 0, more: false });
      expect(seen).toHaveLength(1);
      const detail = await plan(seen[0] ?? "", 0, PURGE_BUDGET.chunk);
      expect(detail, index).toMatch(
        new RegExp(`SEARCH \\w+ USING (COVERING )?INDEX ${index} \\(\\w+<\\?\\)`),
      );
      expect(detail, index).toMatch(/SEARCH \w+ USING INTEGER PRIMARY KEY \(rowid=\?\)/);
      expect(detail, index).not.toMatch(/\bSCAN\b/);
    }
  });

  it("stops at its time budget after a full chunk, saying more may be left, and the next run goes on", async () => {
    const { accountId } = await createAccount();
    // Expired long before any other test's keys: a cut-off of 10,000 takes only these.
    for (let i = 0; i < 5; i++) await seedIdempotencyKey(accountId, `old-${i}`, 1_000 + i);
    await seedIdempotencyKey(accountId, "live", Date.now() + DAY);
    const db = await accountDb(accountId);

    expect(await purgeExpiredIdempotencyKeys(db, 10_000, { chunk: 2, maxMs: 0 })).toEqual({
      deleted: 2,
      more: true,
    });
    expect(await idempotencyKeysOf(accountId)).toHaveLength(4);
    // A chunk that comes back short ends the run, whatever the budget.
    expect(await purgeExpiredIdempotencyKeys(db, 10_000, { chunk: 2, maxMs: 60_000 })).toEqual({
      deleted: 3,
      more: false,
    });
    expect(await idempotencyKeysOf(accountId)).toEqual(["live"]);
  });
});

describe("purge_idempotency_keys", () => {
  it("deletes keys past their 24 hours and keeps live ones, whose replay still answers", async () => {
    const { accountId, key } = await createAccount();
    await runJob("purge_idempotency_keys");
    const create = () =>
      call("POST", "/v1/apps", {
        key,
        body: { name: "Acme", sender_id: SENDER, message_template: "Code {{code}}" },
        headers: { "Idempotency-Key": "keep-me" },
      });
    const first = await create();
    expect(first.status, first.text).toBe(201);
    await seedIdempotencyKey(accountId, "expired", Date.now() - 60_000);

    expect(await runJob("purge_idempotency_keys")).toEqual({ deleted: 1, more: false });
    expect(await idempotencyKeysOf(accountId)).toEqual(["keep-me"]);
    // The live key still replays the first answer (the same app, not a second one).
    const replay = await create();
    expect(replay.text).toBe(first.text);
    expect(await count(accountId, "SELECT COUNT(*) AS n FROM apps WHERE account_id = ?", accountId)).toBe(1);
  });
});

describe("purge_contact_checks", () => {
  it("deletes answers older than 7 days and keeps younger ones", async () => {
    const { accountId } = await createAccount();
    await runJob("purge_contact_checks");
    const now = Date.now();
    await seedCheck(accountId, "+14155550001", now - CONTACT_CHECK_TTL_MS - 60_000);
    await seedCheck(accountId, "+14155550002", now - CONTACT_CHECK_TTL_MS + 60_000);

    expect(await runJob("purge_contact_checks")).toEqual({ deleted: 1, more: false });
    const left = await (await accountD1(accountId))
      .prepare("SELECT number FROM contact_checks WHERE account_id = ?")
      .bind(accountId)
      .all<{ number: string }>();
    expect(left.results.map((row) => row.number)).toEqual(["+14155550002"]);
  });
});

describe("purge_reverse_guesses", () => {
  it("deletes guesses older than 2 hours and keeps younger ones", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    await runJob("purge_reverse_guesses");
    const now = Date.now();
    await seedGuess(accountId, session.id, "old", now - REVERSE_RULES.guessRetentionMs - 60_000);
    await seedGuess(accountId, session.id, "young", now - REVERSE_RULES.guessRetentionMs + 60_000);

    expect(await runJob("purge_reverse_guesses")).toEqual({ deleted: 1, more: false });
    const left = await (await accountD1(accountId))
      .prepare("SELECT message_key FROM reverse_guesses WHERE session_id = ?")
      .bind(session.id)
      .all<{ message_key: string }>();
    expect(left.results.map((row) => row.message_key)).toEqual(["young"]);
  });
});

describe("purge_otp_sends", () => {
  it("deletes sends older than the per-number window, and the OTPs still show what they did", async () => {
    const f = await otpApp();
    await runJob("purge_otp_sends");
    const old = await sendOtp(f, "+14155550101");
    const recent = await sendOtp(f, "+14155550102");
    const before = await showOtp(f.key, old.id);
    expect(before.attempts).toHaveLength(1);
    await (await accountD1(f.accountId))
      .prepare("UPDATE otp_sends SET sent_at = ? WHERE otp_id = ?")
      .bind(Date.now() - OTP_RULES.perNumberWindowMs - 60_000, old.id)
      .run();

    expect(await runJob("purge_otp_sends")).toEqual({ deleted: 1, more: false });
    expect(await sendsOf(f.accountId, old.id)).toEqual([]);
    expect(await sendsOf(f.accountId, recent.id)).toEqual([{ seq: 1, sent_at: expect.any(Number) }]);
    // The OTP, its attempts and its counters are untouched: the log served only the limit.
    expect(await showOtp(f.key, old.id)).toEqual(before);
  });

  it("keeps the window's sends, so the per-number limit still counts them", async () => {
    const f = await otpApp();
    const to = "+14155550103";
    for (let i = 0; i < 5; i++) await sendOtp(f, to);
    await runJob("purge_otp_sends");
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otp_sends WHERE to_number = ?", to)).toBe(5);
    const refused = await call("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body: { to_number: to } });
    expectProblem(refused, 429, "rate_limited");
  });
});

describe("OTP attempts", () => {
  it("stay while their OTP does, and go with it through deleteOtpAttemptsOf and deleteOtpSendsOf", async () => {
    const f = await otpApp();
    const gone = await sendOtp(f, "+14155550104");
    const kept = await sendOtp(f, "+14155550105");
    const keptBefore = await showOtp(f.key, kept.id);
    const db = await accountDb(f.accountId);
    const deleteOtp = sql`DELETE FROM otps WHERE id = ${gone.id}`;

    // The foreign keys refuse the OTP's delete while its attempts and sends remain.
    await expect(batchSql(db, [deleteOtp])).rejects.toThrow(/FOREIGN KEY/);
    const ids = sql`(SELECT value FROM json_each(${JSON.stringify([gone.id])}))`;
    await batchSql(db, [deleteOtpAttemptsOf(ids), deleteOtpSendsOf(ids), deleteOtp]);

    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otp_attempts WHERE otp_id = ?", gone.id)).toBe(
      0,
    );
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otp_sends WHERE otp_id = ?", gone.id)).toBe(0);
    expectProblem(await call("GET", `/v1/otp/${gone.id}`, { key: f.key }), 404, "not_found");
    expect(await showOtp(f.key, kept.id)).toEqual(keptBefore);
    expect(keptBefore.attempts).toHaveLength(1);
  });

  it("are deleted by primary key, the ids a subquery", async () => {
    const ids = Array.from({ length: 150 }, () => crypto.randomUUID());
    const list = sql`(SELECT value FROM json_each(${JSON.stringify(ids)}))`;
    for (const statement of [deleteOtpAttemptsOf(list), deleteOtpSendsOf(list)]) {
      const compiled = new SQLiteAsyncDialect().sqlToQuery(statement);
      expect(compiled.params).toEqual([JSON.stringify(ids)]);
      expect(await plan(compiled.sql, ...compiled.params)).toMatch(
        /SEARCH otp_(attempts|sends) USING (COVERING )?INDEX sqlite_autoindex_otp_(attempts|sends)_1 \(otp_id=\?\)/,
      );
    }
  });
});

describe("purge_link_tokens", () => {
  it("keeps a lapsed token 7 days after its expiry (410), then deletes it (404), and keeps live ones", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    await runJob("purge_link_tokens");
    const [old, revoked, recent, live] = [
      await linkUrl(key, session.id),
      await linkUrl(key, session.id),
      await linkUrl(key, session.id),
      await linkUrl(key, session.id),
    ];
    const now = Date.now();
    const d1 = await accountD1(accountId);
    const age = async (token: string, expiresAt: number, revokedAt: number | null = null) =>
      d1
        .prepare("UPDATE link_tokens SET expires_at = ?, revoked_at = ? WHERE token_hash = ?")
        .bind(expiresAt, revokedAt, await sha256Hex(token))
        .run();
    await age(old.token, now - LINK_TOKEN_RETENTION_MS - 60_000);
    await age(revoked.token, now - LINK_TOKEN_RETENTION_MS - 60_000, now - LINK_TOKEN_RETENTION_MS - HOUR);
    await age(recent.token, now - LINK_TOKEN_RETENTION_MS + 60_000);

    expect(await runJob("purge_link_tokens")).toEqual({ deleted: 2, more: false });
    expect(
      await count(accountId, "SELECT COUNT(*) AS n FROM link_tokens WHERE session_id = ?", session.id),
    ).toBe(2);
    const view = (token: string) => call("GET", `/link/${token}/session`);
    expectProblem(await view(old.token), 404, "link_not_found");
    expectProblem(await view(revoked.token), 404, "link_not_found");
    expectProblem(await view(recent.token), 410, "link_expired");
    expect((await view(live.token)).status).toBe(200);
  });
});

describe("a deleted draft campaign's recipients", () => {
  it("go with it in the same statement (ON DELETE CASCADE), so no job keeps them", async () => {
    const keys = await firstAccountD1()
      .prepare("SELECT * FROM pragma_foreign_key_list('campaign_recipients')")
      .all<{ table: string; on_delete: string }>();
    expect(keys.results).toEqual([expect.objectContaining({ table: "campaigns", on_delete: "CASCADE" })]);
  });
});
