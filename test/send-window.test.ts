import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type SendWindow, windowOpensAt } from "../src/lib/send-window";
import { campaignMessages, command, createCampaign, number } from "./campaign-fixtures";
import { call, createAccount, sessionStub, waitFor } from "./helpers";
import { connectedSession } from "./message-fixtures";

// Send windows: outside the window no campaign message reaches the gateway, and dispatch resumes
// at the window's next start in its time zone (daylight-saving changes included).

const at = (iso: string) => Date.parse(iso);

describe("windowOpensAt", () => {
  const newYork: SendWindow = { start: "09:00", end: "17:00", time_zone: "America/New_York" };

  it("is now inside the window", () => {
    expect(windowOpensAt(newYork, at("2026-11-23T15:30:00Z"))).toBe(at("2026-11-23T15:30:00Z"));
  });

  it("is the next local start after the window shut, across the UTC date line", () => {
    // 17:00 in New York (EST, UTC−5) is 22:00 UTC; the next start is 09:00 EST the next day.
    expect(windowOpensAt(newYork, at("2026-11-23T22:00:00Z"))).toBe(at("2026-11-24T14:00:00Z"));
    // Before the start the same local day: 08:59:30 EST.
    expect(windowOpensAt(newYork, at("2026-11-24T13:59:30Z"))).toBe(at("2026-11-24T14:00:00Z"));
  });

  it("counts a daylight-saving change between now and the start", () => {
    // Saturday 7 March 2026 18:00 EST; clocks go forward on Sunday 8 March, so 09:00 is EDT (UTC−4).
    expect(windowOpensAt(newYork, at("2026-03-07T23:00:00Z"))).toBe(at("2026-03-08T13:00:00Z"));
    // Saturday 31 October 2026 in London (BST, UTC+1); clocks go back on Sunday 1 November.
    const london: SendWindow = { start: "08:00", end: "20:00", time_zone: "Europe/London" };
    expect(windowOpensAt(london, at("2026-10-31T21:00:00Z"))).toBe(at("2026-11-01T08:00:00Z"));
  });

  it("handles a window that spans midnight, in a zone a day ahead of UTC", () => {
    const night: SendWindow = { start: "22:00", end: "06:00", time_zone: "Pacific/Kiritimati" };
    // Kiritimati is UTC+14: 12:00 UTC is 02:00 the next local day, inside the window.
    expect(windowOpensAt(night, at("2026-11-23T12:00:00Z"))).toBe(at("2026-11-23T12:00:00Z"));
    // 17:00 UTC is 07:00 local, after the end: the next start is 22:00 local, 08:00 UTC.
    expect(windowOpensAt(night, at("2026-11-23T17:00:00Z"))).toBe(at("2026-11-24T08:00:00Z"));
  });
});

describe("a campaign outside its send window", () => {
  it("hands nothing to the gateway and waits for the window's next start", async () => {
    const { key } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    // A one-hour window starting two hours from now, local time in Kiritimati (UTC+14).
    const local = new Date(Date.now() + 14 * 3_600_000);
    const clock = (hours: number) =>
      `${String((local.getUTCHours() + hours) % 24).padStart(2, "0")}:${String(local.getUTCMinutes()).padStart(2, "0")}`;
    const window: SendWindow = { start: clock(2), end: clock(3), time_zone: "Pacific/Kiritimati" };
    const draft = await createCampaign(key, {
      chatapp_session_ids: [session],
      recipients: [0, 1].map((i) => ({ to_number: number(i), variables: { name: "x" } })),
      delay_between: 0,
      send_window: window,
    });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    const expected = windowOpensAt(window, Date.now());
    expect(expected - Date.now()).toBeGreaterThan(3_600_000);
    const entries = await waitFor(
      async () => {
        const rows = await runInDurableObject(sessionStub(session), async (_instance, state) =>
          state.storage.sql
            .exec<{ state: string; not_before: number }>("SELECT state, not_before FROM outbox")
            .toArray(),
        );
        if (rows.length < 2 || rows.some((row) => row.not_before === 0))
          throw new Error(JSON.stringify(rows));
        return rows;
      },
      {
        reason: "the session to hold both messages for their window (the outbound queue hands them over)",
        timeoutMs: 8_000,
        intervalMs: 50,
      },
    );
    for (const entry of entries) {
      expect(entry.state).toBe("pending");
      expect(Math.abs(entry.not_before - expected)).toBeLessThan(1_000);
    }
    expect((await campaignMessages(draft.id)).map((m) => m.status)).toEqual(["queued", "queued"]);
    const received = await call<{ data: unknown[] }>(
      "GET",
      `/sandbox/sessions/${session}/received?to_number=${encodeURIComponent(number(0))}`,
      { key },
    );
    expect(received.body.data).toEqual([]);
  });
});
