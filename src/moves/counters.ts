import { type SQL, sql } from "drizzle-orm";
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

/**
 * The account's usage per UTC hour of creation and message type (`GET /v1/account/usage`). A
 * move into `sent` is counted instead by the statement before its UPDATE, once per hour and type
 * of the batch rather than once per message ({@link sentUsageStatement}): the trigger leaves it.
 */
export const ACCOUNT_USAGE = {
  trigger: "messages_usage_status",
  table: "account_usage",
  when: "NEW.direction = 'outgoing' AND (NEW.status IS NOT 'sent' OR OLD.status IS 'sent')",
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

/**
 * The statement that counts in `account_usage` the move into `sent` of the outgoing messages
 * `ids` (SQL: a subquery of message ids) that are in one of `from` (the statuses the move starts
 * from, src/moves/message.ts `MESSAGE_TRANSITIONS`): each (account, hour, type) row loses them
 * from their status's counter and gains them in `sent`, in one UPDATE. It goes into the batch just
 * before the move's UPDATE, which matches the same messages, so the counters stay exact (the
 * trigger {@link ACCOUNT_USAGE} leaves moves into `sent` to it).
 */
export function sentUsageStatement(ids: SQL, from: readonly MessageStatus[]): SQL {
  const counted = Object.entries(ACCOUNT_USAGE.columns).filter(([column]) => column !== "sent");
  const sums = counted.map(([column, statuses]) =>
    sql.raw(`SUM(m.status IN (${statuses.map((status) => `'${status}'`).join(", ")})) AS ${column}_n`),
  );
  const sets = counted.map(([column]) => sql.raw(`${quoted(column)} = ${quoted(column)} - c.${column}_n`));
  const moved = sql.raw(counted.map(([column]) => `c.${column}_n`).join(" + "));
  return sql`UPDATE account_usage SET ${sql.join(sets, sql`, `)}, sent = sent + ${moved}
    FROM (SELECT m.account_id AS a, m.created_at - m.created_at % 3600000 AS h, m.type AS t, ${sql.join(sums, sql`, `)}
      FROM messages m WHERE m.id IN ${ids} AND m.direction = 'outgoing'
        AND m.status IN (${sql.raw(from.map((status) => `'${status}'`).join(", "))})
      GROUP BY 1, 2, 3) AS c
    WHERE account_usage.account_id = c.a AND account_usage.hour = c.h AND account_usage.type = c.t`;
}
