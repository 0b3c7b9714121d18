import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { findMessage } from "../src/db/queries/messages";
import worker from "../src/index";
import { type DispatchRequest, dispatchRequestOf } from "../src/messages/dispatch-request";
import { accountD1, accountDb, everyAccountD1 } from "./databases";
import { ADMIN_TOKEN, call, sessionStub, waitFor } from "./helpers";

// Shared set-up of the message tests: real sessions through the API, and rows seeded straight
// into the accounts' real D1 databases when a test needs many messages at once (the API would charge,
// queue and dispatch each of them, which is what other tests are about).

/** Creates a session for `key`'s account and links it through the sandbox. */
export async function connectedSession(
  key: string,
): Promise<{ id: string; sessionId: string; phone: string }> {
  const created = await call<{ session: { id: string; session_id: string } }>(
    "POST",
    "/v1/chatapp/sessions",
    { key },
  );
  expect(created.status).toBe(201);
  const { id, session_id } = created.body.session;
  const scanned = await call<{ session: { status: string; phone_number: string } }>(
    "POST",
    `/sandbox/sessions/${id}/scan`,
    {
      key,
      body: {},
    },
  );
  expect(scanned.status).toBe(200);
  expect(scanned.body.session.status).toBe("connected");
  return { id, sessionId: session_id, phone: scanned.body.session.phone_number };
}

/** The account's balance in major units, read through the admin API. */
export async function balanceOf(accountId: string): Promise<number> {
  const res = await call<{ data: { account: { balance: number } } }>("GET", `/admin/accounts/${accountId}`, {
    key: ADMIN_TOKEN,
  });
  expect(res.status).toBe(200);
  return res.body.data.account.balance;
}

/** Messages stored for the account, straight from D1 (what a send created, whatever its state). */
export async function storedMessageCount(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT COUNT(*) AS n FROM messages WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Ledger entries of the account, oldest first. */
export async function ledgerOf(
  accountId: string,
): Promise<{ kind: string; amount: number; balance_after: number; message_count: number }[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(
      "SELECT kind, amount, balance_after, message_count FROM ledger_entries WHERE account_id = ? ORDER BY created_at, rowid",
    )
    .bind(accountId)
    .all<{ kind: string; amount: number; balance_after: number; message_count: number }>();
  return results;
}

/** A message row to seed; unset fields get the defaults of {@link seedMessages}. */
export interface SeedRow {
  id?: string;
  accountId: string;
  sessionId: string | null;
  toNumber: string;
  fromNumber?: string | null;
  type?: "text" | "image" | "video" | "audio" | "document";
  status?: "queued" | "sent" | "delivered" | "read" | "failed" | "scheduled";
  direction?: "incoming" | "outgoing";
  content?: string | null;
  mediaUrl?: string | null;
  /** Epoch ms. */
  createdAt: number;
}

/**
 * Inserts message rows into their accounts' D1 databases in one statement per 500 rows (a JSON
 * array expanded by `json_each`, as `insertOutgoingStatements` does), each followed by the
 * statement that counts the outgoing ones in `account_usage` as a send counts its messages (the
 * backfill of migrations/accounts/0016_account_usage.sql over these rows); one batch per database. Returns
 * the ids in input order.
 */
export async function seedMessages(rows: SeedRow[]): Promise<string[]> {
  const full = rows.map((r) => ({
    id: r.id ?? crypto.randomUUID(),
    account_id: r.accountId,
    session_id: r.sessionId,
    to: r.toNumber,
    from: r.fromNumber ?? null,
    type: r.type ?? "text",
    status: r.status ?? "queued",
    direction: r.direction ?? "outgoing",
    content: r.content === undefined ? "seeded" : r.content,
    media_url: r.mediaUrl ?? null,
    at: r.createdAt,
  }));
  const byDatabase = new Map<D1Database, typeof full>();
  for (const accountId of new Set(full.map((r) => r.account_id))) {
    const d1 = await accountD1(accountId);
    byDatabase.set(d1, [...(byDatabase.get(d1) ?? []), ...full.filter((r) => r.account_id === accountId)]);
  }
  for (const [d1, rowsOfDb] of byDatabase) await seedInto(d1, rowsOfDb);
  return full.map((r) => r.id);
}

/** The statements of {@link seedMessages} for rows of one account database, run in one batch. */
async function seedInto(d1: D1Database, full: object[]): Promise<void> {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < full.length; i += 500) {
    statements.push(
      d1
        .prepare(
          `INSERT INTO messages (id, account_id, account_number, chatapp_session_id, to_number, from_number, type, content, media_url,
           status, direction, cost, metadata, created_at, updated_at)
         SELECT json_extract(value, '$.id'), json_extract(value, '$.account_id'),
           (SELECT number FROM accounts WHERE id = json_extract(value, '$.account_id')), json_extract(value, '$.session_id'),
           json_extract(value, '$.to'), json_extract(value, '$.from'), json_extract(value, '$.type'),
           json_extract(value, '$.content'), json_extract(value, '$.media_url'), json_extract(value, '$.status'),
           json_extract(value, '$.direction'), 1, '{}', json_extract(value, '$.at'), json_extract(value, '$.at')
         FROM json_each(?)`,
        )
        .bind(JSON.stringify(full.slice(i, i + 500))),
      d1
        .prepare(
          `INSERT INTO account_usage (account_id, hour, type, queued, scheduled, sent, delivered, "read", failed, cost, refunded)
         SELECT account_id, created_at - created_at % 3600000, type, SUM(status = 'queued'), SUM(status = 'scheduled'),
           SUM(status = 'sent'), SUM(status = 'delivered'), SUM(status = 'read'), SUM(status = 'failed'), SUM(cost), 0
         FROM messages WHERE id IN (SELECT json_extract(value, '$.id') FROM json_each(?)) AND direction = 'outgoing'
         GROUP BY 1, 2, 3
         ON CONFLICT (account_id, hour, type) DO UPDATE SET queued = queued + excluded.queued,
           scheduled = scheduled + excluded.scheduled, sent = sent + excluded.sent, delivered = delivered + excluded.delivered,
           "read" = "read" + excluded."read", failed = failed + excluded.failed, cost = cost + excluded.cost`,
        )
        .bind(JSON.stringify(full.slice(i, i + 500))),
    );
  }
  await d1.batch(statements);
}

