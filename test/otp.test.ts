import {
  createExecutionContext,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../src/app";
import { hmacSha256Hex } from "../src/lib/crypto";
import { accountD1 } from "./databases";
import {
  type ApiResponse,
  call,
  createAccount,
  expectProblem,
  phoneText,
  sessionStub,
  waitFor,
} from "./helpers";

// The whole one-time-code flow through the sandbox gateway. The code is read where a user would
// read it: on the recipient's phone (the sandbox phone's own storage, helpers.ts `phoneText`); the
// API itself, `/sandbox/sessions/{id}/received` included, only ever shows it masked. Time is simulated by moving the OTP's stored times (expires_at, last_sent_at,
// the send log) into the past.

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const TEMPLATE = "Your {{app_name}} code is {{code}}.";
const TO = "+14155552671";
const SECRET = "test-otp-secret-0123456789abcdef"; // vitest.config.ts
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Asserts that a response body does not carry the code. Uuids and timestamps are taken out
 * first: a 6-digit code can occur in them by chance.
 */
function expectNoCode(text: string, code: string): void {
  const rest = text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/g, "<timestamp>");
  expect(rest).not.toContain(code);
}

interface Otp {
  id: string;
  app_id: string;
  to_number: string;
  channel: string;
  status: string;
  expires_at: string;
  attempts_remaining: number;
  sends_remaining: number;
  message_id: string | null;
  attempts: Record<string, unknown>[];
  created_at: string;
  updated_at: string;
}

interface OtpEnvelope {
  success: boolean;
  data: Otp;
}

interface Message {
  id: string;
  status: string;
  type: string;
  content: string;
  otp_id: string | null;
  to_number: string;
  cost: number;
  sent_at: string | null;
  created_at: string;
}

interface OtpRowInDb {
  id: string;
  account_id: string;
  app_id: string;
  message_id: string | null;
  to_number: string;
  code_hmac: string;
  status: string;
  failed_attempts: number;
  sends: number;
  last_sent_at: number;
  expires_at: number;
  verified_at: number | null;
}

interface Fixture {
  key: string;
  accountId: string;
  sessionId: string;
  appId: string;
}

/** An account with a connected sandbox session and an app that sends codes through it. */
async function otpApp(options: { balance?: number; app?: Record<string, unknown> } = {}): Promise<Fixture> {
  const { key, accountId } = await createAccount(options.balance ?? 100);
  const created = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key });
  const sessionId = created.body.session.id;
  const scanned = await call<{ session: { status: string } }>("POST", `/sandbox/sessions/${sessionId}/scan`, {
    key,
    body: {},
  });
  expect(scanned.body.session.status).toBe("connected");
  const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: {
      name: "Acme",
      sender_id: SENDER,
      message_template: TEMPLATE,
      chatapp_session_id: sessionId,
      ...options.app,
    },
  });
  expect(app.status).toBe(201);
  return { key, accountId, sessionId, appId: app.body.data.id };
}

