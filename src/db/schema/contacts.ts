import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Contacts: whoever is on the other side of a session's chats. Conventions of every table: see
// index.ts (contact ids are `ct_` and 32 hex digits, as the SQL that creates them can make one).

/**
 * A contact of a session: one person, known by any of the identifiers the network gave for them
 * (docs/contacts.md, Contacts). `phone_number` is E.164; `user_id` is the network's own id for the user when
 * it is not a phone number (a business-scoped user id, BSUID, on the Cloud API: `US.1349…`; a LID
 * on linked devices: `<digits>@lid`, as the gateway gives it); `parent_user_id` the Cloud API's
 * parent BSUID (`US.ENT.…`); `username` and `name` are display only (they change). Each column
 * holds the newest value learnt; every identifier ever learnt stays in {@link contactIdentifiers},
 * so a message by an older BSUID still finds its contact. Times are epoch ms: the first and last
 * incoming message the service stored from the contact (by the gateway's clock).
 */
export const contacts = sqliteTable(
  "contacts",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    // No foreign key: a contact, like its messages, outlives the deletion of its session.
    chatappSessionId: text().notNull(),
    phoneNumber: text(),
    userId: text(),
    parentUserId: text(),
    username: text(),
    name: text(),
    firstMessageAt: integer(),
    lastMessageAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  (t) => [
    // Keyset paging of GET /v1/contacts, newest first, and its session filter.
    index("contacts_account_created").on(t.accountId, t.createdAt, t.id),
    index("contacts_account_session_created").on(t.accountId, t.chatappSessionId, t.createdAt, t.id),
  ],
);

/** A row of {@link contacts}, as Drizzle reads it. */
export type ContactRow = typeof contacts.$inferSelect;

/** The identifiers a contact is found by (never display names, which change and repeat). */
export const IDENTIFIER_KINDS = ["phone_number", "user_id", "parent_user_id"] as const;
export type IdentifierKind = (typeof IDENTIFIER_KINDS)[number];

/**
 * Every identifier each contact was ever known by on a session, each pointing at its one contact:
 * what an incoming message, a receipt or a send is matched by. Rows are only added (a BSUID that
 * changed with the user's number keeps pointing at them) or, when two contacts turn out to be one
 * person, moved to the one kept (src/contacts/learn.ts).
 */
export const contactIdentifiers = sqliteTable(
  "contact_identifiers",
  {
    chatappSessionId: text().notNull(),
    kind: text({ enum: IDENTIFIER_KINDS }).notNull(),
    value: text().notNull(),
    contactId: text()
      .notNull()
      .references(() => contacts.id),
    createdAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.chatappSessionId, t.kind, t.value] }),
    index("contact_identifiers_contact").on(t.contactId),
    // A user id across the account's sessions (`filter[user_id]` of the message list).
    index("contact_identifiers_value").on(t.value, t.kind),
  ],
);
