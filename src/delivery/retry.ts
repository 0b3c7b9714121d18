/** Gateway calls per message before a transient failure becomes final (`retries_exhausted`). */
export const MAX_SEND_ATTEMPTS = 5;

/**
 * Backoff before retry number `attempt` (1-based) of a transient gateway failure: exponential,
 * 2^(attempt-1) seconds (1, 2, 4, 8 s …), capped at 5 minutes.
 */
export function retryDelayMs(attempt: number): number {
  return Math.min(1000 * 2 ** (attempt - 1), 300_000);
}
