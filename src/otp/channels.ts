import { type GatewayKind, readConfig } from "../config";
import type { Db } from "../db/client";
import type { AppRow } from "../db/queries/apps";
import { findSessions } from "../db/queries/sessions";

/** One of an app's channels as its session is now. */
export interface Channel {
  sessionId: string;
  /** Session status (`connected`, `pending`, …). */
  status: string;
  /** The session's gateway (its own, else the deployment's default `CHATAPP_GATEWAY`). */
  gateway: GatewayKind;
  /** The session's number, E.164; null until it is linked. */
  phoneNumber: string | null;
}

/**
 * The app's channels (`apps.channels`, README, One-time codes → Channels and failover) in their
 * order, each as its session is now; a session deleted since is left out. Empty when the app has
 * none. One D1 read.
 */
export async function channelsOf(env: Env, db: Db, app: AppRow): Promise<Channel[]> {
  const ids = app.channels ?? [];
  if (ids.length === 0) return [];
  const rows = await findSessions(db, app.accountId, ids);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const fallback = readConfig(env).CHATAPP_GATEWAY;
  return ids.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    return [
      {
        sessionId: row.id,
        status: row.status,
        gateway: row.gateway ?? fallback,
        phoneNumber: row.phoneNumber,
      },
    ];
  });
}
