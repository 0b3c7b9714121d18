// The service's structured log lines: one JSON object per console call, which Workers Logs stores
// and indexes field by field (https://developers.cloudflare.com/workers/observability/logs/workers-logs/).
// Every line in src/ is written here, so the shape is decided in one place.

/** How serious a line is: its `level` field, and the console method it goes to by default. */
export type LogLevel = "info" | "warn" | "error";

/**
 * A line's fields after `level` and `event`, in the order given (snake_case keys). A field whose
 * value is `undefined` is left out, but for `error`: that field, when given, is always written as
 * `String(error)`, so a caught value is passed as it is: an `Error` becomes `"Error: message"`
 * (`"TypeError: …"`), a thrown string stays itself, a thrown `undefined` is `"undefined"`. A site
 * that logs `error.message` or an error code passes that string.
 */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * The line for `level`, `event` and `fields`: `{"level":…,"event":…,…fields}`, keys in that
 * order. `event` null leaves the key out (`{"level":…,…fields}`): the shape of the few lines that
 * name no event (an unhandled error in src/app.ts, say), kept as they were written.
 */
export function logLine(level: LogLevel, event: string | null, fields: LogFields = {}): string {
  const entry: Record<string, unknown> = event === null ? { level } : { level, event };
  for (const [key, value] of Object.entries(fields)) {
    entry[key] = key === "error" ? String(value) : value;
  }
  return JSON.stringify(entry);
}

/**
 * Writes one line (see {@link logLine}) on the console: `info` on `console.log`, `warn` on
 * `console.warn`, `error` on `console.error`. The console is looked up on each call, so a test's
 * `vi.spyOn(console, …)` sees the line.
 */
export const log = {
  /** `{"level":"info","event":…,…fields}` on `console.log`. */
  info(event: string | null, fields?: LogFields): void {
    write("info", event, fields);
  },
  /** `{"level":"warn","event":…,…fields}` on `console.warn`. */
  warn(event: string | null, fields?: LogFields): void {
    write("warn", event, fields);
  },
  /** `{"level":"error","event":…,…fields}` on `console.error`. */
  error(event: string | null, fields?: LogFields): void {
    write("error", event, fields);
  },
  /**
   * A line at `level` written on the console method of level `via` rather than its own: the
   * lines that say `"level":"warn"` but have always gone to `console.error` (`enqueue_failed`
   * once the retry took the batch, `media_discard_failed`), so Workers Logs keeps filing them as
   * errors.
   */
  write(level: LogLevel, event: string | null, fields: LogFields, via: LogLevel): void {
    write(via, event, fields, level);
  },
};

/** Writes the line at `level` on the console method for `via`. */
function write(via: LogLevel, event: string | null, fields: LogFields = {}, level: LogLevel = via): void {
  const line = logLine(level, event, fields);
  if (via === "error") console.error(line);
  else if (via === "warn") console.warn(line);
  else console.log(line);
}
