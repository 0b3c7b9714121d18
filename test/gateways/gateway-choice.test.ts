import { beforeEach, describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { FakeEvolution, postEvolutionEvent } from "../evolution/fake-evolution";
import { call, createAccount, expectProblem, type SessionEnvelope, showSession } from "../helpers";
import { useNetwork } from "../network";
import { FakeWaha, postWahaEvent } from "../waha/fake-waha";

// A deployment that enables all three gateways (vitest.config.ts, project `gateways`):
// CHATAPP_GATEWAY=evolution, CHATAPP_GATEWAYS=evolution,waha,sandbox.

useNetwork();

const PHONE = "+14155552671";

let waha: FakeWaha;
let evolution: FakeEvolution;
beforeEach(() => {
  waha = new FakeWaha().install();
  evolution = new FakeEvolution().install();
});

async function create(key: string, body?: unknown) {
  return call<SessionEnvelope>("POST", "/v1/chatapp/sessions", { key, body });
}

async function storedGateway(session: {
  id: string;
  account_id: string;
}): Promise<string | null | undefined> {
  const row = await (await accountD1(session.account_id))
    .prepare("SELECT gateway FROM sessions WHERE id = ?")
    .bind(session.id)
    .first<{ gateway: string | null }>();
  return row?.gateway;
}

describe("sessions choose their gateway", () => {
  it("puts a session without `gateway` on CHATAPP_GATEWAY, and shows it", async () => {
    const { key } = await createAccount();
    const res = await create(key);
    expect(res.status).toBe(201);
    const { session } = res.body;
    expect(session.gateway).toBe("evolution");
    expect(evolution.calls.length).toBeGreaterThan(0);
    expect(waha.calls).toEqual([]);
    expect(await storedGateway(session)).toBe("evolution");
    expect((await showSession(key, session.id)).gateway).toBe("evolution");
  });

  it("creates a WAHA session at WAHA, whose events reach it while the default is Evolution API", async () => {
    const { key } = await createAccount();
    const res = await create(key, { gateway: "waha" });
    expect(res.status).toBe(201);
    const { session } = res.body;
    expect(session.gateway).toBe("waha");
    expect(waha.calls[0]).toBe("POST /api/sessions");
    expect(evolution.calls).toEqual([]);
    expect(await storedGateway(session)).toBe("waha");

    // An Evolution event naming the WAHA session is not applied to it.
    const stray = await postEvolutionEvent(session.session_id, "connection.update", {
      instance: session.session_id,
      state: "open",
      statusReason: 200,
    });
    expect(stray.body).toEqual({ success: true, ignored: true });
    expect((await showSession(key, session.id)).status).toBe("pending");

    waha.link(session.session_id, PHONE, "Ada");
    const event = await postWahaEvent(
      session.session_id,
      "session.status",
      { status: "WORKING" },
      { me: { id: "14155552671@c.us", pushName: "Ada" } },
    );
    expect(event.body).toEqual({ success: true, ignored: false });
    const shown = await showSession(key, session.id);
    expect(shown).toMatchObject({ status: "connected", phone_number: PHONE, gateway: "waha" });
    const list = await call<{ sessions: { id: string; gateway: string }[] }>("GET", "/v1/chatapp/sessions", {
      key,
    });
    expect(list.body.sessions).toEqual([expect.objectContaining({ id: session.id, gateway: "waha" })]);
    // The sandbox routes do not drive a session on another gateway.
    const scan = await call("POST", `/sandbox/sessions/${session.id}/scan`, { key, body: {} });
    expectProblem(scan, 404, "not_found");
  });

  it("runs a sandbox session in the same deployment, without calling a real gateway", async () => {
    const { key } = await createAccount();
    const res = await create(key, { gateway: "sandbox" });
    expect(res.status).toBe(201);
    const { session } = res.body;
    expect(session.gateway).toBe("sandbox");
    const scanned = await call<SessionEnvelope>("POST", `/sandbox/sessions/${session.id}/scan`, {
      key,
      body: {},
    });
    expect(scanned.status).toBe(200);
    expect(scanned.body.session).toMatchObject({ status: "connected", gateway: "sandbox" });
    // Nor does a WAHA event for its name move it.
    const stray = await postWahaEvent(session.session_id, "session.status", { status: "STOPPED" });
    expect(stray.body).toEqual({ success: true, ignored: true });
    expect((await showSession(key, session.id)).status).toBe("connected");
    expect(waha.calls).toEqual([]);
    expect(evolution.calls).toEqual([]);
  });
});
