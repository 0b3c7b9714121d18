import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../src/app";
import { sha256Hex } from "../src/lib/crypto";
import { toE164 } from "../src/lib/phone";
import { refuse, restoreD1 } from "./d1-outage";
import { accountD1 } from "./databases";
import { call, createAccount, expectProblem } from "./helpers";
import {
  balanceOf,
  connectedSession,
  ledgerOf,
  storedMessageCount,
  waitForMessages,
} from "./message-fixtures";

// `Idempotency-Key` (docs/messages.md, Sending messages): per account and key, the first response is stored
// and replayed to a retry of the same request (charging nothing again); another request under the
// same key is 422 `idempotency_key_reused`; a retry while the first still runs is 409
// `idempotency_key_in_use`. A 5xx is the key's answer too (Stripe's rule): the request may have
// changed something before it failed, so a retry replays it rather than running again.

interface SendResponse {
  data: { messages: { id: string; to_number: string }[]; count: number; new_balance: number };
}

function send(key: string, body: unknown, idempotencyKey?: string) {
  return call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body,
    headers: idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey },
  });
}

const text = (session: string, to = ["+14155552671", "+14155552672"]) => ({
  chatapp_session_id: session,
  to_number: to,
  type: "text",
  content: "hello",
  delay_between: 0,
});

