import { describe, expect, it } from "vitest";
import { call, createAccount, createSession, expectProblem, type SessionEnvelope } from "./helpers";

const scan = (key: string, id: string) =>
  call<SessionEnvelope>("POST", `/sandbox/sessions/${id}/scan`, { key, body: {} });

describe("GET /v1/chatapp/sessions/{id}/gateway", () => {
  it("shows the sandbox's own view of a pending, then a connected session", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const pending = await call("GET", `/v1/chatapp/sessions/${session.id}/gateway`, { key });
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({
      success: true,
      health: {
        gateway: "sandbox",
        gateway_state: "qr",
        checked_at: expect.any(String),
        last_event_at: null,
        consecutive_failures: 0,
        last_error: null,
      },
    });
    await scan(key, session.id);
    const connected = await call<{ health: { gateway_state: string } }>(
      "GET",
      `/v1/chatapp/sessions/${session.id}/gateway`,
      { key },
    );
    expect(connected.body.health.gateway_state).toBe("linked");
    const shown = await call<SessionEnvelope>("GET", `/v1/chatapp/sessions/${session.id}`, { key });
    expect(shown.body.session.status).toBe("connected");
  });

  it("leaves a disconnected session disconnected: the sandbox reports it stopped", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    await scan(key, session.id);
    await call("PATCH", `/v1/chatapp/sessions/${session.id}/disconnect`, { key });
    const res = await call<{ health: { gateway_state: string } }>(
      "GET",
      `/v1/chatapp/sessions/${session.id}/gateway`,
      {
        key,
      },
    );
    expect(res.body.health.gateway_state).toBe("dropped");
    const shown = await call<SessionEnvelope>("GET", `/v1/chatapp/sessions/${session.id}`, { key });
    expect(shown.body.session).toMatchObject({ status: "disconnected", reason: "disconnected_by_user" });
  });

  it("answers 404 for an unknown session", async () => {
    const { key } = await createAccount();
    expectProblem(
      await call("GET", `/v1/chatapp/sessions/${crypto.randomUUID()}/gateway`, { key }),
      404,
      "not_found",
    );
  });
});
