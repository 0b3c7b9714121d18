import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { sessionStub, waitFor } from "./helpers";
import { driveAlarmUntil, getMessage, type Message, sessionStorage } from "./message-fixtures";

// Shared steps of the typing tests (docs/messages.md, Typing before a send), one file per gateway.

/** A message with its `metadata.typing` (moves/message.ts `SentTyping`, as the API shows it). */
export type Typed = Message & {
  metadata: Message["metadata"] & {
    typing?: { ms: number; started_at: string; shown: boolean; reason?: string };
  };
};

/**
 * Waits until session `sessionId`'s object began message `messageId`'s typing and its call
 * answered (the outbox's `typing` set), at most 20 s. @returns when it began (epoch ms).
 */
export async function typingStarted(sessionId: string, messageId: string): Promise<number> {
  return waitFor(
    () =>
      runInDurableObject(sessionStub(sessionId), (_instance, state) => {
        const sql = state.storage.sql;
        if (sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'outbox'").toArray().length === 0)
          return undefined;
        const row = sql
          .exec<{ typing_at: number | null; typing: string | null }>(
            "SELECT typing_at, typing FROM outbox WHERE id = ?",
            messageId,
          )
          .toArray()[0];
        return row?.typing ? (row.typing_at ?? undefined) : undefined;
      }),
    {
      reason: "the typing to start (the outbound queue hands the message over first)",
      timeoutMs: 20_000,
      intervalMs: 20,
    },
  );
}

/**
 * The typing of message `messageId` began: the send waits for it on the session's alarm, set for
 * the typing's end (`ms` after its start), and the message is still queued. Then the alarm is
 * driven (it runs at the time it was armed for: nothing sleeps the typing out) until the message
 * left `queued`. @returns the message and when its typing began (epoch ms).
 */
export async function typeThenSend(
  key: string,
  sessionId: string,
  messageId: string,
  ms: number,
): Promise<{ message: Typed; startedAt: number }> {
  const startedAt = await typingStarted(sessionId, messageId);
  const { deadlines } = await sessionStorage(sessionId);
  expect(deadlines).toContainEqual({ kind: "dispatch", ref: "", due_at: startedAt + ms });
  expect((await getMessage(key, messageId)).status).toBe("queued");
  await driveAlarmUntil(sessionId, async () => (await getMessage(key, messageId)).status !== "queued");
  return { message: (await getMessage(key, messageId)) as Typed, startedAt };
}
