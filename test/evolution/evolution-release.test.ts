import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { evolutionInstanceToken } from "../../src/gateways/evolution/events";
import { EVOLUTION_API_KEY } from "../gateway-config";
import {
  call,
  createAccount,
  createSession,
  type SessionEnvelope,
  sessionStub,
  showSession,
} from "../helpers";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// A failed session holds nothing at Evolution API (docs/security.md, Account limits): a QR nobody
// scanned or an instance Evolution reports `refused` is deleted there, as a delete does, while the
// session stays `failed` here; a reconnect creates the instance again.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
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

const reconnect = (key: string, id: string) =>
  call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${id}/reconnect`, { key });

describe("a failed session's Evolution instance is removed", () => {
  it("deletes an instance nobody scanned when its QR times out, and creates it again on reconnect", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const name = session.session_id;
    expect(evolution.instances.has(name)).toBe(true);

    await timeOutQr(session.id);
    expect(await showSession(key, session.id)).toMatchObject({ status: "failed", reason: "qr_timeout" });
    expect(evolution.instances.has(name)).toBe(false);
    expect(evolution.calls.at(-1)).toBe(`DELETE /instance/delete/${name}`);
    expect(await deadlineKinds(session.id)).toEqual([]);

    const before = evolution.calls.length;
    const reconnected = await reconnect(key, session.id);
    expect(reconnected.status).toBe(200);
    expect(reconnected.body.session).toMatchObject({ status: "pending", reason: null });
    expect(reconnected.body.qr_code).toMatch(/^data:image\/png;base64,/);
    expect(evolution.calls.slice(before)).toEqual(["POST /instance/create"]);
    expect(evolution.instance(name)).toMatchObject({
      state: "connecting",
      token: await evolutionInstanceToken(EVOLUTION_API_KEY, name),
    });

    const data = evolution.link(name, PHONE, "Ada");
    await postEvolutionEvent(name, "connection.update", data, { sender: OWNER_JID });
    expect(await showSession(key, session.id)).toMatchObject({ status: "connected", phone_number: PHONE });
  });

  it("deletes an instance Evolution reports refused (QR limit reached), and creates it again on reconnect", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const name = session.session_id;
    const refused = { ...evolution.connectionUpdate(name, 200), state: "refused" };
    const res = await postEvolutionEvent(name, "connection.update", refused);
    expect(res.body).toEqual({ success: true, ignored: false });
    expect(await showSession(key, session.id)).toMatchObject({
      status: "failed",
      reason: "qr_limit_reached",
    });
    expect(evolution.instances.has(name)).toBe(false);

    const reconnected = await reconnect(key, session.id);
    expect(reconnected.body.session.status).toBe("pending");
    expect(evolution.instances.has(name)).toBe(true);
  });

  it("asks Evolution again while it cannot be reached, and deletes the instance once it answers", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const name = session.session_id;
    evolution.down = true;
    await timeOutQr(session.id);
    expect((await showSession(key, session.id)).status).toBe("failed");
    expect(evolution.instances.has(name)).toBe(true);
    expect(await deadlineKinds(session.id)).toEqual(["gateway_release"]);

    evolution.down = false;
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect(evolution.instances.has(name)).toBe(false);
    expect(await deadlineKinds(session.id)).toEqual([]);
  });

  it("answers a create that fails at Evolution without leaving an instance or a session", async () => {
    const { key } = await createAccount();
    evolution.down = true;
    expect((await call("POST", "/v1/chatapp/sessions", { key })).status).toBe(503);
    evolution.down = false;
    expect(evolution.instances.size).toBe(0);
    const list = await call<{ sessions: unknown[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(list.body.sessions).toEqual([]);
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