const send = (f: Fixture, to = TO, headers: Record<string, string> = {}) =>
  call<OtpEnvelope>("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body: { to_number: to }, headers });
const verify = (f: Fixture, id: string, code: string) =>
  call<OtpEnvelope>("POST", `/v1/otp/${id}/verify`, { key: f.key, body: { code } });
const resend = (f: Fixture, id: string) => call<OtpEnvelope>("POST", `/v1/otp/${id}/resend`, { key: f.key });
const show = (f: Fixture, id: string) => call<OtpEnvelope>("GET", `/v1/otp/${id}`, { key: f.key });

/** {@link expectProblem} for a response typed as a success. */
const problem = (res: ApiResponse<unknown>, status: number, code: string) =>
  expectProblem(res as ApiResponse, status, code);

/** Sends an OTP that must succeed; returns it. */
async function sent(f: Fixture, to = TO): Promise<Otp> {
  const res = await send(f, to);
  expect(res.status).toBe(201);
  return res.body.data;
}

async function message(key: string, id: string): Promise<Message> {
  const res = await call<{ data: Message }>("GET", `/v1/chatapp/messages/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** What the recipient's phone received for message `messageId`, once the session sent it. */
async function received(f: Fixture, messageId: string | null, to = TO): Promise<string> {
  return phoneText(f.sessionId, to, messageId);
}

/** The code an OTP message carries, read on the recipient's phone. */
async function codeIn(f: Fixture, messageId: string | null): Promise<string> {
  const match = /^Your Acme code is (\d+)\.$/.exec(await received(f, messageId));
  expect(match).not.toBeNull();
  return match?.[1] ?? "";
}

/** A code of the same length that differs in its last digit. */
const wrong = (code: string) => code.slice(0, -1) + String((Number(code.at(-1)) + 1) % 10);

/**
 * Message `id` once its status is one of `statuses`. The outbound queue hands it to its session
 * (the runtime delivers it: waited for); with `drive`, that session's alarm is run at each look,
 * so the send's write to D1 and the sandbox's receipts come now rather than on the wall clock.
 */
async function waitForMessage(
  key: string,
  id: string,
  statuses: string[],
  drive?: string,
  timeoutMs = 15_000,
): Promise<Message> {
  return waitFor(
    async () => {
      if (drive) await runDurableObjectAlarm(sessionStub(drive));
      const m = await message(key, id);
      if (!statuses.includes(m.status)) throw new Error(`message ${id} is ${m.status}`);
      return m;
    },
    { reason: `message ${id} to be ${statuses.join(" or ")}`, timeoutMs, intervalMs: 50 },
  );
}

/** OTP `id` of the fixture's account, as its database holds it. */
const otpRow = async (f: Fixture, id: string) =>
  (await accountD1(f.accountId)).prepare("SELECT * FROM otps WHERE id = ?").bind(id).first<OtpRowInDb>();

/** Simulates the 30 seconds between two sends of an OTP of the fixture's account passing. */
const allowResend = async (f: Fixture, id: string) =>
  (await accountD1(f.accountId))
    .prepare("UPDATE otps SET last_sent_at = last_sent_at - 31000 WHERE id = ?")
    .bind(id)
    .run();

/** The count `query` reads in account `accountId`'s database. */
async function count(accountId: string, query: string, ...params: unknown[]): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare(query)
    .bind(...params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

const ms = (timestamp: string | null) => Date.parse(timestamp ?? "");

describe("POST /v1/apps/{id}/otp → read the code → POST /v1/otp/{id}/verify", () => {
  it("sends a code through the session, refuses a wrong one, accepts the right one once", async () => {
    const f = await otpApp();
    const before = Date.now();
    const res = await send(f, "+1 (415) 555-2671");
    expect(res.status).toBe(201);
    const otp = res.body.data;
    expect(res.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(UUID),
        app_id: f.appId,
        mode: "send",
        to_number: TO,
        to_user_id: null,
        channel: "chatapp",
        status: "pending",
        expires_at: expect.stringMatching(TIMESTAMP),
        verified_number: null,
        verified_contact: null,
        attempts_remaining: 5,
        sends_remaining: 4,
        refused_messages: 0,
        message_id: expect.stringMatching(UUID),
        // The one message the code went out in: on the app's only channel, just queued.
        attempts: [
          {
            session_id: f.sessionId,
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
        ],
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: otp.created_at,
      },
    });
    // Default expiry: 600 s from the send.
    expect(ms(otp.expires_at) - ms(otp.created_at)).toBe(600_000);
    expect(ms(otp.created_at)).toBeGreaterThanOrEqual(before - 1);

    // The code travels as a text message of the app's session, charged like any message.
    const carried = await waitForMessage(
      f.key,
      otp.message_id ?? "",
      ["sent", "delivered", "read"],
      f.sessionId,
    );
    expect(["sent", "delivered", "read"]).toContain(carried.status);
    expect(carried).toMatchObject({ type: "text", otp_id: otp.id, to_number: TO, cost: 0.01 });
    const code = await codeIn(f, otp.message_id);
    expect(code).toMatch(/^\d{6}$/);
    const account = await (await accountD1(f.accountId))
      .prepare("SELECT balance FROM accounts WHERE id = ?")
      .bind(f.accountId)
      .first<{ balance: number }>();
    expect(account?.balance).toBe(100 * 100 - 1);

    // Stored only as HMAC-SHA256 of `${id}:${code}` keyed with OTP_SECRET; never shown.
    const row = await otpRow(f, otp.id);
    expect(row?.code_hmac).toBe(await hmacSha256Hex(SECRET, `${otp.id}:${code}`));
    expect(JSON.stringify(row)).not.toContain(`"${code}"`);
    expectNoCode(res.text, code);
    const shown = await show(f, otp.id);
    // The same OTP, its attempt showing the message as it is now (sent, soon delivered and read).
    const { attempts: shownAttempts, ...shownRest } = shown.body.data;
    const { attempts: sentAttempts, ...sentRest } = otp;
    expect(shownRest).toEqual(sentRest);
    expect(shownAttempts).toEqual([
      expect.objectContaining({
        session_id: f.sessionId,
        message_id: otp.message_id,
        send: 1,
        created_at: sentAttempts[0]?.created_at,
        sent_at: expect.stringMatching(TIMESTAMP),
      }),
    ]);
    expect(["sent", "delivered", "read"]).toContain(shownAttempts[0]?.status);
    expectNoCode(shown.text, code);

    const bad = await verify(f, otp.id, wrong(code));
    expect(problem(bad, 422, "otp_invalid").attempts_remaining).toBe(4);
    expectNoCode(bad.text, code);
    expect((await show(f, otp.id)).body.data).toMatchObject({ status: "pending", attempts_remaining: 4 });

    const good = await verify(f, otp.id, ` ${code} `);
    expect(good.status).toBe(200);
    expect(good.body).toEqual({
      success: true,
      data: {
        ...otp,
        attempts: [expect.objectContaining({ message_id: otp.message_id, send: 1 })],
        status: "verified",
        attempts_remaining: 4,
        updated_at: expect.stringMatching(TIMESTAMP),
      },
    });
    expectNoCode(good.text, code);
    expect((await otpRow(f, otp.id))?.verified_at).toEqual(expect.any(Number));

    // Accepted once only: the same code, a wrong one, and a resend are all refused now.
    problem(await verify(f, otp.id, code), 409, "otp_already_verified");
    problem(await verify(f, otp.id, wrong(code)), 409, "otp_already_verified");
    problem(await resend(f, otp.id), 409, "otp_already_verified");
    expect((await show(f, otp.id)).body.data).toMatchObject({ status: "verified", attempts_remaining: 4 });
  });

  it("uses the app's code_size, template syntax and expiry_seconds", async () => {
    for (const codeSize of [4, 10]) {
      const f = await otpApp({
        app: {
          code_size: codeSize,
          message_template: "Your { app_name } code is {code}.",
          expiry_seconds: 60,
        },
      });
      const otp = await sent(f);
      expect(await codeIn(f, otp.message_id)).toMatch(new RegExp(`^\\d{${codeSize}}$`));
      expect(ms(otp.expires_at) - ms(otp.created_at)).toBe(60_000);
    }
  });

  it("renders the generated default template with the app's name", async () => {
    const f = await otpApp({ app: { message_template: undefined } });
    const otp = await sent(f);
    expect(await received(f, otp.message_id)).toMatch(
      /^\d{6} is your Acme verification code\. Do not share it\.$/,
    );
    expect((await message(f.key, otp.message_id ?? "")).content).toBe(
      "•••••• is your Acme verification code. Do not share it.",
    );
  });

  it("replays a retried send with the same Idempotency-Key: one OTP, one message, one charge", async () => {
    const f = await otpApp();
    const headers = { "Idempotency-Key": `otp-${crypto.randomUUID()}` };
    const first = await send(f, TO, headers);
    const retry = await send(f, TO, headers);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(1);
    expect(
      await count(f.accountId, "SELECT COUNT(*) AS n FROM messages WHERE otp_id = ?", first.body.data.id),
    ).toBe(1);
    problem(await send(f, "+14155552672", headers), 422, "idempotency_key_reused");
  });
});

describe("the code is readable only on the recipient's phone", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("GET /sandbox/sessions/{id}/received shows it masked as the message does, to every key, unless SANDBOX_SHOW_CODES=true", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    const plain = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      key: f.key,
      body: {
        chatapp_session_id: f.sessionId,
        to_number: [TO],
        type: "text",
        content: "Order 4821 ships today",
      },
    });
    expect(plain.status).toBe(201);
    const plainId = plain.body.data.messages[0]?.id ?? "";
    await received(f, plainId);
    const reader = await call<{ data: { api_key: string } }>("POST", "/v1/api-keys", {
      key: f.key,
      body: { name: "reader", scopes: ["sessions:read"] },
    });
    expect(reader.status).toBe(201);
    const path = `/sandbox/sessions/${f.sessionId}/received?to_number=${encodeURIComponent(TO)}`;
    const expected = (codeText: string) => [
      expect.objectContaining({ message_id: plainId, content: "Order 4821 ships today" }),
      expect.objectContaining({ message_id: otp.message_id, type: "text", content: codeText }),
    ];
    for (const key of [reader.body.data.api_key, f.key]) {
      const res = await call<{ data: unknown[] }>("GET", path, { key });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(expected("Your Acme code is ••••••."));
      expectNoCode(res.text, code);
    }

    const ctx = createExecutionContext();
    const shown = await createApp().request(
      `http://localhost${path}`,
      { headers: { Authorization: `Bearer ${reader.body.data.api_key}` } },
      { ...env, SANDBOX_SHOW_CODES: "true" },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(shown.status).toBe(200);
    expect(((await shown.json()) as { data: unknown[] }).data).toEqual(
      expected(`Your Acme code is ${code}.`),
    );
  });

  it("appears in no API response, D1 row, session-object row (but the phone's) or log line", async () => {
    const logged: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args.map(String).join(" "));
      });
    }
    const f = await otpApp({ app: { code_size: 10 } });
    const res = await send(f, TO, { "Idempotency-Key": `otp-${crypto.randomUUID()}` });
    expect(res.status).toBe(201);
    const otp = res.body.data;
    const code = await codeIn(f, otp.message_id);
    expect(code).toMatch(/^\d{10}$/);
    const delivered = await waitForMessage(f.key, otp.message_id ?? "", ["delivered", "read"], f.sessionId);
    expect(delivered.content).toBe("Your Acme code is ••••••••••.");

    const responses = [
      res,
      await call("GET", `/v1/chatapp/messages/${otp.message_id}`, { key: f.key }),
      await call("GET", "/v1/chatapp/messages?limit=100", { key: f.key }),
      await show(f, otp.id),
      await verify(f, otp.id, code),
    ];
    for (const response of responses) expectNoCode(response.text, code);

    // Every table of the account's database and of the directory.
    const d1 = await accountD1(f.accountId);
    const tablesOf = async (db: D1Database) =>
      (
        await db
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations'",
          )
          .all<{ name: string }>()
      ).results.map((t) => t.name);
    expect(await tablesOf(d1)).toEqual(expect.arrayContaining(["messages", "otps", "idempotency_keys"]));
    for (const db of new Set([d1, env.DB])) {
      for (const name of await tablesOf(db)) {
        const rows = await db.prepare(`SELECT * FROM "${name}"`).all();
        expectNoCode(JSON.stringify(rows.results), code);
      }
    }

    const objectRows = await runInDurableObject(sessionStub(f.sessionId), (_instance, state) => {
      const sql = state.storage.sql;
      const names = sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'",
        )
        .toArray()
        .map((t) => t.name);
      return names.map((name) => ({ name, rows: sql.exec(`SELECT * FROM "${name}"`).toArray() }));
    });
    expect(objectRows.map((t) => t.name)).toEqual(expect.arrayContaining(["outbox", "sandbox_received"]));
    for (const { name, rows } of objectRows) {
      // The sandbox's stand-in for the recipient's phone is the one place the code may be.
      if (name === "sandbox_received") expect(JSON.stringify(rows)).toContain(code);
      else expectNoCode(JSON.stringify(rows), code);
    }
    const outbox = objectRows.find((t) => t.name === "outbox")?.rows ?? [];
    expect(outbox).toEqual([expect.objectContaining({ id: otp.message_id, state: "sent", content: null })]);
    for (const line of logged) expectNoCode(line, code);
  });
});

