import type { GatewayKind } from "../config";
import { newEventId, type PendingEvent } from "../events/record";
import type { CloudApiNumber } from "../gateways/cloud-api/graph";
import { parseHealth, type StoredHealth } from "../lib/session-health";
import { type SessionRecord, type SessionRow, toSessionRecord } from "./session-record";

/**
 * The one row of a session object's `session` table: the session as the object knows it. Times
 * are epoch milliseconds (UTC). `session_id` is the gateway's name for it (`session_<id>`),
 * `origin` where sandbox pairing URLs point, `qr` the QR payload shown while `pending` (null in
 * every other status), `gateway` the gateway it was created on.
 */
export type StoredSession = Omit<SessionRecord, "last_seen_at" | "created_at" | "updated_at" | "health"> & {
  /** The session's health as JSON (lib/session-health.ts `StoredHealth`), null until first read. */
  health: string | null;
  last_seen_at: number | null;
  created_at: number;
  updated_at: number;
  origin: string;
  qr: string | null;
};

/** The events a session object records of its own session. */
export type SessionEventType = "session.status_changed" | "session.qr_updated" | "session.health_changed";

/** Columns an update may change (the identity and creation time never change). */
export type SessionChanges = Partial<
  Omit<StoredSession, "id" | "account_id" | "session_id" | "created_at" | "gateway">
>;

/**
 * A session object's own record of its session, in the object's SQLite storage (the `session`
 * table, one row; `pending_events` and `cloud_api_number` beside it; their DDL is in
 * storage-schema.ts). The table is created with the session and dropped with it, so an object that
 * holds no session keeps no storage: {@link held} says which, and every read checks it.
 *
 * Only the session object writes here, and only its transition step changes `status`
 * (see transitions.ts).
 */
export class SessionStore {
  private present: boolean;

  /**
   * @param defaultGateway the deployment's `CHATAPP_GATEWAY`: the gateway of a session stored
   *   before sessions chose theirs (its `gateway` column is null).
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly defaultGateway: () => GatewayKind,
  ) {
    this.present =
      sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session'").toArray().length > 0;
  }

  /** Whether the object holds a session (its `session` table exists). */
  get held(): boolean {
    return this.present;
  }

  /**
   * The object's tables now exist (SessionCore.setUp, storage-schema.ts): from now on it holds a
   * session.
   */
  noteHeld(): void {
    this.present = true;
  }

  /**
   * Inserts the row of a new session on `gateway`: `pending`, no phone, no QR yet, the gateway
   * name `sessionId` as display name, every time `now` (epoch ms).
   */
  insert(input: {
    id: string;
    accountId: string;
    sessionId: string;
    gateway: GatewayKind;
    origin: string;
    now: number;
  }): void {
    this.sql.exec(
      `INSERT INTO session (id, account_id, session_id, phone_number, display_name, status, reason,
         last_seen_at, created_at, updated_at, origin, qr, gateway)
       VALUES (?, ?, ?, NULL, ?, 'pending', NULL, ?, ?, ?, ?, NULL, ?)`,
      input.id,
      input.accountId,
      input.sessionId,
      input.sessionId,
      input.now,
      input.now,
      input.now,
      input.origin,
      input.gateway,
    );
  }

  /**
   * Keeps the business number of a `cloud_api` session (its token sealed, see
   * gateways/cloud-api/graph.ts), replacing any kept before.
   */
  setCloudApiNumber(number: Omit<CloudApiNumber, "sessionRowId">): void {
    this.sql.exec("DELETE FROM cloud_api_number");
    this.sql.exec(
      "INSERT INTO cloud_api_number (phone_number_id, waba_id, access_token_sealed, throughput_mps) VALUES (?, ?, ?, ?)",
      number.phoneNumberId,
      number.wabaId,
      number.accessTokenSealed,
      number.throughputMps,
    );
  }

  /** The business number of a `cloud_api` session, or null (another gateway, or no session). */
  cloudApiNumber(): CloudApiNumber | null {
    const state = this.state();
    if (!state) return null;
    const row = this.sql
      .exec<{
        phone_number_id: string;
        waba_id: string;
        access_token_sealed: string;
        throughput_mps: number;
      }>("SELECT * FROM cloud_api_number LIMIT 1")
      .toArray()[0];
    if (!row) return null;
    return {
      sessionRowId: state.id,
      phoneNumberId: row.phone_number_id,
      wabaId: row.waba_id,
      accessTokenSealed: row.access_token_sealed,
      throughputMps: row.throughput_mps,
    };
  }

