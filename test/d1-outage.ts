import { afterEach } from "vitest";
import { accountD1, everyAccountD1 } from "./databases";

// D1 made to refuse writes for real: a trigger that aborts them ("injected outage"), dropped again
// to end the outage. Importing this file drops every trigger it made after each test.

const triggers: { d1: D1Database; name: string }[] = [];

/**
 * Makes D1 refuse `statement`s on `table` until {@link restoreD1}: those of account `accountId`
 * (when given; in its account database) for which the SQL condition `when` holds (it may name
 * `NEW.` and `OLD.` columns). Without an account, every account database refuses them.
 */
export async function refuse(
  table: string,
  statement: "INSERT" | "UPDATE" | "DELETE",
  options: { accountId?: string; when?: string } = {},
): Promise<void> {
  const name = `refuse_${table}_${statement}_${triggers.length}`.toLowerCase();
  const row = statement === "DELETE" ? "OLD" : "NEW";
  const account = options.accountId ? `${row}.account_id = '${options.accountId}'` : "1";
  const databases = options.accountId ? [await accountD1(options.accountId)] : everyAccountD1();
  for (const d1 of databases) {
    await d1
      .prepare(
        `CREATE TRIGGER ${name} BEFORE ${statement} ON ${table}
     WHEN ${account} AND (${options.when ?? "1"})
     BEGIN SELECT RAISE(ABORT, 'injected outage'); END`,
      )
      .run();
    triggers.push({ d1, name });
  }
}

/** Ends every outage {@link refuse} began. */
export async function restoreD1(): Promise<void> {
  for (const { d1, name } of triggers.splice(0)) await d1.prepare(`DROP TRIGGER IF EXISTS ${name}`).run();
}

afterEach(restoreD1);