/** A message as GET /v1/chatapp/messages/{id} shows it. */
export interface Message {
  id: string;
  status: string;
  reason: string | null;
  to_number: string;
  from_number: string | null;
  provider_message_id: string | null;
  media_url?: string | null;
  cost: number;
  sent_at: string | null;
  delivered_at: string | null;
  read_at: string | null;
  otp_id: string | null;
  metadata: {
    attempts?: number;
    last_error?: string;
    gateway?: string;
    events?: { type: string; at: string }[];
    /** Each attempt that did not end in `sent` (src/db/queries/messages.ts, recordRetry). */
    send_attempts?: { at: string; outcome: string; reason: string }[];
    outcome?: "unknown";
    settled_by?: "answer" | "lookup";
    failed_at?: string;
  };
  created_at: string;
}

export interface SendResponse {
  success: true;
  message: string;
  data: {
    messages: Message[];
    count: number;
    total_cost: number;
    new_balance: number;
    remaining_messages: number;
  };
}

/** POST /v1/chatapp/messages with a text body. */
export function sendText(key: string, sessionId: string, to: string[], extra: Record<string, unknown> = {}) {
  return call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: sessionId, to_number: to, type: "text", content: "hello", ...extra },
  });
}

export async function getMessage(key: string, id: string): Promise<Message> {
  const res = await call<{ data: Message }>("GET", `/v1/chatapp/messages/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/**
 * Waits until every message satisfies `done` (default: left queued/scheduled), at most `timeoutMs`:
 * the outbound queue, which the runtime delivers, hands them to their session first. What a
 * session then decides on its alarm, {@link driveAlarmUntil} brings about at once.
 */
export async function waitForMessages(
  key: string,
  ids: string[],
  done: (m: Message) => boolean = (m) => m.status !== "queued" && m.status !== "scheduled",
  timeoutMs = 20_000,
): Promise<Message[]> {
  return waitFor(
    async () => {
      const messages = await Promise.all(ids.map((id) => getMessage(key, id)));
      if (!messages.every(done)) throw new Error(`statuses: ${messages.map((m) => m.status).join(",")}`);
      return messages;
    },
    { reason: "the messages (handed over by the outbound queue)", timeoutMs, intervalMs: 50 },
  );
}

/**
 * Runs session `sessionId`'s alarm until `done()` holds, looking every 30 ms (at most `timeoutMs`):
 * what the object has set a deadline for (a sandbox receipt, a scheduled send, a retry, an
 * expiry, a write owed to D1) happens now rather than on the wall clock, since a driven alarm
 * takes the deadlines it was armed for (src/sessions/deadlines.ts). Pacing gaps still take their
 * real time. With no alarm set (a message still on its way), or one the runtime is running
 * already, a run is a no-op: hence the looking again.
 */
export async function driveAlarmUntil(
  sessionId: string,
  done: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  await waitFor(
    async () => {
      if (await done()) return true;
      await runDurableObjectAlarm(sessionStub(sessionId));
      return false;
    },
    { reason: "the session's alarm to bring the expected change", timeoutMs, intervalMs: 30 },
  );
}

/** Epoch ms of an API timestamp. */
export const ms = (timestamp: string | null): number => Date.parse(timestamp ?? "");

/**
 * What session `id`'s object holds in its own storage (src/sessions/deadlines.ts,
 * src/delivery/outbox.ts): the deadlines behind its alarm, earliest first, and its outbox entries
 * with their state and whether D1 has their outcome (`synced` 1) or it is still owed (0). Tests
 * read it to know what the object has done and decided, rather than waiting and hoping.
 */
export async function sessionStorage(id: string): Promise<{
  deadlines: { kind: string; ref: string; due_at: number }[];
  outbox: { id: string; state: string; synced: number }[];
}> {
  return runInDurableObject(sessionStub(id), (_instance, state) => {
    const sql = state.storage.sql;
    return {
      deadlines: sql
        .exec<{ kind: string; ref: string; due_at: number }>(
          "SELECT kind, ref, due_at FROM deadlines ORDER BY due_at, kind, ref",
        )
        .toArray(),
      outbox: sql
        .exec<{ id: string; state: string; synced: number }>("SELECT id, state, synced FROM outbox")
        .toArray(),
    };
  });
}

/**
 * How many of messages `ids` match `where` (SQL on `messages`), over every account database: the
 * ids name no account, and each message is in its account's database only.
 */
async function countMessages(ids: string[], where: string): Promise<number> {
  let n = 0;
  for (const d1 of everyAccountD1()) {
    const row = await d1
      .prepare(`SELECT COUNT(*) AS n FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND ${where}`)
      .bind(JSON.stringify(ids))
      .first<{ n: number }>();
    if (!row) throw new Error("no count of messages");
    n += row.n;
  }
  return n;
}

/**
 * Waits until the outbound queue handed the messages to their session and each had its first
 * attempt (read from D1: the queue's delivery is the platform's, not ours to drive), at most
 * `timeoutMs`.
 */
export async function firstAttempts(ids: string[], timeoutMs = 20_000): Promise<void> {
  await waitFor(
    async () => {
      const n = await countMessages(
        ids,
        "status = 'queued' AND json_extract(metadata, '$.attempts') IS NULL",
      );
      if (n !== 0) throw new Error(`${n} messages had no attempt yet`);
      return true;
    },
    {
      reason: "a first attempt of each message (handed over by the outbound queue)",
      timeoutMs,
      intervalMs: 50,
    },
  );
}

/**
 * Runs session `sessionId`'s alarm until every message left `queued` (at most `runs` times), then
 * reads the messages. A driven alarm runs at the time it was armed for, so the questions about
 * unknown outcomes (OUTCOME_GRACE_SECONDS after a call, then backing off) are asked now.
 */
export async function settleAll(
  key: string,
  sessionId: string,
  ids: string[],
  runs = 60,
): Promise<Message[]> {
  for (let i = 0; i < runs; i++) {
    await runDurableObjectAlarm(sessionStub(sessionId));
    if ((await countMessages(ids, "status = 'queued'")) === 0) break;
  }
  return Promise.all(ids.map((id) => getMessage(key, id)));
}

/** How often the sandbox phone of session `sessionId` received each message id (its own store). */
export async function sandboxReceived(sessionId: string): Promise<Map<string, number>> {
  const rows = await runInDurableObject(sessionStub(sessionId), (_instance, state) =>
    state.storage.sql
      .exec<{ message_id: string; n: number }>(
        "SELECT message_id, COUNT(*) AS n FROM sandbox_received GROUP BY message_id",
      )
      .toArray(),
  );
  return new Map(rows.map((row) => [row.message_id, row.n]));
}

/** The queue message of a stored message, as the send put it on the queue. */
export async function queueBodyOf(accountId: string, id: string): Promise<DispatchRequest> {
  const row = await findMessage(await accountDb(accountId), accountId, id);
  if (!row) throw new Error(`no message ${id}`);
  return dispatchRequestOf(row, 1);
}

/** Runs the Worker's queue handler on `bodies` as one batch of `queue` (each on its 9th attempt). */
export async function deliverBatch(queue: string, bodies: DispatchRequest[]) {
  const batch = createMessageBatch<DispatchRequest>(
    queue,
    bodies.map((body, i) => ({ id: `m-${i}`, timestamp: new Date(), attempts: 9, body })),
  );
  await worker.queue(batch, env);
  return getQueueResult(batch, createExecutionContext());
}
