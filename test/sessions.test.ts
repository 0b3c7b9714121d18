import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import {
  call,
  clockMoves,
  createAccount,
  createSession,
  expectProblem,
  type SessionEnvelope,
  type SessionRecord,
  TIMESTAMP,
} from "./helpers";

const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";
const DATA_URI = /^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/;
const SESSION_KEYS = [
  "account_id",
  "created_at",
  "display_name",
  "gateway",
  "health",
  "id",
  "last_seen_at",
  "phone_number",
  "reason",
  "session_id",
  "status",
  "updated_at",
];

const sessions = (key: string, method: string, suffix = "", body?: unknown) =>
  call<SessionEnvelope>(method, `/v1/chatapp/sessions${suffix}`, { key, body });
const sandbox = (key: string, id: string, action: "scan" | "drop" | "ban", body?: unknown) =>
  call<SessionEnvelope>("POST", `/sandbox/sessions/${id}/${action}`, { key, body });

/**
 * Asserts the record shape (the `Session` schema of openapi.json) and the invariants that hold in
 * every state.
 */
function expectRecord(session: SessionRecord, accountId: string): void {
  expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
  expect(session.account_id).toBe(accountId);
  expect(session.session_id).toBe(`session_${session.id}`);
  expect(session.created_at).toMatch(TIMESTAMP);
  expect(session.updated_at).toMatch(TIMESTAMP);
  if (session.last_seen_at !== null) expect(session.last_seen_at).toMatch(TIMESTAMP);
  expect(session.reason === null || typeof session.reason === "string").toBe(true);
}

async function connectedSession(key: string): Promise<SessionRecord> {
  const { session } = await createSession(key);
  const scanned = await sandbox(key, session.id, "scan", { phone_number: "+447911123456" });
  expect(scanned.body.session.status).toBe("connected");
  return scanned.body.session;
}

describe("POST /v1/chatapp/sessions", () => {
  it("creates a pending session with a QR code and no `reason`", async () => {
    const { accountId, key } = await createAccount();
    const res = await sessions(key, "POST");
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["qr_code", "session", "success"]);
    expect(res.body.success).toBe(true);
    const { session } = res.body;
    expect(session).not.toHaveProperty("reason");
    expect(Object.keys(session).sort()).toEqual(SESSION_KEYS.filter((k) => k !== "reason"));
    expect(session).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      account_id: accountId,
      session_id: `session_${session.id}`,
      phone_number: null,
      display_name: `session_${session.id}`,
      status: "pending",
    });
    expect(session.created_at).toMatch(TIMESTAMP);
    expect(session.updated_at).toMatch(TIMESTAMP);
    expect(session.last_seen_at === null || TIMESTAMP.test(session.last_seen_at)).toBe(true);
    expect(res.body.qr_code).toMatch(DATA_URI);
  });

  it("writes the session through to D1", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    const row = await (await accountD1(accountId))
      .prepare("SELECT * FROM sessions WHERE id = ?")
      .bind(session.id)
      .first<Record<string, unknown>>();
    expect(row).toMatchObject({
      account_id: accountId,
      session_id: `session_${session.id}`,
      status: "pending",
      phone_number: null,
      display_name: `session_${session.id}`,
      reason: null,
    });
  });

  it("ignores a request body: the service generates the id", async () => {
    const { key } = await createAccount();
    const res = await sessions(key, "POST", "", { id: UNKNOWN_ID, status: "connected" });
    expect(res.status).toBe(201);
    expect(res.body.session.id).not.toBe(UNKNOWN_ID);
    expect(res.body.session.status).toBe("pending");
  });
});

describe("GET /v1/chatapp/sessions", () => {
  it("lists the account's sessions, newest first, with `reason`", async () => {
    const { accountId, key } = await createAccount();
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      created.push((await createSession(key)).session.id);
      await clockMoves();
    }
    const res = await call<{ success: boolean; sessions: SessionRecord[] }>("GET", "/v1/chatapp/sessions", {
      key,
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.sessions.map((s) => s.id)).toEqual(created.reverse());
    for (const session of res.body.sessions) {
      expectRecord(session, accountId);
      expect(session).toMatchObject({ status: "pending", reason: null, phone_number: null });
    }
  });

  it("is empty for a new account and never shows another account's sessions", async () => {
    const a = await createAccount();
    const b = await createAccount();
    await createSession(a.key);
    const res = await call<{ success: boolean; sessions: SessionRecord[] }>("GET", "/v1/chatapp/sessions", {
      key: b.key,
    });
    expect(res.body).toEqual({
      success: true,
      sessions: [],
      links: { first: null, last: null, prev: null, next: null },
      meta: {
        path: "http://localhost/v1/chatapp/sessions",
        per_page: 100,
        next_cursor: null,
        prev_cursor: null,
      },
    });
  });
});

