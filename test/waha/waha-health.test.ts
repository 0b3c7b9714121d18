import { beforeEach, describe, expect, it } from "vitest";
import { call, createAccount, createSession, expectProblem, runAlarmUntil, showSession } from "../helpers";
import { balanceOf, sendText, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeWaha, postWahaEvent, type WahaCapping } from "./fake-waha";

// Session health read from WAHA (docs/sessions.md, Session health): `me.reachoutTimelock`,
// `me.messageCapping` and the GOWS engine's `GET /api/sessions/{session}/capping`, through the
// gateway check; a send WhatsApp refuses with 463 sets the timelock.

useNetwork();

const PHONE = "+14155552671";
const ME = { id: "14155552671@c.us", pushName: "Ada" };
const ENDS = 1_893_456_000; // 2030-01-01T00:00:00Z, Unix seconds
const CYCLE_END = 1_896_134_399;
const CAP: WahaCapping = {
  cappingStatus: "SECOND_WARNING",
  totalQuota: 1000,
  usedQuota: 900,
  cycleStart: 1_893_456_000,
  cycleEnd: CYCLE_END,
  mvStatus: "NOT_ELIGIBLE",
  oteStatus: "NOT_ELIGIBLE",
};

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

async function connectedWahaSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  waha.link(name, PHONE, ME.pushName);
  const res = await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: ME });
  expect(res.body).toEqual({ success: true, ignored: false });
  const found = waha.sessions.get(name);
  if (!found) throw new Error("no fake session");
  return { id: session.id, name, fake: found };
}

function checkNow(key: string, id: string) {
  return call("GET", `/v1/chatapp/sessions/${id}/gateway`, { key });
}

async function healthEventsOf(key: string, id: string) {
  const res = await call<{ data: Array<{ data: { id: string; health: unknown } }> }>(
    "GET",
    "/v1/events?filter[type]=session.health_changed",
    { key },
  );
  return res.body.data.filter((e) => e.data.id === id);
}

describe("session health on WAHA", () => {
  it("reads the timelock and cap of `me` (NOWEB: the capping endpoint is not served)", async () => {
    const { key } = await createAccount();
    const { id, name, fake } = await connectedWahaSession(key);
    fake.reachoutTimelock = {
      enforcementType: "RESTRICT_ALL_COMPANIONS",
      isActive: true,
      timeEnforcementEnds: ENDS,
    };
    fake.messageCapping = CAP;
    expect((await checkNow(key, id)).status).toBe(200);
    expect(waha.calls).toContain(`GET /api/sessions/${name}/capping`);
    const session = await showSession(key, id);
    expect(session.health).toEqual({
      timelock: { active: true, until: "2030-01-01T00:00:00.000000Z" },
      cap: { level: "SECOND_WARNING", used: 900, total: 1000, cycle_end: "2030-01-31T23:59:59.000000Z" },
      quality: null,
      checked_at: expect.any(String),
    });
    expect(await healthEventsOf(key, id)).toHaveLength(1);
    // Read again unchanged: no second event.
    await checkNow(key, id);
    expect(await healthEventsOf(key, id)).toHaveLength(1);
  });

  it("on GOWS, takes the cap from the capping endpoint, and a timelock WAHA lifts clears", async () => {
    const { key } = await createAccount();
    const { id, fake } = await connectedWahaSession(key);
    fake.engine = "GOWS";
    fake.reachoutTimelock = {
      enforcementType: "RESTRICT_ALL_COMPANIONS",
      isActive: true,
      timeEnforcementEnds: null,
    };
    fake.messageCapping = { ...CAP, cappingStatus: "CAPPED", usedQuota: 1000 };
    await checkNow(key, id);
    expect((await showSession(key, id)).health).toMatchObject({
      timelock: { active: true, until: null },
      cap: { level: "CAPPED", used: 1000, total: 1000 },
    });
    fake.reachoutTimelock = null;
    fake.messageCapping = null; // the endpoint then answers no cap
    await checkNow(key, id);
    expect((await showSession(key, id)).health).toMatchObject({
      timelock: null,
      cap: { level: "NONE", used: 0, total: -1, cycle_end: null },
    });
    expect(await healthEventsOf(key, id)).toHaveLength(2);
  });

  it("is read by the scheduled gateway check", async () => {
    const { key } = await createAccount();
    const { id, name, fake } = await connectedWahaSession(key);
    fake.messageCapping = { ...CAP, cappingStatus: "FIRST_WARNING" };
    const cappingCalls = () => waha.calls.filter((c) => c === `GET /api/sessions/${name}/capping`).length;
    await runAlarmUntil(id, () => cappingCalls() > 0);
    expect((await showSession(key, id)).health.cap?.level).toBe("FIRST_WARNING");
  });

  it("a send refused with 463 fails (refunded), sets the timelock, and cold sends are then refused", async () => {
    const { key, accountId } = await createAccount();
    const { id } = await connectedWahaSession(key);
    const before = await balanceOf(accountId);
    waha.sendFault = "timelock";
    const sent = await sendText(key, id, ["+14155550199"]);
    expect(sent.status, sent.text).toBe(201);
    const [message] = await waitForMessages(key, [sent.body.data.messages[0]?.id ?? ""]);
    expect(message).toMatchObject({ status: "failed" });
    expect(JSON.stringify(message)).toContain("reachout_timelocked");
    expect(await balanceOf(accountId)).toBe(before);
    const session = await showSession(key, id);
    expect(session.status).toBe("connected");
    expect(session.health.timelock).toEqual({ active: true, until: null });
    expect(await healthEventsOf(key, id)).toHaveLength(1);
    expectProblem(await sendText(key, id, ["+14155550198"]), 409, "session_limited");
  });
});
