import { describe, expect, it } from "vitest";
import { formatNullableTimestamp, formatTimestamp } from "../src/lib/time";

/** The rule formatTimestamp follows, spelled with the platform's own ISO 8601 formatter. */
const viaIso = (ms: number) => `${new Date(ms).toISOString().slice(0, -1)}000Z`;

describe("formatTimestamp", () => {
  it("is ISO 8601 UTC with six fractional digits", () => {
    expect(formatTimestamp(Date.UTC(2026, 10, 21, 9, 30, 12, 345))).toBe("2026-11-21T09:30:12.345000Z");
    expect(formatTimestamp(Date.UTC(2026, 0, 2, 3, 4, 5, 6))).toBe("2026-01-02T03:04:05.006000Z");
    expect(formatTimestamp(Date.UTC(2026, 11, 31, 23, 59, 59, 70))).toBe("2026-12-31T23:59:59.070000Z");
    expect(formatTimestamp(0)).toBe("1970-01-01T00:00:00.000000Z");
  });

  it("agrees with toISOString on every millisecond digit and across days, months and leap years", () => {
    const start = Date.UTC(2024, 1, 28, 23, 59, 58, 0);
    for (let ms = start; ms < start + 3 * 86_400_000; ms += 86_400_000 / 7 + 997) {
      expect(formatTimestamp(Math.floor(ms))).toBe(viaIso(Math.floor(ms)));
    }
    for (let milli = 0; milli < 1000; milli++) {
      const ms = Date.UTC(2031, 5, 30, 12, 0, 0, milli);
      expect(formatTimestamp(ms)).toBe(viaIso(ms));
    }
  });

  it("leaves a missing time null", () => {
    expect(formatNullableTimestamp(null)).toBeNull();
    expect(formatNullableTimestamp(undefined)).toBeNull();
    expect(formatNullableTimestamp(1)).toBe("1970-01-01T00:00:00.001000Z");
  });
});
