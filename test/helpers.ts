import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, vi } from "vitest";

/** What {@link waitFor} needs to know: why the test waits, and for how long at most. */
export interface WaitOptions {
  /** What the test waits for, and why it cannot drive it (named in the error on a timeout). */
  reason: string;
  /** Longest wait (ms); 15 s unless told. */
  timeoutMs?: number;
  /** Time between two checks (ms); 25 unless told. */
  intervalMs?: number;
}

/**
 * The tests' one wait on the wall clock (STYLE.md, "Tests own their clock"): for a hand-off the
 * runtime makes by itself and a test cannot drive, such as a queue message the runtime delivers,
 * a `waitUntil` it finishes, a frame on a socket, or an alarm it is already running (which makes
 * `runDurableObjectAlarm` a no-op). Anything a test can drive (an alarm, a queue batch, a
 * deadline, `now`) it drives instead. Calls `check` every `intervalMs` (never two at once) until
 * it returns a value other than `undefined` or `false` and does not throw (an `expect` in it may
 * fail until then); returns that value. After `timeoutMs` it throws, naming `reason` and the
 * last failure. Built on vitest's `vi.waitFor`.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { reason, timeoutMs = 15_000, intervalMs = 25 }: WaitOptions,
): Promise<Exclude<T, undefined | false>> {
  return vi.waitFor(
    async () => {
      const value = await check();
      if (value === undefined || value === false) throw new Error("not yet");
      return value as Exclude<T, undefined | false>;
    },
    { timeout: timeoutMs, interval: intervalMs, message: `waited ${timeoutMs} ms for ${reason}` },
  );
}

/**
 * Waits until the clock has moved past now, so that a write after it would show in a timestamp
 * (a test asserting that something did not change, or two rows needing distinct creation times):
 * the Workers clock moves only across I/O, so this is the one wait on it that a test needs.
 */
export async function clockMoves(): Promise<void> {
  const now = Date.now();
  await waitFor(() => Date.now() > now, { reason: "the clock to move past now", intervalMs: 1 });
}

/** The tests' `ADMIN_TOKEN` (vitest.config.ts), as long as the service requires (32+ characters). */
export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

/**
 * A client address of its own (random, in the IPv6 documentation prefix) for each admin call that
 * names none: the `admin` rate limit counts per address, and the tests make accounts far faster
 * than an operator would (test/rate-limits.test.ts tests the limit from one address).
 */
function nextAdminCaller(): string {
  const [a, b] = crypto.getRandomValues(new Uint16Array(2));
  return `2001:db8::${a?.toString(16)}:${b?.toString(16)}`;
}

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  /** Parsed JSON body (null for an empty body). */
  body: T;
  text: string;
}

export interface CallOptions {
  /** Bearer token; defaults to none. */
  key?: string;
  /** JSON-encoded unless it is a string. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Calls the Worker's fetch handler as an HTTP client would. */
export async function call<T = Record<string, unknown>>(
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
  if (path.startsWith("/admin") && !Object.keys(headers).some((name) => /^cf-connecting-ip$/i.test(name)))
    headers["CF-Connecting-IP"] = nextAdminCaller();
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  const response = await exports.default.fetch(
    new Request(`http://localhost${path}`, { method, headers, body }),
  );
  const text = await response.text();
  let parsed: unknown = null;
  if (text && /json/.test(response.headers.get("content-type") ?? "")) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Creates an account through the admin API; returns its id and API key. */
export async function createAccount(balance = 100): Promise<{ accountId: string; key: string }> {
  const res = await call<{ data: { account: { id: string }; api_key: string } }>("POST", "/admin/accounts", {
    key: ADMIN_TOKEN,
    body: { name: "Test account", balance },
  });
  expect(res.status).toBe(201);
  return { accountId: res.body.data.account.id, key: res.body.data.api_key };
}

/** Asserts an RFC 9457 problem response with the given status and code; returns its body. */
export function expectProblem(
  res: ApiResponse<unknown>,
  status: number,
  code: string,
): Record<string, unknown> {
  const body = res.body as Record<string, unknown>;
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.status).toBe(status);
  expect(body).toMatchObject({
    status,
    code,
    success: false,
    type: `tag:chatapp-otp-api,2026:problems/${code}`,
  });
  expect(typeof body.title).toBe("string");
  expect(typeof body.detail).toBe("string");
  expect(body.request_id).toBe(res.headers.get("x-request-id"));
  return body;
}

/** The session Durable Object stub for a session uuid. */
export function sessionStub(id: string) {
  return env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(id));
}

