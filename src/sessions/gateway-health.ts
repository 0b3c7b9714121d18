import { readConfig } from "../config";
import {
  type ChatGateway,
  GatewayError,
  type GatewayEvent,
  type GatewayName,
  isStatusEvent,
} from "../gateways/gateway";
import { capabilitiesOf } from "../lib/gateway-kinds";
import { log } from "../lib/log";
import type { HealthReading } from "../lib/session-health";
import { formatNullableTimestamp } from "../lib/time";
import type { Deadlines } from "./deadlines";
import type { StoredSession } from "./session-store";
import type { SessionInput } from "./transitions";

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

/**
 * The session object's record of gateway events and checks, in its SQLite storage (the
 * `gateway_health` table, one value per key; created by storage-schema.ts).
 */
export class GatewayHealth {
  constructor(private readonly sql: SqlStorage) {}

  /** Gateway-clock epoch ms of the newest webhook status event applied; 0 before any. */
  eventAt(): number {
    return Number(this.get("event_at") ?? 0);
  }

  /**
   * Records that a webhook status event of `at` (epoch ms, gateway clock) was applied at `now`
   * (epoch ms, the service's clock). The ordering clock never passes `now`: an event dated ahead
   * of the service (a gateway clock running fast, or a forged date) is applied, but later events
   * are compared with `now`, so it cannot make every event that follows it look old.
   */
  noteEvent(at: number, now: number): void {
    const until = Math.min(at, now);
    if (until > this.eventAt()) this.set("event_at", String(until));
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

/** What the gateway checks need from the session object that hosts them. */
export interface CheckHost {
  readonly health: GatewayHealth;
  readonly deadlines: Deadlines;
  /** The session, or null once it is gone. */
  state(): StoredSession | null;
  gateway(): ChatGateway;
  /** Moves the session as `input` says, through its transition function (transitions.ts `next`). */
  move(input: SessionInput): Promise<unknown>;
  /** Applies what the gateway told of the session's health (SessionMoves `applyHealth`). */
  applyHealth(reading: HealthReading): Promise<unknown>;
}

/**
 * Checks of a real gateway's own view of a session, against webhook events that never came: on
 * demand (`GET /v1/chatapp/sessions/{id}/gateway`) and every `GATEWAY_CHECK_SECONDS` (the
 * `gateway_check` deadline) while the session is connected, or disconnected because the gateway
 * could not be reached. The sandbox is its own truth and is checked only on demand.
 */
export class GatewayChecks {
  constructor(
    private readonly host: CheckHost,
    private readonly env: Env,
  ) {}

  /**
   * Asks the gateway for its view of the session and applies it as a status event (not ordered
   * against webhook events). A gateway that cannot be reached is recorded; after
   * {@link UNREACHABLE_AFTER_FAILURES} checks in a row the session takes the `gateway_unreachable`
   * input (a connected session becomes disconnected), and comes back when a check reaches the
   * gateway again. @throws Error when the object holds no session.
   */
  async check(): Promise<void> {
    const state = this.host.state();
    if (!state) throw new Error("session object has no session");
    const now = Date.now();
    let event: GatewayEvent | null;
    try {
      event = await this.host.gateway().check(state.session_id);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const failures = this.host.health.recordFailure(error.message, now);
      if (failures >= UNREACHABLE_AFTER_FAILURES) await this.host.move({ type: "gateway_unreachable" });
      return;
    }
    this.host.health.recordCheck(event?.type ?? "starting", now);
    if (event && isStatusEvent(event)) await this.host.move(event);
    if (this.host.state()?.status === "connected") await this.readHealth();
  }

  /**
   * Reads the session's health from its gateway (`ChatGateway.health`; docs/sessions.md, Session health)
   * and applies it. A gateway that tells none is left alone; one that cannot be read now is
   * logged (`health_read_failed`) and read again at the next check: health is not the link, so
   * its failure counts for nothing toward `gateway_unreachable`.
   */
  async readHealth(): Promise<void> {
    const state = this.host.state();
    const gateway = state && this.host.gateway();
    if (!state || !gateway?.health) return;
    let reading: HealthReading;
    try {
      reading = await gateway.health(state.session_id);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      log.warn("health_read_failed", { session: state.id, error: error.message });
      return;
    }
    await this.host.applyHealth(reading);
  }

  /** The scheduled check (the `gateway_check` deadline): runs and re-schedules while watched. */
  async run(): Promise<void> {
    if (!watched(this.host.state())) return;
    await this.check();
    if (watched(this.host.state())) this.schedule(Date.now());
  }

  /**
   * Schedules the next check `GATEWAY_CHECK_SECONDS` after `now` (epoch ms); sessions on a real
   * gateway only.
   */
  schedule(now: number): void {
    const config = readConfig(this.env);
    if (!capabilitiesOf(this.host.state()?.gateway ?? config.CHATAPP_GATEWAY).checkedOnSchedule) return;
    this.host.deadlines.schedule("gateway_check", "", now + config.GATEWAY_CHECK_SECONDS * 1000);
  }
}

/** Scheduled checks watch a connected session, or one disconnected as `gateway_unreachable`. */
function watched(state: StoredSession | null): boolean {
  return (
    state?.status === "connected" ||
    (state?.status === "disconnected" && state.reason === "gateway_unreachable")
  );
}
