import { readFileSync } from "node:fs";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";
import * as gateways from "./test/gateway-config";

// Tests run inside workerd with the bindings of wrangler.toml: real D1, the directory and two
// account databases (migrations applied by test/setup.ts), real Durable Objects and alarms, real Queues. Only secrets are set here.
//
// The gateway is a per-deployment setting, so each gateway gets its own project (its own
// runtime): the sandbox runs everything outside test/waha and test/evolution; those two folders
// run with CHATAPP_GATEWAY set to their gateway, which tests fake at the HTTP boundary
// (test/network.ts) on the origins of test/gateway-config.ts. test/gateways runs a deployment
// that enables all three (CHATAPP_GATEWAYS), Evolution API the default, where sessions choose;
// test/cloud-api runs the sandbox with Meta's WhatsApp Cloud API beside it (Graph API faked).

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations/accounts");
  const directoryMigrations = await readD1Migrations("./migrations/directory");
  // The one-off upgrade of a deployment made before the directory (docs/databases.md, Upgrading a
  // single-database deployment).
  const upgradeSql = readFileSync("./migrations/upgrade/single-database.sql", "utf8");
  // The rate limits as wrangler.toml declares them, for the test that checks the headers' figures.
  const { ratelimits } = unstable_readConfig({ config: "./wrangler.toml" });
  const project = (name: string, include: string[], exclude: string[], bindings = {}) => ({
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            TEST_DIRECTORY_MIGRATIONS: directoryMigrations,
            TEST_UPGRADE_SQL: upgradeSql,
            TEST_RATE_LIMITS: ratelimits,
            // test/helpers.ts ADMIN_TOKEN: at least 32 characters, as config.ts requires.
            ADMIN_TOKEN: "test-admin-token-0123456789abcdef",
            OTP_SECRET: "test-otp-secret-0123456789abcdef",
            // The wrangler.toml default, whatever a local .dev.vars (made by `npm run dev`) says.
            WEBHOOK_ALLOW_HTTP_LOCALHOST: "false",
            MEDIA_ALLOW_HTTP_LOCALHOST: "false",
            SANDBOX_SHOW_CODES: "false",
            // Unset (empty counts as unset) whatever a local .dev.vars holds: each project that
            // enables a real gateway sets its own below.
            MEDIA_URL_SECRET: "",
            CLOUD_API_APP_SECRET: "",
            CLOUD_API_VERIFY_TOKEN: "",
            CREDENTIALS_KEY: "",
            ...bindings,
          },
        },
      }),
    ],
    test: {
      name,
      include,
      exclude,
      setupFiles: ["./test/setup.ts"],
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  });
  // What every project with a real gateway needs beside that gateway's own settings.
  const realGateway = {
    PUBLIC_URL: gateways.PUBLIC_URL,
    MEDIA_URL_SECRET: gateways.MEDIA_URL_SECRET,
    GATEWAY_TIMEOUT_MS: String(gateways.GATEWAY_TIMEOUT_MS),
    GATEWAY_MEDIA_TIMEOUT_MS: String(gateways.GATEWAY_TIMEOUT_MS),
  };
  return {
    test: {
      projects: [
        project(
          "sandbox",
          ["test/**/*.test.ts"],
          [
            "test/waha/**",
            "test/evolution/**",
            "test/gateways/**",
            "test/cloud-api/**",
            "test/cloud-api-fake/**",
          ],
        ),
        // The sandbox with MEDIA_ALLOW_HTTP_LOCALHOST=true, as `npm run dev` runs it: the whole
        // runtime (the session objects that download inbound media included) takes local media
        // URLs. test/media-localhost.test.ts runs here and in `sandbox` (the default, false).
        project("media-localhost", ["test/media-localhost.test.ts"], [], {
          MEDIA_ALLOW_HTTP_LOCALHOST: "true",
        }),
        // The fake of Meta's Graph API (fakes/cloud-api) against Meta's own OpenAPI document.
        project("cloud-api-fake", ["test/cloud-api-fake/**/*.test.ts"], []),
        project("waha", ["test/waha/**/*.test.ts"], [], {
          CHATAPP_GATEWAY: "waha",
          WAHA_URL: gateways.WAHA_URL,
          WAHA_API_KEY: gateways.WAHA_API_KEY,
          WAHA_WEBHOOK_HMAC_KEY: gateways.WAHA_WEBHOOK_HMAC_KEY,
          ...realGateway,
        }),
        project("evolution", ["test/evolution/**/*.test.ts"], [], {
          CHATAPP_GATEWAY: "evolution",
          EVOLUTION_URL: gateways.EVOLUTION_URL,
          EVOLUTION_API_KEY: gateways.EVOLUTION_API_KEY,
          ...realGateway,
        }),
        project("gateways", ["test/gateways/**/*.test.ts"], [], {
          CHATAPP_GATEWAY: "evolution",
          CHATAPP_GATEWAYS: "evolution,waha,sandbox",
          EVOLUTION_URL: gateways.EVOLUTION_URL,
          EVOLUTION_API_KEY: gateways.EVOLUTION_API_KEY,
          WAHA_URL: gateways.WAHA_URL,
          WAHA_API_KEY: gateways.WAHA_API_KEY,
          WAHA_WEBHOOK_HMAC_KEY: gateways.WAHA_WEBHOOK_HMAC_KEY,
          ...realGateway,
        }),
        project("cloud-api", ["test/cloud-api/**/*.test.ts"], [], {
          CHATAPP_GATEWAY: "sandbox",
          CHATAPP_GATEWAYS: "sandbox,cloud_api",
          CLOUD_API_APP_SECRET: gateways.CLOUD_API_APP_SECRET,
          CLOUD_API_VERIFY_TOKEN: gateways.CLOUD_API_VERIFY_TOKEN,
          CREDENTIALS_KEY: gateways.CREDENTIALS_KEY,
          ...realGateway,
        }),
      ],
    },
  };
});
