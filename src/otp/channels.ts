import { type GatewayKind, readConfig } from "../config";
import type { Db } from "../db/client";
import type { AppRow } from "../db/queries/apps";
import { lastMessageOf } from "../db/queries/contacts";
import { findSessions } from "../db/queries/sessions";
import { templateOwnerOf, templatesOf } from "../gateways/cloud-api/template-cache";
import { capabilitiesOf } from "../lib/gateway-kinds";
import { coldContactLimit, type StoredHealth } from "../lib/session-health";
import { gatewayRefusals, refusedAmong } from "../messages/recipient-kinds";
import type { CodeChannel } from "./code-message";

/** One of an app's channels as its session is now. */
export interface Channel {
  sessionId: string;
  /** Session status (`connected`, `pending`, …). */
  status: string;
  /** The session's gateway (its own, else the deployment's default `CHATAPP_GATEWAY`). */
  gateway: GatewayKind;
  /** The session's number, E.164; null until it is linked. */
  phoneNumber: string | null;
  /**
   * The limits the network puts on the session (docs/sessions.md, Session health); null when none was read.
   */
  health: StoredHealth | null;
}

/**
 * The app's channels (`apps.channels`, docs/otp.md, Channels and failover) in their
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
        health: row.health,
      },
    ];
  });
}

/**
 * Whether `channel`'s gateway can send to `to` (E.164, or a user id of a kind it sends to:
 * lib/gateway-kinds.ts `sendsToUserIds`; docs/contacts.md, Contacts): a LID goes only through a linked-device
 * gateway, a BSUID only through the Cloud API.
 */
export function canAddress(channel: Channel, to: string): boolean {
  return refusedAmong(gatewayRefusals(channel.gateway), [to]).length === 0;
}

/**
 * Whether `channel` can carry the app's codes: a session whose gateway has a service window (the
 * Cloud API) sends them only as the app's authentication template (`otp_template`), as the
 * recipient has not written to it, so without one it cannot; other gateways send text.
 */
export function canCarryCode(channel: Channel, app: AppRow): boolean {
  return !capabilitiesOf(channel.gateway).needsServiceWindow || app.otpTemplate !== null;
}

/**
 * Whether `channel` may send to `toNumber` (E.164 or a user id) at `now` (epoch ms) as far as the network's
 * limits go (docs/sessions.md, Session health): yes unless its timelock or cap refuses new chats
 * (lib/session-health.ts `coldContactLimit`) and `toNumber`'s contact never wrote to it (D1
 * `contacts`, db/queries/contacts.ts `lastMessageOf`). A send the limit refuses would answer 409 `session_limited`
 * (messages/session-limits.ts); one D1 read, only for a limited channel.
 */
export async function reachesNumber(
  db: Db,
  channel: Channel,
  toNumber: string,
  now: number,
): Promise<boolean> {
  if (coldContactLimit(channel.health, now) === null) return true;
  return (await lastMessageOf(db, channel.sessionId, [toNumber])).has(toNumber);
}

/**
 * The ids of the app's channels after `sessionId` in list order (all of them when `sessionId` is
 * no longer one of them): where a code may still fail over to.
 */
export function channelIdsAfter(app: AppRow, sessionId: string): string[] {
  const ids = app.channels ?? [];
  return ids.slice(ids.indexOf(sessionId) + 1);
}

/**
 * `channel` as a code goes out on it: with the app's `otp_template` on a Cloud API session (whose
 * template cache is read again first when stale, as a template send does; when Meta cannot be
 * reached the send decides on the cache as it is), else as text. The caller has checked
 * {@link canCarryCode}.
 */
export async function codeChannelOf(env: Env, db: Db, app: AppRow, channel: Channel): Promise<CodeChannel> {
  if (!capabilitiesOf(channel.gateway).needsServiceWindow || !app.otpTemplate)
    return { sessionId: channel.sessionId, template: null };
  try {
    await templatesOf(db, await templateOwnerOf(env, db, app.accountId, channel.sessionId), {
      refresh: false,
    });
  } catch {
    // The send decides on the cache as it is.
  }
  return { sessionId: channel.sessionId, template: app.otpTemplate };
}