/** The API's timestamp shape: ISO 8601 UTC with six fractional digits. */
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** A session as the API shows it (the `Session` schema of openapi.json). */
export interface SessionRecord {
  id: string;
  account_id: string;
  session_id: string;
  phone_number: string | null;
  display_name: string;
  status: "pending" | "connected" | "disconnected" | "banned" | "failed";
  reason?: string | null;
  gateway?: "sandbox" | "waha" | "evolution";
  /** docs/sessions.md, Session health. */
  health: {
    timelock: { active: boolean; until: string | null } | null;
    cap: { level: string; used: number; total: number; cycle_end: string | null } | null;
    quality: "green" | "yellow" | "red" | null;
    checked_at: string | null;
  };
  last_seen_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface SessionEnvelope {
  success: boolean;
  session: SessionRecord;
  qr_code?: string;
}

/** Creates a session with `key`; returns the created session and its QR data URI. */
export async function createSession(key: string): Promise<{ session: SessionRecord; qr_code: string }> {
  const res = await call<SessionEnvelope>("POST", "/v1/chatapp/sessions", { key });
  expect(res.status).toBe(201);
  return { session: res.body.session, qr_code: res.body.qr_code ?? "" };
}

/** GET /v1/chatapp/sessions/{id}: the session as the API shows it (asserts 200). */
export async function showSession(key: string, id: string): Promise<SessionRecord> {
  const res = await call<SessionEnvelope>("GET", `/v1/chatapp/sessions/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body.session;
}

/**
 * Runs session `id`'s alarm until `done()` holds (at most 2 s): an alarm the runtime is already
 * running makes `runDurableObjectAlarm` a no-op, so one call may not be enough.
 */
export async function runAlarmUntil(id: string, done: () => boolean): Promise<void> {
  await waitFor(
    async () => {
      await runDurableObjectAlarm(sessionStub(id));
      return done();
    },
    { reason: "the session's alarm to bring the expected change", timeoutMs: 2_000, intervalMs: 10 },
  );
}

/** The session's current QR payload, read from its Durable Object's storage. */
export async function storedQrPayload(id: string): Promise<string | null> {
  return runInDurableObject(sessionStub(id), async (_instance, state) => {
    const row = state.storage.sql.exec<{ qr: string | null }>("SELECT qr FROM session").toArray()[0];
    return row?.qr ?? null;
  });
}

/** A message as the sandbox phone holds it (`sandbox_received`, src/gateways/sandbox.ts). */
export interface PhoneMessage {
  message_id: string;
  to_number: string;
  type: string;
  content: string | null;
}

/**
 * What the sandbox phone of `to` received from session `sessionId`, newest first, read on the
 * phone itself: the session object's `sandbox_received` table, the one place a one-time code is
 * in clear (docs/otp.md, Sending and verifying). `GET /sandbox/sessions/{id}/received` shows codes
 * masked.
 */
export async function phoneReceived(sessionId: string, to: string): Promise<PhoneMessage[]> {
  return runInDurableObject(sessionStub(sessionId), async (_instance, state) =>
    state.storage.sql
      .exec<{ message_id: string; to_number: string; type: string; content: string | null }>(
        `SELECT message_id, to_number, type, content FROM sandbox_received WHERE to_number = ?
         ORDER BY received_at DESC, rowid DESC`,
        to,
      )
      .toArray(),
  );
}

/**
 * The text of message `messageId` on the sandbox phone of `to` ({@link phoneReceived}), once it
 * arrives (at most 15 s: the outbound queue, which the runtime delivers, hands it to the session).
 */
export async function phoneText(sessionId: string, to: string, messageId: string | null): Promise<string> {
  expect(messageId).not.toBeNull();
  const found = await waitFor(
    async () => (await phoneReceived(sessionId, to)).find((m) => m.message_id === messageId),
    { reason: `message ${messageId} to reach ${to} (the outbound queue's delivery)` },
  );
  return found.content ?? "";
}
