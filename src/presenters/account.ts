import type { AccountRow } from "../db/queries/accounts";
import type { MessageType } from "../db/schema";
import { fromMinor } from "../lib/money";
import { formatTimestamp } from "../lib/time";
import { MESSAGE_TYPES, type SendableType } from "../messages/types";

/**
 * The caller's own account as `GET /v1/account` shows it (`Account` in the OpenAPI document), with
 * `prices` (minor units per message type) as configured when it is shown, or for an event when
 * the event happened: money in major units; `remaining_messages` is how many messages of each
 * type the balance covers (a part-message rounds down); `low_balance_threshold` is null when the
 * alert is off; `message_retention_days` is the account's own, else `defaultRetentionDays`
 * (`MESSAGE_RETENTION_DAYS`).
 */
export function toAccountRecord(
  row: AccountRow,
  prices: Record<SendableType, number>,
  defaultRetentionDays: number,
) {
  const per = <T>(value: (type: SendableType) => T) =>
    Object.fromEntries(MESSAGE_TYPES.map((type) => [type, value(type)])) as Record<SendableType, T>;
  return {
    id: row.id,
    name: row.name,
    balance: fromMinor(row.balance),
    remaining_messages: per((type) => Math.floor(row.balance / prices[type])),
    low_balance_threshold: row.lowBalanceThreshold === null ? null : fromMinor(row.lowBalanceThreshold),
    prices: per((type) => fromMinor(prices[type])),
    message_retention_days: row.messageRetentionDays ?? defaultRetentionDays,
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

/**
 * The account row, prices and default message retention an `account.*` event's snapshot holds
 * (src/billing/ledger.ts records it: the row's columns as Drizzle reads them, `prices`, and
 * `defaultRetentionDays`, the deployment's `MESSAGE_RETENTION_DAYS` then; a snapshot from before
 * retention existed has none, and shows {@link LEGACY_RETENTION_DAYS}).
 */
export function accountOfSnapshot(snapshot: Record<string, unknown>): {
  row: AccountRow;
  prices: Record<MessageType, number>;
  defaultRetentionDays: number;
} {
  const { prices, defaultRetentionDays, ...row } = snapshot as AccountRow & {
    prices: Record<MessageType, number>;
    defaultRetentionDays?: number;
  };
  return {
    row: { ...row, messageRetentionDays: row.messageRetentionDays ?? null },
    prices,
    defaultRetentionDays: defaultRetentionDays ?? LEGACY_RETENTION_DAYS,
  };
}

/** The message retention an account event recorded before retention existed shows: the default's. */
const LEGACY_RETENTION_DAYS = 90;
