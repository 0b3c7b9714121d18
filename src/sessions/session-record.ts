import type { GatewayKind } from "../config";
import type { sessions } from "../db/schema";
import { type SessionHealth, toSessionHealth } from "../lib/session-health";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";

export type SessionRow = typeof sessions.$inferSelect;
export type SessionStatus = SessionRow["status"];

/** A session as the API shows it (the `Session` schema of openapi.json). */
export type SessionRecord = {
  id: string;
  account_id: string;
  session_id: string;
  phone_number: string | null;
  display_name: string;
  status: SessionStatus;
  reason: string | null;
  /** The gateway the session was created on (`POST /v1/chatapp/sessions` `gateway`). */
  gateway: GatewayKind;
  /**
   * The limits the network puts on the linked account (docs/sessions.md, Session health); nulls until read.
   */
  health: SessionHealth;
  last_seen_at: string | null;
  created_at: string;
  updated_at: string;
};

/**
 * The `session_<id>` name a session has at the gateway (docs/gateways.md,
 * Several gateways).
 */
export function gatewaySessionName(id: string): string {
  return `session_${id}`;
}

/**
 * Row (epoch-ms times) → API record (ISO 8601 times). `defaultGateway` (the deployment's
 * `CHATAPP_GATEWAY`) is the gateway of a row written before sessions chose theirs (`gateway`
 * null, or absent from an older event's snapshot).
 */
export function toSessionRecord(row: SessionRow, defaultGateway: GatewayKind): SessionRecord {
  return {
    id: row.id,
    account_id: row.accountId,
    session_id: row.sessionId,
    phone_number: row.phoneNumber,
    display_name: row.displayName,
    status: row.status,
    reason: row.reason,
    gateway: row.gateway ?? defaultGateway,
    // Absent from a row (or an event's snapshot) written before sessions had a health.
    health: toSessionHealth(row.health ?? null),
    last_seen_at: formatNullableTimestamp(row.lastSeenAt),
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

/** The session uuid in a gateway session name (`session_<uuid>`), or null for other names. */
export function sessionUuidOf(name: string): string | null {
  const match = name.match(/^session_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/);
  return match?.[1] ?? null;
}

/**
 * A session as a link token's holder sees it (the hosted link page, live frames of a socket
 * opened with a token): its id, status and reason, the linked phone only while `connected`, and
 * when it last changed. Nothing of the account: no account id, gateway name or display name.
 */
export type PublicSession = {
  id: string;
  status: SessionStatus;
  reason: string | null;
  phone_number: string | null;
  updated_at: string;
};

/** The {@link PublicSession} view of a session record. */
export function toPublicSession(record: SessionRecord): PublicSession {
  return {
    id: record.id,
    status: record.status,
    reason: record.reason,
    phone_number: record.status === "connected" ? record.phone_number : null,
    updated_at: record.updated_at,
  };
}
