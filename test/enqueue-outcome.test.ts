import {
  createExecutionContext,
  createScheduledController,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { STALE_AFTER_MS } from "../src/delivery/reconcile";
import worker from "../src/index";
import type { ChatSession } from "../src/sessions/chat-session";
import { accountD1 } from "./databases";
import { type ApiResponse, call, createAccount, phoneText, sessionStub } from "./helpers";
import {
  balanceOf,
  connectedSession,
  getMessage,
  ledgerOf,
  type SendResponse,
  waitForMessages,
} from "./message-fixtures";

// A send whose queue message may or may not be on the outbound Queue (docs/messages.md, Sending messages):
// `sendBatch` threw, which does not say the Queue did not take the batch (the call may have
// succeeded and its answer been lost). Such a message is neither failed nor refunded: it stays
// queued and charged, the enqueue is tried once more at once, and otherwise the hourly sweep
// puts it back on the queue; its session object ignores a second copy. The Queue binding is
// wrapped at the platform boundary, in the env handed to the Worker: the real Queue below it
// takes (or never sees) the messages, and the real consumer, session object and D1 do the rest.

/** How the wrapped binding behaves on each `sendBatch` call, by call number (1-based). */
type QueueFault = (call: number) => "lose_answer" | "refuse" | "pass";

/** `env` with OUTBOUND_QUEUE wrapped: `fault` decides each call; `calls` counts them. */
function faultyQueueEnv(fault: QueueFault): { env: Env; calls: () => number } {
  let calls = 0;
  const real = env.OUTBOUND_QUEUE;
  const queue = {
    send: real.send.bind(real),
    sendBatch: async (messages: Iterable<MessageSendRequest>, options?: QueueSendBatchOptions) => {
      calls++;
      const what = fault(calls);
      if (what === "refuse") throw new Error("Queue sendBatch failed: internal error");
      await real.sendBatch(messages, options);
      if (what === "lose_answer") throw new Error("Queue sendBatch failed: network connection lost");
    },
  };
  return { env: { ...env, OUTBOUND_QUEUE: queue as unknown as Queue }, calls: () => calls };
}

/** Calls the Worker's fetch handler with `bindings` instead of the test env. */
async function callWith<T>(
  bindings: Env,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<ApiResponse<T>> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`http://localhost${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    bindings,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text) as T, text };
}

const textTo = (session: string, to: string[]) => ({
  chatapp_session_id: session,
  to_number: to,
  type: "text",
  content: "hello",
  delay_between: 0,
});

/** What the recipient's phone received from the session, newest first (sandbox). */
async function receivedBy(key: string, session: string, to: string) {
  const res = await call<{ data: { message_id: string; content: string }[] }>(
    "GET",
    `/sandbox/sessions/${session}/received?to_number=${encodeURIComponent(to)}`,
    { key },
  );
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The session object's outbox: each message id with the gateway attempts it took. */
async function outboxOf(session: string) {
  return runInDurableObject(sessionStub(session), (_i: ChatSession, state) =>
    state.storage.sql.exec<{ id: string; attempts: number }>("SELECT id, attempts FROM outbox").toArray(),
  );
}

/**
 * Makes account `accountId`'s messages look 15+ minutes untouched, then runs the hourly cron (the
 * reconciliation sweep).
 */
async function sweepLater(accountId: string, ids: string[]) {
  await (await accountD1(accountId))
    .prepare(
      "UPDATE messages SET updated_at = updated_at - ?, created_at = created_at - ? WHERE id IN (SELECT value FROM json_each(?))",
    )
    .bind(STALE_AFTER_MS + 60_000, STALE_AFTER_MS + 60_000, JSON.stringify(ids))
    .run();
  await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeEach(() => {
  // The send logs each lost enqueue answer; keep the test output quiet.
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("POST /v1/chatapp/messages when the Queue's answer is lost", () => {
  it("sends each message once, charges once and refunds nothing when sendBatch throws after enqueueing", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const to = ["+14155552671", "+14155552672"];
    // Every call puts the batch on the Queue, then throws: the send and its retry both "fail".
    const faulty = faultyQueueEnv(() => "lose_answer");

    const res = await callWith<SendResponse>(
      faulty.env,
      "POST",
      "/v1/chatapp/messages",
      key,
      textTo(session, to),
    );
    expect(res.status).toBe(201);
    expect(res.body.data.messages.map((m) => [m.to_number, m.status])).toEqual([
      [to[0], "queued"],
      [to[1], "queued"],
    ]);
    expect(res.body.data).toMatchObject({ count: 2, total_cost: 0.02, new_balance: 0.98 });
    // The first call and the one retry of the enqueue.
    expect(faulty.calls()).toBe(2);

    const ids = res.body.data.messages.map((m) => m.id);
    const done = await waitForMessages(key, ids);
    for (const message of done) {
      expect(["sent", "delivered", "read"]).toContain(message.status);
      expect(message.reason).toBeNull();
      expect(message.metadata.attempts).toBe(1);
    }
    // Two copies of each queue message reached the session object; it sent each message once.
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
    expect((await outboxOf(session)).sort(byId)).toEqual(ids.map((id) => ({ id, attempts: 1 })).sort(byId));
    for (const [i, number] of to.entries()) {
      expect((await receivedBy(key, session, number)).map((m) => m.message_id)).toEqual([ids[i]]);
    }
    await pause(200);
    expect(await ledgerOf(accountId)).toEqual([
      { kind: "credit", amount: 100, balance_after: 100, message_count: 0 },
      { kind: "charge", amount: -2, balance_after: 98, message_count: 2 },
    ]);
    expect(await balanceOf(accountId)).toBe(0.98);
  });

  it("tries the enqueue once more at once: a Queue that refused the first call sends the message without waiting for the sweep", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const faulty = faultyQueueEnv((n) => (n === 1 ? "refuse" : "pass"));

    const res = await callWith<SendResponse>(
      faulty.env,
      "POST",
      "/v1/chatapp/messages",
      key,
      textTo(session, ["+14155552673"]),
    );
    expect(res.status).toBe(201);
    expect(res.body.data.messages[0]).toMatchObject({ status: "queued" });
    expect(faulty.calls()).toBe(2);
    const [done] = await waitForMessages(key, [res.body.data.messages[0]!.id]);
    expect(done).toMatchObject({ reason: null, metadata: { attempts: 1 } });
    expect(["sent", "delivered", "read"]).toContain(done!.status);
    expect((await ledgerOf(accountId)).map((e) => [e.kind, e.amount])).toEqual([
      ["credit", 100],
      ["charge", -1],
    ]);
    expect(await balanceOf(accountId)).toBe(0.99);
  });

  it("leaves a message the Queue never took queued and charged, and the sweep sends it once", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const faulty = faultyQueueEnv(() => "refuse");

    const res = await callWith<SendResponse>(
      faulty.env,
      "POST",
      "/v1/chatapp/messages",
      key,
      textTo(session, ["+14155552674"]),
    );
    expect(res.status).toBe(201);
    const id = res.body.data.messages[0]!.id;
    expect(res.body.data).toMatchObject({ total_cost: 0.01, new_balance: 0.99 });
    // Nothing reached the session (the Queue took nothing, and callWith waited for the Worker's own
    // work), and nothing was guessed: still queued, still charged.
    expect(await getMessage(key, id)).toMatchObject({ status: "queued", reason: null });
    expect(await balanceOf(accountId)).toBe(0.99);

    await sweepLater(accountId, [id]);
    const [done] = await waitForMessages(key, [id]);
    expect(done).toMatchObject({ reason: null, metadata: { attempts: 1 } });
    expect(["sent", "delivered", "read"]).toContain(done!.status);
    expect((await receivedBy(key, session, "+14155552674")).map((m) => m.message_id)).toEqual([id]);
    expect(await ledgerOf(accountId)).toEqual([
      { kind: "credit", amount: 100, balance_after: 100, message_count: 0 },
      { kind: "charge", amount: -1, balance_after: 99, message_count: 1 },
    ]);
    expect(await balanceOf(accountId)).toBe(0.99);
  });
});

describe("POST /v1/apps/{id}/otp when the Queue's answer is lost", () => {
  const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
  const TO = "+14155552675";

  async function otpApp() {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: {
        name: "Acme",
        sender_id: SENDER,
        message_template: "Your {{app_name}} code is {{code}}.",
        chatapp_session_id: session,
      },
    });
    expect(app.status).toBe(201);
    return { key, accountId, session, appId: app.body.data.id };
  }

  interface OtpEnvelope {
    data: { id: string; status: string; message_id: string | null };
  }

  it("keeps the OTP whose code went out, charged once: the code arrives once and verifies", async () => {
    const f = await otpApp();
    const faulty = faultyQueueEnv(() => "lose_answer");
    const res = await callWith<OtpEnvelope>(faulty.env, "POST", `/v1/apps/${f.appId}/otp`, f.key, {
      to_number: TO,
    });
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe("pending");
    const messageId = res.body.data.message_id ?? "";

    await waitForMessages(f.key, [messageId]);
    const text = await phoneText(f.session, TO, messageId);
    expect((await receivedBy(f.key, f.session, TO)).map((m) => m.message_id)).toEqual([messageId]);
    const code = /^Your Acme code is (\d+)\.$/.exec(text)?.[1] ?? "";
    const verified = await call<OtpEnvelope>("POST", `/v1/otp/${res.body.data.id}/verify`, {
      key: f.key,
      body: { code },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.data.status).toBe("verified");
    expect((await ledgerOf(f.accountId)).map((e) => [e.kind, e.amount])).toEqual([
      ["credit", 100],
      ["charge", -1],
    ]);
    expect(await balanceOf(f.accountId)).toBe(0.99);
  });

  it("follows the sweep's rule for codes: one that never reached its session fails (dispatch_failed) and is refunded, never re-sent", async () => {
    const f = await otpApp();
    const faulty = faultyQueueEnv(() => "refuse");
    const res = await callWith<OtpEnvelope>(faulty.env, "POST", `/v1/apps/${f.appId}/otp`, f.key, {
      to_number: TO,
    });
    expect(res.status).toBe(201);
    const messageId = res.body.data.message_id ?? "";
    expect(await getMessage(f.key, messageId)).toMatchObject({ status: "queued", reason: null });
    expect(await balanceOf(f.accountId)).toBe(0.99);

    await sweepLater(f.accountId, [messageId]);
    expect(await getMessage(f.key, messageId)).toMatchObject({ status: "failed", reason: "dispatch_failed" });
    expect(await receivedBy(f.key, f.session, TO)).toEqual([]);
    expect((await ledgerOf(f.accountId)).map((e) => [e.kind, e.amount])).toEqual([
      ["credit", 100],
      ["charge", -1],
      ["refund", 1],
    ]);
    expect(await balanceOf(f.accountId)).toBe(1);
  });
});
