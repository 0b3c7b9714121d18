import { env } from "cloudflare:workers";
import { decode } from "fast-png";
import jsQR from "jsqr";
import { afterEach, describe, expect, it, vi } from "vitest";
import { purgeReverseGuesses } from "../src/db/queries/reverse-guesses";
import { hmacSha256Hex } from "../src/lib/crypto";
import { openSecret } from "../src/lib/sealed-secret";
import { otpReplayKey } from "../src/otp/code";
import { type IncomingText, REVERSE_RULES, verifyByIncoming } from "../src/otp/reverse";
import { EXPIRY_SECONDS } from "../src/routes/apps/apps.schemas";
import { accountD1, accountDb, everyTable } from "./databases";
import { type ApiResponse, call, createAccount, expectProblem, sessionStub, TIMESTAMP } from "./helpers";

// Reverse OTP (docs/otp.md, Reverse OTP): nothing is sent; the user sends the code to
// the app's session and that incoming message verifies the OTP. Messages reach the session through
// the sandbox's inbound route (which runs the verification as a real gateway's webhook does) or,
// for redeliveries, through the session object and src/otp/reverse.ts directly. Time is the
// tests': expiry is moved in D1 or the verification's `now` is given.

const SENDER_ID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const TEMPLATE = "Your {{app_name}} code is {{code}}.";
const SESSION_PHONE = "+14155550100";
const USER = "+14155552671";
const OTHER = "+14155552672";
const SECRET = "test-otp-secret-0123456789abcdef"; // vitest.config.ts
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Otp {
  id: string;
  app_id: string;
  mode: string;
  to_number: string | null;
  status: string;
  expires_at: string;
  verified_number: string | null;
  attempts_remaining: number;
  sends_remaining: number;
  refused_messages: number;
  message_id: string | null;
  created_at: string;
  updated_at: string;
}

interface ReverseOtp extends Otp {
  code: string;
  link: string;
  qr_code: string;
}

interface OtpRowInDb {
  id: string;
  mode: string;
  session_id: string | null;
  code_lookup: string | null;
  code_hmac: string;
  to_number: string | null;
  status: string;
  verified_number: string | null;
  verified_at: number | null;
  sends: number;
  expires_at: number;
}

interface Fixture {
  key: string;
  accountId: string;
  sessionId: string;
  appId: string;
}

/** A connected sandbox session on {@link SESSION_PHONE} of account `key`. @returns its id. */
async function connectedSession(key: string, phone = SESSION_PHONE): Promise<string> {
  const created = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key });
  const id = created.body.session.id;
  const scanned = await call<{ session: { status: string } }>("POST", `/sandbox/sessions/${id}/scan`, {
    key,
    body: { phone_number: phone },
  });
  expect(scanned.body.session.status).toBe("connected");
  return id;
}

/** An account (balance in major units) with a connected session and an app whose channel it is. */
async function reverseApp(
  options: { balance?: number; app?: Record<string, unknown> } = {},
): Promise<Fixture> {
  const { key, accountId } = await createAccount(options.balance ?? 100);
  const sessionId = await connectedSession(key);
  const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: {
      name: "Acme",
      sender_id: SENDER_ID,
      message_template: TEMPLATE,
      channels: [sessionId],
      ...options.app,
    },
  });
  expect(app.status, app.text).toBe(201);
  return { key, accountId, sessionId, appId: app.body.data.id };
}

