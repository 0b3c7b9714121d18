import type { ChatGateway, HealthEvent, StatusEvent } from "../gateways/gateway";
import type { StoredHealth } from "../lib/session-health";
import type { Outbox } from "./outbox";
import type { KeptReceipts } from "./receipts";

/** The kinds of deadline the dispatcher sets in its host's alarm table. */
export type DispatchDeadlineKind = "dispatch" | "sync" | "expire" | "ack_delivered" | "ack_read";

/**
 * The host's alarm table as the dispatcher uses it (the session object's, src/sessions/deadlines.ts):
 * `schedule` sets the deadline `kind`/`ref` to `at` (epoch ms), `clear` drops every deadline of a
 * kind, `anyDue` tells whether one is due at `now`, and `rearm` sets the object's alarm to the
 * earliest.
 */
export interface DispatchDeadlines {
  schedule(kind: DispatchDeadlineKind, ref: string, at: number): void;
  clear(kind: DispatchDeadlineKind): void;
  anyDue(now: number): boolean;
  rearm(): Promise<void>;
}

/** What the dispatcher needs from the session object that hosts it. */
export interface DispatchHost {
  readonly outbox: Outbox;
  readonly receipts: KeptReceipts;
  readonly deadlines: DispatchDeadlines;
  /**
   * The session (its row `id`, `accountId`, status, gateway `sessionId`, linked number and the
   * network's limits on it, lib/session-health.ts), or null once it is gone.
   */
  session(): {
    id: string;
    accountId: string;
    status: string;
    sessionId: string;
    phoneNumber: string | null;
    health: StoredHealth | null;
  } | null;
  gateway(): ChatGateway;
  /** Runs `fn` when no other state change of the session is under way. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Runs the session's deadlines that are due (acks, QR, expiry). */
  runDueDeadlines(): Promise<unknown>;
  /**
   * Moves the session as `event` says (a send's `sessionEvent`: the gateway refused the session's
   * credentials; a `health` event, a send refused with 463, updates its health instead), through the session's one transition table, with its status event and what a
   * move brings (a failed session hands its campaign messages over). Called inside the chain of
   * changes ({@link exclusive}), from a send.
   */
  reported(event: StatusEvent | HealthEvent): Promise<void>;
}
