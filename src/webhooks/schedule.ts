/**
 * The retry schedule of webhook deliveries, from the Standard Webhooks spec ("Retry schedule"
 * in https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
 * after a failed attempt n (1-based) the next one waits `RETRY_SCHEDULE_SECONDS[n - 1]`, so
 * immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts in all.
 */
export const RETRY_SCHEDULE_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000] as const;

/** Attempts a delivery gets before it is `failed`: the first one and one per scheduled retry. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1;

/** Longest wait before a retry (12 h), however long a `Retry-After` asks for. Queues allow 24 h. */
export const MAX_RETRY_DELAY_SECONDS = 12 * 3_600;

/** Share of a scheduled wait by which it is moved at random either way (±10%), so retries spread. */
export const JITTER = 0.1;

/**
 * Seconds to wait before the attempt after failed attempt `attempt` (1-based), or null when that
 * was the last of {@link MAX_ATTEMPTS}. The scheduled wait is jittered by ±{@link JITTER} with
 * `random` (a number in [0, 1), as `Math.random` gives); a `retryAfterSeconds` the receiver asked
 * for (a 429 or 503 `Retry-After`, RFC 9110 §10.2.3) wins when it is longer. The result is whole
 * seconds, at least 1 and at most {@link MAX_RETRY_DELAY_SECONDS}: what a Cloudflare Queues
 * `message.retry({ delaySeconds })` takes (https://developers.cloudflare.com/queues/configuration/batching-retries/#delay-messages).
 */
export function retryDelaySeconds(
  attempt: number,
  random: () => number = Math.random,
  retryAfterSeconds: number | null = null,
): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const scheduled = RETRY_SCHEDULE_SECONDS[Math.max(attempt, 1) - 1] ?? MAX_RETRY_DELAY_SECONDS;
  const jittered = scheduled * (1 - JITTER + 2 * JITTER * random());
  const wanted = Math.max(jittered, retryAfterSeconds ?? 0);
  return Math.min(Math.max(Math.round(wanted), 1), MAX_RETRY_DELAY_SECONDS);
}

/**
 * The wait a `Retry-After` header value asks for, in whole seconds from `now` (epoch ms): either
 * delay-seconds or an HTTP date (RFC 9110 §10.2.3). Null for a missing or unreadable value; a
 * date in the past is 0.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(Math.ceil((at - now) / 1000), 0);
}
