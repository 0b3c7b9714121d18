import { sandboxReceiptTimes } from "../delivery/dispatcher";
import { SandboxGateway, sandboxPhoneNumber } from "../gateways/sandbox";
import type { Deadlines } from "./deadlines";
import { fail, ok, type SessionResult } from "./result";
import type { StoredSession } from "./session-store";
import type { SessionInput } from "./transitions";

/**
 * The sandbox's stand-ins for a phone and for the chat network (the `/sandbox` routes and the
 * pairing page): each acts on the sandbox gateway kept in the session object's storage and
 * answers the input the session's transition then applies (transitions.ts `next`). The session
 * object checks the command against the status (`conflictOf`) before calling them.
 */

/**
 * The sandbox gateway of the session `state` in the object whose storage is `sql`, or null when
 * the object holds no session or the session is on another gateway.
 */
export function sandboxOf(sql: SqlStorage, state: StoredSession | null): SandboxGateway | null {
  if (state?.gateway !== "sandbox") return null;
  return new SandboxGateway(sql, state.origin, state.id);
}

/** What a sandbox scan names: the phone (E.164), its display name, and the QR token or pairing code. */
export interface ScanRequest {
  phoneNumber?: string;
  displayName?: string;
  /** The token of the pairing URL scanned; absent for the script-facing scan endpoint. */
  token?: string;
  /** A code from `requestPairingCode`, entered on the phone instead of a scan. */
  pairingCode?: string;
}

/**
 * A phone scans the QR of session `sessionUuid`, or enters its pairing code, and the sandbox
 * links it. With `token`, it must be the token of the QR shown now (the pairing page), else
 * `not_found`; with `pairingCode`, the code last issued (the phone is then the one it was issued
 * for), else `pairing_code_invalid`. Without either, whatever QR is shown is linked. The phone
 * defaults to the session's stand-in number ({@link sandboxPhoneNumber}), the display name to
 * `Sandbox <phone>`.
 */
export function phoneScans(
  sandbox: SandboxGateway,
  sessionUuid: string,
  request: ScanRequest,
): SessionResult<Extract<SessionInput, { type: "scan" }>> {
  if (request.token !== undefined && !sandbox.acceptsToken(request.token)) {
    return fail("not_found", "This QR code has expired; scan the current one.");
  }
  let phoneNumber = request.phoneNumber ?? sandboxPhoneNumber(sessionUuid);
  if (request.pairingCode !== undefined) {
    const paired = sandbox.phoneOfPairingCode(request.pairingCode);
    if (!paired) return fail("pairing_code_invalid", "This is not the pairing code last issued.");
    phoneNumber = paired;
  }
  const displayName = request.displayName ?? `Sandbox ${phoneNumber}`;
  sandbox.link(phoneNumber, displayName);
  return ok({ type: "scan", phoneNumber, displayName });
}

/** The network drops the connection; `loggedOut` when the phone also removed the link. */
export function networkDrops(
  sandbox: SandboxGateway,
  request: { reason: string; loggedOut: boolean },
): Extract<SessionInput, { type: "drop" }> {
  if (request.loggedOut) sandbox.unlink();
  return { type: "drop", reason: request.reason, loggedOut: request.loggedOut };
}

/** The network bans the linked account, which also removes the link. */
export function networkBans(
  sandbox: SandboxGateway,
  request: { reason: string },
): Extract<SessionInput, { type: "ban" }> {
  sandbox.unlink();
  return { type: "ban", reason: request.reason };
}

/** The sandbox phone's state as `/sandbox/sessions/{id}/phone` shows it. */
export interface PhoneState {
  /** False while the phone is offline: messages sent stay `sent`, their acks held. */
  online: boolean;
}

/**
 * The phone goes offline (`online` false) or back online (true); `undefined` only reads the state.
 * Offline, every sandbox ack that falls due is held instead of applied (SessionDispatchHost
 * `runDueDeadlines`), so messages sent before or meanwhile stay at `sent` (or `delivered`).
 * Back online, every message with a held ack is acked as if the phone had received it at that
 * moment: `delivered` after `SANDBOX_DELIVERED_MS` and `read` after `SANDBOX_READ_MS`, on the
 * receipt grid ({@link sandboxReceiptTimes}); a `delivered` ack for a message already delivered
 * changes nothing. Acks not yet due when the phone comes back keep their times.
 * Call `deadlines.rearm()` after.
 */
export function phoneSetsOnline(
  sandbox: SandboxGateway,
  online: boolean | undefined,
  deadlines: Deadlines,
  env: Env,
): PhoneState {
  if (online === undefined) return { online: sandbox.phoneOnline() };
  sandbox.setPhoneOnline(online);
  if (online) {
    const times = sandboxReceiptTimes(env, Date.now());
    for (const id of sandbox.releaseHeldAcks()) {
      deadlines.schedule("ack_delivered", id, times.delivered);
      deadlines.schedule("ack_read", id, times.read);
    }
  }
  return { online };
}
