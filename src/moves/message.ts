import { type SQL, sql } from "drizzle-orm";
import type { MessageStatus } from "../db/schema";
import { formatTimestamp } from "../lib/time";
import { sentUsageStatement } from "./counters";

/**
 * Every move an outgoing message's status may make, and the only place that moves it. The
 * statuses are the `Message` schema's in openapi.json, and a send creates `queued` (or `scheduled`;
 * docs/messages.md, Sending messages). The later moves are this API's own; they follow the order of the
 * chat network's receipts (WAHA's `message.ack` levels, Evolution's `messages.update` statuses):
 * `queued|scheduled → sent → delivered → read`. Each stage's time fills its `*_at` field
 * (`sent_at`, `delivered_at`, `read_at`; README, Messages, step 9).
 *
 * - `due`: a scheduled message's time came; it joins the fan-out.
 * - `sent`: the gateway accepted it.
 * - `delivered` / `read`: the gateway's receipts. Status only moves forward, so a late or repeated
 *   receipt changes nothing.
 * - `fail`: it never left (expired, retries exhausted, refused, session banned or deleted, queue
 *   gave up): failed and refunded (src/moves/reactions.ts). A message already sent cannot be failed this way.
 * - `gateway_failed`: the gateway's own failure receipt for a sent message: failed and refunded.
 */
export const MESSAGE_TRANSITIONS = {
  due: { from: ["scheduled"], to: "queued" },
  sent: { from: ["queued", "scheduled"], to: "sent" },
  delivered: { from: ["sent"], to: "delivered" },
  read: { from: ["sent", "delivered"], to: "read" },
  fail: { from: ["queued", "scheduled"], to: "failed" },
  gateway_failed: { from: ["sent"], to: "failed" },
} as const satisfies Record<string, { from: readonly MessageStatus[]; to: MessageStatus }>;

export type MoveKind = keyof typeof MESSAGE_TRANSITIONS;

/** The statuses of an outgoing message that may still be sent: those a `sent` move starts from. */
export const WAITING_STATUSES: readonly MessageStatus[] = MESSAGE_TRANSITIONS.sent.from;

/**
 * Which outgoing messages a move applies to: by our ids; by the gateway's message id on a session
 * (a receipt); or every message of a session (the session is deleted).
 */
export type MessageTarget =
  | { ids: string[] }
  | { sessionId: string; providerMessageId: string }
  | { sessionId: string }
  | { campaignId: string };

/**
 * How a sent message's outcome became known (its `metadata.settled_by`; docs/exactly-once.md, Exactly once):
 * the gateway's `answer` to the send, or, after the outcome was unknown, a `lookup` that found it or a
 * receipt (`status_webhook`) for it.
 */
export const SETTLED_BY = ["answer", "lookup", "status_webhook"] as const;

/** One of {@link SETTLED_BY}. */
export type SettledBy = (typeof SETTLED_BY)[number];

/**
 * How Meta prices a sent message, as its status webhook's `pricing` gives it (Meta's OpenAPI
 * document, schema `Pricing`): `category` (e.g. `service`, `utility`, `marketing`,
 * `authentication`), `billable`, and `pricing_model` (`CBP` or `PMP`) when present. Kept in the
 * message's `metadata.pricing` with these snake_case names.
 */
export interface MessagePricing {
  category: string | null;
  billable: boolean | null;
  pricing_model?: string;
}

/**
 * The "typing…" a `simulate_typing` message was sent after (docs/messages.md, Typing before a send): for
 * `ms` milliseconds from `at` (epoch ms), `shown` or not and then why (`reason`). Kept in the
 * message's `metadata.typing` as `{ ms, started_at, shown, reason? }`, `started_at` an API timestamp.
 */
export interface SentTyping {
  ms: number;
  at: number;
  shown: boolean;
  reason?: string;
}