const create = (f: Fixture, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  call<{ success: boolean; data: ReverseOtp }>("POST", `/v1/apps/${f.appId}/otp`, {
    key: f.key,
    body: { mode: "reverse", ...body },
    headers,
  });

/** Creates a reverse OTP that must succeed; returns it. */
async function created(f: Fixture, body: Record<string, unknown> = {}): Promise<ReverseOtp> {
  const res = await create(f, body);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** The user at `from` sends `content` to the session (the sandbox's stand-in for their phone). */
async function inbound(f: Fixture, from: string, content: string) {
  const res = await call("POST", `/sandbox/sessions/${f.sessionId}/inbound`, {
    key: f.key,
    body: { from_number: from, type: "text", content },
  });
  expect(res.status, res.text).toBe(201);
}

const show = (f: Fixture, id: string) => call<{ data: Otp }>("GET", `/v1/otp/${id}`, { key: f.key });

/** OTP `id` of fixture `f`'s account, as its database stores it. */
const otpRow = async (f: Fixture, id: string) =>
  (await accountD1(f.accountId)).prepare("SELECT * FROM otps WHERE id = ?").bind(id).first<OtpRowInDb>();

async function ledger(accountId: string) {
  const { results } = await (await accountD1(accountId))
    .prepare(
      "SELECT kind, amount, balance_after, message_count, otp_id FROM ledger_entries WHERE account_id = ? AND kind <> 'credit' ORDER BY created_at, rowid",
    )
    .bind(accountId)
    .all();
  return results;
}

async function verifiedEvents(f: Fixture): Promise<Otp[]> {
  const res = await call<{ data: { type: string; data: Otp }[] }>(
    "GET",
    "/v1/events?filter[type]=otp.verified",
    {
      key: f.key,
    },
  );
  expect(res.status).toBe(200);
  return res.body.data.map((event) => event.data);
}

/** The `n` that `query` counts in the database of fixture `f`'s account. */
async function count(f: Fixture, query: string, ...params: unknown[]): Promise<number> {
  const row = await (await accountD1(f.accountId))
    .prepare(query)
    .bind(...params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** The text the link writes in, read back from the link. */
const linkText = (link: string) => new URL(link).searchParams.get("text") ?? "";

/** Reads a `data:image/png;base64,…` QR code back (fast-png, then jsQR). */
function qrText(dataUri: string): string {
  const prefix = "data:image/png;base64,";
  expect(dataUri.startsWith(prefix)).toBe(true);
  const png = decode(Uint8Array.from(atob(dataUri.slice(prefix.length)), (ch) => ch.charCodeAt(0)));
  const data = png.data as Uint8Array;
  const rgba = new Uint8ClampedArray(png.width * png.height * 4);
  for (let i = 0; i < png.width * png.height; i++) {
    const value = data[i * png.channels] as number;
    rgba.set([value, value, value, 255], i * 4);
  }
  const qr = jsQR(rgba, png.width, png.height, { inversionAttempts: "dontInvert" });
  expect(qr).not.toBeNull();
  return qr?.data ?? "";
}

/** Whether `text` holds `code` as a whole digit run (a longer number, e.g. a timestamp, does not count). */
const holdsCode = (text: string, code: string) => text.match(/[0-9]+/g)?.includes(code) ?? false;

/**
 * A stand-in for `crypto.getRandomValues` that fills each array with `first`, `first + 1`, … (a
 * code of these digits, src/otp/code.ts `generateCode`); `first` is read at each call.
 */
function countingBytes(first: () => number) {
  return <T extends Parameters<typeof crypto.getRandomValues>[0]>(array: T): T => {
    const start = first();
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    bytes.forEach((_, i) => {
      bytes[i] = start + i;
    });
    return array;
  };
}

const ms = (timestamp: string | null) => Date.parse(timestamp ?? "");

/**
 * A text message from `from` as a gateway hands it to verifyByIncoming: a fresh gateway id, dated
 * now unless `extra` says otherwise.
 */
const incomingText = (
  f: Fixture,
  from: string,
  content: string,
  extra: Partial<IncomingText> = {},
): IncomingText => ({
  accountId: f.accountId,
  sessionId: f.sessionId,
  contact: { phoneNumber: from },
  content,
  providerMessageId: `sandbox-${crypto.randomUUID()}`,
  at: Date.now(),
  ...extra,
});

/** `n` codes of `code`'s length that are not `code` (`code` + 1, + 2, …, wrapping around). */
function wrongCodes(code: string, n: number): string[] {
  const size = code.length;
  return Array.from({ length: n }, (_, i) => String((Number(code) + i + 1) % 10 ** size).padStart(size, "0"));
}

/** The session's recorded candidates that verified nothing, oldest first. */
async function guesses(f: Fixture) {
  const { results } = await (await accountD1(f.accountId))
    .prepare("SELECT sender, otp_id, outcome FROM reverse_guesses WHERE session_id = ? ORDER BY at, rowid")
    .bind(f.sessionId)
    .all<{ sender: string; otp_id: string | null; outcome: string }>();
  return results;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("POST /v1/apps/{id}/otp with mode reverse", () => {
  it("answers the pending OTP with its code, wa.me link and QR code; sends, charges and logs nothing", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const before = Date.now();
    const res = await create(f);
    expect(res.status, res.text).toBe(201);
    const otp = res.body.data;
    expect(res.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(UUID),
        app_id: f.appId,
        mode: "reverse",
        to_number: null,
        to_user_id: null,
        channel: "chatapp",
        status: "pending",
        expires_at: expect.stringMatching(TIMESTAMP),
        verified_number: null,
        verified_contact: null,
        attempts_remaining: 0,
        sends_remaining: 0,
        refused_messages: 0,
        message_id: null,
        attempts: [],
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: otp.created_at,
        code: expect.stringMatching(/^\d{6}$/),
        link: expect.any(String),
        qr_code: expect.any(String),
      },
    });
    expect(ms(otp.expires_at) - ms(otp.created_at)).toBe(600_000);
    expect(ms(otp.created_at)).toBeGreaterThanOrEqual(before - 1);

    // https://wa.me/<the session's number, digits>?text=<the app's template with the code>
    const link = new URL(otp.link);
    expect(`${link.origin}${link.pathname}`).toBe("https://wa.me/14155550100");
    expect(linkText(otp.link)).toBe(`Your Acme code is ${otp.code}.`);
    expect(otp.link).toBe(
      `https://wa.me/14155550100?text=${encodeURIComponent(`Your Acme code is ${otp.code}.`)}`,
    );
    expect(qrText(otp.qr_code)).toBe(otp.link);

    // Stored only as HMACs keyed with OTP_SECRET: code_hmac of the OTP, code_lookup of the session.
    const row = await otpRow(f, otp.id);
    expect(row).toMatchObject({
      mode: "reverse",
      session_id: f.sessionId,
      to_number: null,
      status: "pending",
      sends: 0,
      code_hmac: await hmacSha256Hex(SECRET, `${otp.id}:${otp.code}`),
      code_lookup: await hmacSha256Hex(SECRET, `reverse:${f.sessionId}:${otp.code}`),
    });
    for (const value of Object.values(row ?? {})) expect(holdsCode(String(value), otp.code)).toBe(false);
    // Without an Idempotency-Key no table holds the code.
    for (const { name, rows } of await everyTable()) expect(holdsCode(rows, otp.code), name).toBe(false);

    // Nothing sent, charged or counted toward the per-number limit.
    expect(await count(f, "SELECT COUNT(*) AS n FROM messages WHERE account_id = ?", f.accountId)).toBe(0);
    expect(await count(f, "SELECT COUNT(*) AS n FROM otp_sends WHERE otp_id = ?", otp.id)).toBe(0);
    expect(await ledger(f.accountId)).toEqual([]);

    // GET never shows the code, the link or the QR code.
    const { code: _code, link: _link, qr_code: _qr, ...record } = otp;
    const shown = await show(f, otp.id);
    expect(shown.body).toEqual({ success: true, data: record });
    expect(holdsCode(shown.text, otp.code)).toBe(false);
  });

  it("takes to_number, stored as E.164, and uses the app's code_size, template and expiry", async () => {
    const f = await reverseApp({
      app: { code_size: 8, expiry_seconds: 60, message_template: "{code} for { app_name }" },
    });
    const otp = await created(f, { to_number: "+1 (415) 555-2671" });
    expect(otp.to_number).toBe(USER);
    expect(otp.code).toMatch(/^\d{8}$/);
    expect(linkText(otp.link)).toBe(`${otp.code} for Acme`);
    expect(ms(otp.expires_at) - ms(otp.created_at)).toBe(60_000);
    expect((await otpRow(f, otp.id))?.to_number).toBe(USER);
  });

  it("uses the app's first connected channel", async () => {
    const { key, accountId } = await createAccount();
    const pending = (await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key })).body
      .session.id;
    const connected = await connectedSession(key, "+14155550111");
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: SENDER_ID, channels: [pending, connected] },
    });
    const f = { key, accountId, sessionId: connected, appId: app.body.data.id };
    const otp = await created(f);
    expect((await otpRow(f, otp.id))?.session_id).toBe(connected);
    expect(otp.link.startsWith("https://wa.me/14155550111?text=")).toBe(true);
  });

  it("replays a retried create with the same Idempotency-Key: one OTP, the same code, stored sealed", async () => {
    const f = await reverseApp();
    const headers = { "Idempotency-Key": `rev-${crypto.randomUUID()}` };
    const first = await create(f, {}, headers);
    const retry = await create(f, {}, headers);
    expect(first.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await count(f, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(1);
    // The stored answer is sealed under a key derived from OTP_SECRET: no table holds the code.
    const stored = await (await accountD1(f.accountId))
      .prepare("SELECT response_body FROM idempotency_keys WHERE key = ?")
      .bind(headers["Idempotency-Key"])
      .first<{ response_body: string }>();
    expect(stored?.response_body).toMatch(/^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    const opened = await openSecret(
      await otpReplayKey(env),
      `${f.accountId}:${headers["Idempotency-Key"]}`,
      stored?.response_body ?? "",
    );
    expect(JSON.parse(opened)).toEqual(first.body);
    for (const { name, rows } of await everyTable()) {
      expect(holdsCode(rows, first.body.data.code), name).toBe(false);
    }
  });

  it("draws another code while a live reverse OTP of the session holds one, and gives up with 503 otp_codes_exhausted", async () => {
    // 4 digits: only with to_number (REVERSE_RULES.minOpenCodeSize).
    const f = await reverseApp({ app: { code_size: 4 } });
    const forUser = { to_number: USER };
    // Every draw of the platform's random bytes gives 1, 2, 3, 4: the same code each time.
    const fixed = vi.spyOn(crypto, "getRandomValues").mockImplementation(countingBytes(() => 1));
    const first = await created(f, forUser);
    expect(first.code).toBe("1234");
    const refused = await create(f, forUser);
    const body = expectProblem(refused as ApiResponse, 503, "otp_codes_exhausted");
    expect(body.detail).toContain("code_size");
    expect(fixed).toHaveBeenCalledTimes(1 + 5);
    expect(await count(f, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(1);

    // Taken on the first draw only: the second draw is free.
    let calls = 0;
    fixed.mockImplementation(countingBytes(() => (calls++ === 0 ? 1 : 5)));
    const second = await created(f, forUser);
    expect(second.code).toBe("5678");

    // Once the first is verified its code is free again.
    await inbound(f, USER, first.code);
    expect((await otpRow(f, first.id))?.status).toBe("verified");
    fixed.mockImplementation(countingBytes(() => 1));
    expect((await created(f, forUser)).code).toBe("1234");
  });
});

describe("verification by the user's message", () => {
  it("the right sender's message verifies it, with its event, charging reverse_price once", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const otp = await created(f, { to_number: USER });
    const before = Date.now();
    await inbound(f, USER, linkText(otp.link));

    const row = await otpRow(f, otp.id);
    expect(row).toMatchObject({ status: "verified", verified_number: USER });
    expect(row?.verified_at).toBeGreaterThanOrEqual(before);
    const shown = (await show(f, otp.id)).body.data;
    expect(shown).toMatchObject({ status: "verified", verified_number: USER, mode: "reverse" });
    expect(await verifiedEvents(f)).toEqual([shown]);
    expect(await ledger(f.accountId)).toEqual([
      { kind: "charge", amount: -5, balance_after: 100 * 100 - 5, message_count: 0, otp_id: otp.id },
    ]);

    // The same text again verifies and charges nothing more.
    await inbound(f, USER, linkText(otp.link));
    expect(await ledger(f.accountId)).toHaveLength(1);
    expect(await verifiedEvents(f)).toHaveLength(1);
    expect((await show(f, otp.id)).body.data).toEqual(shown);
  });

  it("another sender's message changes nothing when to_number is set", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const otp = await created(f, { to_number: USER });
    await inbound(f, OTHER, linkText(otp.link));
    expect(await otpRow(f, otp.id)).toMatchObject({
      status: "pending",
      verified_number: null,
      verified_at: null,
    });
    expect(await ledger(f.accountId)).toEqual([]);
    expect(await verifiedEvents(f)).toEqual([]);
    // The right sender still can.
    await inbound(f, USER, otp.code);
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "verified", verified_number: USER });
  });

  it("any sender's message verifies it when to_number is not set; the code is found among other words and numbers", async () => {
    const f = await reverseApp();
    const otp = await created(f);
    await inbound(f, OTHER, `hi, order 12 of 2025: ${otp.code}!`);
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "verified", verified_number: OTHER });
    // reverse_price 0: no ledger entry.
    expect(await ledger(f.accountId)).toEqual([]);
    expect((await verifiedEvents(f)).map((e) => e.verified_number)).toEqual([OTHER]);
  });

  it("a message after expires_at changes nothing, and the OTP reads expired", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const otp = await created(f);
    await (await accountD1(f.accountId))
      .prepare("UPDATE otps SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, otp.id)
      .run();
    await inbound(f, USER, otp.code);
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "pending", verified_number: null });
    expect((await show(f, otp.id)).body.data.status).toBe("expired");
    expect(await ledger(f.accountId)).toEqual([]);
    expect(await verifiedEvents(f)).toEqual([]);
  });

  it("expires_at is exclusive: a verification at that instant is refused, one just before it is not", async () => {
    const f = await reverseApp();
    const otp = await created(f);
    const expiresAt = ms(otp.expires_at);
    const db = await accountDb(f.accountId);
    const message: IncomingText = {
      accountId: f.accountId,
      sessionId: f.sessionId,
      contact: { phoneNumber: USER },
      content: otp.code,
      at: ms(otp.created_at),
    };
    expect(await verifyByIncoming(env, db, message, expiresAt)).toBeNull();
    expect((await otpRow(f, otp.id))?.status).toBe("pending");
    const verified = await verifyByIncoming(env, db, message, expiresAt - 1);
    expect(verified).toMatchObject({
      id: otp.id,
      status: "verified",
      verifiedNumber: USER,
      verifiedAt: expiresAt - 1,
    });
  });

  it("a message redelivered by the gateway verifies and charges once, and heals a verification lost after storing", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const otp = await created(f, { to_number: USER });
    const event = {
      type: "incoming" as const,
      providerMessageId: `sandbox-${crypto.randomUUID()}`,
      from: { phoneNumber: USER.slice(1) },
      messageType: "text" as const,
      content: linkText(otp.link),
      mediaUrl: null,
      at: Date.now(),
    };
    // Stored, then the Worker stops before verifying: the OTP is still pending.
    const stored = await sessionStub(f.sessionId).gatewayEvents("sandbox", [event]);
    expect(stored).toHaveLength(1);
    expect((await otpRow(f, otp.id))?.status).toBe("pending");
    // The redelivery stores nothing new but lists the message again, and it verifies the OTP ...
    const replayed = await sessionStub(f.sessionId).gatewayEvents("sandbox", [event]);
    expect(replayed).toEqual(stored);
    const db = await accountDb(f.accountId);
    const [message] = replayed ?? [];
    if (!message) throw new Error("no message");
    const results = await Promise.all([
      verifyByIncoming(env, db, message),
      verifyByIncoming(env, db, message),
    ]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    // ... once: a third delivery, and the two concurrent ones, charged once.
    expect(await verifyByIncoming(env, db, message)).toBeNull();
    expect(
      await count(
        f,
        "SELECT COUNT(*) AS n FROM messages WHERE provider_message_id = ?",
        event.providerMessageId,
      ),
    ).toBe(1);
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "verified", verified_number: USER });
    expect(await ledger(f.accountId)).toEqual([
      { kind: "charge", amount: -5, balance_after: 100 * 100 - 5, message_count: 0, otp_id: otp.id },
    ]);
    expect(await verifiedEvents(f)).toHaveLength(1);
  });

  it("two reverse OTPs of one session are each verified by their own code", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const first = await created(f);
    const second = await created(f, { to_number: OTHER });
    expect(second.code).not.toBe(first.code);
    await inbound(f, OTHER, linkText(second.link));
    expect((await otpRow(f, first.id))?.status).toBe("pending");
    expect(await otpRow(f, second.id)).toMatchObject({ status: "verified", verified_number: OTHER });
    await inbound(f, USER, linkText(first.link));
    expect(await otpRow(f, first.id)).toMatchObject({ status: "verified", verified_number: USER });
    expect((await ledger(f.accountId)).map((e) => e.otp_id)).toEqual([second.id, first.id]);
  });

  it("a message on another session, a wrong code or a send-mode OTP's code verifies nothing", async () => {
    const f = await reverseApp();
    const otp = await created(f);
    const otherSession = await connectedSession(f.key, "+14155550199");
    const res = await call("POST", `/sandbox/sessions/${otherSession}/inbound`, {
      key: f.key,
      body: { from_number: USER, type: "text", content: otp.code },
    });
    expect(res.status).toBe(201);
    const wrong = otp.code.slice(0, -1) + String((Number(otp.code.at(-1)) + 1) % 10);
    await inbound(f, USER, `${wrong} ${otp.code}0`);
    expect((await otpRow(f, otp.id))?.status).toBe("pending");
  });

  it("verifies when the balance no longer covers reverse_price, charges nothing and logs reverse_otp_uncharged", async () => {
    const warnings: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => {
      warnings.push(args.map(String).join(" "));
    });
    const f = await reverseApp({ balance: 0.05, app: { reverse_price: 0.05 } });
    const otp = await created(f);
    // The price rises past the balance before the user's message arrives.
    expect(
      (await call("PATCH", `/v1/apps/${f.appId}`, { key: f.key, body: { reverse_price: 1 } })).status,
    ).toBe(200);
    await inbound(f, USER, otp.code);
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "verified", verified_number: USER });
    expect(await ledger(f.accountId)).toEqual([]);
    expect(await verifiedEvents(f)).toHaveLength(1);
    const logged = warnings
      .filter((line) => line.includes("reverse_otp_uncharged"))
      .map((line) => JSON.parse(line));
    expect(logged).toEqual([
      {
        level: "warn",
        event: "reverse_otp_uncharged",
        otp_id: otp.id,
        account_id: f.accountId,
        price: 100,
        balance: 5,
      },
    ]);
  });
});

