import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { buildListQuery } from "../src/db/queries/message-list";
import { messages } from "../src/db/schema";
import { eventsForRows } from "../src/events/record";
import { moveStatement, targetOf } from "../src/moves/message";
import { firstAccountD1 } from "./databases";

// `messages_session` is `(chatapp_session_id, created_at, id)`: a session belongs to one account,
// so its id leads without `account_id` (migrations/accounts/0049_smaller_events_and_indexes.sql). The
// queries by session still name the account; a receipt, which names the session and the gateway's
// id, finds its message by the gateway's id (`messages_provider_id`), not by reading the session.

const dialect = new SQLiteAsyncDialect({ casing: "snake_case" });

async function plan(query: { sql: string; params: unknown[] }): Promise<string> {
  const rows = await firstAccountD1()
    .prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
    .bind(...query.params)
    .all<{ detail: string }>();
  return rows.results.map((row) => row.detail).join("\n");
}

const planOf = (statement: SQL) => plan(dialect.sqlToQuery(statement));

describe("messages_session", () => {
  it("leads with the session, without account_id", async () => {
    const index = await firstAccountD1()
      .prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?")
      .bind("messages_session")
      .first<{ sql: string }>();
    expect(index?.sql).toMatch(/\(`chatapp_session_id`,`created_at`,`id`\)$/);
    const old = await firstAccountD1()
      .prepare("SELECT name FROM sqlite_master WHERE name = 'messages_account_session'")
      .first();
    expect(old).toBeNull();
  });

  it("serves a session's page of the list, and a session's moves, with no sort", async () => {
    const db = createDb(firstAccountD1());
    for (const cursor of [null, { createdAt: 5, id: "m", direction: "next" as const }]) {
      const details = await plan(
        buildListQuery(db, "a", { filters: { sessionId: "s" }, limit: 10, cursor }).toSQL(),
      );
      expect(details).toMatch(/SEARCH messages USING INDEX messages_session \(chatapp_session_id=\?/);
      expect(details).not.toMatch(/TEMP B-TREE/);
    }
    const fail = moveStatement(
      { kind: "fail", accountId: "a", target: { sessionId: "s" }, reason: "session_deleted", at: 1 },
      "r",
    );
    expect(await planOf(fail)).toMatch(
      /SEARCH messages USING INDEX messages_session \(chatapp_session_id=\?\)/,
    );
  });
});

describe("a receipt's message", () => {
  it("is found by the gateway's id, in its move and its event", async () => {
    const target = { sessionId: "s", providerMessageId: "p" };
    const delivered = moveStatement({ kind: "delivered", target, at: 1, gatewayAt: 1 }, "r");
    const event = eventsForRows("message.delivered", messages, targetOf(target));
    for (const statement of [delivered, event])
      expect(await planOf(statement)).toMatch(
        /SEARCH messages USING INDEX messages_provider_id \(provider_message_id=\?\)/,
      );
  });
});
