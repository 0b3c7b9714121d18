import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { EVENT_FRESHNESS_MS } from "../../src/gateways/freshness";
import { call, createAccount, createSession, showSession } from "../helpers";
import { balanceOf, getMessage, sendText, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeWaha, postWahaEvent } from "./fake-waha";

useNetwork();

const PHONE = "+14155552671";
const ME = { id: "14155552671@c.us", pushName: "Ada" };
const CONTACT = "+14155550123";
const MINUTE = 60_000;
/** Just outside the window, and far outside it, either way. */
const OUTSIDE = [
  ["ahead", EVENT_FRESHNESS_MS + 1_000],
  ["behind", -(EVENT_FRESHNESS_MS + 1_000)],
  ["a day ahead", 24 * 60 * MINUTE],
  ["a day behind", -24 * 60 * MINUTE],
] as const;

let waha: FakeWaha;
let warn: MockInstance<typeof console.warn>;
beforeEach(() => {
  waha = new FakeWaha().install();
  warn = vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => warn.mockRestore());

/** The JSON lines logged on `console.warn` with `event: "gateway_event_dropped"`. */
function dropped(): Record<string, unknown>[] {
  return warn.mock.calls
    .map(([line]): Record<string, unknown> => JSON.parse(String(line)))
    .filter((entry) => entry.event === "gateway_event_dropped");
}

/** A session linked by a fresh `session.status` WORKING, as WAHA links one. */
async function connectedSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  waha.link(name, PHONE, ME.pushName);
  const res = await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: ME });
  expect(res.body).toEqual({ success: true, ignored: false });
  return { id: session.id, name };
}

/** A `message` payload: `text` from CONTACT. */
const incoming = (id: string, text: string) => ({
  id: `false_14155550123@c.us_${id}`,
  from: "14155550123@c.us",
  fromMe: false,
  body: text,
  hasMedia: false,
});

describe("WAHA events dated outside the 5-minute window (signed, so replays of real ones)", () => {
  it.each(OUTSIDE)(
    "drops a failure receipt (ack -1) dated %s: the message stays sent and charged; a fresh one fails and refunds it",
    async (_label, offset) => {
      const { key, accountId } = await createAccount(10);
      const { id, name } = await connectedSession(key);
      const sent = await sendText(key, id, [CONTACT]);
      const messageId = sent.body.data.messages[0]?.id ?? "";
      await waitForMessages(key, [messageId]);
      const providerId = waha.sent[0]?.id ?? "";
      const ack = { id: providerId, ack: -1, ackName: "ERROR", fromMe: true };

      const replayed = await postWahaEvent(name, "message.ack", ack, { timestamp: Date.now() + offset });
      expect(replayed.status).toBe(200);
      expect(replayed.body).toEqual({ success: true, ignored: true });
      expect(await getMessage(key, messageId)).toMatchObject({ status: "sent", reason: null });
      expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);
      expect(dropped()).toEqual([
        expect.objectContaining({
          level: "warn",
          gateway: "waha",
          session: name,
          reason: offset > 0 ? "future" : "stale",
        }),
      ]);

      expect((await postWahaEvent(name, "message.ack", ack)).body).toEqual({ success: true, ignored: false });
      expect(await getMessage(key, messageId)).toMatchObject({
        status: "failed",
        reason: "gateway_ack_error",
      });
      expect(await balanceOf(accountId)).toBe(10);
    },
  );

  it.each(OUTSIDE)("drops a session.status FAILED dated %s; a fresh one applies", async (_label, offset) => {
    const { key } = await createAccount();
    const { id, name } = await connectedSession(key);
    const before = await showSession(key, id);
    const res = await postWahaEvent(
      name,
      "session.status",
      { status: "FAILED" },
      { timestamp: Date.now() + offset },
    );
    expect(res.body).toEqual({ success: true, ignored: true });
    expect(await showSession(key, id)).toEqual(before);

    await postWahaEvent(name, "session.status", { status: "FAILED" });
    expect(await showSession(key, id)).toMatchObject({ status: "failed", reason: "gateway_failed" });
  });

  it.each(OUTSIDE)("drops a STOP dated %s: nothing stored, nobody opted out", async (_label, offset) => {
    const { key } = await createAccount();
    const { id, name } = await connectedSession(key);
    const stop = incoming("STOP0001", "STOP");
    const res = await postWahaEvent(name, "message", stop, { timestamp: Date.now() + offset });
    expect(res.body).toEqual({ success: true, ignored: true });
    const optOut = () =>
      call<{ data: unknown }>("GET", `/v1/opt-outs/${encodeURIComponent(CONTACT)}`, { key });
    expect((await optOut()).status).toBe(404);
    const list = await call<{ data: unknown[] }>(
      "GET",
      `/v1/chatapp/messages/${id}/session?filter[direction]=incoming`,
      { key },
    );
    expect(list.body.data).toEqual([]);

    expect((await postWahaEvent(name, "message", stop)).body).toEqual({ success: true, ignored: false });
    expect((await optOut()).body.data).toMatchObject({
      to_number: CONTACT,
      source: "keyword",
      keyword: "STOP",
    });
  });

  it("applies a status dated ahead within the window, without making the events after it old", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedSession(key);
    await postWahaEvent(
      name,
      "session.status",
      { status: "STOPPED" },
      { timestamp: Date.now() + 4 * MINUTE },
    );
    expect(await showSession(key, id)).toMatchObject({ status: "disconnected", reason: "gateway_stopped" });

    await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: ME });
    expect(await showSession(key, id)).toMatchObject({ status: "connected", reason: null });
  });
});
