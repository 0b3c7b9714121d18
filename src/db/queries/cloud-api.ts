import { and, eq } from "drizzle-orm";
import type { Db } from "../client";
import { cloudApiNumbers, sessions } from "../schema";

/** A `cloud_api_numbers` row (schema/cloud-api.ts). */
export type CloudApiNumberRow = typeof cloudApiNumbers.$inferSelect;

/**
 * Records the number of a new Cloud API session. @returns false when another session holds the
 * number already (`phone_number_id` is unique), true when it was recorded.
 */
export async function insertCloudApiNumber(db: Db, row: CloudApiNumberRow): Promise<boolean> {
  const inserted = await db
    .insert(cloudApiNumbers)
    .values(row)
    .onConflictDoNothing({ target: cloudApiNumbers.phoneNumberId })
    .returning({ sessionId: cloudApiNumbers.sessionId });
  return inserted.length > 0;
}

/**
 * The session of WhatsApp Business Account `wabaId`'s number whose linked phone is `phoneNumber`
 * (E.164): whom a `phone_number_quality_update` webhook concerns (it names the number by its
 * display form, not its id). Null when no session holds it.
 */
export async function sessionOfWabaNumber(
  db: Db,
  wabaId: string,
  phoneNumber: string,
): Promise<string | null> {
  const [row] = await db
    .select({ sessionId: cloudApiNumbers.sessionId })
    .from(cloudApiNumbers)
    .innerJoin(sessions, eq(sessions.id, cloudApiNumbers.sessionId))
    .where(and(eq(cloudApiNumbers.wabaId, wabaId), eq(sessions.phoneNumber, phoneNumber)))
    .limit(1);
  return row?.sessionId ?? null;
}

/** The numbers of a WhatsApp Business Account (`waba_id`): who a template webhook concerns. */
export function numbersOfWaba(db: Db, wabaId: string): Promise<CloudApiNumberRow[]> {
  return db.select().from(cloudApiNumbers).where(eq(cloudApiNumbers.wabaId, wabaId));
}

/** The number of session `sessionId`, or null when it is not a Cloud API session. */
export async function numberOfSession(db: Db, sessionId: string): Promise<CloudApiNumberRow | null> {
  const [row] = await db
    .select()
    .from(cloudApiNumbers)
    .where(eq(cloudApiNumbers.sessionId, sessionId))
    .limit(1);
  return row ?? null;
}
