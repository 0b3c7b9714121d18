import { and, eq, isNull } from "drizzle-orm";
import { randomToken, sha256Hex } from "../../lib/crypto";
import type { Db } from "../client";
import { apiKeys } from "../schema";

/** Plaintext keys look like `sk_` + 43 base64url characters (32 random bytes). */
export const API_KEY_PATTERN = /^sk_[A-Za-z0-9_-]{43}$/;
/** The visible prefix kept in clear: `sk_` plus the first 8 random characters. */
const PREFIX_LENGTH = 11;

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/**
 * Mints a key for `accountId`: the row to insert (holding only the key's SHA-256) and the
 * plaintext, which is shown once in the creating response and never stored.
 */
export async function mintApiKey(
  accountId: string,
  name: string | null,
  now: number,
): Promise<{ row: ApiKeyRow; plaintext: string }> {
  const plaintext = `sk_${randomToken(32)}`;
  const row: ApiKeyRow = {
    id: crypto.randomUUID(),
    accountId,
    prefix: plaintext.slice(0, PREFIX_LENGTH),
    keyHash: await sha256Hex(plaintext),
    name,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  return { row, plaintext };
}

/** Finds the live (not revoked) key with this plaintext, or null. One indexed read. */
export async function findLiveKey(db: Db, plaintext: string) {
  const keyHash = await sha256Hex(plaintext);
  const [row] = await db
    .select({ id: apiKeys.id, accountId: apiKeys.accountId, lastUsedAt: apiKeys.lastUsedAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row ?? null;
}

/** Records the time a key was last used. */
export async function touchKey(db: Db, keyId: string, now: number): Promise<void> {
  await db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, keyId));
}

/** Revokes a live key at once. Returns false when there is no such live key. */
export async function revokeKey(db: Db, keyId: string, now: number): Promise<boolean> {
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return revoked.length > 0;
}
