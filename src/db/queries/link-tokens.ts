import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../client";
import { linkTokens, sessions } from "../schema";
import { type Purge, type PurgeBudget, purgeBefore } from "./purge";

export type LinkTokenRow = typeof linkTokens.$inferSelect;

/** What a live link token grants: one session of one account, until `expiresAt` (epoch ms). */
export interface LinkGrant {
  tokenId: string;
  accountId: string;
  sessionId: string;
  returnUrl: string | null;
  expiresAt: number;
}

/**
 * What a link token is worth at `now` (epoch ms): `live` with the session it grants; `lapsed`
 * when it expired (`expires_at <= now`) or was revoked, `why` saying which; null when no token
 * has this value or its session is gone (the token rows go with the session, and the join makes
 * sure of it).
 */
export type LinkTokenLookup =
  | { state: "live"; grant: LinkGrant }
  | { state: "lapsed"; why: "expired" | "revoked" }
  | null;

/**
 * Looks up a token by its SHA-256 (hex) `tokenHash` (one indexed read, joined with its session).
 * The one lookup both the link routes and the live route use; see {@link LinkTokenLookup}.
 */
export async function findLinkToken(db: Db, tokenHash: string, now: number): Promise<LinkTokenLookup> {
  const [row] = await db
    .select({
      id: linkTokens.id,
      accountId: linkTokens.accountId,
      sessionId: linkTokens.sessionId,
      returnUrl: linkTokens.returnUrl,
      expiresAt: linkTokens.expiresAt,
      revokedAt: linkTokens.revokedAt,
    })
    .from(linkTokens)
    .innerJoin(
      sessions,
      and(eq(sessions.id, linkTokens.sessionId), eq(sessions.accountId, linkTokens.accountId)),
    )
    .where(eq(linkTokens.tokenHash, tokenHash))
    .limit(1);
  if (!row) return null;
  if (row.revokedAt !== null) return { state: "lapsed", why: "revoked" };
  if (row.expiresAt <= now) return { state: "lapsed", why: "expired" };
  return {
    state: "live",
    grant: {
      tokenId: row.id,
      accountId: row.accountId,
      sessionId: row.sessionId,
      returnUrl: row.returnUrl,
      expiresAt: row.expiresAt,
    },
  };
}

/** Stores a new token row (made by src/links/tokens.ts `mintLinkToken`, holding only the hash). */
export async function insertLinkToken(db: Db, row: LinkTokenRow): Promise<void> {
  await db.insert(linkTokens).values(row);
}

/**
 * Revokes every token of the account's session `sessionId` not revoked yet (expired ones too:
 * harmless), at `now` (epoch ms). @returns how many were revoked.
 */
export async function revokeLinkTokens(
  db: Db,
  accountId: string,
  sessionId: string,
  now: number,
): Promise<number> {
  const revoked = await db
    .update(linkTokens)
    .set({ revokedAt: now })
    .where(
      and(
        eq(linkTokens.accountId, accountId),
        eq(linkTokens.sessionId, sessionId),
        isNull(linkTokens.revokedAt),
      ),
    )
    .returning({ id: linkTokens.id });
  return revoked.length;
}

/**
 * Deletes the tokens (of every account) that expired before `before` (epoch ms), revoked ones
 * included (a token expires at most a day after it was made, revoked or not: src/links/tokens.ts
 * `LINK_EXPIRES_IN`), in bounded chunks through `link_tokens_expires` (the hourly job
 * `purge_link_tokens`). A deleted token is unknown: its link answers 404 `link_not_found`.
 */
export function purgeLinkTokens(db: Db, before: number, budget?: PurgeBudget): Promise<Purge> {
  return purgeBefore(db, linkTokens, linkTokens.expiresAt, before, budget);
}
