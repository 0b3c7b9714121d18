import type { Message } from "./message-fixtures";

// The fault mix of the exactly-once tests on the faked gateways (test/waha, test/evolution): of
// every 20 messages, the first send of 4 is answered 500 (20%), of 2 hangs past the gateway's
// timeout (10%), and of 1 is stored, then its answer lost (5%); the rest go through. A message
// meets its fault once: what the session sends again goes through.

/** A fault of the mix; each fake's `SendFault` includes these. */
export type MixFault = "error" | "hang" | "lost";

/** Messages in the mix: 8 rounds of 20, so each fault's share is exact. */
export const MIX_SIZE = 160;

/** The fault the first send of message `i` meets, or null. */
export function mixFaultOf(i: number): MixFault | null {
  const slot = i % 20;
  if (slot < 4) return "error";
  if (slot < 6) return "hang";
  if (slot === 6) return "lost";
  return null;
}

/** A valid US number for message `i`, one per message (none ends in 0000, which the fakes do not know). */
export const mixNumber = (i: number) => `+1212${300 + i}4567`;

/**
 * The fakes' fault plan of the mix: the first send to each recipient (`recipientOf` reads its
 * digits from a send body) meets that recipient's fault; later sends meet none.
 */
export function firstSendPlan(
  recipientOf: (body: Record<string, unknown>) => string,
): (body: Record<string, unknown>) => MixFault | null {
  const faults = new Map(
    Array.from({ length: MIX_SIZE }, (_, i) => [mixNumber(i).slice(1), mixFaultOf(i)] as const),
  );
  const seen = new Set<string>();
  return (body) => {
    const recipient = recipientOf(body);
    if (seen.has(recipient)) return null;
    seen.add(recipient);
    return faults.get(recipient) ?? null;
  };
}

/** What a settled message shows of its sending: status, attempts, how it settled, each failed attempt. */
export interface Settled {
  status: string;
  attempts: number | undefined;
  settled_by: string | undefined;
  /** `outcome reason` of each attempt that did not end in `sent`, the reason without its detail. */
  attempts_failed: string[];
}

/** {@link Settled} of message `message`. */
export function settledOf(message: Message): Settled {
  return {
    status: message.status,
    attempts: message.metadata.attempts,
    settled_by: message.metadata.settled_by,
    attempts_failed: (message.metadata.send_attempts ?? []).map(
      (attempt) => `${attempt.outcome} ${attempt.reason.split(":")[0]}`,
    ),
  };
}

/** The reason of a send's failure by fault: a 500, a timeout, a dropped connection. */
const REASONS: Record<MixFault, string> = {
  error: "gateway_http_500",
  hang: "gateway_timeout",
  lost: "gateway_unreachable",
};

/**
 * What a message meeting `fault` must come to: a 500 or a hang is unknown, asked about, absent,
 * and sent again (2 attempts); a lost answer is unknown and found by the lookup (1 attempt); the
 * rest are sent at once. The first attempt's reason is the HTTP client's (src/gateways/http.ts).
 */
export function expectedOf(fault: MixFault | null): Settled {
  if (fault === null) return { status: "sent", attempts: 1, settled_by: "answer", attempts_failed: [] };
  if (fault === "lost") {
    return {
      status: "sent",
      attempts: 1,
      settled_by: "lookup",
      attempts_failed: [`unknown ${REASONS.lost}`],
    };
  }
  return {
    status: "sent",
    attempts: 2,
    settled_by: "answer",
    attempts_failed: [`unknown ${REASONS[fault]}`, "absent absent"],
  };
}
