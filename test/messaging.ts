import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { ADMIN_TOKEN, call } from "./helpers";

/** A message as GET /v1/chatapp/messages/{id} shows it. */
export interface Message {
  id: string;
  status: string;
  reason: string | null;
  to_number: string;
  from_number: string | null;
  provider_message_id: string | null;
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

/** Creates a session for the account and links it through the sandbox; returns its uuid. */
export async function connectedSession(key: string): Promise<string> {
  const created = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key });
  expect(created.status).toBe(201);
  const id = created.body.session.id;
  const scanned = await call<{ session: { status: string } }>("POST", `/sandbox/sessions/${id}/scan`, {
    key,
    body: {},
  });
  expect(scanned.body.session.status).toBe("connected");
  return id;
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

/** Polls the messages until every one satisfies `done` (default: left queued/scheduled). */
export async function waitForMessages(
  key: string,
  ids: string[],
  done: (m: Message) => boolean = (m) => m.status !== "queued" && m.status !== "scheduled",
  timeoutMs = 20_000,
): Promise<Message[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const messages = await Promise.all(ids.map((id) => getMessage(key, id)));
    if (messages.every(done)) return messages;
    if (Date.now() > deadline)
      throw new Error(`timed out; statuses: ${messages.map((m) => m.status).join(",")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The account's balance (major units) from the admin API. */
export async function balanceOf(accountId: string): Promise<number> {
  const res = await call<{ data: { account: { balance: number } } }>("GET", `/admin/accounts/${accountId}`, {
    key: ADMIN_TOKEN,
  });
  return res.body.data.account.balance;
}

export interface LedgerEntry {
  kind: string;
  amount: number;
  balance_after: number;
  message_count: number;
}

/** The account's ledger, oldest first (minor units), read from D1. */
export async function ledgerOf(accountId: string): Promise<LedgerEntry[]> {
  const { results } = await env.DB.prepare(
    "SELECT kind, amount, balance_after, message_count FROM ledger_entries WHERE account_id = ? ORDER BY created_at, rowid",
  )
    .bind(accountId)
    .all<LedgerEntry>();
  return results;
}

/** Epoch ms of an API timestamp. */
export const ms = (timestamp: string | null): number => Date.parse(timestamp ?? "");
