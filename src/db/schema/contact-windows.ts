import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { sessions } from "./sessions";

// The customer service window of each (session, contact). Conventions of every table: see index.ts.

/**
 * When contact `contact_number` (E.164) last wrote to session `session_id`: the time of the
 * latest incoming message stored for the pair (the gateway's time, epoch ms; it only moves
 * forward). A Cloud API session may send a free-form message (any type but a template) to a
 * contact only within 24 hours of it (Meta's "Customer service windows"; src/messages/service-window.ts).
 * Written for every session's incoming messages; only Cloud API sends read it. The row goes with
 * its session (`ON DELETE CASCADE`).
 */
export const contactWindows = sqliteTable(
  "contact_windows",
  {
    sessionId: text()
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    contactNumber: text().notNull(),
    lastIncomingAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.contactNumber] })],
);