describe("sending: errors", () => {
  it("is 422 app_has_no_channel for an app without a session, or whose session was deleted", async () => {
    const f = await otpApp();
    const bare = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key: f.key,
      body: { name: "No channel", sender_id: SENDER },
    });
    problem(await send({ ...f, appId: bare.body.data.id }), 422, "app_has_no_channel");

    expect((await call("DELETE", `/v1/chatapp/sessions/${f.sessionId}`, { key: f.key })).status).toBe(200);
    problem(await send(f), 422, "app_has_no_channel");
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE account_id = ?", f.accountId)).toBe(
      0,
    );
  });

  it("is 409 session_not_connected while the app's session is not connected", async () => {
    const { key, accountId } = await createAccount();
    const created = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key });
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: SENDER, chatapp_session_id: created.body.session.id },
    });
    const res = await call("POST", `/v1/apps/${app.body.data.id}/otp`, { key, body: { to_number: TO } });
    problem(res, 409, "session_not_connected");
    expect(await count(accountId, "SELECT COUNT(*) AS n FROM otps WHERE account_id = ?", accountId)).toBe(0);
  });

  it("is 402 when the balance is short, and leaves no OTP, message or count behind", async () => {
    const f = await otpApp({ balance: 0.01 });
    await sent(f);
    problem(await send(f), 402, "insufficient_balance");
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(1);
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otp_sends WHERE app_id = ?", f.appId)).toBe(1);
    expect(
      await count(f.accountId, "SELECT COUNT(*) AS n FROM messages WHERE account_id = ?", f.accountId),
    ).toBe(1);
  });

  it("is 404 for an unknown app, a malformed id, a deleted app and another account's app", async () => {
    const f = await otpApp();
    const other = await otpApp();
    problem(await send({ ...f, appId: crypto.randomUUID() }), 404, "not_found");
    problem(await send({ ...f, appId: "not-a-uuid" }), 404, "not_found");
    problem(await send({ ...f, appId: other.appId }), 404, "not_found");
    await call("DELETE", `/v1/apps/${f.appId}`, { key: f.key });
    problem(await send(f), 404, "not_found");
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(0);
    expect(await count(other.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", other.appId)).toBe(
      0,
    );
  });

  it.each<[string, unknown]>([
    ["a missing to_number", {}],
    ["an invalid number", { to_number: "12" }],
    ["a non-string number", { to_number: 14155552671 }],
    ["an array of numbers", { to_number: [TO] }],
    ["an unknown field", { to_number: TO, code: "123456" }],
  ])("is 422 validation_failed for %s", async (_label, body) => {
    const f = await otpApp();
    const res = await call("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body });
    problem(res, 422, "validation_failed");
  });

  it("requires an API key", async () => {
    const f = await otpApp();
    problem(
      await call("POST", `/v1/apps/${f.appId}/otp`, { body: { to_number: TO } }),
      401,
      "unauthenticated",
    );
  });
});

