import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { GATEWAY_NAMES } from "../../lib/gateway-kinds";
import type { StoredHealth } from "../../lib/session-health";
import { accounts } from "./accounts";

// Chat sessions (the read model the session objects write through) and the link tokens that let
// a link page watch and link one. Conventions of every table: see index.ts.

/** Read model of the session Durable Objects: only the session's own object writes a row here. */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    sessionId: text().notNull(),
    phoneNumber: text(),
    displayName: text().notNull(),
    status: text({ enum: ["pending", "connected", "disconnected", "banned", "failed"] }).notNull(),
    reason: text(),
    lastSeenAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
    /**
     * The gateway the session was created on (lib/gateway-kinds.ts `GATEWAY_NAMES`); null for a session
     * created before sessions chose theirs: the deployment's `CHATAPP_GATEWAY`. Its object
     * writes it with its next change.
     */
    gateway: text({ enum: GATEWAY_NAMES }),
    /**
     * The session's health (src/lib/session-health.ts `StoredHealth`, epoch-ms times) as its
     * object last read it from the gateway; null until then.
     */
    health: text({ mode: "json" }).$type<StoredHealth>(),
  },
  (t) => [
    uniqueIndex("sessions_session_id").on(t.sessionId),
    index("sessions_account").on(t.accountId, t.createdAt, t.id),
  ],
);

/**
 * Link tokens: bearer capabilities in a link URL (`<origin>/link/<token>`) that let whoever holds
 * one watch and link one session of one account without an API key (src/links/tokens.ts). Only
 * the token's SHA-256 (hex) is stored, as for API keys. A token is live until `expires_at` (epoch
 * ms) or `revoked_at`; it goes with its session (`ON DELETE CASCADE`), or
 * `LINK_TOKEN_RETENTION_MS` after it expired (src/links/tokens.ts; hourly job `purge_link_tokens`).
 */
export const linkTokens = sqliteTable(
  "link_tokens",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    sessionId: text()
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    tokenHash: text().notNull(),
    /** Where the hosted page sends the user back to once linked (an https URL), or null. */
    returnUrl: text(),
    expiresAt: integer().notNull(),
    createdAt: integer().notNull(),
    revokedAt: integer(),
    /**
     * The id of the API key that minted the token; null for tokens minted before this column
     * existed. Revoking that key revokes the token (src/keys/revoke.ts).
     */
    createdBy: text(),
  },
  (t) => [
    uniqueIndex("link_tokens_token_hash").on(t.tokenHash),
    index("link_tokens_session").on(t.sessionId, t.revokedAt),
    index("link_tokens_created_by").on(t.createdBy),
    // The hourly purge of tokens past their retention (src/db/queries/link-tokens.ts `purgeLinkTokens`).
    index("link_tokens_expires").on(t.expiresAt),
  ],
);
