/** Gateway calls per message before a transient failure becomes final (`retries_exhausted`). */
export const MAX_SEND_ATTEMPTS = 5;

/**
 * Backoff before retry number `attempt` (1-based) of a transient gateway failure: exponential,
 * 2^(attempt-1) seconds (1, 2, 4, 8 s …), capped at 5 minutes.
 */
export function retryDelayMs(attempt: number): number {
  return Math.min(1000 * 2 ** (attempt - 1), 300_000);
}

/**
 * Backoff before retry number `attempt` (1-based) of a send the gateway throttled (SendOutcome
 * `throttled`: Meta's 130429 "rate limit hit" and 131056 "pair rate limit hit", whose "Error
 * codes" page says to wait and retry): exponential from 4 s (4, 8, 16, 32 s …), capped at 5 minutes.
 * Longer than {@link retryDelayMs}: asking again at once is what the limit refuses.
 */
export function throttleDelayMs(attempt: number): number {
  return Math.min(4000 * 2 ** (attempt - 1), 300_000);
}

/**
 * The shortest gap (ms) between two gateway calls of a session whose gateway takes at most
 * `maxPerSecond` messages per second (ChatGateway `maxPerSecond`), or 0 when it sets no rate.
 */
export function minCallGapMs(maxPerSecond: number | undefined): number {
  return maxPerSecond && maxPerSecond > 0 ? 1000 / maxPerSecond : 0;
}
