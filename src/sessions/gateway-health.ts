import type { GatewayName } from "../gateways/gateway";
import { formatNullableTimestamp } from "../lib/time";

/**
 * A session's view of its gateway, as `GET /v1/chatapp/sessions/{id}/gateway` shows it: when the
 * gateway last reported an event, what its own view of the session was at the last check, and
 * how many checks in a row could not reach it.
 */
export interface GatewayHealthView {
  gateway: GatewayName;
  /** The gateway's view at the last check: linked, qr, dropped, failed, banned, or starting. */
  gateway_state: string | null;
  checked_at: string | null;
  last_event_at: string | null;
  consecutive_failures: number;
  last_error: string | null;
}

/** Checks in a row that may fail before a connected session counts as `gateway_unreachable`. */
export const UNREACHABLE_AFTER_FAILURES = 3;

type Key = "event_at" | "checked_at" | "gateway_state" | "failures" | "last_error";

/** The session object's record of gateway events and checks, in its SQLite storage. */
export class GatewayHealth {
  constructor(private readonly sql: SqlStorage) {}

  /** Creates the table (idempotent). */
  setUp(): void {
    this.sql.exec("CREATE TABLE IF NOT EXISTS gateway_health (key TEXT PRIMARY KEY, value TEXT)");
  }

  /** Gateway-clock epoch ms of the newest webhook status event applied; 0 before any. */
  eventAt(): number {
    return Number(this.get("event_at") ?? 0);
  }

  /** Records that a webhook status event of `at` (epoch ms, gateway clock) was applied. */
  noteEvent(at: number): void {
    if (at > this.eventAt()) this.set("event_at", String(at));
  }

  /** A check reached the gateway, which saw the session as `state`. */
  recordCheck(state: string, at: number): void {
    this.set("checked_at", String(at));
    this.set("gateway_state", state);
    this.set("failures", "0");
    this.set("last_error", null);
  }

  /** A check could not reach the gateway. @returns the failures in a row so far. */
  recordFailure(error: string, at: number): number {
    const failures = this.failures() + 1;
    this.set("checked_at", String(at));
    this.set("failures", String(failures));
    this.set("last_error", error);
    return failures;
  }

  /** Checks in a row that could not reach the gateway. */
  failures(): number {
    return Number(this.get("failures") ?? 0);
  }

  /** The record as the API shows it, for a session on `gateway`. */
  view(gateway: GatewayName): GatewayHealthView {
    const checkedAt = this.get("checked_at");
    const eventAt = this.eventAt();
    return {
      gateway,
      gateway_state: this.get("gateway_state"),
      checked_at: formatNullableTimestamp(checkedAt === null ? null : Number(checkedAt)),
      last_event_at: formatNullableTimestamp(eventAt === 0 ? null : eventAt),
      consecutive_failures: this.failures(),
      last_error: this.get("last_error"),
    };
  }

  private get(key: Key): string | null {
    const row = this.sql
      .exec<{ value: string | null }>("SELECT value FROM gateway_health WHERE key = ?", key)
      .toArray()[0];
    return row?.value ?? null;
  }

  private set(key: Key, value: string | null): void {
    this.sql.exec(
      "INSERT INTO gateway_health (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      key,
      value,
    );
  }
}
