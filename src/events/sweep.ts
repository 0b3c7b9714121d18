import type { Db } from "../db/client";
import { undeliveredEvents } from "../db/queries/events";
import { publishEvents } from "./publish";

/** An event is swept only once it is this old: its own publication has had time to run. */
export const REPUBLISH_AFTER_MS = 5 * 60_000;
/** How far back the sweep looks (a day: the hourly sweep has had 24 chances by then). */
const LOOKBACK_MS = 24 * 3600_000;
/** Most events one sweep publishes again. */
const SWEEP_LIMIT = 1000;

/**
 * The hourly sweep's part for webhooks: publishes again the events whose webhook fan-out never
 * happened (their queue message was lost or never sent after the change committed), so none is
 * lost. Publishing twice is harmless: the fan-out creates each (event, endpoint) delivery once.
 * @returns how many events it published again.
 */
export async function republishUndelivered(
  env: { WEBHOOK_QUEUE: Queue },
  db: Db,
  now: number,
): Promise<number> {
  const events = await undeliveredEvents(
    db,
    { from: now - LOOKBACK_MS, to: now - REPUBLISH_AFTER_MS },
    SWEEP_LIMIT,
  );
  await publishEvents(env, events);
  return events.length;
}