describe("events", () => {
  const otpEvents = async (f: Fixture, type: string) => {
    const res = await call<{ data: { type: string; data: Otp }[] }>(
      "GET",
      `/v1/events?filter[type]=${type}`,
      {
        key: f.key,
      },
    );
    expect(res.status).toBe(200);
    return res.body.data;
  };

  it("records otp.verified once, carrying the OTP as its GET shows it", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    const good = await verify(f, otp.id, code);
    expect(good.status).toBe(200);
    problem(await verify(f, otp.id, code), 409, "otp_already_verified");
    const events = await otpEvents(f, "otp.verified");
    expect(events.map((e) => e.data)).toEqual([(await show(f, otp.id)).body.data]);
    expect(events[0]?.data.status).toBe("verified");
    expect(await otpEvents(f, "otp.failed")).toEqual([]);
  });

  it("records otp.failed once, at the 5th wrong code", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    for (let i = 0; i < 4; i++) await verify(f, otp.id, wrong(code));
    expect(await otpEvents(f, "otp.failed")).toEqual([]);
    await verify(f, otp.id, wrong(code));
    await verify(f, otp.id, wrong(code));
    const events = await otpEvents(f, "otp.failed");
    expect(events.map((e) => e.data)).toEqual([(await show(f, otp.id)).body.data]);
    expect(events[0]?.data).toMatchObject({ status: "failed", attempts_remaining: 0 });
  });
});

