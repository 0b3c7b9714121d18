import { charge } from "../billing/ledger";
import { priceOf } from "../billing/prices";
import { readConfig } from "../config";
import type { Db } from "../db/client";
import { findAccount } from "../db/queries/accounts";
import { insertOutgoingStatement, type NewMessages, outgoingRows } from "../db/queries/messages";
import { findSession } from "../db/queries/sessions";
import { ApiError } from "../errors";
import { sendInBatches } from "../lib/queue";
import { applyMoves } from "../moves/apply";
import { dispatchRequestOf, LANE } from "./dispatch-request";
import type { MessageRow, MessageType } from "./types";

export interface SendRequest {
  accountId: string;
  sessionId: string;
  /** E.164 numbers, already deduplicated. */
  toNumbers: string[];
  type: MessageType;
  content: string | null;
  mediaUrl: string | null;
  delayBetween: number;
  /** Epoch ms, or null to send now. */
  scheduledAt: number | null;
  /**
   * Set for one-time codes: the message carries the OTP's id and goes ahead of bulk fan-out, and
   * `content` is what is stored and shown (the code masked) while `secretContent` (the code in
   * clear) travels only in the queue message to the session object, which drops it once the
   * gateway accepted the message.
   */
  otp?: { id: string; secretContent: string };
}

export interface SendResult {
  rows: MessageRow[];
  /** Minor units. */
  price: number;
  /** Balance after the send (and after refunds of messages that could not be enqueued). */
  balance: number;
}

/**
 * Sends a message to one or many recipients (interface document §4.2; README, Sending messages):
 * checks that the session is the account's and connected, charges the account and creates the rows
 * atomically, then puts one queue message per recipient on the outbound Queue for the paced
 * fan-out. Messages the Queue refuses are failed with reason `enqueue_failed` and refunded.
 *
 * @throws ApiError `not_found` (404) for a session not the account's, `session_not_connected`
 *   (409), `insufficient_balance` (402).
 */
export async function sendMessages(env: Env, db: Db, request: SendRequest): Promise<SendResult> {
  const session = await findSession(db, request.accountId, request.sessionId);
  if (!session) throw new ApiError("not_found", "No such session.");
  if (session.status !== "connected") {
    throw new ApiError(
      "session_not_connected",
      `The session is ${session.status}; it must be connected to send.`,
    );
  }
  const price = priceOf(readConfig(env), request.type);
  const toSend: NewMessages = {
    accountId: request.accountId,
    sessionId: request.sessionId,
    type: request.type,
    content: request.content,
    mediaUrl: request.mediaUrl,
    delayBetween: request.delayBetween,
    scheduledAt: request.scheduledAt,
    price,
    otpId: request.otp?.id ?? null,
    recipients: request.toNumbers.map((to) => ({ id: crypto.randomUUID(), to })),
    chargeId: crypto.randomUUID(),
    now: Date.now(),
  };
  const count = toSend.recipients.length;
  const charged = await charge(
    env,
    db,
    {
      id: toSend.chargeId,
      accountId: request.accountId,
      amount: price * count,
      messageCount: count,
      now: toSend.now,
      cause: { otpId: toSend.otpId },
    },
    (condition) => [insertOutgoingStatement(toSend, condition)],
  );
  if (!charged.ok) {
    if (charged.reason === "no_account") throw new ApiError("not_found", "No such account.");
    throw new ApiError(
      "insufficient_balance",
      `This send costs ${price * count} minor units, more than the balance (${charged.balance}).`,
    );
  }
  const created = outgoingRows(toSend);
  const { sent, error } = await sendInBatches(
    env.OUTBOUND_QUEUE,
    created.map((row) =>
      request.otp
        ? dispatchRequestOf(row, LANE.otp, { content: request.otp.secretContent })
        : dispatchRequestOf(row, LANE.send),
    ),
  );
  if (!error) return { rows: created, price, balance: charged.balance };

  console.error(
    JSON.stringify({
      level: "error",
      event: "enqueue_failed",
      account_id: request.accountId,
      error: String(error),
    }),
  );
  const stranded = created.slice(sent);
  await applyMoves(env, [
    {
      kind: "fail",
      accountId: request.accountId,
      target: { ids: stranded.map((row) => row.id) },
      reason: "enqueue_failed",
      at: Date.now(),
    },
  ]);
  const strandedIds = new Set(stranded.map((row) => row.id));
  const rows = created.map((row) =>
    strandedIds.has(row.id) ? { ...row, status: "failed" as const, reason: "enqueue_failed" } : row,
  );
  const account = await findAccount(db, request.accountId);
  return { rows, price, balance: account?.balance ?? charged.balance };
}
