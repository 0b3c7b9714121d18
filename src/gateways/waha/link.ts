import { z } from "zod";
import type { GatewaySettings } from "../../config";
import { GatewayError, type GatewayEvent, type LinkState } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { digitsOf } from "../jid";
import { accountOf, Me, SessionStatus, statusEvent } from "./session";

/*
 * A WAHA session's lifecycle: create (with its webhook), start, QR and pairing code, stop, logout
 * and delete, and reading its status. Sections quoted are of WAHA's docs,
 * https://waha.devlike.pro/docs/how-to/sessions/ unless named otherwise. The session name is our
 * session id (`session_<uuid>`).
 */

/** `GET /api/sessions/{session}` ("Sessions → Get Session"). */
const SessionInfo = z.looseObject({ status: SessionStatus, me: Me.nullish() });

/** `GET /api/{session}/auth/qr?format=raw` → `{ value }` ("Sessions → Get QR → Raw"). */
const QrValue = z.looseObject({ value: z.string().min(1) });

/** `POST /api/{session}/auth/request-code` → `{ code: "ABCD-ABCD" }` ("Sessions → Get pairing code"). */
const PairingCode = z.looseObject({ code: z.string().min(1) });

/**
 * Events the session's webhook subscribes to (parsed by events.ts): WAHA posts a webhook the events
 * its `events` lists ("Events → Session webhooks"), so contacts' edits and deletes, and their votes
 * on polls (`poll.vote`), are listed too.
 */
const WEBHOOK_EVENTS = [
  "session.status",
  "message",
  "message.ack",
  "message.reaction",
  "message.edited",
  "message.revoked",
  "poll.vote",
];

/** How long create/start wait for a session to leave STARTING: `polls` reads, `intervalMs` apart. */
export interface StartWait {
  intervalMs: number;
  polls: number;
}

/** About 6 s (15 reads, 400 ms apart): a session usually leaves STARTING within a second or two. */
export const DEFAULT_START_WAIT: StartWait = { intervalMs: 400, polls: 15 };

/** Where the session's webhook points (`<publicUrl>/gateway/waha/events`) and the key that signs it. */
export type WebhookTarget = Pick<Extract<GatewaySettings, { kind: "waha" }>, "publicUrl" | "hmacKey">;

/**
 * `POST /api/sessions` with `start: true` and a webhook to `<publicUrl>/gateway/waha/events`
 * signed with the HMAC key ("Sessions → Create Session", "Events → HMAC authentication") and
 * retried with exponential backoff from 2 s for up to 8 attempts, the last about 4 minutes after
 * the first ("Events → Retries"), so a short outage of ours loses no ack or status change. A 422
 * means the session already exists (an earlier create whose answer we lost; WAHA's
 * `SessionsController.create`), so it is started instead. Then waits as {@link waitForLink}.
 * @throws GatewayError as {@link waitForLink}, or for a failed call.
 */
export async function createSession(
  http: GatewayHttp,
  sessionId: string,
  target: WebhookTarget,
  wait: StartWait,
): Promise<LinkState> {
  const webhook = {
    url: `${target.publicUrl}/gateway/waha/events`,
    events: WEBHOOK_EVENTS,
    hmac: { key: target.hmacKey },
    retries: { policy: "exponential", delaySeconds: 2, attempts: 8 },
  };
  try {
    await gatewayRequest(http, {
      method: "POST",
      path: "/api/sessions",
      body: { name: sessionId, start: true, config: { webhooks: [webhook] } },
    });
  } catch (error) {
    if (!(error instanceof GatewayError && error.status === 422)) throw error;
    await requestStart(http, sessionId);
  }
  return waitForLink(http, sessionId, wait);
}

/**
 * `POST /api/sessions/{session}/start`, idempotent: a running session is left as it is ("Sessions
 * → Start Session"). Then waits as {@link createSession}.
 * @throws GatewayError as {@link waitForLink}, or for a failed call.
 */
export async function startSession(
  http: GatewayHttp,
  sessionId: string,
  wait: StartWait,
): Promise<LinkState> {
  await requestStart(http, sessionId);
  return waitForLink(http, sessionId, wait);
}

/**
 * The raw QR payload; WAHA answers 422 unless the session is SCAN_QR_CODE ("Sessions → Get QR").
 * @throws GatewayError for a failed call (the 422 included).
 */
