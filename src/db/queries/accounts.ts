import { eq, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { batchSql, type Db } from "../client";
import { accounts, DEFAULT_MAX_DRAFT_RECIPIENTS, DEFAULT_MAX_SESSIONS } from "../schema";
import { type ApiKeyRow, insertApiKeyStatement } from "./api-keys";

export type AccountRow = typeof accounts.$inferSelect;

/**
 * SQL: the `number` of account `accountId` (src/db/schema/accounts.ts), or NULL for none: what
 * events, webhook deliveries and the indexes of messages hold in place of the account's id.
 */
export function accountNumberOf(accountId: SQLWrapper | string): SQL<number> {
  return sql<number>`(SELECT number FROM accounts WHERE id = ${accountId})`;
}

/** An account's limits (docs/security.md, Account limits); a field left undefined keeps its default. */
export interface AccountLimitSettings {
  maxSessions?: number | undefined;
  maxDraftRecipients?: number | undefined;
  /**
   * Days final messages stay before they are archived (docs/retention.md, Archives); null: the deployment's
   * default.
   */
  messageRetentionDays?: number | null | undefined;
}

/**
 * Creates account `input.id` (balance 0, number `input.number` from the directory, the limits
 * given or their defaults) and its first API key `key` (a row src/db/queries/api-keys.ts
 * `mintApiKey` made), and runs the statements `opening` builds for it (its opening credit), all
 * in one D1 batch of its account database `db`.
 * @returns the account as created, before `opening`.
 */
export async function createAccount(
  db: Db,
  input: { id: string; number: number; name: string } & AccountLimitSettings,
  key: ApiKeyRow,
  now: number,
  opening: (accountId: string) => SQL[],
): Promise<AccountRow> {
  const account: AccountRow = {
    id: input.id,
    number: input.number,
    name: input.name,
    balance: 0,
    lowBalanceThreshold: null,
    maxSessions: input.maxSessions ?? DEFAULT_MAX_SESSIONS,
    maxDraftRecipients: input.maxDraftRecipients ?? DEFAULT_MAX_DRAFT_RECIPIENTS,
    messageRetentionDays: input.messageRetentionDays ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await batchSql(db, [
    db.insert(accounts).values(account).getSQL(),
    insertApiKeyStatement(db, key),
    ...opening(account.id),
  ]);
  return account;
}

export async function findAccount(db: Db, id: string): Promise<AccountRow | null> {
  const [row] = await db.select().from(accounts).where(eq(accounts.id, id)).limit(1);
  return row ?? null;
}

/**
 * Changes an account's name, low-balance threshold (minor units, or null for no alert), limits
 * and message retention; a field left undefined keeps its value.
 * @returns the account after the change, or null for an unknown account.
 */
export async function updateAccount(
  db: Db,
  id: string,
  changes: { name?: string; lowBalanceThreshold?: number | null } & AccountLimitSettings,
  now: number,
): Promise<AccountRow | null> {
  const [row] = await db
    .update(accounts)
    .set({
      name: changes.name,
      lowBalanceThreshold: changes.lowBalanceThreshold,
      maxSessions: changes.maxSessions,
      maxDraftRecipients: changes.maxDraftRecipients,
      messageRetentionDays: changes.messageRetentionDays,
      updatedAt: now,
    })
    .where(eq(accounts.id, id))
    .returning();
  return row ?? null;
}
