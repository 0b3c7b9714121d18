import { and, eq, gt, isNull, or, type SQL, sql } from "drizzle-orm";
import { randomToken, sha256Hex } from "../../lib/crypto";
import type { Cursor } from "../../lib/cursor";
import { batchSql, type Db } from "../client";
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
 * Finds the live key whose SHA-256 (hex) is `keyHash` at `now` (epoch ms): not revoked and not
 * expired, or null. One read by the unique index on the key's hash.
 */
export async function findLiveKey(db: Db, keyHash: string, now: number) {
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
 * The account of the key `keyId`, revoked or not, or null when no key has this id. One read by
 * primary key; the admin API, which names a key without its account, asks it first.
 */
export async function findKeyAccountId(db: Db, keyId: string): Promise<string | null> {
  const [row] = await db
    .select({ accountId: apiKeys.accountId })
    .from(apiKeys)
    .where(eq(apiKeys.id, keyId))
    .limit(1);
  return row?.accountId ?? null;
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

/** What one revocation of keys ended, each list in the order D1 returned it (see {@link revokeKeys}). */
export interface KeyRevocation {
  /** The ids of the keys revoked, in the order of the `keyIds` asked for. */
  keyIds: string[];
  /** The webhook endpoints turned off because one of `keyIds` created or last re-pointed them. */
  webhookEndpointIds: string[];
  /** The link tokens revoked because one of `keyIds` minted them, with their sessions. */
  linkTokens: { id: string; sessionId: string }[];
}

/**
 * Revokes the account's keys `keyIds` that are not revoked yet, at `now` (epoch ms), with what
 * those keys set up, in one D1 batch (all or nothing):
 * - the account's webhook endpoints whose `created_by` or `url_set_by` is one of `keyIds` are
 *   turned off with `disabled_reason` `endpointReason` (an endpoint already turned off by
 *   delivery keeps its own reason; one turned off through the API gets this one);
 * - the account's link tokens whose `created_by` is one of them, not revoked yet, are revoked.
 *
 * Rows with a null creator (made before the columns existed) are left alone. The ids go in as one
 * JSON array: D1 binds at most 100 parameters.
 */
export async function revokeKeys(
  db: Db,
  accountId: string,
  keyIds: string[],
  now: number,
  endpointReason: string,
): Promise<KeyRevocation> {
  if (keyIds.length === 0) return { keyIds: [], webhookEndpointIds: [], linkTokens: [] };
  const ids = sql`(SELECT value FROM json_each(${JSON.stringify(keyIds)}))`;
  const [keys, endpoints, tokens] = await batchSql(db, [
    sql`UPDATE api_keys SET revoked_at = ${now}
      WHERE account_id = ${accountId} AND revoked_at IS NULL AND id IN ${ids}
      RETURNING id`,
    sql`UPDATE webhook_endpoints
      SET enabled = 0, disabled_reason = ${endpointReason}, updated_at = max(${now}, updated_at + 1)
      WHERE account_id = ${accountId} AND (created_by IN ${ids} OR url_set_by IN ${ids})
        AND (enabled = 1 OR disabled_reason IS NULL)
      RETURNING id`,
    sql`UPDATE link_tokens SET revoked_at = ${now}
      WHERE account_id = ${accountId} AND revoked_at IS NULL AND created_by IN ${ids}
      RETURNING id, session_id`,
  ]);
  const done = new Set((keys?.results ?? []).map((row) => String(row.id)));
  return {
    keyIds: keyIds.filter((id) => done.has(id)),
    webhookEndpointIds: (endpoints?.results ?? []).map((row) => String(row.id)),
    linkTokens: (tokens?.results ?? []).map((row) => ({
      id: String(row.id),
      sessionId: String(row.session_id),
    })),
  };
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
