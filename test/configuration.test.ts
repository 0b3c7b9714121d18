import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import { ConfigError, readConfig } from "../src/config";
import {
  CLOUD_API_APP_SECRET,
  CLOUD_API_VERIFY_TOKEN,
  CREDENTIALS_KEY,
  EVOLUTION_API_KEY,
  EVOLUTION_URL,
  MEDIA_URL_SECRET,
  PUBLIC_URL,
  WAHA_URL,
  WAHA_WEBHOOK_HMAC_KEY,
} from "./gateway-config";
import { ADMIN_TOKEN, expectProblem } from "./helpers";

/** The Worker's app on a copy of the test bindings with `vars` changed (a fresh configuration). */
async function callWith(vars: Record<string, string>, path: string) {
  const response = await createApp().fetch(
    new Request(`http://localhost${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } }),
    { ...env, ...vars },
  );
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
}

const WAHA = {
  CHATAPP_GATEWAY: "waha",
  WAHA_URL,
  WAHA_API_KEY: "k",
  WAHA_WEBHOOK_HMAC_KEY,
  PUBLIC_URL,
  MEDIA_URL_SECRET,
};

const CLOUD_API = {
  CHATAPP_GATEWAYS: "sandbox,cloud_api",
  CLOUD_API_APP_SECRET,
  CLOUD_API_VERIFY_TOKEN,
  CREDENTIALS_KEY,
  PUBLIC_URL,
  MEDIA_URL_SECRET,
};

describe("gateway configuration", () => {
  it("defaults to the sandbox", () => {
    expect(readConfig({ ...env }).gateway).toEqual({ kind: "sandbox" });
  });

  it("reads complete WAHA and Evolution settings, without trailing slashes", () => {
    expect(
      readConfig({ ...env, ...WAHA, WAHA_URL: `${WAHA_URL}/`, GATEWAY_TIMEOUT_MS: "2500" }).gateway,
    ).toEqual({
      kind: "waha",
      url: WAHA_URL,
      apiKey: "k",
      hmacKey: WAHA_WEBHOOK_HMAC_KEY,
      publicUrl: PUBLIC_URL,
      mediaUrlSecret: MEDIA_URL_SECRET,
      timeoutMs: 2500,
      mediaTimeoutMs: 60_000,
    });
    const evolution = {
      CHATAPP_GATEWAY: "evolution",
      EVOLUTION_URL,
      EVOLUTION_API_KEY,
      PUBLIC_URL,
      MEDIA_URL_SECRET,
    };
    expect(readConfig({ ...env, ...evolution }).gateway).toEqual({
      kind: "evolution",
      url: EVOLUTION_URL,
      apiKey: EVOLUTION_API_KEY,
      publicUrl: PUBLIC_URL,
      mediaUrlSecret: MEDIA_URL_SECRET,
      timeoutMs: 10_000,
      mediaTimeoutMs: 60_000,
    });
  });

  it.each([
    ["WAHA_URL", { ...WAHA, WAHA_URL: "" }, "is required when CHATAPP_GATEWAY is waha"],
    ["WAHA_API_KEY", { ...WAHA, WAHA_API_KEY: "" }, "is required"],
    ["WAHA_WEBHOOK_HMAC_KEY", { ...WAHA, WAHA_WEBHOOK_HMAC_KEY: "" }, "is required"],
    ["PUBLIC_URL", { ...WAHA, PUBLIC_URL: "" }, "is required"],
    ["MEDIA_URL_SECRET", { ...WAHA, MEDIA_URL_SECRET: "" }, "is required when CHATAPP_GATEWAY is waha"],
    ["MEDIA_URL_SECRET", { ...WAHA, MEDIA_URL_SECRET: "short" }, "is invalid: at least 32 characters"],
    [
      "MEDIA_URL_SECRET",
      { CHATAPP_GATEWAY: "evolution", EVOLUTION_URL, EVOLUTION_API_KEY, PUBLIC_URL },
      "is required when CHATAPP_GATEWAY is evolution",
    ],
    // 31 characters: one short of MIN_GATEWAY_SECRET_LENGTH.
    [
      "WAHA_WEBHOOK_HMAC_KEY",
      { ...WAHA, WAHA_WEBHOOK_HMAC_KEY: "h".repeat(31) },
      "is invalid: at least 32 characters",
    ],
    [
      "EVOLUTION_API_KEY",
      {
        CHATAPP_GATEWAY: "evolution",
        EVOLUTION_URL,
        EVOLUTION_API_KEY: "e".repeat(31),
        PUBLIC_URL,
        MEDIA_URL_SECRET,
      },
      "is invalid: at least 32 characters",
    ],
    [
      "CLOUD_API_VERIFY_TOKEN",
      { ...CLOUD_API, CLOUD_API_VERIFY_TOKEN: "v".repeat(31) },
      "is invalid: at least 32 characters",
    ],
    ["WAHA_URL", { ...WAHA, WAHA_URL: "waha:3000" }, "is invalid"],
    ["EVOLUTION_API_KEY", { CHATAPP_GATEWAY: "evolution", EVOLUTION_URL, PUBLIC_URL }, "is required"],
    ["CHATAPP_GATEWAY", { CHATAPP_GATEWAY: "twilio" }, "is invalid"],
    ["CHATAPP_GATEWAYS", { CHATAPP_GATEWAYS: "sandbox,twilio" }, "is invalid"],
    [
      "CHATAPP_GATEWAYS",
      { CHATAPP_GATEWAYS: "waha", ...WAHA, CHATAPP_GATEWAY: "sandbox" },
      "is invalid: it must include CHATAPP_GATEWAY (sandbox)",
    ],
    ["WAHA_URL", { CHATAPP_GATEWAYS: "sandbox,waha" }, "is required when CHATAPP_GATEWAYS enables waha"],
    [
      "MEDIA_URL_SECRET",
      { CHATAPP_GATEWAYS: "sandbox,evolution", EVOLUTION_URL, EVOLUTION_API_KEY, PUBLIC_URL },
      "is required when CHATAPP_GATEWAYS enables evolution",
    ],
    ["GATEWAY_TIMEOUT_MS", { GATEWAY_TIMEOUT_MS: "soon" }, "is invalid"],
    ["GATEWAY_MEDIA_TIMEOUT_MS", { GATEWAY_MEDIA_TIMEOUT_MS: "50" }, "is invalid"],
  ])("names %s when it is missing or malformed", (variable, vars, problem) => {
    let error: unknown;
    try {
      readConfig({ ...env, ...vars });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as ConfigError).gateway).toBe(true);
    expect((error as ConfigError).message).toContain(`${variable} ${problem}`);
  });

  it("enables CHATAPP_GATEWAY alone unless CHATAPP_GATEWAYS lists more, each with its settings", () => {
    const alone = readConfig({ ...env, ...WAHA });
    expect(alone.CHATAPP_GATEWAYS).toEqual(["waha"]);
    expect(Object.keys(alone.gateways)).toEqual(["waha"]);
    expect(readConfig({ ...env }).mediaUrlSecret).toBeNull();
    const several = readConfig({
      ...env,
      ...WAHA,
      CHATAPP_GATEWAY: "sandbox",
      CHATAPP_GATEWAYS: " sandbox , waha",
    });
    expect(several.gateway).toEqual({ kind: "sandbox" });
    expect(several.CHATAPP_GATEWAYS).toEqual(["sandbox", "waha"]);
    expect(several.gateways.sandbox).toEqual({ kind: "sandbox" });
    expect(several.gateways.waha).toMatchObject({
      kind: "waha",
      url: WAHA_URL,
      hmacKey: WAHA_WEBHOOK_HMAC_KEY,
    });
    expect(several.gateways.evolution).toBeUndefined();
    // Signed media links exist as soon as one real gateway is enabled, whatever the default.
    expect(several.mediaUrlSecret).toBe(MEDIA_URL_SECRET);
  });

  it("ignores settings of the gateways not chosen", () => {
    expect(readConfig({ ...env, WAHA_URL: "not a url", EVOLUTION_API_KEY: "" }).gateway).toEqual({
      kind: "sandbox",
    });
  });

  it("answers the first request with a 500 gateway_misconfigured problem naming the variable", async () => {
    const res = await callWith({ ...WAHA, WAHA_WEBHOOK_HMAC_KEY: "" }, "/v1/chatapp/sessions");
    const problem = expectProblem(res, 500, "gateway_misconfigured");
    expect(problem.detail).toContain("WAHA_WEBHOOK_HMAC_KEY is required when CHATAPP_GATEWAY is waha");
  });

  it("answers a malformed non-gateway variable with service_misconfigured", async () => {
    const res = await callWith({ PRICE_TEXT: "free" }, "/admin/accounts");
    const problem = expectProblem(res, 500, "service_misconfigured");
    expect(problem.detail).toContain("PRICE_TEXT is invalid");
  });

  it("takes secrets of exactly 32 characters", () => {
    const exactly = "s".repeat(32);
    expect(readConfig({ ...env, ...WAHA, WAHA_WEBHOOK_HMAC_KEY: exactly }).gateway).toMatchObject({
      hmacKey: exactly,
    });
    const evolution = { CHATAPP_GATEWAY: "evolution", EVOLUTION_URL, PUBLIC_URL, MEDIA_URL_SECRET };
    expect(readConfig({ ...env, ...evolution, EVOLUTION_API_KEY: exactly }).gateway).toMatchObject({
      apiKey: exactly,
    });
    const cloudApi: Record<string, string> = { ...CLOUD_API, CLOUD_API_VERIFY_TOKEN: exactly };
    expect(readConfig({ ...env, ...cloudApi }).gateways.cloud_api).toMatchObject({ verifyToken: exactly });
  });

  it.each([
    ["WAHA_WEBHOOK_HMAC_KEY", { ...WAHA, WAHA_WEBHOOK_HMAC_KEY: "short" }, "/gateway/waha/events"],
    [
      "EVOLUTION_API_KEY",
      {
        CHATAPP_GATEWAY: "evolution",
        EVOLUTION_URL,
        EVOLUTION_API_KEY: "short",
        PUBLIC_URL,
        MEDIA_URL_SECRET,
      },
      "/gateway/evolution/events",
    ],
    ["CLOUD_API_VERIFY_TOKEN", { ...CLOUD_API, CLOUD_API_VERIFY_TOKEN: "short" }, "/gateway/cloud-api"],
  ])(
    "a short %s answers its gateway's events and the API with 500 gateway_misconfigured, /health 503",
    async (variable, vars, events) => {
      const detail = `The service is misconfigured: ${variable} is invalid: at least 32 characters.`;
      for (const path of [events, "/v1/chatapp/sessions"]) {
        const problem = expectProblem(await callWith(vars, path), 500, "gateway_misconfigured");
        expect(problem.detail).toBe(detail);
      }
      const health = await callWith(vars, "/health");
      expect(health.status).toBe(503);
      expect(health.body).toEqual({ status: "unavailable", code: "gateway_misconfigured", reason: detail });
    },
  );

  it("reports the reason on GET /health with 503", async () => {
    const res = await callWith({ CHATAPP_GATEWAY: "evolution", EVOLUTION_API_KEY, PUBLIC_URL }, "/health");
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: "unavailable",
      code: "gateway_misconfigured",
      reason: "The service is misconfigured: EVOLUTION_URL is required when CHATAPP_GATEWAY is evolution.",
    });
  });

  it("reports the chosen gateway on GET /health when the configuration is complete", async () => {
    const res = await callWith(WAHA, "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok", gateway: "waha" });
  });
});
