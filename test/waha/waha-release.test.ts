import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { refuse, restoreD1 } from "../d1-outage";
import { accountD1 } from "../databases";
import { PUBLIC_URL, WAHA_URL } from "../gateway-config";
import {
  call,
  createAccount,
  createSession,
  expectProblem,
  type SessionEnvelope,
  type SessionRecord,
  sessionStub,
  showSession,
} from "../helpers";
import { network, useNetwork } from "../network";
import { FakeWaha, postWahaEvent } from "./fake-waha";

// A failed session holds nothing at WAHA (docs/security.md, Account limits): a QR nobody scanned
// or a session WAHA reports FAILED is logged out and deleted there, as a delete does, while the
// session stays `failed` here; a reconnect creates it at WAHA again.

useNetwork();

const PHONE = "+14155552671";
const ME = { id: "14155552671@c.us", pushName: "Ada" };

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

/** Makes the session's QR timeout due now and runs its alarm (no waiting on the wall clock). */
async function timeOutQr(id: string): Promise<void> {
  await runInDurableObject(sessionStub(id), async (_instance, state) => {
    state.storage.sql.exec("UPDATE deadlines SET due_at = 0 WHERE kind = 'qr_timeout'");
  });
  expect(await runDurableObjectAlarm(sessionStub(id))).toBe(true);
}

async function deadlineKinds(id: string): Promise<string[]> {
  return runInDurableObject(sessionStub(id), async (_instance, state) =>
    state.storage.sql
      .exec<{ kind: string }>("SELECT kind FROM deadlines ORDER BY kind")
      .toArray()
      .map((d) => d.kind),
  );
}

/** WAHA answers a create with a session that fails while starting (`FAILED`). */
function createsFailingSessions(): void {
  network.use(
    http.post(`${WAHA_URL}/api/sessions`, async ({ request }) => {
      const { name } = (await request.json()) as { name: string };
      waha.calls.push("POST /api/sessions");
      waha.sessions.set(name, { status: "FAILED", me: null, qrCount: 0, webhooks: null });
      return HttpResponse.json({ name, status: "STARTING" }, { status: 201 });
    }),
  );
}

const removal = (name: string) => [`POST /api/sessions/${name}/logout`, `DELETE /api/sessions/${name}`];

