import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatSession } from "../src/sessions/chat-session";
import { SessionCore } from "../src/sessions/session-core";
import { accountD1 } from "./databases";
import {
  call,
  createAccount,
  expectProblem,
  type SessionEnvelope,
  sessionStub,
  showSession,
} from "./helpers";

// The sandbox project: CHATAPP_GATEWAY=sandbox and CHATAPP_GATEWAYS unset, so the sandbox alone is
// enabled. test/gateways runs a deployment that enables several.

async function sessionRowCount(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT COUNT(*) AS n FROM sessions WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("a session's gateway", () => {
  it("is CHATAPP_GATEWAY without `gateway`, and the create response is otherwise as before", async () => {
    const { key } = await createAccount();
    const res = await call<SessionEnvelope>("POST", "/v1/chatapp/sessions", { key });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.session).sort()).toEqual(
      [
        "account_id",
        "created_at",
        "display_name",
        "gateway",
        "health",
        "id",
        "last_seen_at",
        "phone_number",
        "session_id",
        "status",
        "updated_at",
      ].sort(),
    );
    expect(res.body.session.gateway).toBe("sandbox");
    expect((await showSession(key, res.body.session.id)).gateway).toBe("sandbox");
    // An empty body, or `gateway` naming the default, is the same.
    const explicit = await call<SessionEnvelope>("POST", "/v1/chatapp/sessions", {
      key,
      body: { gateway: "sandbox" },
    });
    expect(explicit.status).toBe(201);
    expect(explicit.body.session.gateway).toBe("sandbox");
  });

  it("refuses a gateway the deployment does not enable with 422, storing nothing", async () => {
    const { accountId, key } = await createAccount();
    const res = await call("POST", "/v1/chatapp/sessions", { key, body: { gateway: "waha" } });
    const problem = expectProblem(res, 422, "validation_failed");
    expect(Object.keys(problem.errors as object)).toEqual(["gateway"]);
    expect((problem.errors as Record<string, string[]>).gateway?.[0]).toContain("enabled: sandbox");
    const unknown = await call("POST", "/v1/chatapp/sessions", { key, body: { gateway: "twilio" } });
    expect(Object.keys(expectProblem(unknown, 422, "validation_failed").errors as object)).toEqual([
      "gateway",
    ]);
    expect(await sessionRowCount(accountId)).toBe(0);
  });

  it("keeps an object stored before sessions chose their gateway on CHATAPP_GATEWAY", async () => {
    const { key, accountId } = await createAccount();
    const created = await call<SessionEnvelope>("POST", "/v1/chatapp/sessions", { key });
    const { id } = created.body.session;
    // As before this change: no `gateway` column in the object, null in D1; and, as every object
    // of then, no schema version (src/sessions/storage-schema.ts).
    await runInDurableObject(sessionStub(id), (_instance: ChatSession, state) => {
      state.storage.sql.exec("ALTER TABLE session DROP COLUMN gateway; DROP TABLE _schema");
    });
    await (await accountD1(accountId))
      .prepare("UPDATE sessions SET gateway = NULL WHERE id = ?")
      .bind(id)
      .run();
    expect((await showSession(key, id)).gateway).toBe("sandbox");

    const scanned = await call<SessionEnvelope>("POST", `/sandbox/sessions/${id}/scan`, { key, body: {} });
    expect(scanned.status).toBe(200);
    expect(scanned.body.session).toMatchObject({ status: "connected", gateway: "sandbox" });

    // A wake of the object adds the column back (empty: the deployment's default).
    const column = await runInDurableObject(sessionStub(id), (_instance: ChatSession, state) => {
      const core = new SessionCore(state, env);
      core.setUp();
      const stored = state.storage.sql.exec<{ gateway: string | null }>("SELECT gateway FROM session").one();
      return { stored: stored.gateway, read: core.state()?.gateway };
    });
    expect(column).toEqual({ stored: null, read: "sandbox" });
  });
});
