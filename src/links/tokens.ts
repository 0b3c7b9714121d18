import type { Db } from "../db/client";
import { databaseFor, directoryOf, routeFor } from "../db/databases";
import { addRoutes } from "../db/queries/directory";
import { findLinkToken, insertLinkToken, type LinkGrant, type LinkTokenRow } from "../db/queries/link-tokens";
import { ApiError } from "../errors";
import { randomToken, sha256Hex } from "../lib/crypto";

/**
 * Link tokens: what the hosted link page (`/link/<token>`) and browsers watching a session's
 * live events hold instead of an API key. A token is a bearer capability for one session of one
 * account, so it is made like an API key: 32 bytes (256 bits) from the platform CSPRNG,
 * base64url (43 characters), stored only as its SHA-256 (OWASP Session Management Cheat Sheet:
 * at least 64 bits of entropy; hashed at rest like a password-equivalent secret).
 */

/** Random bytes in a link token. */
export const LINK_TOKEN_BYTES = 32;
/** A token's shape: 43 base64url characters (32 bytes, no padding). */
export const LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** Bounds and default of `expires_in` (seconds) on `POST …/link-url`. */
export const LINK_EXPIRES_IN = { min: 60, max: 86_400, default: 900 } as const;

/**
 * How long a token is kept after its `expires_at` (ms; 7 days): until then its link answers 410
 * `link_expired` ("This link has expired"), which tells whoever opens an old link to ask for a new
 * one; afterwards the hourly job `purge_link_tokens` deletes it and the link is 404
 * `link_not_found` (docs/retention.md, Data retention).
 */
export const LINK_TOKEN_RETENTION_MS = 7 * 86_400_000;

/**
 * Mints a token for the account's session, valid `expiresInSeconds` from `now` (epoch ms):
 * the row to store (holding only the SHA-256 hex of the token) and the plaintext, which is
 * shown once, in the link URL, and never stored. `createdBy` is the id of the API key that asks
 * for it: revoking that key revokes the token (src/keys/revoke.ts; docs/security.md, Live sockets).
 */
export async function mintLinkToken(input: {
  accountId: string;
  sessionId: string;
  returnUrl: string | null;
  expiresInSeconds: number;
  now: number;
  createdBy: string;
}): Promise<{ row: LinkTokenRow; token: string }> {
  const token = randomToken(LINK_TOKEN_BYTES);
  return {
    token,
    row: {
      id: crypto.randomUUID(),
      accountId: input.accountId,
      sessionId: input.sessionId,
      tokenHash: await sha256Hex(token),
      returnUrl: input.returnUrl,
      expiresAt: input.now + input.expiresInSeconds * 1000,
      createdAt: input.now,
      revokedAt: null,
      createdBy: input.createdBy,
    },
  };
}

/** The link page's URL for `token`: `<origin>/link/<token>`; `origin` has no trailing slash. */
export function linkUrl(origin: string, token: string): string {
  return `${origin}/link/${token}`;
}

/**
 * The grant of a live `token` at `now` (epoch ms), and the database of its account (the
 * directory names it).
 * @throws ApiError `link_not_found` (404) for a malformed or unknown token, one whose session
 *   was deleted, or one deleted {@link LINK_TOKEN_RETENTION_MS} after its expiry; `link_expired`
 *   (410) for an expired or revoked one.
 */
export async function resolveLinkToken(
  env: { DB: D1Database },
  token: string,
  now: number,
): Promise<{ grant: LinkGrant; db: Db }> {
  const tokenHash = LINK_TOKEN_PATTERN.test(token) ? await sha256Hex(token) : null;
  const route = tokenHash && (await routeFor(env, "link_token", tokenHash));
  const db = route && (await databaseFor(env, route.accountId));
  const found = tokenHash && db && (await findLinkToken(db, tokenHash, now));
  if (!db || !found) throw new ApiError("link_not_found", "No such link.");
  if (found.state === "lapsed") {
    throw new ApiError(
      "link_expired",
      `The link has ${found.why === "revoked" ? "been revoked" : "expired"}.`,
    );
  }
  return { grant: found.grant, db };
}

/**
 * Stores a token {@link mintLinkToken} made: its route in the directory first (until its row is
 * purged), then its row in its account's database `db`.
 */
export async function storeLinkToken(env: { DB: D1Database }, db: Db, row: LinkTokenRow): Promise<void> {
  await addRoutes(directoryOf(env), [
    {
      kind: "link_token",
      key: row.tokenHash,
      accountId: row.accountId,
      sessionId: row.sessionId,
      expiresAt: row.expiresAt + LINK_TOKEN_RETENTION_MS,
    },
  ]);
  await insertLinkToken(db, row);
}
