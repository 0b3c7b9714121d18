/**
 * The boundary between a session's Durable Object and the chat network. One implementation per
 * gateway: the embedded sandbox (default), WAHA and Evolution API. The session object is the only
 * caller, and it calls one session's methods one at a time.
 *
 * The operations map onto the real gateways' session APIs:
 * - `start`: WAHA `POST /api/sessions/{session}/start`, Evolution `GET /instance/connect/{instance}`;
 * - `currentQr`: WAHA `GET /api/{session}/auth/qr?format=raw`, Evolution `GET /instance/connect/{instance}`;
 * - `disconnect`: WAHA `POST /api/sessions/{session}/stop` (the link is kept);
 * - `remove`: WAHA `POST /api/sessions/{session}/logout` then `DELETE /api/sessions/{session}`,
 *   Evolution `DELETE /instance/logout/{instance}` then `DELETE /instance/delete/{instance}`;
 * - `send`: WAHA `POST /api/sendText` / `sendImage` / `sendVideo` / `sendVoice` / `sendFile`,
 *   Evolution `POST /message/sendText/{instance}` and `/message/sendMedia/{instance}`.
 */
export interface ChatGateway {
  /** Name shown in logs and in message metadata. */
  readonly name: string;
  /**
   * Starts (or restarts) the connection of `sessionId` (the `session_<id>` name). Answers
   * `connected` when the gateway still holds a link to a phone, otherwise `pending` with the
   * payload of a QR code to scan.
   */
  start(sessionId: string): Promise<LinkState>;
  /** A fresh QR payload for a pending session (gateways rotate them every ~20 s). */
  currentQr(sessionId: string): Promise<string>;
  /** Closes the connection but keeps the link, so a later `start` reconnects without a QR. */
  disconnect(sessionId: string): Promise<void>;
  /** Unlinks the phone and forgets the session. Idempotent. */
  remove(sessionId: string): Promise<void>;
  /**
   * Hands one message to the chat network. Resolves with the gateway's message id once the
   * gateway accepted it, or with a failure that says whether retrying can help. Sending the same
   * `message.id` again after an interrupted call must not reach the recipient twice where the
   * gateway can prevent it (the sandbox derives its id from ours).
   */
  send(sessionId: string, message: OutboundMessage): Promise<SendOutcome>;
}

/** A message as the gateway needs it. `to` is E.164; `mediaUrl` is an https URL. */
export interface OutboundMessage {
  id: string;
  to: string;
  type: "text" | "image" | "video" | "audio" | "document";
  content: string | null;
  mediaUrl: string | null;
}

/**
 * What a send attempt came to. `permanent` failures (an unknown recipient, a rejected payload)
 * fail the message at once; the others are retried with exponential backoff.
 */
export type SendOutcome =
  | { ok: true; providerMessageId: string }
  | { ok: false; permanent: boolean; reason: string };

/** Delivery receipts the chat network reports for a sent message (WAHA `message.ack`). */
export type AckKind = "delivered" | "read";

/** The link as the gateway reports it. */
export type LinkState =
  | { status: "pending"; qr: string }
  | { status: "connected"; phoneNumber: string; displayName: string | null };

/**
 * Something the chat network tells a session: the phone linked, the link dropped, the account was
 * banned. Real gateways deliver these as webhooks; the sandbox produces them itself.
 */
export type GatewayEvent =
  | { type: "linked"; phoneNumber: string; displayName: string | null }
  | { type: "dropped"; reason: string; loggedOut: boolean }
  | { type: "banned"; reason: string };
