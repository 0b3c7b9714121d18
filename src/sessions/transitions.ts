import type { ErrorCode } from "../errors";
import type { LinkState, StatusEvent } from "../gateways/gateway";
import type { SessionStatus } from "./session-record";

/**
 * The session's status machine: every move of a session's status is decided here, by
 * {@link next}, and applied by the session object in one place (session-moves.ts `SessionMoves.apply`).
 *
 * Sources: README, Sessions, steps 2–5, docs/sessions.md, Creating, listing and linking, and the
 * session operations of openapi.json (create →
 * `pending` with a QR; a scan of a valid QR while `pending` → `connected`; disconnect only from
 * `connected`, keeping the session; the QR only while `pending`). The rest (moves into `banned` and
 * `failed`, the state after a reconnect) is this API's own and follows what the gateway reports:
 * WAHA's session statuses (`SCAN_QR_CODE`, `WORKING`, `FAILED`, `STOPPED`;
 * https://waha.devlike.pro/docs/how-to/sessions/) and Evolution API's connection states (`open`,
 * `close`, `refused`; https://doc.evolution-api.com/v2), normalised by src/gateways/waha/ and
 * src/gateways/evolution/ to the {@link StatusEvent}s of gateways/gateway.ts.
 */

/**
 * Which states each command may start from, and the 409 code answered otherwise.
 *
 * - `scan`: pending → connected. The QR is valid only while pending (docs/errors.md, Errors:
 *   `session_not_pending`).
 * - `disconnect`: connected → disconnected; the link is kept (README, Sessions, step 4).
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

/** A command a caller may be refused (409) by the session's status: see {@link TRANSITIONS}. */
export type SessionCommand = keyof typeof TRANSITIONS;

/** The 409 codes a command can be refused with. */
export type SessionConflict = (typeof TRANSITIONS)[SessionCommand]["conflict"];

/**
 * The conflict code when `command` is not allowed from `status`, else null. A command whose
 * effect needs a gateway call first (disconnect, reconnect, a pairing code, a sandbox scan) asks
 * this before the call; {@link next} answers the same conflict afterwards.
 */
export function conflictOf(command: SessionCommand, status: SessionStatus): SessionConflict | null {
  const rule = TRANSITIONS[command];
  return (rule.from as readonly SessionStatus[]).includes(status) ? null : rule.conflict;
}

/**
 * What a transition reads of the session: its status and reason, the linked phone (E.164, null
 * while none is linked) and the QR payload shown (null but while `pending`). The session
 * object's stored row has this shape.
 */
export interface SessionState {
  status: SessionStatus;
  reason: string | null;
  phone_number: string | null;
  qr: string | null;
}

/** A gateway status event as a transition reads it: without `at`, which orders events before. */
export type StatusEventInput = StatusEvent extends infer E
  ? E extends StatusEvent
    ? Omit<E, "at">
    : never
  : never;

/**
 * What may move a session: a gateway status event (its webhook, or its answer to a check), or
 * one of these commands and deadlines:
 *
 * - `disconnect`: the user's PATCH disconnect, after the gateway closed the connection;
 * - `reconnect`: the user's PATCH reconnect, with the gateway's answer to starting the session;
 * - `scan`: the sandbox phone linked `phoneNumber` (E.164) by a QR scan or a pairing code;
 * - `drop`, `ban`: the sandbox network dropped the connection or banned the account;
 * - `qr_timeout`: nobody scanned within `QR_TIMEOUT_SECONDS` of the QR being issued;
 * - `gateway_unreachable`: `UNREACHABLE_AFTER_FAILURES` checks in a row could not reach the
 *   gateway (see gateway-health.ts).
 */
export type SessionInput =
  | StatusEventInput
  | { type: "disconnect" }
  | { type: "reconnect"; link: LinkState }
  | { type: "scan"; phoneNumber: string; displayName: string }
  | { type: "drop"; reason: string; loggedOut: boolean }
  | { type: "ban"; reason: string }
  | { type: "qr_timeout" }
  | { type: "gateway_unreachable" };

/**
 * The state a session moves to, with what else changes:
 *
 * - `pending`: `qr` is the payload to show; the phone is cleared, the display name goes back to
 *   the gateway name, and the QR deadlines (rotation, timeout) start again;
 * - `connected`: the phone `phoneNumber` (E.164) is linked, with `displayName` (null: keep the
 *   current one); `last_seen_at` becomes now; the QR and its deadlines are cleared; gateway
 *   checks and waiting messages start;
 * - `disconnected`, `failed`, `banned`: with a reason; the QR and its deadlines are cleared, the
 *   phone is kept; `failPending` fails and refunds the messages still waiting in the outbox
 *   (reason `session_banned`), which only a ban does.
 */
export type SessionChange =
  | { status: "pending"; reason: null; qr: string }
  | { status: "connected"; reason: null; phoneNumber: string; displayName: string | null }
  | { status: "disconnected" | "failed" | "banned"; reason: string; failPending: boolean };

