import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Messages, outgoing and incoming. Conventions of every table: see index.ts.

/**
 * The statuses `messages_account_status` holds: those few messages are in (waiting, or failed),
 * which a status filter finds by that index. Most messages are `sent`, `delivered` or `read`; a
 * filter on one of those reads the account's messages newest first (`messages_account_created`)
 * and keeps those in it, so no message writes a status index entry on those moves (docs/retention.md,
 * Data retention).
 */
export const LISTED_STATUSES = ["queued", "scheduled", "failed"] as const;
/** The direction `messages_account_direction` holds (most messages of a sending API are outgoing). */
export const LISTED_DIRECTION = "incoming";
/** The type `messages_account_type` leaves out (most messages are text). */
export const UNLISTED_TYPE = "text";
/**
 * The conditions of the partial indexes on status, direction and type, as SQL text: each index is
 * made with its own, and a query that reads one must hold it literally (SQLite uses a partial
 * index only then, https://www.sqlite.org/partialindex.html#queries_using_partial_indexes).
 */
export const LISTED_CONDITION = {
  status: `status IN (${LISTED_STATUSES.map((status) => `'${status}'`).join(", ")})`,
  direction: `direction = '${LISTED_DIRECTION}'`,
  type: `type <> '${UNLISTED_TYPE}'`,
} as const;

/**
 * Every message, outgoing (`queued`/`scheduled` until sent, then `sent`, `delivered`, `read` or
 * `failed`; moves in src/moves/message.ts) and incoming (stored once per session and gateway
 * message id). `cost` is minor units; times are epoch ms. Outgoing ones are counted per hour
 * into `account_usage` (see `accountUsage`, billing.ts).
 */
