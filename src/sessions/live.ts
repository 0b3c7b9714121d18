import { log } from "../lib/log";
import { qrPngDataUri } from "../lib/qr-png";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";
import {
  credentialTag,
  type Lapse,
  type LapseCheck,
  type LiveCredential,
  lapseClose,
  parseCredential,
} from "./live-credentials";
import { type PublicSession, type SessionRecord, toPublicSession } from "./session-record";
import type { SessionEventType } from "./session-store";

/**
 * Live session events: the WebSockets watching one session, held by the session's object with
 * the WebSocket Hibernation API (https://developers.cloudflare.com/durable-objects/best-practices/websockets/),
 * so an idle watcher costs nothing and survives the object's eviction. Sockets are found through
 * `ctx.getWebSockets(audience)` every time, never kept in memory, so a frame after a wake-up
 * reaches every socket accepted before it.
 *
 * Frames are JSON text, one per change (docs/sessions.md, "Live session events"):
 *
 * - `session.snapshot` `{ session, qr_code?, expires_at? }`: the first frame, the state now;
 * - `session.status_changed` `{ session, qr_code?, expires_at? }`: every status move;
 * - `session.qr_updated` `{ session, qr_code, expires_at }`: a pending session's QR rotated;
 * - `session.health_changed` `{ session }`: the session's `health` changed (docs/sessions.md, Session
 * health);
 * - `session.pairing_code` `{ pairing_code, phone_number, issued_at }`: a pairing code was issued;
 * - `session.deleted` `{ id }`: the last frame, then the socket closes with {@link CLOSE_SESSION_DELETED}.
 *
 * Each socket is tagged with its {@link Audience} and with the credential that opened it
 * (live-credentials.ts), which it never outlives: it closes with 4401 (API key revoked or
 * expired), 4403 (link token revoked) or 4410 (link token expired), and a frame is sent only to
 * sockets whose credential is still live ({@link LiveWatchers.broadcast}).
 *
 * `session` is the Session exactly as `GET /v1/chatapp/sessions/{id}` shows it for sockets
 * authenticated with an API key, and the {@link PublicSession} for sockets opened with a link
 * token. `qr_code` is a PNG data URI (as the `session.qr_updated` event's data has it), present
 * while `pending`; `expires_at` is when the service shows the next QR (the next rotation).
 */

/** Who a socket was opened by: the account (an API key) or a link token; kept as a hibernation tag. */
export type Audience = "account" | "link";

/** The {@link Audience} of a socket `credential` opened. */
export function audienceOf(credential: LiveCredential): Audience {
  return credential.kind === "key" ? "account" : "link";
}

/** Close code sent to every watcher of a deleted session (4000–4999 are for applications, RFC 6455 §7.4.2). */
export const CLOSE_SESSION_DELETED = 4404;
export const CLOSE_SESSION_DELETED_REASON = "session deleted";

/** The QR a pending session shows: its payload and when the next one replaces it (epoch ms, null if unknown). */
export interface ShownQr {
  payload: string;
  expiresAt: number | null;
}

/** A change to tell watchers about, before it is rendered for an {@link Audience}. */
export type LiveChange =
  | {
      type: "session.snapshot" | "session.status_changed" | "session.health_changed";
      session: SessionRecord;
      qr: ShownQr | null;
    }
  | { type: "session.qr_updated"; session: SessionRecord; qr: ShownQr }
  | { type: "session.pairing_code"; pairingCode: string; phoneNumber: string; at: number }
  | { type: "session.deleted"; id: string };

/** The frames' JSON shapes (see the module comment). */
export type LiveFrame =
  | {
      type: "session.snapshot" | "session.status_changed" | "session.qr_updated" | "session.health_changed";
      session: SessionRecord | PublicSession;
      qr_code?: string;
      expires_at?: string | null;
    }
  | { type: "session.pairing_code"; pairing_code: string; phone_number: string; issued_at: string }
  | { type: "session.deleted"; id: string };

const AUDIENCES: Audience[] = ["account", "link"];

/**
 * Renders `change` as the frame `audience` receives. `qrCode` renders a QR payload as its PNG
 * data URI (memoised by {@link LiveWatchers.broadcast}, so both audiences share one rendering).
 */
export function renderFrame(
  change: LiveChange,
  audience: Audience,
  qrCode: (payload: string) => string = qrPngDataUri,
): LiveFrame {
  switch (change.type) {
    case "session.pairing_code":
      return {
        type: change.type,
        pairing_code: change.pairingCode,
        phone_number: change.phoneNumber,
        issued_at: formatTimestamp(change.at),
      };
    case "session.deleted":
      return { type: change.type, id: change.id };
    default: {
      const session = audience === "account" ? change.session : toPublicSession(change.session);
      if (!change.qr) return { type: change.type, session };
      return {
        type: change.type,
        session,
        qr_code: qrCode(change.qr.payload),
        expires_at: formatNullableTimestamp(change.qr.expiresAt),
      };
    }
  }
}

/**
 * The sockets watching one session, through its object's hibernation API. `lapsed` tells which
 * credentials stopped working (D1's view, live-credentials.ts `lapsedInD1`).
 */
