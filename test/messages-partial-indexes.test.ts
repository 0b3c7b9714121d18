import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { lastIncomingMessageId, messageOfProviderIds } from "../src/db/queries/messages";
import { firstAccountD1 } from "./databases";

// Partial indexes on messages (migrations/accounts/0043_messages_partial_indexes.sql,
// 0051_messages_fewer_index_rows.sql): a message that was never refunded, belongs to no campaign,
// has no gateway id or no sender number yet (an outgoing one until it is sent) takes no entry, and
// the queries that look messages up by these (`= ?` or `IN (…)`, which imply IS NOT NULL) still
// use them.

async function plan(query: string, ...params: unknown[]): Promise<string> {
  const rows = await firstAccountD1()
    .prepare(`EXPLAIN QUERY PLAN ${query}`)
    .bind(...params)
    .all<{ detail: string }>();
  return rows.results.map((row) => row.detail).join("\n");
}

/** D1 that records each statement prepared through it (and its parameters), then runs it. */
function recordingD1(): { d1: D1Database; statements: { sql: string; params: unknown[] }[] } {
  const statements: { sql: string; params: unknown[] }[] = [];
  const d1 = new Proxy(firstAccountD1(), {
    get(target, name) {
      if (name !== "prepare") return Reflect.get(target, name, target);
      return (query: string) => {
        const entry = { sql: query, params: [] as unknown[] };
        statements.push(entry);
        const statement = target.prepare(query);
        return new Proxy(statement, {
          get(inner, key) {
            if (key !== "bind") {
              const value = Reflect.get(inner, key, inner);
              return typeof value === "function" ? value.bind(inner) : value;
            }
            return (...params: unknown[]) => {
              entry.params = params;
              return inner.bind(...params);
            };
          },
        });
      };
    },
  });
  return { d1, statements };
}

const indexSql = async (name: string) =>
  (
    await firstAccountD1()
      .prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?")
      .bind(name)
      .first<{ sql: string }>()
  )?.sql;

describe("partial indexes on messages", () => {
  it("are partial on refund_id, campaign_id, provider_message_id and from_number; a charge's only on a campaign's", async () => {
    expect(await indexSql("messages_refund")).toMatch(/WHERE "messages"."refund_id" IS NOT NULL$/);
    expect(await indexSql("messages_campaign")).toMatch(/WHERE "messages"."campaign_id" IS NOT NULL$/);
    expect(await indexSql("messages_provider_id")).toMatch(
      /\(`provider_message_id`\) WHERE "messages"."provider_message_id" IS NOT NULL$/,
    );
    expect(await indexSql("messages_account_from")).toMatch(
      /\(`account_number`,`from_number`,`created_at`,`id`\) WHERE "messages"."from_number" IS NOT NULL$/,
    );
    expect(await indexSql("messages_charge")).toMatch(
      /\(`charge_id`,`send_index`,`id`\) WHERE "messages"."campaign_id" IS NOT NULL$/,
    );
  });

  it("serve a refund's messages and a campaign's messages by status", async () => {
    expect(await plan("SELECT COALESCE(SUM(cost), 0) FROM messages WHERE refund_id = ?", "r")).toMatch(
      /USING (COVERING )?INDEX messages_refund \(refund_id=\?\)/,
    );
    expect(
      await plan("SELECT count(*) FROM messages WHERE campaign_id = ? AND status = ?", "c", "queued"),
    ).toMatch(/USING COVERING INDEX messages_campaign \(campaign_id=\? AND status=\?\)/);
  });

  it("serve a message by the gateway's ids, and a contact's last incoming message by their number", async () => {
    const { d1, statements } = recordingD1();
    const db = createDb(d1);
    const session = { accountId: "a", sessionId: "s" };
    expect(await messageOfProviderIds(db, session, ["p1", "p2"])).toBeNull();
    expect(await lastIncomingMessageId(db, "a", "s", "+14155552671")).toBeNull();
    const [byIds, last] = statements;
    expect(await plan(byIds?.sql ?? "", ...(byIds?.params ?? []))).toMatch(
      /SEARCH messages USING INDEX messages_provider_id \(provider_message_id=\?\)/,
    );
    expect(await plan(last?.sql ?? "", ...(last?.params ?? []))).toMatch(
      /SEARCH messages USING INDEX messages_account_from \(account_number=\? AND from_number=\?\)/,
    );
  });
});
