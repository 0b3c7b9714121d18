import { EVENT_TYPE_CODES } from "../src/db/schema";
import { accountD1, everyAccountD1 } from "./databases";

// Events as tests read and write them: in the API's terms (`evt_…` ids, account ids, type names),
// converted from what the table stores (src/db/schema/events.ts: 16-byte ids, account numbers,
// type codes).

const typeName = `CASE e.type_code ${Object.entries(EVENT_TYPE_CODES)
  .map(([name, code]) => `WHEN ${code} THEN '${name}'`)
  .join(" ")} END`;

/** The hex digits of `e`'s id, and the message id a message event's id names (the version digit back). */
const hex = "lower(hex(e.id))";
const namedMessage = `substr(${hex}, 1, 8) || '-' || substr(${hex}, 9, 4) || '-4' || substr(${hex}, 14, 3) || '-'
  || substr(${hex}, 17, 4) || '-' || substr(${hex}, 21)`;

/**
 * A subquery to read in place of the `events` table (`FROM ${EVENTS} WHERE …`): one row per
 * stored event with `id` (`evt_…`), `account_id`, `type`, `dedupe_key`, `object_id`, `snapshot`
 * (as stored), `created_at`, and `message_id`: the message a message event points at (its
 * `object_id`, or the one its id names), null for any other event.
 */
export const EVENTS = `(SELECT 'evt_' || ${hex} AS id, a.id AS account_id, ${typeName} AS type,
  e.dedupe_key, e.object_id, e.snapshot, e.created_at,
  CASE WHEN substr(e.snapshot, 1, 1) = '[' THEN COALESCE(e.object_id, ${namedMessage}) END AS message_id
  FROM events e JOIN accounts a ON a.number = e.account_number)`;

/** Stores an event as the service would record one made outside D1 (a random id, no dedupe key). */
export async function insertEvent(event: {
  id: string;
  accountId: string;
  type: string;
  snapshot: string;
  createdAt: number;
}): Promise<void> {
  const d1 = await accountD1(event.accountId);
  await d1
    .prepare(
      `INSERT INTO events (id, account_number, type_code, snapshot, created_at)
     VALUES (unhex(substr(?, 5)), (SELECT number FROM accounts WHERE id = ?), ?, ?, ?)`,
    )
    .bind(event.id, event.accountId, EVENT_TYPE_CODES[event.type], event.snapshot, event.createdAt)
    .run();
}

/**
 * Moves event `id`'s time to `createdAt` (epoch ms), as if it had been recorded then. The id names
 * no account, so each account database is asked; exactly one must hold the event.
 */
export async function backdateEvent(id: string, createdAt: number): Promise<void> {
  let changed = 0;
  for (const d1 of everyAccountD1()) {
    const result = await d1
      .prepare("UPDATE events SET created_at = ? WHERE id = unhex(substr(?, 5))")
      .bind(createdAt, id)
      .run();
    changed += result.meta.changes;
  }
  if (changed !== 1) throw new Error(`event ${id} is in ${changed} account databases, not one`);
}