export class LiveWatchers {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly lapsed: LapseCheck,
  ) {}

  /**
   * Accepts a new watcher opened with `credential` (hibernatable, tagged with its audience and
   * its credential, which it also keeps as its attachment), sends it `first` and returns the
   * client end for the 101 response.
   */
  watch(credential: LiveCredential, first: LiveChange): WebSocket {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    const audience = audienceOf(credential);
    this.ctx.acceptWebSocket(server, [audience, credentialTag(credential)]);
    server.serializeAttachment(credential);
    server.send(JSON.stringify(renderFrame(first, audience)));
    return client;
  }

  /**
   * Answers a watcher's upgrade: 101 with the client end of a socket opened with `credential`
   * whose first frame is `snapshot` (see {@link watch}), or 404 when there is no snapshot (the
   * object holds no session).
   */
  open(credential: LiveCredential, snapshot: LiveChange | null): Response {
    if (!snapshot) return new Response("No such session.", { status: 404 });
    return new Response(null, { status: 101, webSocket: this.watch(credential, snapshot) });
  }

  /** Whether any socket watches the session (frames are rendered only then). */
  get watched(): boolean {
    return this.ctx.getWebSockets().length > 0;
  }

  /**
   * Sends `change` to every watcher whose credential is still live, rendered once per audience.
   * First closes the others ({@link screen}), so that no frame reaches a socket whose credential
   * was revoked or expired, even when the revoke's call to this object or the expiry's alarm has
   * not come. A socket that fails is skipped.
   */
  async broadcast(change: LiveChange): Promise<void> {
    if (!this.watched) return;
    await this.screen(Date.now());
    this.send(change);
  }

  /**
   * Tells watchers of a committed change of the session, now `session` and showing `qr`: every
   * status move (`session.status_changed`), a change of its health (`session.health_changed`,
   * without the QR), and a QR rotation while a QR is shown (`session.qr_updated`).
   */
  async announce(type: SessionEventType, session: SessionRecord, qr: ShownQr | null): Promise<void> {
    if (type === "session.status_changed") await this.broadcast({ type, session, qr });
    else if (type === "session.health_changed") await this.broadcast({ type, session, qr: null });
    else if (qr) await this.broadcast({ type, session, qr });
  }

  /** Sends `last` to every watcher, then closes them all with `code` and `reason`. */
  closeAll(last: LiveChange, code: number, reason: string): void {
    this.send(last);
    this.close(undefined, code, reason);
  }

  /** Closes the sockets of `audience` (every socket when undefined) with `code` and `reason`. */
  close(audience: Audience | undefined, code: number, reason: string): void {
    for (const socket of this.ctx.getWebSockets(audience)) closeSocket(socket, code, reason);
  }

  /**
   * Closes the sockets opened with the credential tagged `tag` (live-credentials.ts
   * `credentialTag`) because it lapsed: with `expired`, only those whose credential expired by
   * `at` (epoch ms). @returns how many were closed.
   */
  closeLapsed(tag: string, lapse: Lapse, at = Date.now()): number {
    let closed = 0;
    for (const socket of this.ctx.getWebSockets(tag)) {
      const credential = parseCredential(socket.deserializeAttachment());
      if (!credential) continue;
      if (lapse === "expired" && (credential.expiresAt === null || credential.expiresAt > at)) continue;
      const { code, reason } = lapseClose(credential.kind, lapse);
      closeSocket(socket, code, reason);
      closed += 1;
    }
    return closed;
  }

  /**
   * Closes every socket whose credential lapsed by `now` (epoch ms): expired by its own
   * `expiresAt`, or revoked or expired as D1 records it. When D1 cannot be read, only the
   * expiries are applied and the error is logged (`live_check_failed`): the revoke's own call
   * to this object is the first line, this check the second.
   */
  async screen(now: number): Promise<void> {
    const credentials = new Map<string, LiveCredential>();
    for (const socket of this.ctx.getWebSockets()) {
      const credential = parseCredential(socket.deserializeAttachment());
      if (credential) credentials.set(credentialTag(credential), credential);
    }
    for (const [tag, credential] of credentials) {
      if (credential.expiresAt !== null && credential.expiresAt <= now) {
        this.closeLapsed(tag, "expired", now);
        credentials.delete(tag);
      }
    }
    if (credentials.size === 0) return;
    let lapsed: Map<string, Lapse>;
    try {
      lapsed = await this.lapsed([...credentials.values()], now);
    } catch (error) {
      log.error("live_check_failed", { error });
      return;
    }
    for (const [tag, lapse] of lapsed) this.closeLapsed(tag, lapse, now);
  }

  /** Sends `change` to every watcher, rendered once per audience. A socket that fails is skipped. */
  private send(change: LiveChange): void {
    const rendered = new Map<string, string>();
    const qrCode = (payload: string) => {
      const uri = rendered.get(payload) ?? qrPngDataUri(payload);
      rendered.set(payload, uri);
      return uri;
    };
    for (const audience of AUDIENCES) {
      const sockets = this.ctx.getWebSockets(audience);
      if (sockets.length === 0) continue;
      const frame = JSON.stringify(renderFrame(change, audience, qrCode));
      for (const socket of sockets) {
        try {
          socket.send(frame);
        } catch {
          // Closing or closed: its webSocketClose handler finishes it.
        }
      }
    }
  }
}

function closeSocket(socket: WebSocket, code: number, reason: string): void {
  try {
    socket.close(code, reason);
  } catch {
    // Already closed.
  }
}

/**
 * Completes a close the peer started: the hibernation API does not answer a Close frame by
 * itself, so the object echoes the peer's code (a reserved one, which may not be sent, becomes
 * 1000; RFC 6455 §7.4.1). Closing a closed socket is a no-op.
 */
export function answerClose(ws: WebSocket, code: number, reason: string): void {
  const sendable = code === 1005 || code === 1006 || code === 1015 ? 1000 : code;
  try {
    ws.close(sendable, reason);
  } catch {
    // Already closed.
  }
}
