import { and, eq, gt, isNull, or, type SQL } from "drizzle-orm";
import { randomToken, sha256Hex } from "../../lib/crypto";
import type { Cursor } from "../../lib/cursor";
import type { Db } from "../client";
import { apiKeys } from "../schema";
import { beyond, type KeysetColumns, pageOf, readOrder } from "./keyset";

/** Plaintext keys look like `sk_` + 43 base64url characters (32 random bytes). */
export const API_KEY_PATTERN = /^sk_[A-Za-z0-9_-]{43}$/;
/** The visible prefix kept in clear: `sk_` plus the first 8 random characters. */
const PREFIX_LENGTH = 11;

const KEYSET: KeysetColumns = { createdAt: apiKeys.createdAt, id: apiKeys.id };

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** What a new key holds: its name, scopes (src/keys/scopes.ts) and expiry (epoch ms, or null). */
export interface KeyGrant {
  name: string | null;
  scopes: string[];
  expiresAt: number | null;
}

/**
 * Mints a key for `accountId`: the row to insert (holding only the key's SHA-256) and the
 * plaintext, which is shown once in the creating response and never stored.
 */
export async function mintApiKey(
  accountId: string,
  grant: KeyGrant,
  now: number,
): Promise<{ row: ApiKeyRow; plaintext: string }> {
  const plaintext = `sk_${randomToken(32)}`;
  const row: ApiKeyRow = {
    id: crypto.randomUUID(),
    accountId,
    prefix: plaintext.slice(0, PREFIX_LENGTH),
    keyHash: await sha256Hex(plaintext),
    name: grant.name,
    scopes: grant.scopes,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: grant.expiresAt,
  };
  return { row, plaintext };
}

/** The INSERT of a key row {@link mintApiKey} made, as a statement for a D1 batch. */
export function insertApiKeyStatement(db: Db, row: ApiKeyRow): SQL {
  return db.insert(apiKeys).values(row).getSQL();
}

/** Stores a key row {@link mintApiKey} made. */
export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insert(apiKeys).values(row);
}

/**
 * Finds the live key with this plaintext at `now` (epoch ms): not revoked and not expired, or
 * null. One read by the unique index on the key's hash.
 */
export async function findLiveKey(db: Db, plaintext: string, now: number) {
  const keyHash = await sha256Hex(plaintext);
  const [row] = await db
    .select({
      id: apiKeys.id,
      accountId: apiKeys.accountId,
      scopes: apiKeys.scopes,
      expiresAt: apiKeys.expiresAt,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.keyHash, keyHash),
        isNull(apiKeys.revokedAt),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
      ),
    )
    .limit(1);
  return row ?? null;
}

/** Records the time a key was last used. */
export async function touchKey(db: Db, keyId: string, now: number): Promise<void> {
  await db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, keyId));
}

/**
 * Revokes a live key at once; with `accountId`, only that account's. Returns the revoked row, or
 * null when there is no such live key.
 */
export async function revokeKey(
  db: Db,
  keyId: string,
  now: number,
  accountId?: string,
): Promise<ApiKeyRow | null> {
  const [revoked] = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(
      and(
        eq(apiKeys.id, keyId),
        isNull(apiKeys.revokedAt),
        accountId === undefined ? undefined : eq(apiKeys.accountId, accountId),
      ),
    )
    .returning();
  return revoked ?? null;
}

/** A page of the account's keys that are not revoked (expired ones included), newest first. */
export async function listKeys(
  db: Db,
  accountId: string,
  page: { limit: number; cursor: Cursor | null },
): Promise<{ rows: ApiKeyRow[]; more: boolean }> {
  const where = [eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)];
  if (page.cursor) where.push(beyond(KEYSET, page.cursor));
  const rows = await db
    .select()
    .from(apiKeys)
    .where(and(...where))
    .orderBy(...readOrder(KEYSET, page.cursor))
    .limit(page.limit + 1);
  return pageOf([rows], page.limit, page.cursor);
}
