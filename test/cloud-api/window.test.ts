import { describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { createAccount, expectProblem } from "../helpers";
import {
  balanceOf,
  connectedSession,
  ledgerOf,
  sendText,
  storedMessageCount,
  waitForMessages,
} from "../message-fixtures";
import {
  cloudApiSession,
  deliverWebhooks,
  messagesChange,
  postWebhook,
  useFakeGraph,
} from "./webhooks-fixtures";

// The 24-hour customer service window (Meta's "Customer service windows"): a Cloud API session
// sends a free-form message only to contacts who wrote to it in the last 24 hours; the whole send
// is refused otherwise, before anything is charged or written. Sandbox sessions have no window.

const fake = useFakeGraph();
const INSIDE = "+14155550123";
const OUTSIDE = "+14155550124";
const LAPSED = "+14155550125";

/** A contact's text to the number, dated `secondsAgo` before now (Meta's `timestamp`). */
function incomingText(phoneNumberId: string, from: string, secondsAgo: number) {
  const at = Math.floor(Date.now() / 1000) - secondsAgo;
  return messagesChange(phoneNumberId, {
    contacts: [{ profile: { name: "Ada" }, wa_id: from.slice(1) }],
    messages: [
      {
        from: from.slice(1),
        id: `wamid.${crypto.randomUUID()}`,
        timestamp: String(at),
        type: "text",
        text: { body: "hi" },
      },
    ],
  });
}

async function setUp() {
  const graph = fake();
  const { key, accountId } = await createAccount(10);
  const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
  graph.queueIncoming({ phoneNumberId, from: INSIDE.slice(1), text: "hello" });
  await deliverWebhooks(graph);
  // Wrote 24 h and 1 min ago: just outside.
  expect((await postWebhook(incomingText(phoneNumberId, LAPSED, 24 * 3600 + 60))).status).toBe(200);
  return { graph, key, accountId, session };
}

describe("the customer service window", () => {
  it("a contact who wrote within 24 hours gets a free-form message", async () => {
    const { graph, key, session } = await setUp();
    const sent = await sendText(key, session, [INSIDE]);
    expect(sent.status, sent.text).toBe(201);
    const id = sent.body.data.messages[0]?.id ?? "";
    await waitForMessages(key, [id], (m) => m.status === "sent");
    expect(graph.sent.map((s) => s.body.to)).toEqual([INSIDE.slice(1)]);
  });

  it("a contact who never wrote, or wrote more than 24 hours ago: 422 outside_service_window, nothing charged or written", async () => {
    const { key, accountId, session } = await setUp();
    const before = await storedMessageCount(accountId);
    for (const to of [OUTSIDE, LAPSED]) {
      const res = await sendText(key, session, [to]);
      const problem = expectProblem(res, 422, "outside_service_window");
      expect(problem.outside).toEqual([to]);
    }
    expect(await balanceOf(accountId)).toBe(10);
    expect(await ledgerOf(accountId)).toEqual([expect.objectContaining({ kind: "credit" })]);
    expect(await storedMessageCount(accountId)).toBe(before);
  });

  it("a mixed send is refused whole, naming the numbers outside, with no message rows and no charge", async () => {
    const { graph, key, accountId, session } = await setUp();
    const res = await sendText(key, session, [INSIDE, OUTSIDE, LAPSED]);
    const problem = expectProblem(res, 422, "outside_service_window");
    expect(problem.outside).toEqual([OUTSIDE, LAPSED]);
    expect(await balanceOf(accountId)).toBe(10);
    const outgoing = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM messages WHERE account_id = ? AND direction = 'outgoing'")
      .bind(accountId)
      .first<{ n: number }>();
    expect(outgoing?.n).toBe(0);
    expect(graph.sent).toEqual([]);
  });

  it("only Cloud API sessions have a window: a sandbox session sends to a contact who never wrote", async () => {
    const { key, accountId } = await createAccount(10);
    const { id } = await connectedSession(key);
    const res = await sendText(key, id, [OUTSIDE]);
    expect(res.status, res.text).toBe(201);
    expect(await balanceOf(accountId)).toBeLessThan(10);
  });
});
