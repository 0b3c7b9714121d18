// Every table of an account database, with how to find one account's rows in it: what a move
// between databases copies and deletes (src/db/account-copy.ts; docs/databases.md,
// Databases, Moving an account). test/account-moves.test.ts checks that the list names every table of
// src/db/schema/ and that each table's rows are found through an index or its primary key.

/**
 * A number the target database gives afresh where the source's could already be taken by another
 * account there: its own `column`, set by `value` (SQL); the rows of other tables that point to it
 * by that number ({@link Renumbered}) follow it through its stable `id`.
 */
export interface Numbered {
  column: string;
  id: string;
  value: string;
}

/** A column that holds another table's {@link Numbered} number, rewritten on the way. */
export interface Renumbered {
  column: string;
  table: string;
}

/**
 * One table of an account database.
 * - `where`: the SQL condition that selects one account's rows; `?1` is the account's id, `?2`
 *   its number (src/db/directory-schema.ts `directoryAccounts`).
 * - `order`: columns unique together, not null, in an order an index (or the primary key) gives
 *   under `where`: the copy pages through the rows by them.
 * - `key`: the primary key's columns, by which the delete picks rows.
 */
export interface AccountTable {
  name: string;
  where: string;
  order: string[];
  key: string[];
  numbered?: Numbered;
  renumbered?: Renumbered;
  /** The target's rows of the account are replaced, not added to: its triggers write some while the copy runs. */
  replaced?: boolean;
}

const byAccount = (order: string[], key = ["id"]): Omit<AccountTable, "name"> => ({
  where: "account_id = ?1",
  order,
  key,
});
const bySessions = (key: string[]): Omit<AccountTable, "name"> => ({
  where: "session_id IN (SELECT id FROM sessions WHERE account_id = ?1)",
  order: key,
  key,
});
const byOtps = {
  where: "otp_id IN (SELECT id FROM otps WHERE account_id = ?1)",
  order: ["otp_id", "seq"],
  key: ["otp_id", "seq"],
};
const byApps = (key: string[]) => ({
  where: "app_id IN (SELECT id FROM apps WHERE account_id = ?1)",
  order: key,
  key,
});
const byArchives = (key: string) => ({
  where: "archive_seq IN (SELECT seq FROM message_archives WHERE account_id = ?1)",
  order: [key],
  key: [key],
  renumbered: { column: "archive_seq", table: "message_archives" },
});
const byEndpoints = (key: string[]) => ({
  where: "endpoint_number IN (SELECT number FROM webhook_endpoints WHERE account_id = ?1)",
  order: key,
  key,
  renumbered: { column: "endpoint_number", table: "webhook_endpoints" },
});

/**
 * The account tables in the order a copy writes them: each after the tables its foreign keys
 * point to (a delete runs the list backwards). `account_usage` is last and replaced: the target's
 * trigger `messages_usage_insert` (migrations/accounts/0016_account_usage.sql) counts each copied
 * message again.
 */
export const ACCOUNT_TABLES: readonly AccountTable[] = [
  { name: "accounts", where: "id = ?1", order: ["id"], key: ["id"] },
  { name: "api_keys", ...byAccount(["id"]) },
  { name: "apps", ...byAccount(["created_at", "id"]) },
  { name: "sessions", ...byAccount(["created_at", "id"]) },
  { name: "cloud_api_numbers", ...bySessions(["session_id"]) },
  { name: "message_template_syncs", ...bySessions(["session_id"]) },
  { name: "message_templates", ...bySessions(["session_id", "name", "language"]) },
  { name: "link_tokens", ...byAccount(["id"]) },
  { name: "contacts", ...byAccount(["created_at", "id"]) },
  {
    name: "contact_identifiers",
    where: "contact_id IN (SELECT id FROM contacts WHERE account_id = ?1)",
    order: ["contact_id", "chatapp_session_id", "kind", "value"],
    key: ["chatapp_session_id", "kind", "value"],
  },
  { name: "contact_checks", ...byAccount(["number"], ["account_id", "number"]) },
  { name: "opt_outs", ...byAccount(["to_number"], ["account_id", "to_number"]) },
  { name: "campaigns", ...byAccount(["created_at", "id"]) },
  {
    name: "campaign_recipients",
    where: "campaign_id IN (SELECT id FROM campaigns WHERE account_id = ?1)",
    order: ["campaign_id", "seq"],
    key: ["campaign_id", "seq"],
  },
  { name: "messages", where: "account_number = ?2", order: ["created_at", "id"], key: ["id"] },
  { name: "otps", ...byAccount(["created_at", "id"]) },
  { name: "otp_sends", ...byOtps },
  { name: "otp_attempts", ...byOtps },
  { name: "otp_stats_hours", ...byApps(["app_id", "start", "mode", "channel"]) },
  { name: "otp_verify_times", ...byApps(["app_id", "start", "seconds"]) },
  { name: "reverse_guesses", ...bySessions(["session_id", "message_key", "code_lookup"]) },
  { name: "ledger_entries", ...byAccount(["created_at", "id"]) },
  {
    name: "message_archives",
    ...byAccount(["created_at", "id"], ["seq"]),
    numbered: { column: "seq", id: "id", value: "NULL" },
  },
  { name: "archived_messages", ...byArchives("message_id") },
  { name: "archived_otps", ...byArchives("otp_id") },
  { name: "events", where: "account_number = ?2", order: ["created_at", "id"], key: ["id"] },
  {
    name: "webhook_endpoints",
    ...byAccount(["created_at", "id"]),
    // As src/db/queries/webhook-endpoints.ts gives one: past every endpoint's and delivery's.
    numbered: {
      column: "number",
      id: "id",
      value: `1 + max(coalesce((SELECT max(number) FROM webhook_endpoints), 0),
        coalesce((SELECT max(endpoint_number) FROM webhook_deliveries), 0))`,
    },
  },
  { name: "webhook_deliveries", ...byEndpoints(["endpoint_number", "created_at", "event_id"]) },
  { name: "webhook_attempts", ...byEndpoints(["endpoint_number", "event_id", "attempt"]) },
  { name: "erasures", ...byAccount(["created_at", "id"]) },
  { name: "idempotency_keys", ...byAccount(["key"], ["account_id", "key"]) },
  { name: "account_usage", ...byAccount(["hour", "type"], ["account_id", "hour", "type"]), replaced: true },
];