describe("verifying: limits", () => {
  it("fails the OTP on the 5th wrong code; later tries, even the right code, get 429", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    for (const remaining of [4, 3, 2, 1]) {
      expect(problem(await verify(f, otp.id, wrong(code)), 422, "otp_invalid").attempts_remaining).toBe(
        remaining,
      );
    }
    // A wrong length counts like any wrong code.
    expect(
      problem(await verify(f, otp.id, `${code}1`.slice(0, 7)), 422, "otp_invalid").attempts_remaining,
    ).toBe(0);
    expect((await show(f, otp.id)).body.data).toMatchObject({ status: "failed", attempts_remaining: 0 });
    expect(problem(await verify(f, otp.id, code), 429, "otp_attempts_exceeded").attempts_remaining).toBe(0);
    problem(await resend(f, otp.id), 429, "otp_attempts_exceeded");
    expect(await otpRow(f, otp.id)).toMatchObject({
      status: "failed",
      failed_attempts: 5,
      verified_at: null,
    });
  });

  it("is 410 otp_expired after expires_at, for the right code too, and stores the status", async () => {
    const f = await otpApp({ app: { expiry_seconds: 60 } });
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    await (await accountD1(f.accountId))
      .prepare("UPDATE otps SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, otp.id)
      .run();
    expect((await show(f, otp.id)).body.data.status).toBe("expired");
    problem(await verify(f, otp.id, code), 410, "otp_expired");
    expect(await otpRow(f, otp.id)).toMatchObject({
      status: "expired",
      failed_attempts: 0,
      verified_at: null,
    });
    problem(await verify(f, otp.id, wrong(code)), 410, "otp_expired");
    problem(await resend(f, otp.id), 410, "otp_expired");
    expect((await show(f, otp.id)).body.data).toMatchObject({ status: "expired", attempts_remaining: 5 });
  });

  it("refuses a malformed code with 422 validation_failed without counting an attempt", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    for (const body of [{ code: "12ab56" }, { code: "123" }, { code: "12345678901" }, { code: 123456 }, {}]) {
      problem(await call("POST", `/v1/otp/${otp.id}/verify`, { key: f.key, body }), 422, "validation_failed");
    }
    expect((await otpRow(f, otp.id))?.failed_attempts).toBe(0);
  });

  it("answers 404 for another account's OTP on every route, and leaves it untouched", async () => {
    const f = await otpApp();
    const mallory = await otpApp();
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    const asMallory = { ...mallory, appId: f.appId };
    problem(await show(asMallory, otp.id), 404, "not_found");
    problem(await verify(asMallory, otp.id, code), 404, "not_found");
    problem(await verify(asMallory, otp.id, wrong(code)), 404, "not_found");
    await allowResend(f, otp.id);
    problem(await resend(asMallory, otp.id), 404, "not_found");
    problem(await show(f, crypto.randomUUID()), 404, "not_found");
    problem(await show(f, "not-a-uuid"), 404, "not_found");
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "pending", failed_attempts: 0, sends: 1 });
    expect((await verify(f, otp.id, code)).status).toBe(200);
  });

  it("keeps verifying an OTP sent before its app was deleted, but sends it no new code", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    await call("DELETE", `/v1/apps/${f.appId}`, { key: f.key });
    await allowResend(f, otp.id);
    problem(await resend(f, otp.id), 404, "not_found");
    expect((await verify(f, otp.id, code)).status).toBe(200);
  });
});

