import { sql } from "drizzle-orm";
import { batchSql, type Db } from "../db/client";
import { incomingRow, insertIncomingStatement, type NewIncoming } from "../db/queries/messages";
import { messages } from "../db/schema";
import { eventsForRows } from "../events/record";
import type { MessageRow } from "./message-record";

/**
 * Stores a message a contact sent to a session's phone, with its `message.received` event, in one
 * D1 batch. A message the gateway already delivered (same `providerMessageId`) is stored once and
 * has one event.
 * @returns the stored row, or null for such a duplicate.
 */
export async function receiveMessage(db: Db, input: NewIncoming): Promise<MessageRow | null> {
  const row = incomingRow(input);
  const [inserted] = await batchSql(db, [
    insertIncomingStatement(db, row),
    eventsForRows("message.received", messages, sql`id = ${row.id}`),
  ]);
  return (inserted?.meta.changes ?? 0) > 0 ? row : null;
}