  /** The object's storage was deleted: from now on it holds no session. */
  forget(): void {
    this.present = false;
  }

  /** The session, or null when the object holds none. */
  state(): StoredSession | null {
    if (!this.present) return null;
    const row = this.sql
      .exec<Omit<StoredSession, "gateway"> & { gateway: GatewayKind | null }>("SELECT * FROM session LIMIT 1")
      .toArray()[0];
    if (!row) return null;
    return { ...row, gateway: row.gateway ?? this.defaultGateway() };
  }

  /** The session. @throws Error when the object holds none (callers have checked {@link state}). */
  current(): StoredSession {
    const state = this.state();
    if (!state) throw new Error("session object has no session");
    return state;
  }

  /** Writes `changes`, and `updated_at` = now (epoch ms). */
  update(changes: SessionChanges): void {
    const entries = Object.entries({ ...changes, updated_at: Date.now() });
    this.sql.exec(
      `UPDATE session SET ${entries.map(([column]) => `${column} = ?`).join(", ")}`,
      ...entries.map(([, v]) => v),
    );
  }

  /** The session's health, or null before the first reading. */
  health(): StoredHealth | null {
    return parseHealth(this.current().health);
  }

  /**
   * Stores `health`; `changed` (its limits or quality differ) is a change of the session and sets
   * `updated_at` to now, a reading that changed nothing but `checked_at` leaves it.
   */
  setHealth(health: StoredHealth, changed: boolean): void {
    if (changed) this.update({ health: JSON.stringify(health) });
    else this.sql.exec("UPDATE session SET health = ?", JSON.stringify(health));
  }

  /** Replaces the QR payload shown (rotation): not a change of the session, `updated_at` stays. */
  setQr(qr: string | null): void {
    this.sql.exec("UPDATE session SET qr = ?", qr);
  }

  /** The session as a D1 `sessions` row (the read model the list and show endpoints read). */
  row(): SessionRow {
    const s = this.current();
    return {
      id: s.id,
      accountId: s.account_id,
      sessionId: s.session_id,
      phoneNumber: s.phone_number,
      displayName: s.display_name,
      status: s.status,
      reason: s.reason,
      lastSeenAt: s.last_seen_at,
      createdAt: s.created_at,
      updatedAt: s.updated_at,
      gateway: s.gateway,
      health: parseHealth(s.health),
    };
  }

  /** The session as the API shows it (the `Session` schema of openapi.json). */
  record(): SessionRecord {
    return toSessionRecord(this.row(), this.defaultGateway());
  }

  /**
   * Keeps an event of this session's (`session.status_changed` and `session.health_changed` with
   * the row now, `session.qr_updated` with the row and the QR payload) until it is written to D1
   * with the session row ({@link pendingEvents}, {@link clearEvents}).
   */
  recordEvent(type: SessionEventType, at: number): void {
    const row = this.row();
    const snapshot = type === "session.qr_updated" ? { session: row, qr: this.current().qr } : row;
    this.sql.exec(
      "INSERT INTO pending_events (id, type, snapshot, created_at) VALUES (?, ?, ?, ?)",
      newEventId(),
      type,
      JSON.stringify(snapshot),
      at,
    );
  }

  /** Events not yet in D1, oldest first. */
  pendingEvents(): PendingEvent[] {
    const accountId = this.current().account_id;
    return this.sql
      .exec<{ id: string; type: PendingEvent["type"]; snapshot: string; created_at: number }>(
        "SELECT id, type, snapshot, created_at FROM pending_events ORDER BY created_at, rowid",
      )
      .toArray()
      .map((e) => ({ id: e.id, accountId, type: e.type, snapshot: e.snapshot, createdAt: e.created_at }));
  }

  /** Forgets events D1 now holds. */
  clearEvents(ids: string[]): void {
    for (const id of ids) this.sql.exec("DELETE FROM pending_events WHERE id = ?", id);
  }
}