/**
 * What an input does to a session:
 *
 * - `move`: the session moves to `to` (written through to D1);
 * - `replace_qr`: a `pending` session only shows a new QR payload (not a change of the session:
 *   `updated_at` and D1 stay);
 * - `needs_qr`: a `qr` event without payload (WAHA's `SCAN_QR_CODE`): fetch the current QR with
 *   `ChatGateway.currentQr` and call again with it;
 * - `unchanged`: nothing changes (a repeated event, an event that does not apply, a banned session);
 * - `conflict`: the command is not allowed now; answer the 409 `code`.
 */
export type Transition =
  | { type: "move"; to: SessionChange }
  | { type: "replace_qr"; qr: string }
  | { type: "needs_qr" }
  | { type: "unchanged" }
  | { type: "conflict"; code: SessionConflict };

const UNCHANGED: Transition = { type: "unchanged" };

/**
 * The state a new session starts in once the gateway created it and answered `link`: `pending`
 * with the first QR (`POST /v1/chatapp/sessions` in openapi.json), or `connected` when the gateway
 * already holds a link to a phone.
 */
export function initial(link: LinkState): SessionChange {
  return link.status === "connected"
    ? { status: "connected", reason: null, phoneNumber: link.phoneNumber, displayName: link.displayName }
    : { status: "pending", reason: null, qr: link.qr };
}

/**
 * The transition `input` makes from `state`; pure (no clock, no I/O). Rules:
 *
 * - Commands are refused from the states {@link TRANSITIONS} does not list, with its 409 code.
 *   `disconnect` → disconnected (`disconnected_by_user`); `reconnect` → the state of the
 *   gateway's link (as at create); `scan`, `drop` and `ban` then act as the `linked`, `dropped`
 *   and `banned` events.
 * - `banned` is terminal but for delete: no event moves a banned session.
 * - A repeated event changes nothing: `linked` to the phone already connected, `failed` while
 *   failed.
 * - `linked` → connected from any other state (a phone linked at the gateway, whatever we thought).
 * - `qr` while pending only replaces the QR (when it differs); from any other state → pending.
 * - `dropped` applies to a connected or pending session, and to one disconnected with reason
 *   `gateway_unreachable`, which takes the gateway's reason now that it answers; a session the
 *   user disconnected keeps that reason, and a failed one stays failed.
 * - `failed` → failed; `banned` → banned, failing the messages still waiting.
 * - `qr_timeout` fails a pending session (`qr_timeout`); `gateway_unreachable` disconnects a
 *   connected one (`gateway_unreachable`). Both change nothing in any other state.
 */
export function next(state: SessionState, input: SessionInput): Transition {
  switch (input.type) {
    case "disconnect":
      return (
        refusal("disconnect", state) ??
        move({ status: "disconnected", reason: "disconnected_by_user", failPending: false })
      );
    case "reconnect":
      return refusal("reconnect", state) ?? move(initial(input.link));
    case "scan":
      return (
        refusal("scan", state) ??
        onEvent(state, { type: "linked", phoneNumber: input.phoneNumber, displayName: input.displayName })
      );
    case "drop":
      return (
        refusal("drop", state) ??
        onEvent(state, { type: "dropped", reason: input.reason, loggedOut: input.loggedOut })
      );
    case "ban":
      return refusal("ban", state) ?? onEvent(state, { type: "banned", reason: input.reason });
    case "qr_timeout":
      return state.status === "pending"
        ? move({ status: "failed", reason: "qr_timeout", failPending: false })
        : UNCHANGED;
    case "gateway_unreachable":
      return state.status === "connected"
        ? move({ status: "disconnected", reason: "gateway_unreachable", failPending: false })
        : UNCHANGED;
    default:
      return onEvent(state, input);
  }
}

/** What a gateway status event does (see {@link next}). */
function onEvent(state: SessionState, event: StatusEventInput): Transition {
  if (state.status === "banned") return UNCHANGED;
  switch (event.type) {
    case "linked":
      if (state.status === "connected" && state.phone_number === event.phoneNumber) return UNCHANGED;
      return move({
        status: "connected",
        reason: null,
        phoneNumber: event.phoneNumber,
        displayName: event.displayName,
      });
    case "qr":
      if (event.qr === null) return { type: "needs_qr" };
      if (state.status === "pending") {
        return event.qr === state.qr ? UNCHANGED : { type: "replace_qr", qr: event.qr };
      }
      return move({ status: "pending", reason: null, qr: event.qr });
    case "dropped": {
      const applies =
        state.status === "disconnected"
          ? state.reason === "gateway_unreachable"
          : state.status === "connected" || state.status === "pending";
      return applies ? move({ status: "disconnected", reason: event.reason, failPending: false }) : UNCHANGED;
    }
    case "failed":
      return state.status === "failed"
        ? UNCHANGED
        : move({ status: "failed", reason: event.reason, failPending: false });
    case "banned":
      return move({ status: "banned", reason: event.reason, failPending: true });
  }
}

function refusal(command: SessionCommand, state: SessionState): Transition | null {
  const code = conflictOf(command, state.status);
  return code ? { type: "conflict", code } : null;
}

function move(to: SessionChange): Transition {
  return { type: "move", to };
}
