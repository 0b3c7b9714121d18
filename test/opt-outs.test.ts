import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { MAX_OPT_OUT_LOOKUP, optedOutAmong } from "../src/db/queries/opt-outs";
import { decodeCursor, encodeCursor } from "../src/lib/cursor";
import { createAccount } from "./helpers";

let accountId: string;

beforeEach(async () => {
  ({ accountId } = await createAccount());
});

/** Seeds opt-outs straight into D1: `count` numbers, +1415555{1000+i}, one millisecond apart. */
async function seed(count: number, account = accountId, start = 1_800_000_000_000): Promise<string[]> {
  const numbers = Array.from({ length: count }, (_, i) => `+1415555${String(1000 + i)}`);
  await env.DB.prepare(
    `INSERT INTO opt_outs (account_id, to_number, source, keyword, created_at)
     SELECT ?, value, 'api', NULL, ? + key FROM json_each(?)`,
  )
    .bind(account, start, JSON.stringify(numbers))
    .run();
  return numbers;
}

describe("cursor ids", () => {
  it("carry an E.164 number, and refuse other strings", () => {
    for (const id of ["+14155552671", "+447911123456", "+12"]) {
      const cursor = { createdAt: 1_800_000_000_000, id, direction: "next" as const };
      expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    }
    for (const id of ["14155552671", "+04155552671", "+1234567890123456", "+1 415", "+1415'--"]) {
      expect(decodeCursor(encodeCursor({ createdAt: 1, id, direction: "next" }))).toBeNull();
    }
  });
});

describe("optedOutAmong", () => {
  it("finds the opted-out numbers among 10,000 at once, for the account only", async () => {
    const listed = await seed(300);
    const other = await createAccount();
    await env.DB.prepare(
      "INSERT INTO opt_outs (account_id, to_number, source, keyword, created_at) VALUES (?, '+14155553333', 'api', NULL, 1)",
    )
      .bind(other.accountId)
      .run();
    // 9,700 numbers not on the list (+1415556xxxx and +1415557xxxx), the 300 listed, and the other account's.
    const unlisted = Array.from({ length: MAX_OPT_OUT_LOOKUP - 301 }, (_, i) => `+141555${6000000 + i}`);
    const numbers = [
      ...unlisted,
      ...listed.filter((_, i) => i % 2 === 0),
      "+14155553333",
      ...listed.filter((_, i) => i % 2 === 1),
    ];
    expect(numbers).toHaveLength(MAX_OPT_OUT_LOOKUP);
    const found = await optedOutAmong(createDb(env.DB), accountId, numbers);
    expect([...found].sort()).toEqual([...listed].sort());

    expect(await optedOutAmong(createDb(env.DB), other.accountId, numbers)).toEqual(
      new Set(["+14155553333"]),
    );
    expect(await optedOutAmong(createDb(env.DB), accountId, [])).toEqual(new Set());
    expect(await optedOutAmong(createDb(env.DB), accountId, [listed[0] ?? "", listed[0] ?? ""])).toEqual(
      new Set([listed[0]]),
    );
    await expect(optedOutAmong(createDb(env.DB), accountId, [...numbers, "+14155550000"])).rejects.toThrow(
      RangeError,
    );
  });
});