describe("a failed session's WAHA session is removed", () => {
  it("removes a session nobody scanned when its QR times out, and creates it again on reconnect", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const name = session.session_id;
    expect(waha.sessions.has(name)).toBe(true);

    await timeOutQr(session.id);
    expect(await showSession(key, session.id)).toMatchObject({ status: "failed", reason: "qr_timeout" });
    expect(waha.sessions.has(name)).toBe(false);
    expect(waha.calls.slice(-2)).toEqual(removal(name));
    expect(waha.calls).not.toContain(`POST /api/sessions/${name}/stop`);
    expect(await deadlineKinds(session.id)).toEqual([]);

    const before = waha.calls.length;
    const reconnected = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${session.id}/reconnect`, {
      key,
    });
    expect(reconnected.status).toBe(200);
    expect(reconnected.body.session).toMatchObject({ status: "pending", reason: null });
    expect(reconnected.body.qr_code).toMatch(/^data:image\/png;base64,/);
    // Created again, with its webhook, under the same name.
    expect(waha.calls[before]).toBe("POST /api/sessions");
    expect(waha.bodies[before]?.body).toMatchObject({
      name,
      start: true,
      config: { webhooks: [{ url: `${PUBLIC_URL}/gateway/waha/events` }] },
    });
    expect(waha.sessions.get(name)?.status).toBe("SCAN_QR_CODE");

    // And it links as a new session does.
    waha.link(name, PHONE, ME.pushName);
    await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: ME });
    expect(await showSession(key, session.id)).toMatchObject({ status: "connected", phone_number: PHONE });
  });

  it("removes a connected session WAHA reports FAILED, and creates it again on reconnect", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const name = session.session_id;
    waha.link(name, PHONE, ME.pushName);
    await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: ME });

    const res = await postWahaEvent(name, "session.status", { status: "FAILED" });
    expect(res.status).toBe(200);
    expect(await showSession(key, session.id)).toMatchObject({
      status: "failed",
      reason: "gateway_failed",
      phone_number: PHONE,
    });
    expect(waha.sessions.has(name)).toBe(false);
    expect(waha.calls.slice(-2)).toEqual(removal(name));
    // WAHA may report the stop of the removed session: a failed session stays failed.
    await postWahaEvent(name, "session.status", { status: "STOPPED" });
    expect((await showSession(key, session.id)).status).toBe("failed");

    const reconnected = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${session.id}/reconnect`, {
      key,
    });
    expect(reconnected.body.session).toMatchObject({ status: "pending", phone_number: null });
    expect(waha.sessions.has(name)).toBe(true);
  });

  it("asks WAHA again while it cannot be reached, and removes the session once it answers", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const name = session.session_id;
    waha.down = true;
    await timeOutQr(session.id);
    expect((await showSession(key, session.id)).status).toBe("failed");
    expect(waha.sessions.has(name)).toBe(true);
    expect(await deadlineKinds(session.id)).toEqual(["gateway_release"]);

    // Still down: asked again, and again later.
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect(await deadlineKinds(session.id)).toEqual(["gateway_release"]);

    waha.down = false;
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect(waha.sessions.has(name)).toBe(false);
    expect(await deadlineKinds(session.id)).toEqual([]);
    expect(await showSession(key, session.id)).toMatchObject({ status: "failed", reason: "qr_timeout" });
  });

  it("removes the session again when a reconnect of a failed session fails at WAHA", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const name = session.session_id;
    await timeOutQr(session.id);
    createsFailingSessions();
    const res = await call("PATCH", `/v1/chatapp/sessions/${session.id}/reconnect`, { key });
    expectProblem(res, 503, "gateway_unavailable");
    expect(await showSession(key, session.id)).toMatchObject({ status: "failed", reason: "qr_timeout" });
    expect(waha.sessions.has(name)).toBe(false);
    expect(waha.calls.slice(-2)).toEqual(removal(name));
  });

  it("keeps a disconnected session at WAHA (its link is kept for a reconnect)", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const name = session.session_id;
    waha.link(name, PHONE, ME.pushName);
    await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: ME });
    await postWahaEvent(name, "session.status", { status: "STOPPED" });
    expect((await showSession(key, session.id)).status).toBe("disconnected");
    expect(waha.sessions.has(name)).toBe(true);
    expect(waha.calls).not.toContain(`DELETE /api/sessions/${name}`);
  });
});

describe("a create that fails at WAHA", () => {
  it("keeps the session as failed when D1 will not give its slot back, until it is deleted", async () => {
    const { key, accountId } = await createAccount();
    await refuse("sessions", "DELETE", { accountId });
    createsFailingSessions();
    expectProblem(await call("POST", "/v1/chatapp/sessions", { key }), 503, "gateway_unavailable");
    expect(waha.sessions.size).toBe(0);
    await restoreD1();
    const list = await call<{ sessions: SessionRecord[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(list.body.sessions).toHaveLength(1);
    const [kept] = list.body.sessions;
    expect(kept).toMatchObject({ status: "failed", reason: "gateway_create_failed" });
    expect((await call("DELETE", `/v1/chatapp/sessions/${kept?.id}`, { key })).status).toBe(200);
    expect(
      (await call<{ sessions: unknown[] }>("GET", "/v1/chatapp/sessions", { key })).body.sessions,
    ).toEqual([]);
  });

  it("removes what WAHA made of it and holds none of the account's sessions", async () => {
    const { accountId, key } = await createAccount();
    createsFailingSessions();
    const res = await call("POST", "/v1/chatapp/sessions", { key });
    expectProblem(res, 503, "gateway_unavailable");
    expect(waha.sessions.size).toBe(0);
    expect(waha.calls.at(-1)).toMatch(/^DELETE \/api\/sessions\/session_/);
    const rows = await (await accountD1(accountId))
      .prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
    const account = await call<{ data: { limits: { max_sessions: { current: number } } } }>(
      "GET",
      "/v1/account",
      {
        key,
      },
    );
    expect(account.body.data.limits.max_sessions.current).toBe(0);
  });
});
