import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { call, createAccount, type SessionEnvelope } from "../helpers";
import { network, useNetwork } from "../network";

useNetwork();

describe("cloud api smoke", () => {
  it("creates a connected session", async () => {
    network.use(
      http.get("https://graph.facebook.com/v23.0/106540352242922", ({ request }) => {
        if (request.headers.get("authorization") !== "Bearer good-token")
          return HttpResponse.json(
            { error: { message: "Invalid OAuth access token.", type: "OAuthException", code: 190 } },
            { status: 401 },
          );
        return HttpResponse.json({
          id: "106540352242922",
          display_phone_number: "+1 555-555-5555",
          verified_name: "Jaspers Market",
          quality_rating: "GREEN",
        });
      }),
    );
    const { key } = await createAccount();
    const res = await call<SessionEnvelope>("POST", "/v1/chatapp/sessions", {
      key,
      body: {
        gateway: "cloud_api",
        cloud_api: {
          phone_number_id: "106540352242922",
          waba_id: "102290129340398",
          access_token: "good-token",
        },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.session.status).toBe("connected");
    expect(res.body.session.phone_number).toBe("+15555555555");
    const row = await env.DB.prepare("SELECT * FROM cloud_api_numbers").first<Record<string, unknown>>();
    expect(JSON.stringify(row)).not.toContain("good-token");
    const bad = await call("POST", "/v1/chatapp/sessions", {
      key,
      body: {
        gateway: "cloud_api",
        cloud_api: { phone_number_id: "106540352242922", waba_id: "102290129340398", access_token: "bad" },
      },
    });
    expect(bad.status, JSON.stringify(bad.body)).toBe(422);
    expect(bad.body.code).toBe("gateway_credentials_invalid");
  });
});
