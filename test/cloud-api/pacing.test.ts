import { describe, expect, it } from "vitest";
import { minCallGapMs } from "../../src/delivery/retry";
import { call, createAccount } from "../helpers";
import { type SendResponse, waitForMessages } from "../message-fixtures";
import { openWindow, useExampleNumber } from "./sessions-fixtures";
import { linkNumber } from "./webhooks-fixtures";

// Pacing of a Cloud API session: never faster than its number's throughput (Meta, "Throughput":
// 80 messages per second, 1,000 at the HIGH level), measured by the fake's clock at each send it
// receives; and Meta's 130429 (the number's rate limit hit) holds every send of the session for
// the throttle backoff (4 s on a first refusal), while 131056 (one recipient) holds only its message.

const meta = useExampleNumber();

/** Numbers +1415555<nnnn>, one per recipient. */
const recipients = (n: number) => Array.from({ length: n }, (_, i) => `+1415555${String(2600 + i)}`);

async function sendAll(key: string, session: string, to: string[]): Promise<string[]> {
  await openWindow(meta.graph, meta.number.phoneNumberId, to);
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: session, to_number: to, type: "text", content: "Hello", delay_between: 0 },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.messages.map((m) => m.id);
}

/** Gaps (ms) between consecutive sends the fake received. */
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] ?? 0));

describe("a Cloud API session's pace", () => {
  it("keeps gateway calls at least 1000/80 ms apart at the standard throughput", async () => {
    expect(minCallGapMs(80)).toBe(12.5);
    expect(minCallGapMs(undefined)).toBe(0);
    const { key } = await createAccount();
    const session = await linkNumber(key, meta.number);
    const ids = await sendAll(key, session, recipients(12));
    const sent = await waitForMessages(key, ids);
    expect(sent.every((m) => m.status === "sent")).toBe(true);

    const times = meta.graph.callsOf("sendMessage").map((s) => s.at);
    expect(times).toHaveLength(12);
    for (const gap of gaps(times)) expect(gap).toBeGreaterThanOrEqual(12.5);
  });

  it("130429: the session makes no call for the throttle backoff, then sends the refused message and the rest", async () => {
    const { key } = await createAccount();
    const session = await linkNumber(key, meta.number);
    meta.graph.failNext({ code: 130429, status: 400, message: "(#130429) Rate limit hit" });
    const ids = await sendAll(key, session, recipients(3));
    const sent = await waitForMessages(key, ids);
    expect(sent.map((m) => m.status)).toEqual(["sent", "sent", "sent"]);

    const [refused, ...after] = meta.graph.callsOf("sendMessage");
    expect(refused?.wamid).toBeNull();
    expect(refused?.body?.biz_opaque_callback_data).toBe(ids[0]);
    // Every later call waited the backoff (4 s after the refusal's answer).
    expect(after).toHaveLength(3);
    for (const send of after) expect(send.at - (refused?.at ?? 0)).toBeGreaterThanOrEqual(4000);
    expect(sent[0]?.metadata.send_attempts).toEqual([
      { at: expect.any(String), outcome: "rejected", reason: "throttled" },
    ]);
  });

  it("131056: only the refused recipient's message waits; the others go on at once", async () => {
    const { key } = await createAccount();
    const session = await linkNumber(key, meta.number);
    meta.graph.failNext({ code: 131056, status: 400, message: "(#131056) Pair rate limit hit" });
    const ids = await sendAll(key, session, recipients(3));
    await waitForMessages(key, ids.slice(1));

    const [refused, second, third] = meta.graph.callsOf("sendMessage");
    expect(refused?.body?.biz_opaque_callback_data).toBe(ids[0]);
    expect([second, third].map((s) => s?.body?.biz_opaque_callback_data)).toEqual(ids.slice(1));
    expect((third?.at ?? 0) - (refused?.at ?? 0)).toBeLessThan(4000);
  });
});