describe("a user known by a user id (docs/contacts.md, Contacts)", () => {
  const BSUID = "US.13491208655302741918";
  const fromUser = (f: Fixture, content: string, extra: Record<string, string> = {}) =>
    call("POST", `/sandbox/sessions/${f.sessionId}/inbound`, {
      key: f.key,
      body: { from_user_id: BSUID, username: "@jane", type: "text", content, ...extra },
    });

  it("verifies an OTP without to_number, reporting verified_contact with no number", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const otp = await created(f);
    expect((await fromUser(f, otp.code)).status).toBe(201);
    const shown = await call<{ data: Record<string, unknown> }>("GET", `/v1/otp/${otp.id}`, { key: f.key });
    expect(shown.body.data).toMatchObject({
      status: "verified",
      verified_number: null,
      verified_contact: { phone_number: null, user_id: BSUID },
    });
  });

  it("verifies an OTP for a number only when the user id comes with that number", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const otp = await created(f, { to_number: USER });
    expect((await fromUser(f, otp.code)).status).toBe(201);
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "pending", verified_number: null });
    expect((await fromUser(f, otp.code, { from_number: USER })).status).toBe(201);
    const shown = await call<{ data: Record<string, unknown> }>("GET", `/v1/otp/${otp.id}`, { key: f.key });
    expect(shown.body.data).toMatchObject({
      status: "verified",
      verified_number: USER,
      verified_contact: { phone_number: USER, user_id: BSUID },
    });
  });

  it("verifies by the user id alone once the contact is known by a number: that number, and only for it", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    // The user wrote once with both: their contact is known by the number from then on.
    expect((await fromUser(f, "hello", { from_number: USER })).status).toBe(201);
    const theirs = await created(f, { to_number: USER });
    const another = await created(f, { to_number: OTHER });
    expect((await fromUser(f, another.code)).status).toBe(201);
    expect(await otpRow(f, another.id)).toMatchObject({ status: "pending", verified_number: null });
    expect((await fromUser(f, theirs.code)).status).toBe(201);
    const shown = await call<{ data: Record<string, unknown> }>("GET", `/v1/otp/${theirs.id}`, {
      key: f.key,
    });
    expect(shown.body.data).toMatchObject({
      status: "verified",
      verified_number: USER,
      verified_contact: { phone_number: USER, user_id: BSUID },
    });
    const refused = await call<{ data: Record<string, unknown> }>("GET", `/v1/otp/${another.id}`, {
      key: f.key,
    });
    expect(refused.body.data).toMatchObject({ status: "pending", refused_messages: 1 });
  });
});

