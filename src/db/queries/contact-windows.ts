import type { SQL } from "drizzle-orm";
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { contactWindows } from "../schema";

/**
 * The statement that notes an incoming message from `contactNumber` (E.164) on session
 * `sessionId` at `at` (epoch ms): the pair's `last_incoming_at` becomes the later of the two, so
 * a message delivered late or twice never moves it back.
 */
export function noteIncomingStatement(sessionId: string, contactNumber: string, at: number): SQL {
  return sql`INSERT INTO contact_windows (session_id, contact_number, last_incoming_at)
    VALUES (${sessionId}, ${contactNumber}, ${at})
    ON CONFLICT (session_id, contact_number)
    DO UPDATE SET last_incoming_at = MAX(last_incoming_at, excluded.last_incoming_at)`;
}

/**
 * When each of `contactNumbers` (E.164) last wrote to session `sessionId` (epoch ms); a contact
 * who never wrote is not in the map. The caller has checked that the session is its account's.
 */
export async function lastIncomingOf(
  db: Db,
  sessionId: string,
  contactNumbers: string[],
): Promise<Map<string, number>> {
  if (contactNumbers.length === 0) return new Map();
  const rows = await db
    .select({ contactNumber: contactWindows.contactNumber, lastIncomingAt: contactWindows.lastIncomingAt })
    .from(contactWindows)
    .where(
      and(
        eq(contactWindows.sessionId, sessionId),
        // One bound parameter however many numbers (D1 binds at most 100 per statement).
        sql`${contactWindows.contactNumber} IN (SELECT value FROM json_each(${JSON.stringify(contactNumbers)}))`,
      ),
    );
  return new Map(rows.map((row) => [row.contactNumber, row.lastIncomingAt]));
}
