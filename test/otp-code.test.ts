import { afterEach, describe, expect, it, vi } from "vitest";
import { hmacSha256Hex } from "../src/lib/crypto";
import { codeHmac, generateCode, OTP_RULES } from "../src/otp/code";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("generateCode", () => {
  it("gives exactly `size` decimal digits, leading zeros included", () => {
    for (const size of [4, 6, 10]) {
      for (let i = 0; i < 200; i++) expect(generateCode(size)).toMatch(new RegExp(`^\\d{${size}}$`));
    }
  });

  it("draws bytes 250–255 again instead of folding them onto 0–5 (no modulo bias)", () => {
    const bytes = [250, 251, 252, 253, 9, 255, 10, 249, 0, 0, 0, 0];
    vi.spyOn(crypto, "getRandomValues").mockImplementation(
      <T extends ArrayBufferView | null>(array: T): T => {
        if (array instanceof Uint8Array) for (let i = 0; i < array.length; i++) array[i] = bytes.shift() ?? 0;
        return array;
      },
    );
    // Round 1 (8 bytes): 250–253 and 255 are rejected, 9 → 9, 10 → 0, 249 → 9. Round 2 (2 bytes): 0.
    expect(generateCode(4)).toBe("9090");
  });

  it("spreads digits evenly (chi-square over 600,000 digits)", () => {
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 60_000; i++) {
      for (const digit of generateCode(10)) counts[Number(digit)] = (counts[Number(digit)] ?? 0) + 1;
    }
    const expected = 60_000;
    const chiSquare = counts.reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    // 9 degrees of freedom: p = 0.001 at 27.88. A plain `byte % 10` (0–5 at 26/256, 6–9 at
    // 25/256) would score about 220 here.
    expect(chiSquare).toBeLessThan(27.88);
  });

  it("refuses sizes outside 1–64", () => {
    for (const size of [0, -1, 65, 6.5]) expect(() => generateCode(size)).toThrow(RangeError);
  });
});

describe("codeHmac", () => {
  it("is HMAC-SHA256 (RFC 2104) of the OTP id, a colon and the code", async () => {
    // RFC 4231 test case 2 checks the primitive itself.
    expect(await hmacSha256Hex("Jefe", "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    const secret = "k".repeat(32);
    expect(await codeHmac(secret, "otp-1", "123456")).toBe(await hmacSha256Hex(secret, "otp-1:123456"));
  });

  it("binds the code to its OTP and to the key", async () => {
    const secret = "k".repeat(32);
    const base = await codeHmac(secret, "otp-1", "123456");
    expect(await codeHmac(secret, "otp-2", "123456")).not.toBe(base);
    expect(await codeHmac("j".repeat(32), "otp-1", "123456")).not.toBe(base);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });
});

it("keeps the OTP limits docs/otp.md documents (5 wrong codes, 5 sends, 30 s apart, per number per hour)", () => {
  expect(OTP_RULES).toEqual({
    maxFailedAttempts: 5,
    maxSends: 5,
    resendIntervalMs: 30_000,
    perNumberWindowMs: 3_600_000,
  });
});
