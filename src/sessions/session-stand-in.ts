import type { NetworkStandIn, OwnReceipts, ReceivedMessage, ScanRequest } from "../gateways/gateway";
import { capabilitiesOf } from "../lib/gateway-kinds";
import type { StoredHealth } from "../lib/session-health";
import { fail, ok, type SessionResult } from "./result";
import type { SessionCore } from "./session-core";
import type { SessionMoves } from "./session-moves";
import type { SessionRecord } from "./session-record";
import type { SessionInput } from "./transitions";

/**
 * What the network or a phone does to a session whose gateway plays them (lib/gateway-kinds.ts
 * `simulatesNetwork`, `ChatGateway.standIn`; the sandbox's `/sandbox` routes and pairing page):
 * - `scan`: a phone scans the QR shown (with `token`, it must be the token of the QR shown now)
 *   or enters the pairing code (see `NetworkStandIn.scan`);
 * - `drop`: the network drops the connection; `loggedOut` when the phone also removed the link;
 * - `ban`: the network bans the linked account, which also removes the link;
 * - `health`: the network sets the session's health to `health` (every field: a null clears
 *   it), as a real gateway's reading would (docs/sessions.md, Session health).
 */
export type StandInEvent =
  | ({ type: "scan" } & ScanRequest)
  | { type: "drop"; reason: string; loggedOut: boolean }
  | { type: "ban"; reason: string }
  | { type: "health"; health: StoredHealth };

/** The stand-in phone's state as `/sandbox/sessions/{id}/phone` shows it. */
export interface PhoneState {
  /** False while the phone is offline: messages sent stay `sent`, their acks held. */
  online: boolean;
}

/**
 * The session's side of a gateway that plays the network and the phones (see {@link StandInEvent}):
 * each event acts on the gateway's stand-in and moves the session as the input it answers
 * (transitions.ts `next`), checked against the status first (`SessionMoves.guard`). A session
 * whose gateway plays nothing is `not_found` to all of them.
 *
 * These are the bodies of the `ChatSession` RPC methods of the same names.
 */
export class SessionStandIn {
  constructor(
    private readonly core: SessionCore,
    private readonly moves: SessionMoves,
  ) {}

  /** Plays `event` (see {@link StandInEvent}) and answers the session as it then is. */
  async play(event: StandInEvent): Promise<SessionResult<SessionRecord>> {
    const standIn = this.standIn();
    if (!standIn) return fail("not_found", "No such session.");
    if (event.type === "health") {
      const { timelock, cap, quality, checkedAt } = event.health;
      return ok(await this.moves.applyHealth({ timelock, cap, quality }, checkedAt ?? Date.now()));
    }
    const guard = this.moves.guard(event.type);
    if (guard) return guard;
    let input: SessionInput;
    if (event.type === "scan") {
      const scan = standIn.scan(event);
      if (!scan.linked) return fail(scan.code, scan.detail);
      input = { type: "scan", phoneNumber: scan.phoneNumber, displayName: scan.displayName };
    } else if (event.type === "drop") {
      if (event.loggedOut) standIn.unlink();
      input = { type: "drop", reason: event.reason, loggedOut: event.loggedOut };
    } else {
      standIn.unlink();
      input = { type: "ban", reason: event.reason };
    }
    return this.moves.command(input);
  }

  /** What the phone of `toNumber` received from this session, newest first. */
  received(toNumber: string): SessionResult<ReceivedMessage[]> {
    const standIn = this.standIn();
    if (!standIn) return fail("not_found", "No such session.");
    return ok(standIn.receivedBy(toNumber));
  }

  /**
   * The phone goes offline (`online` false) or back online (true); `undefined` only reads the
   * state. Any session status will do. Offline, every receipt that falls due is held instead of
   * applied (`OwnReceipts.hold`, SessionDispatchHost `runDueDeadlines`), so messages sent before
   * or meanwhile stay at `sent` (or `delivered`). Back online, every message with a held receipt
   * is acked as if the phone had received it at that moment (`OwnReceipts.timesFor`); a
   * `delivered` ack for a message already delivered changes nothing. Receipts not yet due when
   * the phone comes back keep their times.
   */
  async phone(online: boolean | undefined): Promise<SessionResult<PhoneState>> {
    const standIn = this.standIn();
    if (!standIn) return fail("not_found", "No such session.");
    if (online === undefined) return ok({ online: standIn.phoneOnline() });
    const held = standIn.setPhoneOnline(online);
    const receipts: OwnReceipts | undefined = this.core.gateway().ownReceipts;
    if (online && receipts) {
      const times = receipts.timesFor(Date.now());
      for (const id of held) {
        this.core.deadlines.schedule("ack_delivered", id, times.delivered);
        this.core.deadlines.schedule("ack_read", id, times.read);
      }
      await this.core.deadlines.rearm();
    }
    return ok({ online });
  }

  /** The stand-in of this object's session, or null when it holds none or its gateway plays nothing. */
  private standIn(): NetworkStandIn | null {
    const state = this.core.state();
    if (!state || !capabilitiesOf(state.gateway).simulatesNetwork) return null;
    return this.core.gateway().standIn ?? null;
  }
}