describe("POST /v1/chatapp/messages", () => {
  let key = "";
  let accountId = "";
  let session = "";

  beforeAll(async () => {
    ({ key, accountId } = await createAccount(100));
    session = (await connectedSession(key)).id;
  });

  it("replays the stored response to a retry with the same key and body, and charges once", async () => {
    const first = await send(key, text(session), "order-1");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(first.body.data.new_balance).toBe(99.98);

    for (let retry = 0; retry < 2; retry++) {
      const again = await send(key, text(session), "order-1");
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("content-type")).toMatch(/^application\/json/);
      expect(again.text).toBe(first.text);
    }
    expect(await balanceOf(accountId)).toBe(99.98);
    expect(await storedMessageCount(accountId)).toBe(2);
    expect((await ledgerOf(accountId)).filter((e) => e.kind === "charge")).toEqual([
      { kind: "charge", amount: -2, balance_after: 9998, message_count: 2 },
    ]);
    // The replayed ids are the stored messages.
    for (const message of first.body.data.messages) {
      const shown = await call<{ data: { id: string } }>("GET", `/v1/chatapp/messages/${message.id}`, {
        key,
      });
      expect(shown.body.data.id).toBe(message.id);
    }
  });

  it("refuses the same key with a different body: 422 idempotency_key_reused, nothing created", async () => {
    const first = await send(key, text(session, ["+14155552673"]), "order-2");
    expect(first.status).toBe(201);
    const before = await balanceOf(accountId);
    const count = await storedMessageCount(accountId);

    const other = await send(key, text(session, ["+14155552674"]), "order-2");
    expectProblem(other, 422, "idempotency_key_reused");
    expect(
      (await send(key, { ...text(session, ["+14155552673"]), content: "HELLO" }, "order-2")).status,
    ).toBe(422);
    // The same key on another endpoint is another request too.
    expectProblem(
      await call("POST", "/v1/chatapp/sessions", { key, headers: { "Idempotency-Key": "order-2" } }),
      422,
      "idempotency_key_reused",
    );

    expect(await balanceOf(accountId)).toBe(before);
    expect(await storedMessageCount(accountId)).toBe(count);
    // The original is still what the key replays.
    const again = await send(key, text(session, ["+14155552673"]), "order-2");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
  });

  it("a concurrent retry while the first is in flight is 409 idempotency_key_in_use (or a replay), charged once", async () => {
    const numbers = Array.from({ length: 1000 }, (_, i) => `+1415555${2000 + i}`);
    for (const n of numbers) expect(toE164(n)).toBe(n);
    const before = await balanceOf(accountId);
    const count = await storedMessageCount(accountId);
    const body = text(session, numbers);

    const [a, b] = await Promise.all([send(key, body, "bulk-1"), send(key, body, "bulk-1")]);
    const results = [a, b];
    const created = results.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
    expect(created).toHaveLength(1);
    const original = created[0];
    if (!original) throw new Error("unreachable");
    expect(original.body.data.count).toBe(1000);
    const other = results.find((r) => r !== original);
    if (!other) throw new Error("unreachable");
    if (other.status === 409) {
      expectProblem(other, 409, "idempotency_key_in_use");
      expect(other.headers.get("retry-after")).toBe("1");
    } else {
      expect(other.status).toBe(201);
      expect(other.headers.get("idempotent-replayed")).toBe("true");
      expect(other.text).toBe(original.text);
    }

    // 1,000 texts at 0.01, charged once.
    expect(await balanceOf(accountId)).toBe(Math.round((before - 10) * 100) / 100);
    expect(await storedMessageCount(accountId)).toBe(count + 1000);
    const charges = (await ledgerOf(accountId)).filter((e) => e.message_count === 1000);
    expect(charges).toHaveLength(1);
    // Once the first has finished, a retry replays it.
    const later = await send(key, body, "bulk-1");
    expect(later.headers.get("idempotent-replayed")).toBe("true");
    expect(later.text).toBe(original.text);
  });

  it("answers 409 idempotency_key_in_use while the key is reserved by a running request", async () => {
    // The state the first request leaves while it runs: the key reserved for its request, no
    // response yet (the middleware hashes method, path and raw body).
    const body = text(session, ["+14155552679"]);
    const requestHash = await sha256Hex(`POST /v1/chatapp/messages\n${JSON.stringify(body)}`);
    const now = Date.now();
    await (await accountD1(accountId))
      .prepare(
        "INSERT INTO idempotency_keys (account_id, key, request_hash, status, created_at, expires_at) VALUES (?, ?, ?, 'in_progress', ?, ?)",
      )
      .bind(accountId, "running-1", requestHash, now, now + 3600_000)
      .run();
    const count = await storedMessageCount(accountId);
    const busy = await send(key, body, "running-1");
    expectProblem(busy, 409, "idempotency_key_in_use");
    expect(busy.headers.get("retry-after")).toBe("1");
    // Another body under the running key is another request.
    expectProblem(
      await send(key, text(session, ["+14155552680"]), "running-1"),
      422,
      "idempotency_key_reused",
    );
    expect(await storedMessageCount(accountId)).toBe(count);
  });

  it("never runs again a request that died in flight (reserved over 2 minutes ago): its key answers a stored 500", async () => {
    const body = text(session, ["+14155552681"]);
    const first = await send(key, body, "died-1");
    expect(first.status).toBe(201);
    const before = await balanceOf(accountId);
    const count = await storedMessageCount(accountId);
    // What a request leaves when it stops after charging but before its answer is stored (the
    // Worker killed, or D1 refusing the key's last write): the key reserved, no response.
    const longAgo = Date.now() - 121_000;
    await (await accountD1(accountId))
      .prepare(
        "UPDATE idempotency_keys SET status = 'in_progress', response_status = NULL, response_body = NULL, created_at = ? WHERE account_id = ? AND key = ?",
      )
      .bind(longAgo, accountId, "died-1")
      .run();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});

    const retry = await send(key, body, "died-1");
    const problem = expectProblem(retry, 500, "internal_error");
    expect(problem.detail).toMatch(/stopped before it answered/);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(errors.mock.calls.map((args) => String(args[0])).join("\n")).toContain("idempotency_request_lost");
    // The key keeps that answer.
    const again = await send(key, body, "died-1");
    expect(again.status).toBe(500);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(retry.text);
    // Nothing was charged or created again.
    expect(await balanceOf(accountId)).toBe(before);
    expect(await storedMessageCount(accountId)).toBe(count);
    vi.restoreAllMocks();
  });

  it("keys belong to one account: another account can use the same key", async () => {
    const first = await send(key, text(session, ["+14155552675"]), "shared-key");
    expect(first.status).toBe(201);
    const other = await createAccount(1);
    const otherSession = (await connectedSession(other.key)).id;
    const theirs = await send(other.key, text(otherSession, ["+14155552675"]), "shared-key");
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.data.messages[0]?.id).not.toBe(first.body.data.messages[0]?.id);
    expect(theirs.body.data.new_balance).toBe(0.99);
    expect(await storedMessageCount(other.accountId)).toBe(1);
    // And the other account's identical body under the key is replayed for them, not for us.
    const theirsAgain = await send(other.key, text(otherSession, ["+14155552675"]), "shared-key");
    expect(theirsAgain.text).toBe(theirs.text);
    const oursAgain = await send(key, text(session, ["+14155552675"]), "shared-key");
    expect(oursAgain.text).toBe(first.text);
  });

  it("stores and replays an error response too", async () => {
    const pending = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key });
    const pendingId = pending.body.session.id;
    const count = await storedMessageCount(accountId);
    const before = await balanceOf(accountId);

    const refused = await send(key, text(pendingId), "while-pending");
    expectProblem(refused, 409, "session_not_connected");
    // Now the session is connected, but the key replays the first answer.
    await call("POST", `/sandbox/sessions/${pendingId}/scan`, { key, body: {} });
    const replayed = await send(key, text(pendingId), "while-pending");
    expect(replayed.status).toBe(409);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.headers.get("content-type")).toBe("application/problem+json");
    expect(replayed.text).toBe(refused.text);
    expect(await storedMessageCount(accountId)).toBe(count);
    expect(await balanceOf(accountId)).toBe(before);
    // A new key sends.
    expect((await send(key, text(pendingId), "after-connect")).status).toBe(201);

    // A validation failure is the first response of its key as well.
    const invalid = await send(key, { ...text(session), type: "gif" }, "invalid-1");
    expectProblem(invalid, 422, "validation_failed");
    const invalidAgain = await send(key, { ...text(session), type: "gif" }, "invalid-1");
    expect(invalidAgain.headers.get("idempotent-replayed")).toBe("true");
    expect(invalidAgain.text).toBe(invalid.text);
  });

  it("refuses a malformed key with 422 and does nothing", async () => {
    const count = await storedMessageCount(accountId);
    for (const bad of ["k".repeat(256), "x".repeat(300), "has space", "tab\there", ""]) {
      const res = await send(key, text(session), bad);
      const problem = expectProblem(res, 422, "validation_failed");
      expect(problem.errors).toEqual({ "Idempotency-Key": [expect.any(String)] });
    }
    expect(await storedMessageCount(accountId)).toBe(count);
    // 255 visible characters is a key.
    const longest = await send(key, text(session, ["+14155552676"]), "k".repeat(255));
    expect(longest.status).toBe(201);
    expect(
      (await send(key, text(session, ["+14155552676"]), "k".repeat(255))).headers.get("idempotent-replayed"),
    ).toBe("true");
  });

  it("without the header, every request is new", async () => {
    const count = await storedMessageCount(accountId);
    const one = await send(key, text(session, ["+14155552677"]));
    const two = await send(key, text(session, ["+14155552677"]));
    expect(one.status).toBe(201);
    expect(two.status).toBe(201);
    expect(two.headers.get("idempotent-replayed")).toBeNull();
    expect(await storedMessageCount(accountId)).toBe(count + 2);
  });

  it("frees a key after 24 hours", async () => {
    const first = await send(key, text(session, ["+14155552678"]), "daily");
    expect(first.status).toBe(201);
    const d1 = await accountD1(accountId);
    const stored = await d1
      .prepare("SELECT created_at, expires_at FROM idempotency_keys WHERE account_id = ? AND key = ?")
      .bind(accountId, "daily")
      .first<{ created_at: number; expires_at: number }>();
    expect(stored && stored.expires_at - stored.created_at).toBe(24 * 3600 * 1000);
    await d1
      .prepare("UPDATE idempotency_keys SET expires_at = ? WHERE account_id = ? AND key = ?")
      .bind(Date.now() - 1, accountId, "daily")
      .run();
    const count = await storedMessageCount(accountId);
    const fresh = await send(key, text(session, ["+14155552678"]), "daily");
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get("idempotent-replayed")).toBeNull();
    expect(fresh.body.data.messages[0]?.id).not.toBe(first.body.data.messages[0]?.id);
    expect(await storedMessageCount(accountId)).toBe(count + 1);
  });
});

