import { eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { accounts, apiKeys, ledgerEntries } from "../schema";
import { mintApiKey } from "./api-keys";

export type AccountRow = typeof accounts.$inferSelect;

/**
 * Creates an account with an opening balance (minor units) and its first API key, in one batch.
 * An opening balance above zero is recorded as a `credit` ledger entry.
 */
export async function createAccount(db: Db, input: { name: string; balance: number }, now: number) {
  const account: AccountRow = {
    id: crypto.randomUUID(),
    name: input.name,
    balance: input.balance,
    createdAt: now,
    updatedAt: now,
  };
  const key = await mintApiKey(account.id, "default", now);
  const credit = {
    id: crypto.randomUUID(),
    accountId: account.id,
    kind: "credit" as const,
    amount: input.balance,
    balanceAfter: input.balance,
    createdAt: now,
  };
  await db.batch([
    db.insert(accounts).values(account),
    db.insert(apiKeys).values(key.row),
    ...(input.balance > 0 ? [db.insert(ledgerEntries).values(credit)] : []),
  ]);
  return { account, apiKey: key.plaintext };
}

export async function findAccount(db: Db, id: string): Promise<AccountRow | null> {
  const [row] = await db.select().from(accounts).where(eq(accounts.id, id)).limit(1);
  return row ?? null;
}

/**
 * Adds `amount` minor units to the balance and records a `credit` ledger entry holding the
 * balance after it, atomically (one D1 batch). Returns the updated account, or null if unknown.
 */
export async function creditAccount(
  db: Db,
  id: string,
  amount: number,
  now: number,
): Promise<AccountRow | null> {
  const [, [updated]] = await db.batch([
    db.insert(ledgerEntries).select(
      db
        .select({
          id: sql`${crypto.randomUUID()}`.as("id"),
          accountId: accounts.id,
          kind: sql`'credit'`.as("kind"),
          amount: sql`${amount}`.as("amount"),
          balanceAfter: sql`${accounts.balance} + ${amount}`.as("balance_after"),
          messageCount: sql`0`.as("message_count"),
          createdAt: sql`${now}`.as("created_at"),
        })
        .from(accounts)
        .where(eq(accounts.id, id)),
    ),
    db
      .update(accounts)
      .set({ balance: sql`${accounts.balance} + ${amount}`, updatedAt: now })
      .where(eq(accounts.id, id))
      .returning(),
  ]);
  return updated ?? null;
}
