import type { GatewayEvent } from "../gateways/gateway";
import type { MessageMove, MessagePricing } from "../moves/message";

/** A receipt (ack) a gateway reported for a message the session sent, by its provider id. */
export type Receipt = Extract<GatewayEvent, { type: "ack" }>;

/**
 * How long a kept receipt waits for the settlement that gives its message a provider id (ms):
 * as long as an unknown outcome may stay unsettled (OUTCOME_SETTLE_HOURS' default, 24 h), and
 * an hour more.
 */
export const RECEIPT_KEEP_MS = 25 * 3_600_000;

/**
 * Receipts kept for messages whose outcome is still unknown (docs/exactly-once.md, Exactly once: receipts
 * that arrive before the outcome is known are kept and applied with the settlement, never dropped): a
 * gateway may report delivery of a message the session has not yet learnt it sent, so D1 knows
 * no message by that provider id. Each is kept in the session object's storage, by provider id
 * and status, and applied with the sent outcome that brings that provider id to D1
 * (Dispatcher.flush), or forgotten after {@link RECEIPT_KEEP_MS}. The `kept_receipts` table
 * (the receipt, our `message_id` and its `pricing` as JSON) is created by
 * sessions/storage-schema.ts with the object's other tables.
 */
export class KeptReceipts {
  constructor(private readonly sql: SqlStorage) {}

  /** Keeps `receipt` (a second one of the same message and status replaces it). */
  keep(receipt: Receipt, now: number): void {
    this.sql.exec(
      `INSERT OR REPLACE INTO kept_receipts (provider_message_id, status, reason, gateway_at, kept_at, message_id, pricing)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      receipt.providerMessageId,
      receipt.status,
      receipt.reason,
      receipt.at,
      now,
      receipt.messageId ?? null,
      receipt.pricing ? JSON.stringify(receipt.pricing) : null,
    );
  }

  /** The kept receipts of these provider ids, oldest report first. */
  of(providerMessageIds: string[]): Receipt[] {
    if (providerMessageIds.length === 0) return [];
    return this.sql
      .exec<{
        provider_message_id: string;
        status: Receipt["status"];
        reason: string | null;
        gateway_at: number;
        message_id: string | null;
        pricing: string | null;
      }>(
        `SELECT provider_message_id, status, reason, gateway_at, message_id, pricing FROM kept_receipts
         WHERE provider_message_id IN (SELECT value FROM json_each(?)) ORDER BY gateway_at`,
        JSON.stringify(providerMessageIds),
      )
      .toArray()
      .map((row) => ({
        type: "ack",
        providerMessageId: row.provider_message_id,
        status: row.status,
        reason: row.reason,
        at: row.gateway_at,
        messageId: row.message_id,
        pricing: row.pricing ? (JSON.parse(row.pricing) as MessagePricing) : null,
      }));
  }

  /** Forgets the kept receipts of these provider ids (D1 has them). */
  drop(providerMessageIds: string[]): void {
    if (providerMessageIds.length === 0) return;
    this.sql.exec(
      "DELETE FROM kept_receipts WHERE provider_message_id IN (SELECT value FROM json_each(?))",
      JSON.stringify(providerMessageIds),
    );
  }

  /** Forgets receipts kept longer than {@link RECEIPT_KEEP_MS} at `now`. */
  purge(now: number): void {
    this.sql.exec("DELETE FROM kept_receipts WHERE kept_at < ?", now - RECEIPT_KEEP_MS);
  }
}

/**
 * The message moves a receipt makes on the session's message with its provider id: `delivered`
 * and `read` as reported (at the gateway's time), `failed` as `gateway_failed` with the gateway's
 * reason (or `gateway_ack_error`) and a refund; `sent` moves nothing (the send's answer or the
 * settlement did). Acks never move a message backwards (src/moves/message.ts). A receipt that
 * carries the network's pricing (the Cloud API's) also writes it to `metadata.pricing`, in the
 * same batch (`priced`).
 */
export function receiptMoves(session: { id: string; accountId: string }, receipt: Receipt): MessageMove[] {
  const target = { sessionId: session.id, providerMessageId: receipt.providerMessageId };
  const at = Date.now();
  const priced: MessageMove[] = receipt.pricing
    ? [{ kind: "priced", target, pricing: receipt.pricing, at }]
    : [];
  switch (receipt.status) {
    case "delivered":
    case "read":
      return [{ kind: receipt.status, target, at, gatewayAt: receipt.at }, ...priced];
    case "failed":
      return [
        {
          kind: "gateway_failed",
          accountId: session.accountId,
          target,
          reason: receipt.reason ?? "gateway_ack_error",
          at,
          gatewayAt: receipt.at,
        },
        ...priced,
      ];
    case "sent":
      return priced;
  }
}
