import { qrPngDataUri } from "../lib/qr-png";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";
import { type PublicSession, type SessionRecord, toPublicSession } from "./session-record";

/**
 * Live session events: the WebSockets watching one session, held by the session's object with
 * the WebSocket Hibernation API (https://developers.cloudflare.com/durable-objects/best-practices/websockets/),
 * so an idle watcher costs nothing and survives the object's eviction. Sockets are found through
 * `ctx.getWebSockets(audience)` every time, never kept in memory, so a frame after a wake-up
 * reaches every socket accepted before it.
 *
 * Frames are JSON text, one per change (README, "Live session events"):
 *
 * - `session.snapshot` `{ session, qr_code?, expires_at? }`: the first frame, the state now;
 * - `session.status_changed` `{ session, qr_code?, expires_at? }`: every status move;
 * - `session.qr_updated` `{ session, qr_code, expires_at }`: a pending session's QR rotated;
 * - `session.pairing_code` `{ pairing_code, phone_number, issued_at }`: a pairing code was issued;
 * - `session.deleted` `{ id }`: the last frame, then the socket closes with {@link CLOSE_SESSION_DELETED}.
 *
 * `session` is the Session exactly as `GET /v1/chatapp/sessions/{id}` shows it for sockets
 * authenticated with an API key, and the {@link PublicSession} for sockets opened with a link
 * token. `qr_code` is a PNG data URI (as the `session.qr_updated` event's data has it), present
 * while `pending`; `expires_at` is when the service shows the next QR (the next rotation).
 */

/** Who a socket was opened by; kept as the socket's hibernation tag. */
export type Audience = "account" | "link";

/** The header the Worker tells the object a socket's {@link Audience} with (internal only). */
export const AUDIENCE_HEADER = "X-Live-Audience";

/** Close code sent to every watcher of a deleted session (4000–4999 are for applications, RFC 6455 §7.4.2). */
export const CLOSE_SESSION_DELETED = 4404;
export const CLOSE_SESSION_DELETED_REASON = "session deleted";
/** Close code sent to link-token watchers when the session's link tokens are revoked. */
export const CLOSE_LINK_REVOKED = 4403;
export const CLOSE_LINK_REVOKED_REASON = "link revoked";

/** The QR a pending session shows: its payload and when the next one replaces it (epoch ms, null if unknown). */
export interface ShownQr {
  payload: string;
  expiresAt: number | null;
}

/** A change to tell watchers about, before it is rendered for an {@link Audience}. */
export type LiveChange =
  | { type: "session.snapshot" | "session.status_changed"; session: SessionRecord; qr: ShownQr | null }
  | { type: "session.qr_updated"; session: SessionRecord; qr: ShownQr }
  | { type: "session.pairing_code"; pairingCode: string; phoneNumber: string; at: number }
  | { type: "session.deleted"; id: string };

/** The frames' JSON shapes (see the module comment). */
export type LiveFrame =
  | {
      type: "session.snapshot" | "session.status_changed" | "session.qr_updated";
      session: SessionRecord | PublicSession;
      qr_code?: string;
      expires_at?: string | null;
    }
  | { type: "session.pairing_code"; pairing_code: string; phone_number: string; issued_at: string }
  | { type: "session.deleted"; id: string };

const AUDIENCES: Audience[] = ["account", "link"];

/**
 * The {@link Audience} of a live watcher's upgrade request, as the Worker's `/live` route set it
 * in {@link AUDIENCE_HEADER} (`account` unless it says `link`), or null when the request is not a
 * WebSocket upgrade (`Upgrade: websocket`), which is answered 426.
 */
export function upgradeAudience(request: Request): Audience | null {
  if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return null;
  return request.headers.get(AUDIENCE_HEADER) === "link" ? "link" : "account";
}

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

/** The sockets watching one session, through its object's hibernation API. */
export class LiveWatchers {
  constructor(private readonly ctx: DurableObjectState) {}

  /**
   * Accepts a new watcher for `audience` (hibernatable), sends it `first` and returns the client
   * end for the 101 response.
   */
  watch(audience: Audience, first: LiveChange): WebSocket {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server, [audience]);
    server.send(JSON.stringify(renderFrame(first, audience)));
    return client;
  }

  /**
   * Answers a watcher's upgrade: 101 with the client end of a socket for `audience` whose first
   * frame is `snapshot` (see {@link watch}), or 404 when there is no snapshot (the object holds no
   * session).
   */
  open(audience: Audience, snapshot: LiveChange | null): Response {
    if (!snapshot) return new Response("No such session.", { status: 404 });
    return new Response(null, { status: 101, webSocket: this.watch(audience, snapshot) });
  }

  /** Whether any socket watches the session (frames are rendered only then). */
  get watched(): boolean {
    return this.ctx.getWebSockets().length > 0;
  }

  /** Sends `change` to every watcher, rendered once per audience. A socket that fails is skipped. */
  broadcast(change: LiveChange): void {
    if (!this.watched) return;
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

  /**
   * Tells watchers of a committed change of the session, now `session` and showing `qr`: every
   * status move (`session.status_changed`), and a QR rotation while a QR is shown
   * (`session.qr_updated`).
   */
  announce(
    type: "session.status_changed" | "session.qr_updated",
    session: SessionRecord,
    qr: ShownQr | null,
  ): void {
    if (type === "session.status_changed") this.broadcast({ type, session, qr });
    else if (qr) this.broadcast({ type, session, qr });
  }

  /** Sends `last` to every watcher, then closes them all with `code` and `reason`. */
  closeAll(last: LiveChange, code: number, reason: string): void {
    this.broadcast(last);
    this.close(undefined, code, reason);
  }

  /** Closes the sockets of `audience` (every socket when undefined) with `code` and `reason`. */
  close(audience: Audience | undefined, code: number, reason: string): void {
    for (const socket of this.ctx.getWebSockets(audience)) {
      try {
        socket.close(code, reason);
      } catch {
        // Already closed.
      }
    }
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
