import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { freePort, startDevServer, startNpmScript, waitFor } from "../scripts/dev-server.ts";

/** The admin token the server under test is started with. */
export const ADMIN_TOKEN = "browser-admin-token-0123456789abcdef";

/** The business number of the local Cloud API stand-in (`npm run fake:cloud-api`'s defaults). */
export const CLOUD_API_NUMBER = {
  phone_number_id: "100000000000001",
  waba_id: "200000000000001",
  access_token: "fake-cloud-api-token",
};

/** The Meta app secret the stand-in signs its webhooks with and the server checks them with. */
const CLOUD_API_APP_SECRET = "browser-cloud-api-app-secret-0123456789";

/**
 * Settings the server under test runs with (`wrangler dev --var`), so pages change within a test:
 * QR codes rotate every 3 s and the sandbox's receipts come after 300 ms (delivered) and 600 ms
 * (read). The sandbox is the default gateway; the WhatsApp Cloud API is enabled beside it, reached
 * at the local stand-in (`npm run fake:cloud-api`, started here on its own free port).
 */
function vars(baseUrl: string, cloudApiUrl: string): Record<string, string> {
  return {
    ADMIN_TOKEN,
    OTP_SECRET: "browser-otp-secret-0123456789abcdef",
    QR_ROTATE_SECONDS: "3",
    SANDBOX_DELIVERED_MS: "300",
    SANDBOX_READ_MS: "600",
    // As `npm run dev` has it (.dev.vars.example): the console test reads a code on the sandbox phone.
    SANDBOX_SHOW_CODES: "true",
    CHATAPP_GATEWAYS: "sandbox,cloud_api",
    CLOUD_API_BASE_URL: cloudApiUrl,
    CLOUD_API_APP_SECRET,
    CLOUD_API_VERIFY_TOKEN: "browser-cloud-api-verify-token-0123456789",
    CREDENTIALS_KEY: "YnJvd3Nlci1jcmVkZW50aWFscy1rZXktMDEyMzQ1Njc=",
    PUBLIC_URL: baseUrl,
    MEDIA_URL_SECRET: "browser-media-url-secret-0123456789abcdef",
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The server under test, e.g. `http://127.0.0.1:41234`. */
    baseUrl: string;
  }
}

/**
 * Starts the service as a user does, `npm run dev` (which applies the migrations first), on a free
 * port with its own local state in a temporary folder (`DEV_PERSIST_TO`, read by
 * scripts/dev-setup.mjs, and `--persist-to`), so a developer's own `npm run dev` data is untouched,
 * and the Cloud API stand-in (`npm run fake:cloud-api`) on another, posting its webhooks to it.
 * Stops both, and removes the folder, when the run ends.
 */
export default async function setup(project: TestProject) {
  const port = await freePort();
  const fakePort = await freePort();
  const state = mkdtempSync(join(tmpdir(), "chatapp-browser-"));
  const baseUrl = `http://127.0.0.1:${port}`;
  const cloudApiUrl = `http://127.0.0.1:${fakePort}`;
  const fake = startNpmScript("fake:cloud-api", [], {
    FAKE_CLOUD_API_PORT: String(fakePort),
    FAKE_CLOUD_API_WEBHOOK_URL: `${baseUrl}/gateway/cloud-api`,
    CLOUD_API_APP_SECRET,
  });
  const args = Object.entries(vars(baseUrl, cloudApiUrl)).flatMap(([name, value]) => [
    "--var",
    `${name}:${value}`,
  ]);
  const server = startDevServer(port, state, args);
  const stop = () => {
    // Each whole group: npm, wrangler and workerd; npm and the stand-in.
    for (const { child } of [server, fake]) {
      if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
    }
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await waitFor("npm run fake:cloud-api", `${cloudApiUrl}/_fake/sent`, fake.child, fake.output);
    await waitFor("npm run dev", `${baseUrl}/health`, server.child, server.output);
  } catch (error) {
    stop();
    throw error;
  }
  project.provide("baseUrl", baseUrl);
  return stop;
}
