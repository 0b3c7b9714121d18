import type { MessageStatus } from "../db/schema";

// The counters that follow an outgoing message's status, defined beside the moves that change it.
// SQLite triggers keep them inside the statement that moves a message's status, so they are exact
// by construction and cost the fan-out no statement of its own: one row written per counter table
// per move, the figure the benchmark's "D1 rows written per message" counts. A new message is
// counted instead by the statement before its INSERT, once per send rather than once per message
// (src/db/queries/messages.ts `insertOutgoingStatements`). The triggers live in the migrations
// (0013_campaign_runs.sql, 0016_account_usage.sql); a test (test/counters.test.ts) holds the SQL
// the database runs to the SQL generated here, so a change to a counter is made here first and
// then written as a migration that replaces the trigger.

/**
 * A table of counters kept per message status: each counter column counts the messages in one of
 * its statuses, and `refunded` sums the cost of those a refund tagged (`refund_id` set).
 */
export interface StatusCounters {
  /** The trigger's name. */
  trigger: string;
  /** The counted table. */
  table: string;
  /** Which messages count (besides a change of status or refund), as SQL over `NEW`. */
  when: string;
  /** The counter row of a message, as SQL over `NEW`. */
  row: string;
  /** Counter column → the statuses it counts. */
  columns: Record<string, readonly MessageStatus[]>;
}

/** A campaign's statistics (`Campaign.stats` and `refunded` in the OpenAPI document). */
export const CAMPAIGN_STATS = {
  trigger: "messages_campaign_stats",
  table: "campaigns",
  when: "NEW.campaign_id IS NOT NULL",
  row: "id = NEW.campaign_id",
  columns: {
    queued: ["queued", "scheduled"],
    sent: ["sent"],
    delivered: ["delivered"],
    read: ["read"],
    failed: ["failed"],
  },
} as const satisfies StatusCounters;

/** The account's usage per UTC hour of creation and message type (`GET /v1/account/usage`). */
export const ACCOUNT_USAGE = {
  trigger: "messages_usage_status",
  table: "account_usage",
  when: "NEW.direction = 'outgoing'",
  row: "account_id = NEW.account_id AND hour = NEW.created_at - NEW.created_at % 3600000 AND type = NEW.type",
  columns: {
    queued: ["queued"],
    scheduled: ["scheduled"],
    sent: ["sent"],
    delivered: ["delivered"],
    read: ["read"],
    failed: ["failed"],
  },
} as const satisfies StatusCounters;

const quoted = (column: string) => (column === "read" ? `"read"` : column);
const REFUNDED = "CASE WHEN OLD.refund_id IS NULL AND NEW.refund_id IS NOT NULL THEN NEW.cost ELSE 0 END";

/** `NEW.status = 's'` or `NEW.status IN ('s', …)` (`side` NEW or OLD). */
function inStatuses(side: "NEW" | "OLD", statuses: readonly MessageStatus[]): string {
  const list = statuses.map((status) => `'${status}'`);
  return statuses.length === 1 ? `${side}.status = ${list[0]}` : `${side}.status IN (${list.join(", ")})`;
}

/**
 * The `CREATE TRIGGER` statement that keeps `counters` when a message's status or refund changes:
 * one from the old status's counter, one to the new one's, and the cost to `refunded` once a
 * refund tags it.
 */
export function statusTriggerSql(counters: StatusCounters): string {
  const sets = Object.entries(counters.columns).map(
    ([column, statuses]) =>
      `${quoted(column)} = ${quoted(column)} - (${inStatuses("OLD", statuses)}) + (${inStatuses("NEW", statuses)})`,
  );
  return `CREATE TRIGGER \`${counters.trigger}\` AFTER UPDATE OF \`status\`, \`refund_id\` ON \`messages\`
WHEN ${counters.when} AND (OLD.status IS NOT NEW.status OR OLD.refund_id IS NOT NEW.refund_id)
BEGIN
  UPDATE ${counters.table} SET
    ${[...sets, `refunded = refunded + (${REFUNDED})`].join(",\n    ")}
  WHERE ${counters.row};
END`;
}

/** Every counter trigger on `messages`, by name, as this module defines it. */
export function counterTriggers(): Record<string, string> {
  return {
    [CAMPAIGN_STATS.trigger]: statusTriggerSql(CAMPAIGN_STATS),
    [ACCOUNT_USAGE.trigger]: statusTriggerSql(ACCOUNT_USAGE),
  };
}
