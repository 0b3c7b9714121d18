import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { call, type SessionRecord, waitFor } from "./helpers";

/** A live frame as the socket receives it (src/sessions/live.ts). */
export interface Frame {
  type: string;
  session?: SessionRecord & Record<string, unknown>;
  qr_code?: string;
  expires_at?: string | null;
  pairing_code?: string;
  phone_number?: string;
  issued_at?: string;
  id?: string;
  /** A frame that is not JSON (the `pong` auto-response), as `{ type: "text", text }`. */
  text?: string;
}

/** Upgrades `/v1/chatapp/sessions/{id}/live` with the key or `?token=`; returns the raw response. */
export function openLive(
  id: string,
  auth: { key?: string; token?: string },
  upgrade = true,
): Promise<Response> {
  const headers: Record<string, string> = upgrade ? { Upgrade: "websocket" } : {};
  if (auth.key) headers.Authorization = `Bearer ${auth.key}`;
  const query = auth.token === undefined ? "" : `?token=${encodeURIComponent(auth.token)}`;
  return exports.default.fetch(
    new Request(`http://localhost/v1/chatapp/sessions/${id}/live${query}`, { headers }),
  );
}

/**
 * The client end of a live socket: collects frames and the close, and waits for them with a
 * deadline (frames are sent by the object as it commits, so a test awaits them, never sleeps).
 */
export class Watcher {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | null = null;
  private read = 0;

  private constructor(readonly socket: WebSocket) {
    socket.addEventListener("message", (event) => {
      const data = String(event.data);
      try {
        this.frames.push(JSON.parse(data) as Frame);
      } catch {
        this.frames.push({ type: "text", text: data });
      }
    });
    socket.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
    });
    socket.accept();
  }

  /** Opens a socket (asserting 101) for session `id`. */
  static async open(id: string, auth: { key?: string; token?: string }): Promise<Watcher> {
    const res = await openLive(id, auth);
    expect(res.status).toBe(101);
    expect(res.webSocket).not.toBeNull();
    return new Watcher(res.webSocket as WebSocket);
  }

  /** The next frame not read yet (waits up to 5 s). */
  async next(): Promise<Frame> {
    await this.until(() => this.frames.length > this.read, "a frame");
    return this.frames[this.read++] as Frame;
  }

  /** The close code and reason (waits up to 5 s). */
  async close(): Promise<{ code: number; reason: string }> {
    await this.until(() => this.closed !== null, "the close");
    return this.closed as { code: number; reason: string };
  }

  /** Frames received and not read. */
  get unread(): Frame[] {
    return this.frames.slice(this.read);
  }

  private async until(done: () => boolean, what: string): Promise<void> {
    await waitFor(done, { reason: `${what} on the live socket`, timeoutMs: 5_000, intervalMs: 5 });
  }
}

/** POST /v1/chatapp/sessions/{id}/link-url; returns the token and the response body (asserts 201). */
export async function linkUrl(
  key: string,
  id: string,
  body?: Record<string, unknown>,
): Promise<{
  token: string;
  url: string;
  expires_at: string;
  return_url: string | null;
  created_at: string;
}> {
  const res = await call<{ url: string; expires_at: string; return_url: string | null; created_at: string }>(
    "POST",
    `/v1/chatapp/sessions/${id}/link-url`,
    { key, body },
  );
  expect(res.status).toBe(201);
  const token = res.body.url.split("/link/")[1] ?? "";
  return { token, ...res.body };
}

/** GET /v1/chatapp/sessions/{id}/qr-code: the QR code data URI served now. */
export async function servedQr(key: string, id: string): Promise<string> {
  return (await call<{ qr_code: string }>("GET", `/v1/chatapp/sessions/${id}/qr-code`, { key })).body.qr_code;
}
