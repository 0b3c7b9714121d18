import type { Db } from "../db/client";
import { lastMessageOf } from "../db/queries/contacts";
import { ApiError } from "../errors";
import { coldContactLimit, type StoredHealth } from "../lib/session-health";

/**
 * Refuses a send to a cold contact (one who never wrote to the session, by any of their
 * identifiers: db/queries/contacts.ts `lastMessageOf`) while the session's health says the network refuses new chats at `now`
 * (epoch ms): an active reach-out timelock, or a cap on new chats at `CAPPED`
 * (lib/session-health.ts `coldContactLimit`; docs/sessions.md, Session health). WhatsApp answers such a
 * send with error 463 ("reach-out timelock") or drops it at the cap, so it is not made: the whole
 * send is refused before anything is charged or written. A send whose recipients all wrote to
 * the session before goes ahead.
 * @throws ApiError `session_limited` (409) with extension members `limit` (`timelock` or `cap`),
 *   `until` (when it ends, ISO 8601, or null when the gateway did not say) and `cold` (the cold
 *   recipients, E.164, in the request's order).
 */
export async function requireReachable(
  db: Db,
  send: { sessionId: string; health: StoredHealth | null; recipients: string[] },
  now: number,
): Promise<void> {
  const limit = coldContactLimit(send.health, now);
  if (!limit) return;
  const warm = await lastMessageOf(db, send.sessionId, send.recipients);
  const cold = send.recipients.filter((to) => !warm.has(to));
  if (cold.length === 0) return;
  const what =
    limit.limit === "timelock"
      ? "WhatsApp's reach-out timelock holds on this session"
      : "this session used its cap on new chats (CAPPED)";
  const end = limit.until ? ` until ${limit.until}` : " (its end is not known)";
  throw new ApiError(
    "session_limited",
    `${what}${end}: ${cold.length} of ${send.recipients.length} recipients never wrote to it, and new chats are refused.`,
    { extra: { limit: limit.limit, until: limit.until, cold } },
  );
}
