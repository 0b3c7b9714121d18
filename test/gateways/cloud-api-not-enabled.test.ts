import { describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { call, createAccount, expectProblem } from "../helpers";
import { useNetwork } from "../network";

// A deployment that does not enable the Cloud API (project `gateways`: CHATAPP_GATEWAYS =
// evolution,waha,sandbox) refuses a `cloud_api` session before Meta is asked anything.

useNetwork();

describe("gateway cloud_api where the deployment does not enable it", () => {
  it("→ 422 validation_failed under errors.gateway; nothing is stored, Meta is not called", async () => {
    const { key, accountId } = await createAccount();
    const res = await call("POST", "/v1/chatapp/sessions", {
      key,
      body: {
        gateway: "cloud_api",
        cloud_api: { phone_number_id: "106540352242922", waba_id: "102290129340398", access_token: "EAAG-x" },
      },
    });
    const problem = expectProblem(res, 422, "validation_failed");
    expect(problem.errors).toEqual({ gateway: ["not enabled here; enabled: evolution, waha, sandbox"] });
    const row = await (await accountD1(accountId))
      .prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(row?.n).toBe(0);
  });
});
