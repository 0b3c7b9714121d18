import { inArray } from "drizzle-orm";
import type { Db } from "../client";
import { apiKeys, linkTokens } from "../schema";

/** Where a credential stands: when it was revoked and when it expires (epoch ms; null: not, never). */
export interface CredentialState {
  id: string;
  revokedAt: number | null;
  expiresAt: number | null;
}

/** D1 binds at most 100 parameters to a statement (https://developers.cloudflare.com/d1/platform/limits/). */
const IDS_PER_READ = 100;

/**
 * The states of the API keys with these ids, read 100 ids to a statement by the primary key.
 * An id with no row is left out.
 */
export function apiKeyStates(db: Db, ids: string[]): Promise<CredentialState[]> {
  return inChunks(ids, (chunk) =>
    db
      .select({ id: apiKeys.id, revokedAt: apiKeys.revokedAt, expiresAt: apiKeys.expiresAt })
      .from(apiKeys)
      .where(inArray(apiKeys.id, chunk)),
  );
}

/**
 * The states of the link tokens with these ids, read 100 ids to a statement by the primary key.
 * An id with no row (its session was deleted, and its tokens with it) is left out.
 */
export function linkTokenStates(db: Db, ids: string[]): Promise<CredentialState[]> {
  return inChunks(ids, (chunk) =>
    db
      .select({ id: linkTokens.id, revokedAt: linkTokens.revokedAt, expiresAt: linkTokens.expiresAt })
      .from(linkTokens)
      .where(inArray(linkTokens.id, chunk)),
  );
}

async function inChunks<T>(ids: string[], read: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const reads: Promise<T[]>[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_READ) reads.push(read(ids.slice(i, i + IDS_PER_READ)));
  return (await Promise.all(reads)).flat();
}
