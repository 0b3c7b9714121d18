/**
 * How far the time a gateway put on a webhook call (WAHA's `timestamp`, Evolution API's
 * `date_time`) may be from the service's clock, before or after it, for the call's events to be
 * applied: 5 minutes. A call outside it is answered 200 and dropped (docs/security.md, Gateway
 * events).
 *
 * Why 5 minutes: it is the replay window signed webhooks commonly use (the Standard Webhooks
 * specification's and Stripe's default tolerance, 300 s); it is far more than the skew between
 * NTP-synchronised clocks; and it outlasts WAHA's retries as the service subscribes to them
 * (exponential from 2 s, 8 attempts, the last about 4.2 minutes after the first: waha/link.ts), so
 * no WAHA retry is refused. Evolution API's own retries (by default 10 attempts, exponential from
 * 5 s up to 300 s apart) reach past it from about the seventh attempt, 4 to 6 minutes after the
 * first. Longer would let a copied body be replayed for longer, and a forged one be dated further
 * ahead.
 */
export const EVENT_FRESHNESS_MS = 5 * 60 * 1000;

/** Why a webhook call's events were not applied: no time on it, or a time outside the window. */
export type Staleness = "undated" | "stale" | "future";

/**
 * Whether a webhook call dated `sentAt` (epoch ms by the gateway's clock; null when the body
 * carries no time) may be applied at `now` (epoch ms, the service's clock): null when it may,
 * otherwise why not. The window is {@link EVENT_FRESHNESS_MS} either way, bounds included.
 */
export function stalenessOf(sentAt: number | null, now: number): Staleness | null {
  if (sentAt === null || !Number.isFinite(sentAt)) return "undated";
  if (sentAt < now - EVENT_FRESHNESS_MS) return "stale";
  if (sentAt > now + EVENT_FRESHNESS_MS) return "future";
  return null;
}
