import type { Db } from "../db/client";
import { sendWindowsOf } from "../db/queries/campaigns";
import { staleUnacceptedQuery } from "../db/queries/messages";
import { sendInBatches } from "../lib/queue";
import { dispatchRequestOf, LANE } from "../messages/dispatch-request";
import { applyFailMoves } from "../moves/apply";
import { failMoves } from "../moves/message";

/** A message still waiting this long after its last change may have lost its queue message. */
export const STALE_AFTER_MS = 15 * 60_000;
/** Most messages one sweep puts back on the queue. */
const SWEEP_LIMIT = 1000;

/**
 * The reconciliation sweep (hourly cron): puts outgoing messages that no session object has
 * accepted (`accepted_at` null) {@link STALE_AFTER_MS} after their last change (or their
 * `scheduled_at`) back on the outbound Queue. Nothing is lost if a queue message never reached its
 * session object (a lost delivery, a local `wrangler dev` reload). Messages an object holds,
 * however long they wait for a disconnected session, are not swept, so they cannot crowd out a
 * lost one. Were a message swept that an object does hold, the object would ignore it (entries
 * are keyed by message id), so the sweep never sends twice.
 *
 * A lost one-time code is not re-sent: only its queue message held the code (the row holds it
 * masked), so it fails with reason `dispatch_failed` and is refunded; the caller resends the OTP.
 *
 * @returns how many messages it re-enqueued.
 */
export async function requeueStale(env: Env, db: Db, now: number): Promise<number> {
  const stale = await staleQuery(db, now);
  const codes = stale.filter((row) => row.otpId !== null);
  const moves = failMoves(codes, "dispatch_failed", now, { unacceptedOnly: true });
  await applyFailMoves(env, moves);
  const resent = stale.filter((row) => row.otpId === null);
  const windows = await sendWindowsOf(
    db,
    resent.flatMap((row) => (row.campaignId ? [row.campaignId] : [])),
  );
  const { sent } = await sendInBatches(
    env.OUTBOUND_QUEUE,
    resent.map((row) =>
      row.campaignId
        ? dispatchRequestOf(row, LANE.campaign, { sendWindow: windows.get(row.campaignId) ?? null })
        : dispatchRequestOf(row, LANE.send),
    ),
  );
  return sent;
}

/** The sweep's query (exported so a test can check its plan). */
export function staleQuery(db: Db, now: number) {
  return staleUnacceptedQuery(db, now - STALE_AFTER_MS, SWEEP_LIMIT);
}
