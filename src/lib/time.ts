/**
 * Formats epoch milliseconds as the API's timestamp: ISO 8601 UTC with six fractional digits
 * (this API's rule: microseconds, as every timestamp example in openapi.json shows), e.g.
 * `2026-11-21T09:30:12.345000Z`. The platform clock has millisecond resolution, so the last
 * three digits are always zero. Built from the UTC fields rather than `toISOString`: a message
 * list page formats about 600 of these, and this is twice as fast (years 1000–9999, as every
 * epoch-ms time this service keeps; test/time.test.ts holds it to `toISOString`).
 */
export function formatTimestamp(ms: number): string {
  const date = new Date(ms);
  const millis = date.getUTCMilliseconds();
  return `${date.getUTCFullYear()}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}000Z`;
}

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/** {@link formatTimestamp} for nullable columns. */
export function formatNullableTimestamp(ms: number | null | undefined): string | null {
  return ms == null ? null : formatTimestamp(ms);
}
