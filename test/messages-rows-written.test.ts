import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { batchSql } from "../src/db/client";
import { d1Counts } from "../src/db/d1-counter";
import { claimMessages, insertOutgoingStatements, type NewMessages } from "../src/db/queries/messages";
import { moveStatement, sentStatements } from "../src/moves/message";
import { accountDb } from "./databases";
import { createAccount } from "./helpers";

// D1 bills a row written per b-tree entry it writes: a table row, one per index entry, and the
// writes of a trigger. An UPDATE writes the row and an entry in every index that holds a column it
// sets (the value changed or not), but none in a partial index whose condition the row no longer
// meets. This holds what one outgoing message (not a campaign's) costs, from its send to `read`,
// to the figures below, so that an index or trigger added to `messages` is a choice, not a drift
// (`npm run bench -- --only footprint` measures the whole, events and webhooks included).

function send(accountId: string, count: number, now: number): NewMessages {
  return {
    accountId,
    sessionId: crypto.randomUUID(),
    type: "text",
    content: "Hello",
    mediaUrl: null,
    mediaKey: null,
    mediaContentType: null,
    delayBetween: 0,
    scheduledAt: null,
    price: 1,
    otpId: null,
    chargeId: crypto.randomUUID(),
    recipients: Array.from({ length: count }, (_, i) => ({
      id: crypto.randomUUID(),
      to: `+1415555${String(2000 + i)}`,
    })),
    now,
  };
}

const written = (results: D1Result[]) => results.map((result) => result.meta.rows_written);

describe("rows written per outgoing message", () => {
  it("are 7 to create a text (a send's count 1 or 2), 1 to accept it, 3 to send it (a batch's count 1), 2 to deliver and 2 to read it", async () => {
    const { accountId } = await createAccount(1);
    const db = await accountDb(accountId);
    const now = Date.now();
    // The hour's first send creates its counter row (the row and its primary key), the next one
    // adds to it; each message: its row, its primary key, and messages_account_created, _status
    // (queued), _to, messages_session and messages_unaccepted. Not messages_account_direction
    // (incoming only) or _type (not text), messages_account_from, messages_provider_id (null until
    // sent), nor messages_charge (a campaign's only), nor a counter per message.
    const one = send(accountId, 1, now);
    expect(written(await batchSql(db, insertOutgoingStatements(one, sql`1`)))).toEqual([2, 7]);
    expect(written(await batchSql(db, insertOutgoingStatements(send(accountId, 10, now), sql`1`)))).toEqual([
      1, 70,
    ]);
    const id = one.recipients[0]?.id ?? "";

    // accepted_at: the row (its messages_unaccepted entry goes, which writes nothing).
    const before = d1Counts().rowsWritten;
    expect(await claimMessages(db, one.sessionId, [id], now)).toEqual(new Set([id]));
    expect(d1Counts().rowsWritten - before).toBe(1);

    // sent: its count (the hour and type's usage row, once for the whole batch), then the row,
    // messages_provider_id and messages_account_from (now set); the queued entry of
    // messages_account_status goes, which writes nothing, and `sent` has none.
    const sent = sentStatements([
      {
        kind: "sent",
        id,
        at: now,
        providerMessageId: "p-1",
        fromNumber: "+14155550100",
        attempts: 1,
        gateway: "sandbox",
        settledBy: "answer",
      },
    ]);
    // delivered, read: the row and the usage counter (no messages_account_status entry).
    const receipt = (kind: "delivered" | "read") =>
      moveStatement({ kind, target: { ids: [id] }, at: now, gatewayAt: now }, crypto.randomUUID());
    expect(written(await batchSql(db, [...sent, receipt("delivered"), receipt("read")]))).toEqual([
      1, 3, 2, 2,
    ]);
  });
});
