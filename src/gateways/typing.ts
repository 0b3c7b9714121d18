import type { TypingOutcome } from "./gateway";

/**
 * Runs a typing call: `shown` when it resolves, else not shown with the failure's message as
 * `reason` (ChatGateway `typing` never throws).
 */
export async function typingCall(call: () => Promise<unknown>): Promise<TypingOutcome> {
  try {
    await call();
    return { shown: true };
  } catch (error) {
    return { shown: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
