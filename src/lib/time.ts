/**
 * Formats epoch milliseconds as the API's timestamp: ISO 8601 UTC with six fractional digits
 * (this API's rule: microseconds, as every timestamp example in openapi.json shows), e.g.
 * `2026-11-21T09:30:12.345000Z`. The platform clock has millisecond resolution, so the last
 * three digits are always zero.
 */
export function formatTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, -1)}000Z`;
}

/** {@link formatTimestamp} for nullable columns. */
export function formatNullableTimestamp(ms: number | null | undefined): string | null {
  return ms == null ? null : formatTimestamp(ms);
}
