import { and, eq, gt, isNull, or, type SQL, sql } from "drizzle-orm";
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
 * plaintext, which is shown once in the creating response and never stored. `createdBy` is the id
 * of the key that asked for it, or null when the admin API did.
 */
export async function mintApiKey(
  accountId: string,
  grant: KeyGrant,
  now: number,
  createdBy: string | null = null,
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
    createdBy,
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

/** A key that a revocation would end: its id and scopes. */
export interface RevocableKey {
  id: string;
  scopes: string[];
}

/**
 * The account's key `keyId` if it is not revoked, followed, with `descendants`, by every key
 * not revoked that it created, directly or through keys it created (following `created_by`, also
 * through keys already revoked), nearest first. One recursive query (`created_by` is indexed).
 * Empty when the account has no such unrevoked key.
 */
export async function findRevocableKeys(
  db: Db,
  accountId: string,
  keyId: string,
  descendants: boolean,
): Promise<RevocableKey[]> {
  const rows = await db.all<{ id: string; scopes: string }>(sql`
    WITH RECURSIVE tree(id, depth) AS (
      SELECT id, 0 FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId} AND revoked_at IS NULL
      UNION
      SELECT k.id, tree.depth + 1 FROM api_keys k JOIN tree ON k.created_by = tree.id
      WHERE ${descendants ? 1 : 0} = 1 AND k.account_id = ${accountId}
    )
    SELECT k.id, k.scopes FROM tree JOIN api_keys k ON k.id = tree.id
    WHERE k.revoked_at IS NULL ORDER BY tree.depth, k.created_at, k.id`);
  return rows.map((row) => ({ id: row.id, scopes: JSON.parse(row.scopes) as string[] }));
}

/**
 * Revokes the account's keys `keyIds` that are not revoked yet, at `now` (epoch ms), in one
 * statement (the ids go in as one JSON array: D1 binds at most 100 parameters).
 * @returns the ids it revoked, in the order of `keyIds`.
 */
export async function revokeKeys(
  db: Db,
  accountId: string,
  keyIds: string[],
  now: number,
): Promise<string[]> {
  if (keyIds.length === 0) return [];
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(
      and(
        eq(apiKeys.accountId, accountId),
        isNull(apiKeys.revokedAt),
        sql`${apiKeys.id} IN (SELECT value FROM json_each(${JSON.stringify(keyIds)}))`,
      ),
    )
    .returning({ id: apiKeys.id });
  const done = new Set(revoked.map((row) => row.id));
  return keyIds.filter((id) => done.has(id));
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
