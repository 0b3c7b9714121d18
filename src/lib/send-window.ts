/**
 * A campaign's daily send window (docs/campaigns.md, Campaigns): local `HH:MM` times in an IANA time zone.
 */
export interface SendWindow {
  start: string;
  end: string;
  time_zone: string;
}

const MINUTES_PER_DAY = 1440;

/** Minutes since local midnight of `HH:MM`. */
function minutesOf(clock: string): number {
  const [hours = 0, minutes = 0] = clock.split(":").map(Number);
  return hours * 60 + minutes;
}

/** Local time of day at `at` (epoch ms) in `timeZone`, in minutes (with fractions) since midnight. */
function localMinutes(at: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    hourCycle: "h23",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return part("hour") * 60 + part("minute") + (part("second") + (at % 1000) / 1000) / 60;
}

/** Whether local time `minutes` falls in [start, end); an `end` before `start` spans midnight. */
function inside(minutes: number, start: number, end: number): boolean {
  return start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
}

/**
 * When the window is next open at or after `now` (epoch ms): `now` itself inside the window,
 * otherwise the next local `start` in the window's time zone. Local times follow the zone's rules
 * for that day (Intl's IANA data), so a daylight-saving change between now and the start is
 * counted; a `start` that does not exist that day (skipped by a change) opens at the first minute
 * that does.
 */
export function windowOpensAt(window: SendWindow, now: number): number {
  const start = minutesOf(window.start);
  const here = localMinutes(now, window.time_zone);
  if (inside(here, start, minutesOf(window.end))) return now;
  let at = now + ((((start - here) % MINUTES_PER_DAY) + MINUTES_PER_DAY) % MINUTES_PER_DAY) * 60_000;
  // The offset may differ at `at` (a daylight-saving change): step to the local start again.
  for (let i = 0; i < 2; i++) {
    const off = start - localMinutes(at, window.time_zone);
    const signed = ((((off + 720) % MINUTES_PER_DAY) + MINUTES_PER_DAY) % MINUTES_PER_DAY) - 720;
    if (Math.abs(signed) < 1 / 60_000) break;
    at += signed * 60_000;
  }
  return Math.max(now, Math.round(at));
}
