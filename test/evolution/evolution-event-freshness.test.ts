import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { EVENT_FRESHNESS_MS, stalenessOf } from "../../src/gateways/freshness";
import { call, createAccount, createSession, showSession } from "../helpers";
import { balanceOf, getMessage, sendText, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const MINUTE = 60_000;
/** Just outside the window, and far outside it, either way. */
const OUTSIDE = [
  ["ahead", EVENT_FRESHNESS_MS + 1_000],
  ["behind", -(EVENT_FRESHNESS_MS + 1_000)],
  ["a day ahead", 24 * 60 * MINUTE],
  ["a day behind", -24 * 60 * MINUTE],
] as const;

let evolution: FakeEvolution;
let warn: MockInstance<typeof console.warn>;
beforeEach(() => {
  evolution = new FakeEvolution().install();
  warn = vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => warn.mockRestore());

/** The JSON lines logged on `console.warn` with `event: "gateway_event_dropped"`. */
function dropped(): Record<string, unknown>[] {
  return warn.mock.calls
    .map(([line]): Record<string, unknown> => JSON.parse(String(line)))
    .filter((entry) => entry.event === "gateway_event_dropped");
}

/** A session linked by a fresh `connection.update` open, as Evolution links one. */
async function connectedSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  const res = await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
    sender: OWNER_JID,
  });
  expect(res.body).toEqual({ success: true, ignored: false });
  return { id: session.id, name };
}

/** `connection.update` data of a close with `statusReason`, written by hand: the fake is not told. */
const closeData = (name: string, statusReason: number) => ({
  instance: name,
  wuid: OWNER_JID,
  profileName: "Ada",
  profilePictureUrl: null,
  state: "close",
  statusReason,
});

async function optOutOf(key: string, number: string) {
  return call<{ data: { to_number: string; source: string; keyword: string | null } }>(
    "GET",
    `/v1/opt-outs/${encodeURIComponent(number)}`,
    { key },
  );
}

describe("stalenessOf", () => {
  const NOW = Date.parse("2026-03-01T12:00:00Z");

  it("takes a call dated within 5 minutes of now, either way, bounds included", () => {
    expect(EVENT_FRESHNESS_MS).toBe(300_000);
    for (const offset of [0, -EVENT_FRESHNESS_MS, EVENT_FRESHNESS_MS, -MINUTE, 4 * MINUTE]) {
      expect(stalenessOf(NOW + offset, NOW)).toBeNull();
    }
  });

  it("refuses one dated further off, or not dated", () => {
    expect(stalenessOf(NOW - EVENT_FRESHNESS_MS - 1, NOW)).toBe("stale");
    expect(stalenessOf(NOW + EVENT_FRESHNESS_MS + 1, NOW)).toBe("future");
    expect(stalenessOf(null, NOW)).toBe("undated");
    expect(stalenessOf(Number.NaN, NOW)).toBe("undated");
  });
});

describe("Evolution events dated outside the 5-minute window", () => {
  it.each(OUTSIDE)(
    "drops a forged close 403 dated %s (200, ignored): session, queue and balance stay; a fresh one bans",
    async (_label, offset) => {
      const { key, accountId } = await createAccount(10);
      const { id, name } = await connectedSession(key);
      const later = new Date(Date.now() + 3_600_000).toISOString();
      const sent = await sendText(key, id, [CONTACT], { scheduled_at: later });
      const messageId = sent.body.data.messages[0]?.id ?? "";
      const before = await showSession(key, id);

      const forged = await postEvolutionEvent(name, "connection.update", closeData(name, 403), {
        at: Date.now() + offset,
      });
      expect(forged.status).toBe(200);
      expect(forged.body).toEqual({ success: true, ignored: true });
      expect(await showSession(key, id)).toEqual(before);
      expect(await getMessage(key, messageId)).toMatchObject({ status: "scheduled", reason: null });
      expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);
      expect(dropped()).toEqual([
        expect.objectContaining({
          level: "warn",
          gateway: "evolution",
          session: name,
          reason: offset > 0 ? "future" : "stale",
        }),
      ]);

      const fresh = await postEvolutionEvent(name, "connection.update", closeData(name, 403));
      expect(fresh.body).toEqual({ success: true, ignored: false });
      expect(await showSession(key, id)).toMatchObject({ status: "banned", reason: "account_banned" });
      const [failed] = await waitForMessages(key, [messageId], (m) => m.status === "failed");
      expect(failed).toMatchObject({ status: "failed", reason: "session_banned" });
      expect(await balanceOf(accountId)).toBe(10);
    },
  );

  it.each([
    ["null", null],
    ["unreadable", "not a date"],
  ])("drops an event whose date_time is %s", async (_label, dateTime) => {
    const { key } = await createAccount();
    const { id, name } = await connectedSession(key);
    const before = await showSession(key, id);
    const res = await postEvolutionEvent(name, "connection.update", closeData(name, 401), { dateTime });
    expect(res.body).toEqual({ success: true, ignored: true });
    expect(await showSession(key, id)).toEqual(before);
    expect(dropped()).toEqual([expect.objectContaining({ reason: "undated", sent_at: null })]);
  });

  it.each(OUTSIDE)(
    "drops a forged STOP dated %s: nothing stored, nobody opted out",
    async (_label, offset) => {
      const { key } = await createAccount();
      const { id, name } = await connectedSession(key);
      const stop = evolution.incomingText(name, "3EB0AAAA0000000001", CONTACT, "STOP");
      const res = await postEvolutionEvent(name, "messages.upsert", stop, { at: Date.now() + offset });
      expect(res.body).toEqual({ success: true, ignored: true });
      expect((await optOutOf(key, CONTACT)).status).toBe(404);
      const incoming = await call<{ data: unknown[] }>(
        "GET",
        `/v1/chatapp/messages/${id}/session?filter[direction]=incoming`,
        { key },
      );
      expect(incoming.body.data).toEqual([]);

      expect((await postEvolutionEvent(name, "messages.upsert", stop)).body).toEqual({
        success: true,
        ignored: false,
      });
      expect((await optOutOf(key, CONTACT)).body.data).toMatchObject({
        to_number: CONTACT,
        source: "keyword",
        keyword: "STOP",
      });
    },
  );

  it("applies an event dated ahead within the window, without making the events after it old", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedSession(key);
    const ahead = await postEvolutionEvent(name, "connection.update", closeData(name, 408), {
      at: Date.now() + 4 * MINUTE,
    });
    expect(ahead.body).toEqual({ success: true, ignored: false });
    expect(await showSession(key, id)).toMatchObject({ status: "disconnected", reason: "connection_closed" });

    // Dated now, so before the close by Evolution's clock; but the ordering clock stopped at our now.
    await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
      sender: OWNER_JID,
    });
    expect(await showSession(key, id)).toMatchObject({ status: "connected", reason: null });
  });

  it("keeps the ordering clock at most at the service's now", async () => {
    const { key } = await createAccount();
    const { id, name } = await connectedSession(key);
    const before = Date.now();
    await postEvolutionEvent(name, "connection.update", closeData(name, 408), { at: before + 4 * MINUTE });
    const health = await call<{ health: { last_event_at: string } }>(
      "GET",
      `/v1/chatapp/sessions/${id}/gateway`,
      { key },
    );
    expect(Date.parse(health.body.health.last_event_at)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(health.body.health.last_event_at)).toBeGreaterThanOrEqual(before - 1_000);
  });
});