describe("POST /v1/otp/{id}/resend", () => {
  it("sends a new code that replaces the old one and restarts the expiry; attempts carry over", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    const oldCode = await codeIn(f, otp.message_id);
    problem(await verify(f, otp.id, wrong(oldCode)), 422, "otp_invalid");

    const early = await resend(f, otp.id);
    problem(early, 429, "rate_limited");
    const retryAfter = Number(early.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(29);
    expect(retryAfter).toBeLessThanOrEqual(30);

    await allowResend(f, otp.id);
    const res = await resend(f, otp.id);
    expect(res.status).toBe(200);
    const again = res.body.data;
    expect(again).toMatchObject({ id: otp.id, status: "pending", sends_remaining: 3, attempts_remaining: 4 });
    expect(again.message_id).not.toBe(otp.message_id);
    expect(ms(again.expires_at)).toBeGreaterThan(ms(otp.expires_at));
    expect(ms(again.expires_at) - ms(again.updated_at)).toBe(600_000);
    const newCode = await codeIn(f, again.message_id);
    expectNoCode(res.text, newCode);
    expect((await message(f.key, again.message_id ?? "")).otp_id).toBe(otp.id);

    if (newCode !== oldCode) {
      expect(problem(await verify(f, otp.id, oldCode), 422, "otp_invalid").attempts_remaining).toBe(3);
    }
    expect((await verify(f, otp.id, newCode)).body.data.status).toBe("verified");
  });

  it("sends at most 5 codes per OTP, then 429 without Retry-After", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    for (const remaining of [3, 2, 1, 0]) {
      await allowResend(f, otp.id);
      const res = await resend(f, otp.id);
      expect(res.status).toBe(200);
      expect(res.body.data.sends_remaining).toBe(remaining);
    }
    await allowResend(f, otp.id);
    const sixth = await resend(f, otp.id);
    expect(problem(sixth, 429, "rate_limited").sends_remaining).toBe(0);
    expect(sixth.headers.get("retry-after")).toBeNull();
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM messages WHERE otp_id = ?", otp.id)).toBe(5);
    // The latest code works.
    const latest = await codeIn(f, (await show(f, otp.id)).body.data.message_id);
    expect((await verify(f, otp.id, latest)).status).toBe(200);
  });

  it("leaves the OTP as it was when the new code cannot be paid for (402): the old code still works", async () => {
    const f = await otpApp({ balance: 0.01 });
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    await allowResend(f, otp.id);
    const before = await otpRow(f, otp.id);
    problem(await resend(f, otp.id), 402, "insufficient_balance");
    const after = await otpRow(f, otp.id);
    expect(after).toMatchObject({
      code_hmac: before?.code_hmac,
      sends: 1,
      last_sent_at: before?.last_sent_at,
      expires_at: before?.expires_at,
      message_id: otp.message_id,
    });
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otp_sends WHERE otp_id = ?", otp.id)).toBe(1);
    expect((await verify(f, otp.id, code)).status).toBe(200);
  });

  it("is 422 app_has_no_channel once the app's session is removed", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    await call("PATCH", `/v1/apps/${f.appId}`, { key: f.key, body: { chatapp_session_id: null } });
    await allowResend(f, otp.id);
    problem(await resend(f, otp.id), 422, "app_has_no_channel");
    expect((await otpRow(f, otp.id))?.sends).toBe(1);
  });
});