/** One move of {@link MESSAGE_TRANSITIONS}, with what it records. Times are epoch ms. */
export type MessageMove =
  | { kind: "due"; target: MessageTarget; at: number }
  | {
      kind: "sent";
      id: string;
      at: number;
      providerMessageId: string;
      /** The session's E.164 number, when known. */
      fromNumber: string | null;
      attempts: number;
      gateway: string;
      settledBy: SettledBy;
      /** The "typing…" shown before it, for `metadata.typing` ({@link SentTyping}); absent: none. */
      typing?: SentTyping | null;
    }
  | {
      kind: "delivered" | "read";
      target: MessageTarget;
      /** When we learnt it. */
      at: number;
      /** When the gateway says it happened, by the gateway's clock (kept in `metadata.events`). */
      gatewayAt: number;
    }
  | {
      kind: "fail";
      /** Ownership: only this account's messages move. */
      accountId: string;
      target: MessageTarget;
      reason: string;
      at: number;
      /**
       * Only messages no session object claimed (`accepted_at` null, claimMessages): the failures
       * of the dead-letter queue, the sweep and a campaign's cancel, which no object may send.
       */
      unacceptedOnly?: boolean;
    }
  | {
      /**
       * Not a status move: the network's pricing of a sent message, from a receipt, written to
       * `metadata.pricing` (the last receipt's wins; Meta gives the same on each). Any status
       * past `queued`; a message not yet sent is not matched, nor one that has this pricing
       * already (a replayed receipt changes nothing, `updated_at` included).
       */
      kind: "priced";
      target: MessageTarget;
      pricing: MessagePricing;
      at: number;
    }
  | {
      kind: "gateway_failed";
      accountId: string;
      target: MessageTarget;
      reason: string;
      at: number;
      gatewayAt: number;
    };

/**
 * `fail` moves for messages of possibly several accounts: one per account (each with its own
 * refund ledger entry), since a move's ownership is one account.
 */
export function failMoves(
  messages: { id: string; accountId: string }[],
  reason: string,
  at: number,
  options: { unacceptedOnly?: boolean } = {},
): FailMove[] {
  const byAccount = new Map<string, string[]>();
  for (const m of messages) byAccount.set(m.accountId, [...(byAccount.get(m.accountId) ?? []), m.id]);
  return [...byAccount].map(([accountId, ids]) => ({
    kind: "fail",
    accountId,
    target: { ids },
    reason,
    at,
    ...options,
  }));
}

export type SentMove = Extract<MessageMove, { kind: "sent" }>;
export type FailMove = Extract<MessageMove, { kind: "fail" }>;

/** `status IN (…)`: the statuses move `kind` may start from. */
function fromOf(kind: MoveKind): SQL {
  return sql.raw(`status IN (${MESSAGE_TRANSITIONS[kind].from.map((status) => `'${status}'`).join(", ")})`);
}

/**
 * The statements of every `sent` move of a batch: their count in `account_usage`
 * (src/moves/counters.ts `sentUsageStatement`), then their UPDATE ({@link sentStatement}), which
 * comes last.
 */
export function sentStatements(moves: SentMove[]): SQL[] {
  const ids = sql`(SELECT json_extract(value, '$.id') FROM json_each(${JSON.stringify(moves.map((m) => ({ id: m.id })))}))`;
  return [sentUsageStatement(ids, MESSAGE_TRANSITIONS.sent.from), sentStatement(moves)];
}

/**
 * Every `sent` move of a batch as one UPDATE, each message's values read from one JSON array
 * (exported so a test can check its plan).
 */
export function sentStatement(moves: SentMove[]): SQL {
  const rows = JSON.stringify(
    moves.map((m) => ({
      id: m.id,
      at: m.at,
      p: m.providerMessageId,
      f: m.fromNumber,
      n: m.attempts,
      g: m.gateway,
      sb: m.settledBy,
      ty: m.typing
        ? {
            ms: m.typing.ms,
            started_at: formatTimestamp(m.typing.at),
            shown: m.typing.shown,
            ...(m.typing.reason === undefined ? {} : { reason: m.typing.reason }),
          }
        : null,
    })),
  );
  // MATERIALIZED: the list drives the join, one primary-key lookup per message (see the plan test).
  return sql`WITH s AS MATERIALIZED (SELECT json_extract(value, '$.id') AS mid, json_extract(value, '$.at') AS at,
        json_extract(value, '$.p') AS p, json_extract(value, '$.f') AS f, json_extract(value, '$.n') AS n,
        json_extract(value, '$.g') AS g, json_extract(value, '$.sb') AS sb, json_extract(value, '$.ty') AS ty
      FROM json_each(${rows}))
    UPDATE messages SET status = ${MESSAGE_TRANSITIONS.sent.to}, sent_at = s.at, provider_message_id = s.p, from_number = s.f,
      updated_at = s.at,
      metadata = json_remove(CASE WHEN s.ty IS NULL
          THEN json_set(metadata, '$.attempts', s.n, '$.gateway', s.g, '$.settled_by', s.sb)
          ELSE json_set(metadata, '$.attempts', s.n, '$.gateway', s.g, '$.settled_by', s.sb, '$.typing', json(s.ty)) END,
        '$.outcome', '$.last_error', '$.next_attempt_at')
    FROM s WHERE messages.id = s.mid AND direction = 'outgoing' AND ${fromOf("sent")}`;
}