describe("guessing (docs/security.md, Reverse OTP guessing)", () => {
  const MAX = REVERSE_RULES.maxSenderFailures;

  it("a sender past maxSenderFailures wrong codes verifies nothing, the right code included, and the OTP records it", async () => {
    expect(MAX).toBe(10);
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const otp = await created(f);
    const db = await accountDb(f.accountId);
    const wrong = wrongCodes(otp.code, MAX);
    // Five wrong codes in one message, delivered twice by the gateway: counted once.
    const first = incomingText(f, OTHER, wrong.slice(0, 5).join(" "));
    expect(await verifyByIncoming(env, db, first)).toBeNull();
    expect(await verifyByIncoming(env, db, first)).toBeNull();
    expect(await guesses(f)).toHaveLength(5);
    // Four more, then the right code beside a tenth wrong one: that message's own wrong code
    // makes ten, so even the right code in it verifies nothing.
    await verifyByIncoming(env, db, incomingText(f, OTHER, wrong.slice(5, 9).join(" ")));
    const refusedMessage = incomingText(f, OTHER, `${wrong[9]} ${otp.code}`);
    expect(await verifyByIncoming(env, db, refusedMessage)).toBeNull();
    // And so does every later message of that number, the right code alone included.
    await inbound(f, OTHER, otp.code);
    expect(await otpRow(f, otp.id)).toMatchObject({
      status: "pending",
      verified_number: null,
      verified_at: null,
    });
    const shown = (await show(f, otp.id)).body.data;
    expect(shown).toMatchObject({ status: "pending", refused_messages: 2, attempts_remaining: 0 });
    expect(await guesses(f)).toEqual([
      ...Array.from({ length: MAX }, () => ({ sender: OTHER, otp_id: null, outcome: "no_match" })),
      { sender: OTHER, otp_id: otp.id, outcome: "over_limit" },
      { sender: OTHER, otp_id: otp.id, outcome: "over_limit" },
    ]);
    // A redelivery of the refused message records nothing more.
    expect(await verifyByIncoming(env, db, refusedMessage)).toBeNull();
    expect((await show(f, otp.id)).body.data.refused_messages).toBe(2);
    expect(await ledger(f.accountId)).toEqual([]);
    expect(await verifiedEvents(f)).toEqual([]);

    // Another number's guesses are its own: the user's right code verifies it.
    await inbound(f, USER, otp.code);
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "verified", verified_number: USER });
    expect((await verifiedEvents(f)).map((e) => [e.verified_number, e.refused_messages])).toEqual([
      [USER, 2],
    ]);
  });

  it("one wrong code short of the limit, the right code still verifies", async () => {
    const f = await reverseApp();
    const otp = await created(f);
    const db = await accountDb(f.accountId);
    const wrong = wrongCodes(otp.code, MAX - 1);
    await verifyByIncoming(env, db, incomingText(f, OTHER, wrong.slice(0, 5).join(" ")));
    await verifyByIncoming(env, db, incomingText(f, OTHER, wrong.slice(5).join(" ")));
    expect(await verifyByIncoming(env, db, incomingText(f, OTHER, otp.code))).toMatchObject({
      id: otp.id,
      status: "verified",
      verifiedNumber: OTHER,
      failedAttempts: 0,
    });
  });

  it("counts only guesses since the OTP was created, and none while the session has no live reverse OTP", async () => {
    const f = await reverseApp();
    const db = await accountDb(f.accountId);
    // No live reverse OTP: ordinary numbers in chat are not stored.
    await inbound(f, OTHER, "order 123456, ref 7654321, 4444 55555 666666");
    expect(await guesses(f)).toEqual([]);
    // Ten wrong codes against an OTP made a minute ago, half a minute ago ...
    const older = await created(f);
    await (await accountD1(f.accountId))
      .prepare("UPDATE otps SET created_at = created_at - 60000 WHERE id = ?")
      .bind(older.id)
      .run();
    for (const batch of [0, 5]) {
      const codes = wrongCodes(older.code, MAX).slice(batch, batch + 5);
      await verifyByIncoming(env, db, incomingText(f, OTHER, codes.join(" ")), Date.now() - 30_000);
    }
    // ... leave the sender locked out of it, not of one created after them.
    const newer = await created(f);
    await inbound(f, OTHER, older.code);
    expect((await otpRow(f, older.id))?.status).toBe("pending");
    await inbound(f, OTHER, newer.code);
    expect(await otpRow(f, newer.id)).toMatchObject({ status: "verified", verified_number: OTHER });
  });

  it("another number's message with a to_number OTP's code is a failed guess of that number, recorded on the OTP", async () => {
    const f = await reverseApp();
    const forUser = await created(f, { to_number: USER });
    const open = await created(f);
    const db = await accountDb(f.accountId);
    await verifyByIncoming(env, db, incomingText(f, OTHER, forUser.code));
    expect((await show(f, forUser.id)).body.data).toMatchObject({ status: "pending", refused_messages: 1 });
    // With nine wrong codes after it, OTHER has ten failed guesses: the open OTP refuses it too.
    const wrong = wrongCodes(open.code, MAX + 2)
      .filter((code) => code !== forUser.code)
      .slice(0, MAX - 1);
    await verifyByIncoming(env, db, incomingText(f, OTHER, wrong.slice(0, 5).join(" ")));
    await verifyByIncoming(env, db, incomingText(f, OTHER, wrong.slice(5).join(" ")));
    await inbound(f, OTHER, open.code);
    expect((await show(f, open.id)).body.data).toMatchObject({ status: "pending", refused_messages: 1 });
    expect((await guesses(f)).filter((g) => g.otp_id !== null)).toEqual([
      { sender: OTHER, otp_id: forUser.id, outcome: "wrong_sender" },
      { sender: OTHER, otp_id: open.id, outcome: "over_limit" },
    ]);
    // The rightful sender of each is not affected.
    await inbound(f, USER, forUser.code);
    expect(await otpRow(f, forUser.id)).toMatchObject({ status: "verified", verified_number: USER });
  });

  it("a message dated before the OTP was created verifies nothing (a replayed old message), and is recorded on it", async () => {
    const f = await reverseApp({ app: { reverse_price: 0.05 } });
    const otp = await created(f);
    const createdAt = ms(otp.created_at);
    const db = await accountDb(f.accountId);
    const old = incomingText(f, USER, otp.code, { at: createdAt - (createdAt % 1000) - 1 });
    expect(await verifyByIncoming(env, db, old)).toBeNull();
    expect(await otpRow(f, otp.id)).toMatchObject({ status: "pending", verified_number: null });
    expect((await show(f, otp.id)).body.data.refused_messages).toBe(1);
    expect(await guesses(f)).toEqual([{ sender: USER, otp_id: otp.id, outcome: "before_creation" }]);
    expect(await ledger(f.accountId)).toEqual([]);
    // Gateways date messages to the second: one dated in the second of the creation verifies.
    const sameSecond = incomingText(f, USER, otp.code, { at: createdAt - (createdAt % 1000) });
    expect(await verifyByIncoming(env, db, sameSecond)).toMatchObject({ id: otp.id, verifiedNumber: USER });
  });

  it("keeps guesses longer than any OTP lives, and the hourly sweep deletes older ones", async () => {
    expect(REVERSE_RULES.guessRetentionMs).toBeGreaterThan(EXPIRY_SECONDS.max * 1000);
    const f = await reverseApp();
    const otp = await created(f);
    const db = await accountDb(f.accountId);
    const now = Date.now();
    await verifyByIncoming(env, db, incomingText(f, OTHER, wrongCodes(otp.code, 1).join()), now - 10_000);
    await verifyByIncoming(env, db, incomingText(f, OTHER, wrongCodes(otp.code, 2)[1] ?? ""), now);
    await purgeReverseGuesses(db, now - 5_000);
    expect(await guesses(f)).toHaveLength(1);
  });
});