describe("GET /v1/chatapp/sessions/{id}", () => {
  it("shows the session as created, with reason null", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    const res = await sessions(key, "GET", `/${session.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, session: { ...session, reason: null } });
    expectRecord(res.body.session, accountId);
  });

  it("is 404 for an unknown id", async () => {
    const { key } = await createAccount();
    expectProblem(await sessions(key, "GET", `/${UNKNOWN_ID}`), 404, "not_found");
  });
});

describe("GET /v1/chatapp/sessions/{id}/qr-code", () => {
  it("serves the current QR code of a pending session", async () => {
    const { key } = await createAccount();
    const { session, qr_code } = await createSession(key);
    const res = await call<{ success: boolean; qr_code: string }>(
      "GET",
      `/v1/chatapp/sessions/${session.id}/qr-code`,
      { key },
    );
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["qr_code", "success"]);
    expect(res.body.success).toBe(true);
    expect(res.body.qr_code).toMatch(DATA_URI);
    // No rotation has happened yet: the same QR as at creation.
    expect(res.body.qr_code).toBe(qr_code);
  });

  it("is 409 session_not_pending once the session is connected", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    const problem = expectProblem(
      await sessions(key, "GET", `/${session.id}/qr-code`),
      409,
      "session_not_pending",
    );
    expect(problem.detail).toEqual(expect.any(String));
  });

  it("is 409 session_not_pending when disconnected or banned", async () => {
    const { key } = await createAccount();
    const a = await connectedSession(key);
    await sessions(key, "PATCH", `/${a.id}/disconnect`);
    expectProblem(await sessions(key, "GET", `/${a.id}/qr-code`), 409, "session_not_pending");
    const b = await connectedSession(key);
    await sandbox(key, b.id, "ban");
    expectProblem(await sessions(key, "GET", `/${b.id}/qr-code`), 409, "session_not_pending");
  });

  it("is 404 for an unknown id", async () => {
    const { key } = await createAccount();
    expectProblem(await sessions(key, "GET", `/${UNKNOWN_ID}/qr-code`), 404, "not_found");
  });
});

describe("PATCH /v1/chatapp/sessions/{id}/disconnect", () => {
  it("disconnects a connected session and keeps its link details", async () => {
    const { accountId, key } = await createAccount();
    const connected = await connectedSession(key);
    const res = await sessions(key, "PATCH", `/${connected.id}/disconnect`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["session", "success"]);
    expect(res.body.success).toBe(true);
    expectRecord(res.body.session, accountId);
    expect(res.body.session).toMatchObject({
      id: connected.id,
      status: "disconnected",
      reason: "disconnected_by_user",
      phone_number: "+447911123456",
      display_name: connected.display_name,
      created_at: connected.created_at,
    });
    expect(res.body.session.updated_at >= connected.updated_at).toBe(true);
    const shown = await sessions(key, "GET", `/${connected.id}`);
    expect(shown.body.session).toEqual(res.body.session);
  });

  it("is 409 session_not_connected for a pending session", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    expectProblem(await sessions(key, "PATCH", `/${session.id}/disconnect`), 409, "session_not_connected");
    expect((await sessions(key, "GET", `/${session.id}`)).body.session.status).toBe("pending");
  });

  it("is 409 session_not_connected for an already disconnected session", async () => {
    const { key } = await createAccount();
    const connected = await connectedSession(key);
    expect((await sessions(key, "PATCH", `/${connected.id}/disconnect`)).status).toBe(200);
    expectProblem(await sessions(key, "PATCH", `/${connected.id}/disconnect`), 409, "session_not_connected");
  });

  it("is 404 for an unknown id", async () => {
    const { key } = await createAccount();
    expectProblem(await sessions(key, "PATCH", `/${UNKNOWN_ID}/disconnect`), 404, "not_found");
  });
});

describe("PATCH /v1/chatapp/sessions/{id}/reconnect", () => {
  it("reconnects a disconnected session that is still linked, without a QR", async () => {
    const { accountId, key } = await createAccount();
    const connected = await connectedSession(key);
    await sessions(key, "PATCH", `/${connected.id}/disconnect`);
    const res = await sessions(key, "PATCH", `/${connected.id}/reconnect`);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("qr_code");
    expect(res.body.success).toBe(true);
    expectRecord(res.body.session, accountId);
    expect(res.body.session).toMatchObject({
      status: "connected",
      reason: null,
      phone_number: "+447911123456",
    });
    expect(res.body.session.last_seen_at).toMatch(TIMESTAMP);
  });

  it("is 409 session_not_disconnected for a pending session", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    expectProblem(await sessions(key, "PATCH", `/${session.id}/reconnect`), 409, "session_not_disconnected");
  });

  it("is 409 session_not_disconnected for a connected session", async () => {
    const { key } = await createAccount();
    const connected = await connectedSession(key);
    expectProblem(
      await sessions(key, "PATCH", `/${connected.id}/reconnect`),
      409,
      "session_not_disconnected",
    );
  });

  it("is 409 session_not_disconnected for a banned session", async () => {
    const { key } = await createAccount();
    const connected = await connectedSession(key);
    await sandbox(key, connected.id, "ban");
    expectProblem(
      await sessions(key, "PATCH", `/${connected.id}/reconnect`),
      409,
      "session_not_disconnected",
    );
  });

  it("is 404 for an unknown id", async () => {
    const { key } = await createAccount();
    expectProblem(await sessions(key, "PATCH", `/${UNKNOWN_ID}/reconnect`), 404, "not_found");
  });
});

describe("DELETE /v1/chatapp/sessions/{id}", () => {
  it("deletes the session from D1 and clears its Durable Object", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    const res = await sessions(key, "DELETE", `/${session.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    expectProblem(await sessions(key, "GET", `/${session.id}`), 404, "not_found");
    expectProblem(await sessions(key, "GET", `/${session.id}/qr-code`), 404, "not_found");
    expectProblem(await sessions(key, "DELETE", `/${session.id}`), 404, "not_found");
    const list = await call<{ sessions: SessionRecord[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(list.body.sessions).toEqual([]);
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM sessions WHERE id = ?")
      .bind(session.id)
      .first();
    expect(row).toBeNull();
  });

  it("deletes a connected session too", async () => {
    const { key } = await createAccount();
    const connected = await connectedSession(key);
    expect((await sessions(key, "DELETE", `/${connected.id}`)).status).toBe(200);
    expectProblem(await sessions(key, "GET", `/${connected.id}`), 404, "not_found");
  });

  it("is 404 for an unknown id", async () => {
    const { key } = await createAccount();
    expectProblem(await sessions(key, "DELETE", `/${UNKNOWN_ID}`), 404, "not_found");
  });

  it("never answers 500 to calls racing a delete", async () => {
    const { key } = await createAccount();
    for (let i = 0; i < 3; i++) {
      const linked = await connectedSession(key);
      const pending = (await createSession(key)).session;
      const results = await Promise.all([
        sessions(key, "DELETE", `/${linked.id}`),
        sessions(key, "PATCH", `/${linked.id}/disconnect`),
        sandbox(key, linked.id, "ban"),
        sessions(key, "DELETE", `/${pending.id}`),
        sessions(key, "GET", `/${pending.id}/qr-code`),
        sandbox(key, pending.id, "scan"),
      ]);
      for (const res of results) {
        expect([200, 404, 409]).toContain(res.status);
        if (res.status !== 200) expect(res.headers.get("content-type")).toBe("application/problem+json");
      }
      expectProblem(await sessions(key, "GET", `/${linked.id}`), 404, "not_found");
      expectProblem(await sessions(key, "GET", `/${pending.id}`), 404, "not_found");
    }
  });
});

describe("ownership", () => {
  it("answers 404 to another account on every session endpoint, and changes nothing", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const connected = await connectedSession(owner.key);
    const pending = (await createSession(owner.key)).session;

    const attempts: [string, string, string][] = [
      ["GET", "", pending.id],
      ["GET", "/qr-code", pending.id],
      ["PATCH", "/disconnect", connected.id],
      ["PATCH", "/reconnect", connected.id],
      ["DELETE", "", pending.id],
      ["DELETE", "", connected.id],
    ];
    for (const [method, suffix, id] of attempts) {
      const res = await sessions(other.key, method, `/${id}${suffix}`);
      const problem = expectProblem(res, 404, "not_found");
      // The same answer as for an id that does not exist at all.
      const unknown = await sessions(other.key, method, `/${UNKNOWN_ID}${suffix}`);
      expect(problem.detail).toBe(expectProblem(unknown, 404, "not_found").detail);
    }
    for (const action of ["scan", "drop", "ban"] as const) {
      expectProblem(await sandbox(other.key, pending.id, action), 404, "not_found");
      expectProblem(await sandbox(other.key, connected.id, action), 404, "not_found");
    }

    const mine = await call<{ sessions: SessionRecord[] }>("GET", "/v1/chatapp/sessions", { key: owner.key });
    expect(mine.body.sessions.map((s) => [s.id, s.status])).toEqual([
      [pending.id, "pending"],
      [connected.id, "connected"],
    ]);
  });
});
