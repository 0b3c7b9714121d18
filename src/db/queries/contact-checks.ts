import { and, eq, gte, sql } from "drizzle-orm";
import type { Db } from "../client";
import { contactChecks } from "../schema";
import { type Purge, type PurgeBudget, purgeBefore } from "./purge";

/** A stored answer: whether the number was on the chat network at `checkedAt` (epoch ms). */
export interface StoredCheck {
  onChatapp: boolean;
  checkedAt: number;
}

/**
 * The account's answers for `numbers` (E.164) checked at or after `since` (epoch ms), by number;
 * a number never checked, or checked before `since`, is not in the map. The list travels as one
 * JSON parameter (D1 binds at most 100 per statement), one primary-key lookup per number.
 */
export async function freshChecks(
  db: Db,
  accountId: string,
  numbers: string[],
  since: number,
): Promise<Map<string, StoredCheck>> {
  if (numbers.length === 0) return new Map();
  const rows = await db
    .select({
      number: contactChecks.number,
      onChatapp: contactChecks.onChatapp,
      checkedAt: contactChecks.checkedAt,
    })
    .from(contactChecks)
    .where(
      and(
        eq(contactChecks.accountId, accountId),
        sql`${contactChecks.number} IN (SELECT value FROM json_each(${JSON.stringify(numbers)}))`,
        gte(contactChecks.checkedAt, since),
      ),
    );
  return new Map(rows.map((row) => [row.number, { onChatapp: row.onChatapp, checkedAt: row.checkedAt }]));
}

/**
 * Stores the account's answers (E.164 number → on the network or not) as checked at `at` (epoch
 * ms), in one statement: a number's row takes the newer of its answer and the stored one, so a
 * slow check never overwrites a later one. Unknown answers are not stored (the caller leaves them out).
 */
export async function saveChecks(
  db: Db,
  accountId: string,
  answers: { number: string; onChatapp: boolean }[],
  at: number,
): Promise<void> {
  if (answers.length === 0) return;
  const list = JSON.stringify(answers.map((answer) => ({ n: answer.number, on: answer.onChatapp })));
  await db.run(sql`INSERT INTO contact_checks (account_id, number, on_chatapp, checked_at)
    SELECT ${accountId}, json_extract(value, '$.n'), json_extract(value, '$.on'), ${at} FROM json_each(${list}) WHERE true
    ON CONFLICT (account_id, number) DO UPDATE SET on_chatapp = excluded.on_chatapp, checked_at = excluded.checked_at
      WHERE excluded.checked_at >= contact_checks.checked_at`);
}

/**
 * Deletes the answers of every account checked before `before` (epoch ms), in bounded chunks
 * through `contact_checks_checked` (the hourly job `purge_contact_checks`).
 */
export function purgeChecks(db: Db, before: number, budget?: PurgeBudget): Promise<Purge> {
  return purgeBefore(db, contactChecks, contactChecks.checkedAt, before, budget);
}
