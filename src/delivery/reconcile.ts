import { and, asc, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { messages } from "../db/schema";
import { dispatchRequestOf, enqueueDispatch } from "./dispatch-request";

/** A message still waiting this long after its last change may have lost its queue message. */
export const STALE_AFTER_MS = 15 * 60_000;
/** Most messages one sweep puts back on the queue. */
const SWEEP_LIMIT = 1000;

/**
 * The reconciliation sweep (hourly cron): puts outgoing messages that have waited `queued` (or
 * past their `scheduled_at`) for over {@link STALE_AFTER_MS} back on the outbound Queue. Nothing
 * is lost if a queue message never reached its session object (a lost delivery, a local
 * `wrangler dev` reload); one that did is ignored there, as the object keys entries by message
 * id, so the sweep can never send a message twice.
 *
 * @returns how many messages it re-enqueued.
 */
export async function requeueStale(env: Env, db: Db, now: number): Promise<number> {
  const stale = await staleQuery(db, now);
  const { enqueued } = await enqueueDispatch(
    env.OUTBOUND_QUEUE,
    stale.map((row) => dispatchRequestOf(row, row.otpId ? 0 : 1)),
  );
  return enqueued;
}

/** The sweep's query (exported so a test can check its plan). */
export function staleQuery(db: Db, now: number) {
  const before = now - STALE_AFTER_MS;
  return db
    .select()
    .from(messages)
    .where(
      and(
        // Literal, not bound: SQLite uses the partial index messages_waiting only when the query
        // states its condition as written.
        sql`${messages.status} IN ('queued', 'scheduled')`,
        lt(messages.updatedAt, before),
        eq(messages.direction, "outgoing"),
        sql`COALESCE(${messages.scheduledAt}, 0) < ${before}`,
      ),
    )
    .orderBy(asc(messages.updatedAt))
    .limit(SWEEP_LIMIT);
}
