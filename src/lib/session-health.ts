import { formatNullableTimestamp, formatTimestamp } from "./time";

/*
 * A session's health: the limits the chat network puts on the linked account, as its gateway
 * reports them (docs/sessions.md, Session health). Three signals, each null until a gateway tells it:
 *
 * - `timelock`: WhatsApp's "reach-out timelock" on messages to contacts who never wrote to the
 *   account (send error 463). WAHA: `me.reachoutTimelock` `{ enforcementType, isActive,
 *   timeEnforcementEnds }` (Unix seconds, nullable) of `GET /api/sessions/{session}`
 *   (src/structures/sessions.dto.ts `ReachoutTimelockData`); a send refused with 463 sets it
 *   active with `until` unknown (devlikeapro/waha#2219: a 463 may come while WAHA shows null).
 * - `cap`: the monthly quota of new chats. WAHA: `me.messageCapping` and, on the GOWS engine,
 *   `GET /api/sessions/{session}/capping` (`MessageCappingData`: `cappingStatus` NONE →
 *   FIRST_WARNING → SECOND_WARNING → CAPPED, an open set; `usedQuota`; `totalQuota`, -1 for no
 *   cap; `cycleEnd`, Unix seconds, nullable; devlikeapro/waha#2186).
 * - `quality`: the Cloud API number's `quality_rating` (`PhoneNumberInfo`: GREEN, YELLOW, RED;
 *   NA, not yet rated, is null), re-read when Meta's `phone_number_quality_update` webhook says
 *   the number changed.
 */

/** WAHA's `MessageCappingStatus` values; others WhatsApp may add pass through as they come. */
export const CAP_LEVELS = ["NONE", "FIRST_WARNING", "SECOND_WARNING", "CAPPED"] as const;
/** The cap level at which new chats are refused. */
export const CAPPED = "CAPPED";

export type Quality = "green" | "yellow" | "red";

/** A timelock: whether it holds now and when it ends (epoch ms; null when the gateway did not say). */
export interface Timelock {
  active: boolean;
  until: number | null;
}

/** A cap on new chats: its level, new chats used and allowed this cycle, the cycle's end (epoch ms). */
export interface Cap {
  level: string;
  used: number;
  total: number;
  cycleEnd: number | null;
}

/**
 * What a gateway told of a session's health. A field left undefined is one the gateway cannot
 * tell (it keeps what the session knew); null is the gateway saying there is none.
 */
export interface HealthReading {
  timelock?: Timelock | null;
  cap?: Cap | null;
  quality?: Quality | null;
}

/** A session's health as its object stores it (epoch-ms times; `checkedAt` the last reading). */
export interface StoredHealth {
  timelock: Timelock | null;
  cap: Cap | null;
  quality: Quality | null;
  checkedAt: number | null;
}

/** The health of a session nothing has been read of. */
export const UNKNOWN_HEALTH: StoredHealth = { timelock: null, cap: null, quality: null, checkedAt: null };

/** `health` as the API shows it (the `SessionHealth` schema of openapi.json): ISO 8601 times. */
export interface SessionHealth {
  timelock: { active: boolean; until: string | null } | null;
  cap: { level: string; used: number; total: number; cycle_end: string | null } | null;
  quality: Quality | null;
  checked_at: string | null;
}

/** `reading` applied over `before` at `at` (epoch ms): the fields it tells replace the old ones. */
export function applyReading(before: StoredHealth, reading: HealthReading, at: number): StoredHealth {
  return {
    timelock: reading.timelock === undefined ? before.timelock : reading.timelock,
    cap: reading.cap === undefined ? before.cap : reading.cap,
    quality: reading.quality === undefined ? before.quality : reading.quality,
    checkedAt: at,
  };
}

/** Whether two healths differ in anything but when they were read. */
export function healthChanged(a: StoredHealth, b: StoredHealth): boolean {
  const { checkedAt: _a, ...left } = a;
  const { checkedAt: _b, ...right } = b;
  return JSON.stringify(left) !== JSON.stringify(right);
}

/** Stored health (or null: nothing read yet) → the API's {@link SessionHealth}. */
export function toSessionHealth(health: StoredHealth | null): SessionHealth {
  const h = health ?? UNKNOWN_HEALTH;
  return {
    timelock: h.timelock && { active: h.timelock.active, until: formatNullableTimestamp(h.timelock.until) },
    cap: h.cap && {
      level: h.cap.level,
      used: h.cap.used,
      total: h.cap.total,
      cycle_end: formatNullableTimestamp(h.cap.cycleEnd),
    },
    quality: h.quality,
    checked_at: formatNullableTimestamp(h.checkedAt),
  };
}

/** The API's {@link SessionHealth} (the sandbox route's body) → stored health read at `at` (epoch ms). */
export function fromSessionHealth(health: Omit<SessionHealth, "checked_at">, at: number): StoredHealth {
  return {
    timelock: health.timelock && { active: health.timelock.active, until: epochOf(health.timelock.until) },
    cap: health.cap && {
      level: health.cap.level,
      used: health.cap.used,
      total: health.cap.total,
      cycleEnd: epochOf(health.cap.cycle_end),
    },
    quality: health.quality,
    checkedAt: at,
  };
}

/** Parses a stored health's JSON; null for none or a value that is not one. */
export function parseHealth(json: string | null): StoredHealth | null {
  if (!json) return null;
  try {
    const value = JSON.parse(json) as StoredHealth | null;
    return value && typeof value === "object" ? value : null;
  } catch {
    return null;
  }
}

/**
 * The limit that refuses a new chat (a message to a cold contact: one who never wrote to the
 * session) at `now` (epoch ms): an active timelock whose end, if known, is still ahead, or a cap
 * at {@link CAPPED} whose cycle, if its end is known, has not ended. Null when none holds.
 * `until` is when it ends (ISO 8601), null when the gateway did not say.
 */
export function coldContactLimit(
  health: StoredHealth | null,
  now: number,
): { limit: "timelock" | "cap"; until: string | null } | null {
  const timelock = health?.timelock;
  if (timelock?.active && (timelock.until === null || timelock.until > now)) {
    return { limit: "timelock", until: formatNullableTimestamp(timelock.until) };
  }
  const cap = health?.cap;
  if (cap?.level === CAPPED && (cap.cycleEnd === null || cap.cycleEnd > now)) {
    return { limit: "cap", until: cap.cycleEnd === null ? null : formatTimestamp(cap.cycleEnd) };
  }
  return null;
}

/** Unix seconds (a gateway's) → epoch ms; null stays null. */
export function secondsToEpochMs(seconds: number | null | undefined): number | null {
  return typeof seconds === "number" && Number.isFinite(seconds) ? seconds * 1000 : null;
}

function epochOf(iso: string | null): number | null {
  if (iso === null) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}
