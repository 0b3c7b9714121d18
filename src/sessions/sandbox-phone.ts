import { SandboxGateway, sandboxPhoneNumber } from "../gateways/sandbox";
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
