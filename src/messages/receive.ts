import { sql } from "drizzle-orm";
import { batchSql, createDb } from "../db/client";
import { incomingRow, insertIncomingStatement, type NewIncoming } from "../db/queries/messages";
import { messages } from "../db/schema";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";
import type { MessageRow } from "./message-record";

/**
 * Stores a message a contact sent to a session's phone, with its `message.received` event, in one
 * D1 batch, then publishes the event. A message the gateway already delivered (same `providerMessageId`) is stored once and
 * has one event.
 * @returns the stored row, or null for such a duplicate.
 */
export async function receiveMessage(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  input: NewIncoming,
): Promise<MessageRow | null> {
  const db = createDb(env.DB);
  const row = incomingRow(input);
  const results = await batchSql(db, [
    insertIncomingStatement(db, row),
    eventsForRows("message.received", messages, sql`id = ${row.id}`),
  ]);
  await publishEvents(env, recordedIn(results, [1]));
  return (results[0]?.meta.changes ?? 0) > 0 ? row : null;
}