describe("per-number limit (OTP_MAX_PER_NUMBER_PER_HOUR = 5)", () => {
  it("allows 5 codes to one number per account per rolling hour, resends included", async () => {
    const f = await otpApp();
    const first = await sent(f);
    for (let i = 0; i < 3; i++) await sent(f);
    await allowResend(f, first.id);
    expect((await resend(f, first.id)).status).toBe(200); // the 5th code

    const sixth = await send(f, "+1 415 555 2671");
    problem(sixth, 429, "rate_limited");
    const retryAfter = Number(sixth.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3590);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    await allowResend(f, first.id);
    problem(await resend(f, first.id), 429, "rate_limited");
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(4);

    // Other numbers are not affected (the account's other apps share the limit: test/otp-limit.test.ts).
    expect((await send(f, "+14155552672")).status).toBe(201);

    // Retry-After counts down to when the oldest code of the hour leaves the window.
    const d1 = await accountD1(f.accountId);
    await d1
      .prepare("UPDATE otp_sends SET sent_at = ? WHERE app_id = ? AND otp_id = ? AND seq = 1")
      .bind(Date.now() - 3_500_000, f.appId, first.id)
      .run();
    const later = Number((await send(f)).headers.get("retry-after"));
    expect(later).toBeGreaterThan(90);
    expect(later).toBeLessThanOrEqual(100);
    // An hour later it is free again.
    await d1
      .prepare("UPDATE otp_sends SET sent_at = sent_at - 3600000 WHERE otp_id = ? AND seq = 1")
      .bind(first.id)
      .run();
    expect((await send(f)).status).toBe(201);
    problem(await send(f), 429, "rate_limited");
  });
});

describe("concurrency", () => {
  it("verifies once when the right code arrives several times at once", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    const results = await Promise.all(Array.from({ length: 6 }, () => verify(f, otp.id, code)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) problem(r, 409, "otp_already_verified");
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "verified", failed_attempts: 0 });
  });

  it("counts at most 5 wrong codes when 12 arrive at once", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    const code = await codeIn(f, otp.message_id);
    const results = await Promise.all(Array.from({ length: 12 }, () => verify(f, otp.id, wrong(code))));
    const invalid = results.filter((r) => r.status === 422);
    const exceeded = results.filter((r) => r.status === 429);
    expect(invalid).toHaveLength(5);
    expect(exceeded).toHaveLength(7);
    const remaining = invalid.map((r) => problem(r, 422, "otp_invalid").attempts_remaining).sort();
    expect(remaining).toEqual([0, 1, 2, 3, 4]);
    for (const r of exceeded) problem(r, 429, "otp_attempts_exceeded");
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "failed", failed_attempts: 5 });
    problem(await verify(f, otp.id, code), 429, "otp_attempts_exceeded");
  });

  it("lets one of several simultaneous resends through", async () => {
    const f = await otpApp();
    const otp = await sent(f);
    await allowResend(f, otp.id);
    const results = await Promise.all(Array.from({ length: 5 }, () => resend(f, otp.id)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 429, 429, 429, 429]);
    expect((await otpRow(f, otp.id))?.sends).toBe(2);
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM messages WHERE otp_id = ?", otp.id)).toBe(2);
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otp_sends WHERE otp_id = ?", otp.id)).toBe(2);
  });

  it("keeps the per-number limit when 8 sends to one number arrive at once", async () => {
    const f = await otpApp();
    const results = await Promise.all(Array.from({ length: 8 }, () => send(f)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 429, 429, 429]);
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(5);
    expect(
      await count(f.accountId, "SELECT COUNT(*) AS n FROM messages WHERE account_id = ?", f.accountId),
    ).toBe(5);
  });
});