/**
 * The UPDATE of move `move` (any kind but `sent`, which {@link sentStatement} writes for a whole
 * batch): it matches only the target's outgoing messages in a status the move may start from, so
 * applying it again changes nothing. A failing move tags the messages it fails with `refundId`,
 * for its refund and event (src/moves/reactions.ts).
 */
export function moveStatement(move: Exclude<MessageMove, SentMove>, refundId: string): SQL {
  const from = move.kind === "priced" ? sql`` : fromOf(move.kind);
  switch (move.kind) {
    case "due":
      return sql`UPDATE messages SET status = ${MESSAGE_TRANSITIONS.due.to}, updated_at = ${move.at}
          WHERE ${targetOf(move.target)} AND direction = 'outgoing' AND ${from}`;
    case "delivered":
      return sql`UPDATE messages SET status = ${MESSAGE_TRANSITIONS.delivered.to}, updated_at = ${move.at},
            metadata = ${withReceipt(sql`metadata`, move)},
            delivered_at = MAX(${move.gatewayAt}, COALESCE(sent_at, 0))
          WHERE ${targetOf(move.target)} AND direction = 'outgoing' AND ${from}`;
    case "read":
      // In an UPDATE, columns on the right are the row's values before it.
      return sql`UPDATE messages SET status = ${MESSAGE_TRANSITIONS.read.to}, updated_at = ${move.at},
            metadata = ${withReceipt(sql`metadata`, move)},
            delivered_at = COALESCE(delivered_at, MAX(${move.gatewayAt}, COALESCE(sent_at, 0))),
            read_at = MAX(${move.gatewayAt}, COALESCE(delivered_at, 0), COALESCE(sent_at, 0))
          WHERE ${targetOf(move.target)} AND direction = 'outgoing' AND ${from}`;
    case "priced":
      return sql`UPDATE messages SET updated_at = ${move.at},
            metadata = json_set(metadata, '$.pricing', json(${JSON.stringify(move.pricing)}))
          WHERE ${targetOf(move.target)} AND direction = 'outgoing' AND status IN ('sent', 'delivered', 'read', 'failed')
            AND json_extract(metadata, '$.pricing') IS NOT json(${JSON.stringify(move.pricing)})`;
    case "fail":
    case "gateway_failed": {
      const unaccepted = move.kind === "fail" && move.unacceptedOnly ? sql` AND accepted_at IS NULL` : sql``;
      const failedAt = sql`json_set(metadata, '$.failed_at', ${formatTimestamp(move.at)})`;
      return sql`UPDATE messages SET status = ${MESSAGE_TRANSITIONS[move.kind].to}, reason = ${move.reason}, refund_id = ${refundId}, updated_at = ${move.at},
            metadata = ${move.kind === "gateway_failed" ? withReceipt(failedAt, move) : failedAt}
          WHERE account_id = ${move.accountId} AND ${targetOf(move.target)} AND direction = 'outgoing'
            AND ${from}${unaccepted}`;
    }
  }
}

/** The SQL condition that selects a move's target messages. */
export function targetOf(target: MessageTarget): SQL {
  if ("ids" in target) return sql`id IN (SELECT value FROM json_each(${JSON.stringify(target.ids)}))`;
  // `+`: SQLite then finds the message by the gateway's id (messages_provider_id), not by reading
  // the session's messages (https://sqlite.org/optoverview.html#uplus; test/message-transitions.test.ts).
  if ("providerMessageId" in target)
    return sql`+chatapp_session_id = ${target.sessionId} AND provider_message_id = ${target.providerMessageId}`;
  if ("campaignId" in target) return sql`campaign_id = ${target.campaignId}`;
  return sql`chatapp_session_id = ${target.sessionId}`;
}

/**
 * `metadata` with a receipt appended to its `events`, in its stored form
 * (src/messages/metadata.ts `StoredReceipt`): `{ type, at, gateway_at }` in epoch ms, `gateway_at`
 * left out when it is `at`. Receipts are only ever appended: a message event keeps their count,
 * not them (src/db/queries/events.ts `MESSAGE_EVENT_FIELDS`).
 */
function withReceipt(metadata: SQL, move: { kind: string; at: number; gatewayAt: number }): SQL {
  const type = move.kind === "gateway_failed" ? "failed" : move.kind;
  const event = JSON.stringify(
    move.gatewayAt === move.at ? { type, at: move.at } : { type, at: move.at, gateway_at: move.gatewayAt },
  );
  return sql`json_insert(${metadata}, '$.events[#]', json(${event}))`;
}