export async function currentQr(http: GatewayHttp, sessionId: string): Promise<string> {
  const qr = await gatewayRequest(http, {
    method: "GET",
    path: `/api/${session(sessionId)}/auth/qr?format=raw`,
    schema: QrValue,
  });
  return qr.value;
}

/**
 * `POST /api/{session}/auth/request-code` with the E.164 number's digits; answers the code as
 * WAHA gives it (`ABCD-ABCD`) ("Sessions → Get pairing code").
 * @throws GatewayError for a failed call.
 */
export async function requestPairingCode(
  http: GatewayHttp,
  sessionId: string,
  phoneNumber: string,
): Promise<string> {
  const answer = await gatewayRequest(http, {
    method: "POST",
    path: `/api/${session(sessionId)}/auth/request-code`,
    body: { phoneNumber: digitsOf(phoneNumber) },
    schema: PairingCode,
  });
  return answer.code;
}

/**
 * `POST /api/sessions/{session}/stop`: closes the connection and keeps the link ("Sessions → Stop
 * Session"). A session WAHA does not know (404) has nothing to close.
 * @throws GatewayError for any other failure.
 */
export async function stopSession(http: GatewayHttp, sessionId: string): Promise<void> {
  await unlessMissing(
    gatewayRequest(http, { method: "POST", path: `/api/sessions/${session(sessionId)}/stop` }),
  );
}

/**
 * `POST /api/sessions/{session}/logout` (removes the linked device from the phone when WORKING),
 * then `DELETE /api/sessions/{session}` ("Sessions → Logout Session", "Delete Session"). A 404 from
 * either means the session is already gone.
 * @throws GatewayError for any other failure.
 */
export async function removeSession(http: GatewayHttp, sessionId: string): Promise<void> {
  const name = session(sessionId);
  await unlessMissing(gatewayRequest(http, { method: "POST", path: `/api/sessions/${name}/logout` }));
  await unlessMissing(gatewayRequest(http, { method: "DELETE", path: `/api/sessions/${name}` }));
}

/**
 * `GET /api/sessions/{session}` mapped as its `session.status` event would be
 * ({@link statusEvent}), `at` now (epoch ms); STARTING (or WORKING without an account yet) is
 * null. A session WAHA does not know (404, "Session not found") is dropped and logged out.
 * @throws GatewayError for any other failure.
 */
export async function checkSession(http: GatewayHttp, sessionId: string): Promise<GatewayEvent | null> {
  const at = Date.now();
  try {
    const info = await sessionInfo(http, sessionId);
    return statusEvent(info.status, info.me, at);
  } catch (error) {
    if (error instanceof GatewayError && error.status === 404) {
      return { type: "dropped", reason: "gateway_session_missing", loggedOut: true, at };
    }
    throw error;
  }
}

async function requestStart(http: GatewayHttp, sessionId: string): Promise<void> {
  await gatewayRequest(http, { method: "POST", path: `/api/sessions/${session(sessionId)}/start` });
}

function sessionInfo(http: GatewayHttp, sessionId: string): Promise<z.output<typeof SessionInfo>> {
  return gatewayRequest(http, {
    method: "GET",
    path: `/api/sessions/${session(sessionId)}`,
    schema: SessionInfo,
  });
}

/**
 * Reads the session until it leaves STARTING: SCAN_QR_CODE → pending with the current QR;
 * WORKING with its account (`me`) → connected.
 * @throws GatewayError transient `gateway_failed` when the session is FAILED, `gateway_timeout`
 *   when it is still starting after the last read.
 */
async function waitForLink(http: GatewayHttp, sessionId: string, wait: StartWait): Promise<LinkState> {
  for (let read = 1; ; read++) {
    const info = await sessionInfo(http, sessionId);
    if (info.status === "SCAN_QR_CODE") return { status: "pending", qr: await currentQr(http, sessionId) };
    if (info.status === "FAILED") {
      throw new GatewayError("gateway_failed", false, null, `session ${sessionId}`);
    }
    const account = info.status === "WORKING" ? accountOf(info.me) : null;
    if (account) return { status: "connected", ...account };
    if (read >= wait.polls) {
      throw new GatewayError("gateway_timeout", false, null, `session ${sessionId} is still ${info.status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, wait.intervalMs));
  }
}

/** The session name as a path segment. */
function session(sessionId: string): string {
  return encodeURIComponent(sessionId);
}

/** Awaits a call; a 404 (the session is unknown to WAHA) counts as done. */
async function unlessMissing(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof GatewayError && error.status === 404)) throw error;
  }
}