describe("OTP lane", () => {
  it("sends a code ahead of a 200-recipient bulk send in progress on the same session", {
    timeout: 90_000,
  }, async () => {
    const f = await otpApp();
    const recipients = Array.from({ length: 200 }, (_, i) => `+1415555${2100 + i}`);
    const bulk = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      key: f.key,
      body: {
        chatapp_session_id: f.sessionId,
        to_number: recipients,
        type: "text",
        content: "Sale!",
        delay_between: 50,
      },
    });
    expect(bulk.status).toBe(201);
    const bulkSent = () =>
      count(
        f.accountId,
        "SELECT COUNT(*) AS n FROM messages WHERE chatapp_session_id = ? AND otp_id IS NULL AND status <> 'queued'",
        f.sessionId,
      );
    // The bulk is under way.
    await waitFor(async () => (await bulkSent()) > 0, {
      reason: "the bulk's first send (the outbound queue hands it over)",
      intervalMs: 50,
    });
    expect(await bulkSent()).toBeGreaterThan(0);

    const otp = await sent(f);
    const queuedAtSend = 200 - (await bulkSent());
    expect(queuedAtSend).toBeGreaterThan(150);

    const carried = await waitForMessage(f.key, otp.message_id ?? "", ["sent", "delivered", "read"]);
    expect(carried.sent_at).not.toBeNull();
    const queuedWhenOtpSent = 200 - (await bulkSent());
    expect(queuedWhenOtpSent).toBeGreaterThan(100);

    // Let the bulk finish, then compare the times the gateway accepted each message.
    // Its sends are paced 50 ms apart on the real clock (pacing gaps are not deadlines to drive).
    await waitFor(async () => (await bulkSent()) === 200, {
      reason: "the bulk's 200 paced sends",
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    const last = await (await accountD1(f.accountId))
      .prepare(
        "SELECT MAX(sent_at) AS at, COUNT(sent_at) AS n FROM messages WHERE chatapp_session_id = ? AND otp_id IS NULL",
      )
      .bind(f.sessionId)
      .first<{ at: number; n: number }>();
    expect(last?.n).toBe(200);
    expect(ms(carried.sent_at)).toBeLessThan(last?.at ?? 0);
  });
});

describe("OTP_SECRET", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Calls the app with the test bindings but another OTP_SECRET. */
  async function callWithSecret(
    secret: string | undefined,
    method: string,
    path: string,
    f: Fixture,
    body?: unknown,
  ) {
    const ctx = createExecutionContext();
    const res = await createApp().request(
      `http://localhost${path}`,
      {
        method,
        headers: { Authorization: `Bearer ${f.key}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      },
      { ...env, OTP_SECRET: secret },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it.each([
    ["missing", undefined],
    ["too short", "short-secret"],
  ])(
    "fails every OTP endpoint loudly (500, logged) when it is %s, and sends nothing",
    async (_label, secret) => {
      const f = await otpApp();
      const otp = await sent(f);
      const errors = vi.spyOn(console, "error").mockImplementation(() => {});
      const calls: [string, string, unknown][] = [
        ["POST", `/v1/apps/${f.appId}/otp`, { to_number: "+14155552672" }],
        ["GET", `/v1/otp/${otp.id}`, undefined],
        ["POST", `/v1/otp/${otp.id}/verify`, { code: "123456" }],
        ["POST", `/v1/otp/${otp.id}/resend`, undefined],
      ];
      for (const [method, path, body] of calls) {
        const res = await callWithSecret(secret, method, path, f, body);
        expect(res.status).toBe(500);
        expect(res.body.code).toBe("internal_error");
      }
      const logged = errors.mock.calls
        .map((args) => String(args[0]))
        .filter((line) => line.includes("OTP_SECRET"));
      expect(logged).toHaveLength(4);
      expect(await otpRow(f, otp.id)).toMatchObject({ sends: 1, failed_attempts: 0, status: "pending" });
      expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(1);
    },
  );
});

describe("OpenAPI reference", () => {
  it("documents the OTP routes", async () => {
    const res = await call<{ paths: Record<string, Record<string, unknown>> }>("GET", "/openapi.json");
    expect(Object.keys(res.body.paths["/v1/apps/{id}/otp"] ?? {})).toEqual(["post"]);
    expect(Object.keys(res.body.paths["/v1/otp/{id}"] ?? {})).toEqual(["get"]);
    expect(Object.keys(res.body.paths["/v1/otp/{id}/verify"] ?? {})).toEqual(["post"]);
    expect(Object.keys(res.body.paths["/v1/otp/{id}/resend"] ?? {})).toEqual(["post"]);
    expect(res.text).toContain("attempts_remaining");
  });
});