describe("reverse OTPs: errors", () => {
  it("is 402 insufficient_balance when the balance is below reverse_price, writing nothing", async () => {
    const f = await reverseApp({ balance: 0.04, app: { reverse_price: 0.05 } });
    expectProblem((await create(f)) as ApiResponse, 402, "insufficient_balance");
    expect(await count(f, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(0);
    // At the price exactly, it is created.
    const g = await reverseApp({ balance: 0.05, app: { reverse_price: 0.05 } });
    expect((await create(g)).status).toBe(201);
  });

  it("is 409 otp_is_reverse for verify and resend", async () => {
    const f = await reverseApp();
    const otp = await created(f);
    const verify = await call("POST", `/v1/otp/${otp.id}/verify`, { key: f.key, body: { code: otp.code } });
    expectProblem(verify, 409, "otp_is_reverse");
    expectProblem(await call("POST", `/v1/otp/${otp.id}/resend`, { key: f.key }), 409, "otp_is_reverse");
    expect((await otpRow(f, otp.id))?.status).toBe("pending");
  });

  it("is 422 app_has_no_channel without a channel, 409 session_not_connected when none is connected", async () => {
    const { key, accountId } = await createAccount();
    const bare = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: { name: "Bare", sender_id: SENDER_ID },
    });
    const f = { key, accountId, sessionId: "", appId: bare.body.data.id };
    expectProblem((await create(f)) as ApiResponse, 422, "app_has_no_channel");
    const pending = (await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key })).body
      .session.id;
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: { name: "Pending", sender_id: SENDER_ID, channels: [pending] },
    });
    expectProblem(
      (await create({ ...f, appId: app.body.data.id })) as ApiResponse,
      409,
      "session_not_connected",
    );
    expect(await count(f, "SELECT COUNT(*) AS n FROM otps WHERE account_id = ?", accountId)).toBe(0);
  });

  it("is 422 validation_failed naming to_number without one when the app's code_size is below 6, writing nothing", async () => {
    expect(REVERSE_RULES.minOpenCodeSize).toBe(6);
    const f = await reverseApp({ app: { code_size: 5 } });
    const problem = expectProblem((await create(f)) as ApiResponse, 422, "validation_failed");
    expect(Object.keys(problem.errors as object)).toEqual(["to_number"]);
    expect(problem.detail).toContain("code_size");
    expect(await count(f, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(0);
    // With to_number, or with 6 digits, it is made.
    expect((await created(f, { to_number: USER })).code).toHaveLength(5);
    await call("PATCH", `/v1/apps/${f.appId}`, { key: f.key, body: { code_size: 6 } });
    expect((await created(f)).code).toHaveLength(6);
  });

  it("is 409 account_limit_reached when the session holds maxLivePerSession live reverse OTPs, writing nothing", async () => {
    const max = REVERSE_RULES.maxLivePerSession;
    expect(max).toBe(500);
    const f = await reverseApp();
    const now = Date.now();
    // The session full: max - 1 live ones written straight to D1, then one through the API.
    await (await accountD1(f.accountId))
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
      INSERT INTO otps (id, account_id, app_id, mode, session_id, code_lookup, code_hmac, status, failed_attempts,
        sends, last_sent_at, expires_at, created_at, updated_at)
      SELECT ? || '-' || i, ?, ?, 'reverse', ?, 'lookup-' || i, 'hmac', 'pending', 0, 0, ?, ?, ?, ? FROM n`,
      )
      .bind(max - 1, f.appId, f.accountId, f.appId, f.sessionId, now, now + 600_000, now, now)
      .run();
    const last = await created(f);
    const refused = expectProblem((await create(f)) as ApiResponse, 409, "account_limit_reached");
    expect(refused).toMatchObject({ limit: "max_live_reverse_otps", max, current: max });
    expect(await count(f, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(max);
    // An expired one and a verified one free their slots.
    await (await accountD1(f.accountId))
      .prepare("UPDATE otps SET expires_at = ? WHERE id = ?")
      .bind(now, `${f.appId}-1`)
      .run();
    await inbound(f, USER, last.code);
    expect((await otpRow(f, last.id))?.status).toBe("verified");
    await created(f);
    await created(f);
    expectProblem((await create(f)) as ApiResponse, 409, "account_limit_reached");
  });

  it("is 422 otp_country_not_allowed for a to_number outside allowed_countries", async () => {
    const f = await reverseApp({ app: { allowed_countries: ["GB"] } });
    expectProblem((await create(f, { to_number: USER })) as ApiResponse, 422, "otp_country_not_allowed");
    // Without to_number there is no number to check.
    expect((await create(f)).status).toBe(201);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["an unknown mode", { mode: "pull", to_number: USER }, "mode"],
    ["a non-string mode", { mode: 1 }, "mode"],
    ["send mode without to_number", { mode: "send" }, "to_number"],
    ["no mode and no to_number", {}, "to_number"],
    ["reverse with an invalid to_number", { mode: "reverse", to_number: "12" }, "to_number"],
    ["reverse with an unknown field", { mode: "reverse", code: "123456" }, ""],
  ])("is 422 validation_failed for %s", async (_label, body, field) => {
    const f = await reverseApp();
    const res = await call("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body });
    const problem = expectProblem(res, 422, "validation_failed");
    if (field) expect(Object.keys(problem.errors as object)).toEqual([field]);
    expect(await count(f, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(0);
  });
});
