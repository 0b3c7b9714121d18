import type { ErrorCode } from "../errors";
import type { SessionStatus } from "./session-record";

/**
 * Which states each session command or gateway event may start from (interface document §3.1,
 * with the gaps decided in issue 2) and the 409 code answered otherwise.
 *
 * - `scan`: pending → connected. The QR is valid only while pending.
 * - `disconnect`: connected → disconnected; the link is kept.
 * - `reconnect`: disconnected or failed → connected (gateway still linked) or pending (new QR).
 * - `drop`: the network lost a connected session → disconnected, with a reason.
 * - `ban`: the network banned the linked account → banned (terminal but for delete).
 */
export const TRANSITIONS = {
  scan: { from: ["pending"], conflict: "session_not_pending" },
  disconnect: { from: ["connected"], conflict: "session_not_connected" },
  reconnect: { from: ["disconnected", "failed"], conflict: "session_not_disconnected" },
  drop: { from: ["connected"], conflict: "session_not_connected" },
  ban: { from: ["connected", "disconnected"], conflict: "session_not_linked" },
} as const satisfies Record<string, { from: readonly SessionStatus[]; conflict: ErrorCode }>;

export type SessionCommand = keyof typeof TRANSITIONS;

/** The conflict code when `command` is not allowed from `status`, else null. */
export function conflictOf(command: SessionCommand, status: SessionStatus): ErrorCode | null {
  const rule = TRANSITIONS[command];
  return (rule.from as readonly SessionStatus[]).includes(status) ? null : rule.conflict;
}
