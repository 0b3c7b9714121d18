import { beforeEach, describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { call, createAccount, expectProblem, type SessionEnvelope } from "../helpers";
import { useNetwork } from "../network";
import { FakeWaha } from "./fake-waha";

// The waha project enables WAHA alone (CHATAPP_GATEWAYS unset).

useNetwork();

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

describe("a WAHA deployment's session gateways", () => {
  it("puts sessions on WAHA and refuses one not enabled before calling any gateway", async () => {
    const { accountId, key } = await createAccount();
    const refused = await call("POST", "/v1/chatapp/sessions", { key, body: { gateway: "sandbox" } });
    const problem = expectProblem(refused, 422, "validation_failed");
    expect(problem.errors).toEqual({ gateway: ["not enabled here; enabled: waha"] });
    expect(waha.calls).toEqual([]);
    const rows = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM sessions WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);

    const created = await call<SessionEnvelope>("POST", "/v1/chatapp/sessions", { key });
    expect(created.status).toBe(201);
    expect(created.body.session.gateway).toBe("waha");
    expect(waha.calls[0]).toBe("POST /api/sessions");
    // No sandbox here: its routes are absent, for this WAHA session too.
    const scan = await call("POST", `/sandbox/sessions/${created.body.session.id}/scan`, { key, body: {} });
    expectProblem(scan, 404, "not_found");
  });
});
