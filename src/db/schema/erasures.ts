import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Erasures of a contact's data on request (docs/contacts.md, Erasure). Conventions of every table: see
// index.ts (erasure ids are `ers_` and 32 hex digits).

/**
 * One erasure of everything an account holds about a contact (GDPR Art. 17; src/erasures/):
 * `address` is the keyed hash of the phone number or user id it was asked for
 * (`erased:<64 hex>`, src/erasures/address.ts), never the address itself. `pending` while some
 * phase still has something to erase (a message still waiting to be sent, an archived day), then
 * `completed` at `completed_at` (epoch ms), with `contact.erased`. The counts say what it erased,
 * summed over its runs. `sealed_addresses` holds what a pending erasure still needs, every address
 * and contact id of the person, sealed with AES-256-GCM under a key derived from `OTP_SECRET`
 * (lib/sealed-secret.ts), bound to the erasure id; it is null once completed.
 */
export const erasures = sqliteTable(
  "erasures",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    address: text().notNull(),
    status: text({ enum: ["pending", "completed"] }).notNull(),
    sealedAddresses: text(),
    /** Messages whose text, media and contact's addresses were erased. */
    messages: integer().notNull().default(0),
    /** Stored media files (R2 `MEDIA` objects) deleted. */
    mediaObjects: integer().notNull().default(0),
    /** One-time codes whose number was replaced by its hash. */
    otps: integer().notNull().default(0),
    /** Campaign recipients whose number and variables were erased (draft ones deleted). */
    campaignRecipients: integer().notNull().default(0),
    /** Contacts deleted, with their identifiers and customer service window. */
    contacts: integer().notNull().default(0),
    /** Opt-outs kept as the hash of their address. */
    optOuts: integer().notNull().default(0),
    /** Events purged (with their webhook deliveries). */
    events: integer().notNull().default(0),
    /** Archived messages (lines of R2 archives, src/archives/) erased, their archives rewritten. */
    archivedMessages: integer().notNull().default(0),
    /** Archived OTPs (lines of R2 archives of kind `otps`) erased, their archives rewritten. */
    archivedOtps: integer().notNull().default(0),
    /** Archived campaign recipients erased (hashed, variables gone), their archives rewritten. */
    archivedCampaignRecipients: integer().notNull().default(0),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
    completedAt: integer(),
  },
  (t) => [
    // Keyset paging of GET /v1/erasures, newest first.
    index("erasures_account_created").on(t.accountId, t.createdAt, t.id),
    // Small: only the erasures the hourly `complete_erasures` runs again.
    index("erasures_pending").on(t.createdAt).where(sql`${t.status} = 'pending'`),
  ],
);

/** A row of {@link erasures}, as Drizzle reads it. */
export type ErasureRow = typeof erasures.$inferSelect;
