import { type BatchItem, eventIndexes, learnContact } from "../contacts/learn";
import { batchSql } from "../db/client";
import { databaseFor } from "../db/databases";
import { noteReplyStatement } from "../db/queries/campaigns";
import {
  incomingRow,
  insertIncomingStatement,
  messageOfProviderIds,
  messageWithId,
  type NewIncoming,
} from "../db/queries/messages";
import { optOutByKeywordStatement } from "../db/queries/opt-outs";
import { messages } from "../db/schema";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";
import { toE164 } from "../lib/phone";
import { optOutKeyword } from "../opt-outs/keywords";
import type { MessageRow } from "./types";

/**
 * Stores a message a contact sent to a session's phone, with its `message.received` event, in one
 * D1 batch, then publishes the event. A message the gateway already delivered (same
 * `providerMessageId`) is stored once and has one event.
 *
 * A message whose whole text is an opt-out keyword (src/opt-outs/keywords.ts) also puts its sender
 * on the account's suppression list (source `keyword`), by every address their contact is known
 * by (number and user ids), in the same batch, and only when the message itself is stored: a
 * replayed message adds nothing, and an address already listed keeps its row. A reply from a campaign's recipient counts in the campaign's `replied`, once. The
 * sender's contact is learnt in the same batch (src/contacts/learn.ts), and its last message time
 * moves forward (the Cloud API's customer service window, src/messages/service-window.ts), replays
 * included (harmless: MAX).
 * A reply names the message it quotes by the gateway's ids (`quotedIds`, GatewayEvent
 * `incoming`): when the session holds it, its id is the row's `reply_to` (else null: a message
 * from before the session, or one it never saw).
 * @returns the stored row, or null for such a duplicate.
 */
export async function receiveMessage(
  env: { DB: D1Database; WEBHOOK_QUEUE: Queue },
  input: NewIncoming,
  options: { quotedIds?: readonly string[] } = {},
): Promise<MessageRow | null> {
  const db = await databaseFor(env, input.accountId);
  const quoted = options.quotedIds?.length ? await messageOfProviderIds(db, input, options.quotedIds) : null;
  const row = incomingRow(quoted ? { ...input, replyTo: quoted.id } : input);
  const learnt = await learnContact(
    db,
    { accountId: input.accountId, sessionId: input.sessionId, identity: input.contact, at: row.createdAt },
    { sourceRef: row.providerMessageId ?? row.id, message: true },
  );
  const items: BatchItem[] = [
    ...(learnt?.items ?? []),
    { statement: insertIncomingStatement(db, row, learnt?.contactId ?? null), event: false },
    { statement: eventsForRows("message.received", messages, messageWithId(row.id)), event: true },
  ];
  const inserted = items.length - 2;
  const statements = items.map((item) => item.statement);
  const keyword = optOutKeyword(row.content);
  if (keyword !== null && learnt) {
    statements.push(
      optOutByKeywordStatement({
        accountId: row.accountId,
        contactId: learnt.contactId,
        keyword,
        messageId: row.id,
        at: row.createdAt,
      }),
    );
  }
  // A campaign recipient writing back after their message was sent counts as `replied`, once
  // (the `campaign_recipients_replied` trigger keeps the campaign's counter), whether the campaign
  // knew them by their number or by their user id.
  const senders = [toE164(row.fromNumber ?? ""), input.contact.userId].filter((a): a is string => Boolean(a));
  if (senders.length > 0) {
    statements.push(noteReplyStatement(row.accountId, senders, row.createdAt));
  }
  const results = await batchSql(db, statements);
  await publishEvents(env, recordedIn(results, eventIndexes(items)));
  return (results[inserted]?.meta.changes ?? 0) > 0 ? row : null;
}
