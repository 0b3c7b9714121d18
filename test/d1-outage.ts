import { env } from "cloudflare:workers";
import { afterEach } from "vitest";

// D1 made to refuse writes for real: a trigger that aborts them ("injected outage"), dropped again
// to end the outage. Importing this file drops every trigger it made after each test.

const triggers: string[] = [];

/**
 * Makes D1 refuse `statement`s on `table` until {@link restoreD1}: those of account `accountId`
 * (when given) for which the SQL condition `when` holds (it may name `NEW.` and `OLD.` columns).
 */
export async function refuse(
  table: string,
  statement: "INSERT" | "UPDATE" | "DELETE",
  options: { accountId?: string; when?: string } = {},
): Promise<void> {
  const name = `refuse_${table}_${statement}_${triggers.length}`.toLowerCase();
  const row = statement === "DELETE" ? "OLD" : "NEW";
  const account = options.accountId ? `${row}.account_id = '${options.accountId}'` : "1";
  await env.DB.prepare(
    `CREATE TRIGGER ${name} BEFORE ${statement} ON ${table}
     WHEN ${account} AND (${options.when ?? "1"})
     BEGIN SELECT RAISE(ABORT, 'injected outage'); END`,
  ).run();
  triggers.push(name);
}

/** Ends every outage {@link refuse} began. */
export async function restoreD1(): Promise<void> {
  for (const name of triggers.splice(0)) await env.DB.prepare(`DROP TRIGGER IF EXISTS ${name}`).run();
}

afterEach(restoreD1);