describe("POST /v1/chatapp/sessions", () => {
  it("replays the created session to a retry with the same key", async () => {
    const { key } = await createAccount(1);
    const headers = { "Idempotency-Key": "new-session-1" };
    const first = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key, headers });
    expect(first.status).toBe(201);
    const again = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(again.body.session.id).toBe(first.body.session.id);

    const listed = await call<{ sessions: { id: string }[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(listed.body.sessions.map((s) => s.id)).toEqual([first.body.session.id]);

    const other = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", {
      key,
      headers: { "Idempotency-Key": "new-session-2" },
    });
    expect(other.status).toBe(201);
    expect(other.body.session.id).not.toBe(first.body.session.id);
    const after = await call<{ sessions: { id: string }[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(after.body.sessions).toHaveLength(2);
  });

  it("refuses a malformed key", async () => {
    const { key } = await createAccount(1);
    expectProblem(
      await call("POST", "/v1/chatapp/sessions", { key, headers: { "Idempotency-Key": "x".repeat(300) } }),
      422,
      "validation_failed",
    );
    const listed = await call<{ sessions: unknown[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(listed.body.sessions).toEqual([]);
  });
});

describe("a request that failed with a 5xx", () => {
  const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
  const TO = "+14155552690";
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** An account with a connected session and an OTP app sending through it. */
  async function otpApp() {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: SENDER, chatapp_session_id: session },
    });
    expect(app.status).toBe(201);
    return { key, accountId, session, appId: app.body.data.id };
  }

  const sendCode = (key: string, appId: string, idempotencyKey: string) =>
    call("POST", `/v1/apps/${appId}/otp`, {
      key,
      body: { to_number: TO },
      headers: { "Idempotency-Key": idempotencyKey },
    });

  /** The count `query` finds for `id` in account `accountId`'s database. */
  const count = async (accountId: string, query: string, id: string) =>
    (await (await accountD1(accountId)).prepare(query).bind(id).first<{ n: number }>())?.n ?? 0;

  it("after the charge committed keeps its key: the retry replays the 5xx, charging and sending nothing again", async () => {
    const f = await otpApp();
    // An injected outage: D1 refuses the OTP send's last write (the OTP's message id), after the
    // code's message was charged, stored and queued.
    await refuse("otps", "UPDATE", { accountId: f.accountId });
    vi.spyOn(console, "error").mockImplementation(() => {});

    const first = await sendCode(f.key, f.appId, "code-1");
    expectProblem(first, 500, "internal_error");
    expect(await balanceOf(f.accountId)).toBe(0.99);

    // The outage is over; the client retries with the same key, as it should after a 5xx.
    await restoreD1();
    for (let retry = 0; retry < 2; retry++) {
      const again = await sendCode(f.key, f.appId, "code-1");
      expect(again.status).toBe(500);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("content-type")).toBe("application/problem+json");
      expect(again.text).toBe(first.text);
    }

    // Charged once; one OTP, one message, one code on the phone.
    expect(await ledgerOf(f.accountId)).toEqual([
      { kind: "credit", amount: 100, balance_after: 100, message_count: 0 },
      { kind: "charge", amount: -1, balance_after: 99, message_count: 1 },
    ]);
    expect(await balanceOf(f.accountId)).toBe(0.99);
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(1);
    expect(await storedMessageCount(f.accountId)).toBe(1);
    const message = await (await accountD1(f.accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ?")
      .bind(f.accountId)
      .first<{ id: string }>();
    await waitForMessages(f.key, [message?.id ?? ""]);
    const received = await call<{ data: { message_id: string }[] }>(
      "GET",
      `/sandbox/sessions/${f.session}/received?to_number=${encodeURIComponent(TO)}`,
      { key: f.key },
    );
    expect(received.body.data.map((m) => m.message_id)).toEqual([message?.id]);
  });

  it("is stored even when nothing changed, since the server cannot tell: no guess", async () => {
    const f = await otpApp();
    vi.spyOn(console, "error").mockImplementation(() => {});
    // OTP_SECRET missing: the send fails before it writes anything (test/otp.test.ts, OTP_SECRET).
    const ctx = createExecutionContext();
    const response = await createApp().request(
      `http://localhost/v1/apps/${f.appId}/otp`,
      {
        method: "POST",
        headers: {
          Authorization: `Bearer ${f.key}`,
          "Content-Type": "application/json",
          "Idempotency-Key": "code-2",
        },
        body: JSON.stringify({ to_number: TO }),
      },
      { ...env, OTP_SECRET: undefined },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(500);
    const firstText = await response.text();

    // With the secret back, the same key still answers what it answered.
    const again = await sendCode(f.key, f.appId, "code-2");
    expect(again.status).toBe(500);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(firstText);
    expect(await count(f.accountId, "SELECT COUNT(*) AS n FROM otps WHERE app_id = ?", f.appId)).toBe(0);
    expect(await balanceOf(f.accountId)).toBe(1);
    // A new key runs the request.
    expect((await sendCode(f.key, f.appId, "code-3")).status).toBe(201);
    expect(await balanceOf(f.accountId)).toBe(0.99);
  });
});