export const messages = sqliteTable(
  "messages",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    /**
     * The account's {@link accounts} `number`, which every index by account leads with in place of
     * the 36-character id (docs/retention.md, Data retention): a query that reads one names the account by it
     * (src/db/queries/accounts.ts `accountNumberOf`). Set when the message is stored.
     */
    accountNumber: integer().notNull(),
    // No foreign key: a message outlives the deletion of its session.
    chatappSessionId: text(),
    campaignId: text(),
    otpId: text(),
    providerMessageId: text(),
    fromNumber: text(),
    toNumber: text().notNull(),
    /**
     * The contact on the other side of the chat (src/db/schema/contacts.ts): who wrote an incoming
     * message; null for messages stored before contacts were kept and for outgoing ones.
     */
    contactId: text(),
    type: text({
      enum: [
        "text",
        "image",
        "video",
        "audio",
        "document",
        "template",
        "reaction",
        "location",
        "interactive",
        "contacts",
        "sticker",
        "poll",
        "interactive_reply",
      ],
    }).notNull(),
    /**
     * The text or caption; a `reaction`'s emoji ("" removes the reaction); a `location`'s name or
     * address (its point is in `metadata.location`); a `contacts` message's names (its cards are in
     * `metadata.contacts`); a `poll`'s question (the poll and its votes are in `metadata.poll`,
     * `metadata.poll_votes`).
     */
    content: text(),
    /**
     * The account's message this one quotes (a reply), or, for a `reaction`, the message it reacts
     * to: an id of this table in the same session's chat, or null (docs/messages.md, Replies and reactions).
     */
    replyTo: text(),
    /**
     * The caller's `media_url`, as given and shown; the gateway never fetches it (docs/security.md, Media).
     */
    mediaUrl: text(),
    /**
     * The stored copy of the media: its key in the `MEDIA` R2 bucket, or null (text; incoming media
     * not kept; a copy the retention sweep deleted, `metadata.media_expired_at` saying when).
     */
    mediaKey: text(),
    /** The stored copy's content type, as its host answered it (e.g. `image/png`). */
    mediaContentType: text(),
    status: text({ enum: ["queued", "sent", "delivered", "read", "failed", "scheduled"] }).notNull(),
    direction: text({ enum: ["incoming", "outgoing"] }).notNull(),
    reason: text(),
    /** Minor units. */
    cost: integer().notNull().default(0),
    /** Milliseconds the session waits after its previous gateway call before this one. */
    delayBetween: integer().notNull().default(0),
    /** Order of acceptance within one send request (0-based); pacing follows it. */
    sendIndex: integer().notNull().default(0),
    scheduledAt: integer(),
    /**
     * Whether the recipient sees "typing…" before the message (docs/messages.md, Typing before a send;
     * src/messages/typing.ts): the session shows it for a time that follows the text's length.
     */
    simulateTyping: integer({ mode: "boolean" }).notNull().default(false),
    /**
     * When the session object took the message into its outbox (epoch ms), or null while its
     * queue message has not reached it: the reconciliation sweep re-enqueues only those.
     */
    acceptedAt: integer(),
    sentAt: integer(),
    deliveredAt: integer(),
    readAt: integer(),
    /**
     * JSON object: `{ attempts, gateway, last_error, next_attempt_at, failed_at, events: [{ type,
     * at, gateway_at }] }`; every time in it is an API timestamp string (lib/time.ts).
     */
    metadata: text().notNull().default("{}"),
    chargeId: text(),
    refundId: text(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  // One index per list filter, led by the account's number and ending in the (created_at, id)
  // keyset so that a page reads about as many rows as it returns (this API's target;
  // test/messages-rows-read.test.ts holds it).
  // The status, direction and type indexes hold only the rows of their few-holder values
  // (LISTED_STATUSES, LISTED_DIRECTION, UNLISTED_TYPE): a filter on a value most messages have
  // reads `messages_account_created` instead, and every message spares the index entries (a
  // status index entry on each of its moves).
  (t) => [
    index("messages_account_created").on(t.accountNumber, t.createdAt, t.id),
    index("messages_account_status")
      .on(t.accountNumber, t.status, t.createdAt, t.id)
      .where(sql.raw(LISTED_CONDITION.status)),
    index("messages_account_direction")
      .on(t.accountNumber, t.direction, t.createdAt, t.id)
      .where(sql.raw(LISTED_CONDITION.direction)),
    index("messages_account_type")
      .on(t.accountNumber, t.type, t.createdAt, t.id)
      .where(sql.raw(LISTED_CONDITION.type)),
    index("messages_account_to").on(t.accountNumber, t.toNumber, t.createdAt, t.id),
    // Partial: an outgoing message has no `from_number` until it is sent (nor an incoming one from
    // a user known only by a user id); every read by sender names one (`= ?`).
    index("messages_account_from")
      .on(t.accountNumber, t.fromNumber, t.createdAt, t.id)
      .where(sql`${t.fromNumber} IS NOT NULL`),
    // A session belongs to one account: its id alone leads (the queries still name the account).
    index("messages_session").on(t.chatappSessionId, t.createdAt, t.id),
    // `filter[user_id]`: a contact's messages; only rows that name one.
    index("messages_account_contact")
      .on(t.accountNumber, t.contactId, t.createdAt, t.id)
      .where(sql`contact_id IS NOT NULL`),
    // Partial: an outgoing message has no gateway id until it is sent; every read by it names one
    // (`= ?`, `IN (…)`).
    index("messages_provider_id").on(t.providerMessageId).where(sql`${t.providerMessageId} IS NOT NULL`),
    // A gateway may deliver the same incoming message twice; it is stored once.
    uniqueIndex("messages_incoming_provider_id")
      .on(t.chatappSessionId, t.providerMessageId)
      .where(sql`${t.direction} = 'incoming'`),
    // Small: only messages no session object has accepted yet, for the reconciliation sweep.
    index("messages_unaccepted")
      .on(t.updatedAt)
      .where(sql`${t.status} IN ('queued', 'scheduled') AND ${t.acceptedAt} IS NULL`),
    // A campaign charge's messages in send order, read from the index alone (GET /v1/account/ledger).
    // Only a campaign's: the messages of one send share its charge's `created_at` and are found
    // through `messages_account_created` (src/db/queries/ledger.ts).
    index("messages_charge").on(t.chargeId, t.sendIndex, t.id).where(sql`${t.campaignId} IS NOT NULL`),
    // Partial: most messages are never refunded, and many belong to no campaign; `= ?` finds them.
    index("messages_refund").on(t.refundId, t.sendIndex, t.id).where(sql`${t.refundId} IS NOT NULL`),
    index("messages_campaign").on(t.campaignId, t.status).where(sql`${t.campaignId} IS NOT NULL`),
    // Only outgoing messages whose stored copy of the media is still kept, for the retention sweep
    // of outgoing media (src/messages/media-retention.ts): a copy's messages, and which still wait.
    index("messages_outgoing_media")
      .on(t.mediaKey, t.status)
      .where(sql`${t.direction} = 'outgoing' AND ${t.mediaKey} IS NOT NULL`),
    // Small: only incoming messages whose media is kept in R2, for the retention sweep.
    index("messages_incoming_media")
      .on(t.createdAt)
      .where(sql`${t.direction} = 'incoming' AND ${t.mediaKey} IS NOT NULL`),
  ],
);

/**
 * A row of {@link messages}, as Drizzle reads it, without `accountNumber`: that is what the indexes
 * find the account's messages by, written by the inserts from `accountId` (the account the service
 * works with), so a row made in code has none of its own.
 */
export type MessageRow = Omit<typeof messages.$inferSelect, "accountNumber">;
/** A message's type: `text`, `image`, `video`, `audio`, `document`, `template` or `reaction`. */
export type MessageType = MessageRow["type"];
/** A message's status: `queued`, `scheduled`, `sent`, `delivered`, `read` or `failed`. */
export type MessageStatus = MessageRow["status"];
