import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

/** The admin token the server under test is started with. */
export const ADMIN_TOKEN = "browser-admin-token-0123456789abcdef";

/**
 * Settings the server under test runs with (`wrangler dev --var`), so pages change within a test:
 * QR codes rotate every 3 s and the sandbox's receipts come after 300 ms (delivered) and 600 ms (read).
 */
const VARS = {
  ADMIN_TOKEN,
  OTP_SECRET: "browser-otp-secret-0123456789abcdef",
  QR_ROTATE_SECONDS: "3",
  SANDBOX_DELIVERED_MS: "300",
  SANDBOX_READ_MS: "600",
};

declare module "vitest" {
  export interface ProvidedContext {
    /** The server under test, e.g. `http://127.0.0.1:41234`. */
    baseUrl: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

async function waitForHealth(baseUrl: string, server: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`npm run dev exited (${server.exitCode}):\n${output()}`);
    try {
      const response = await fetch(`${baseUrl}/health`);
      if (response.ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`npm run dev did not answer /health within 90 s:\n${output()}`);
}

/**
 * Starts the service as a user does, `npm run dev` (which applies the migrations first), on a free
 * port with its own local state in a temporary folder (`DEV_PERSIST_TO`, read by
 * scripts/dev-setup.mjs, and `--persist-to`), so a developer's own `npm run dev` data is untouched.
 * Stops it, and removes the folder, when the run ends.
 */
export default async function setup(project: TestProject) {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), "chatapp-browser-"));
  const vars = Object.entries(VARS).flatMap(([name, value]) => ["--var", `${name}:${value}`]);
  let log = "";
  const server = spawn(
    "npm",
    ["run", "dev", "--", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, ...vars],
    {
      cwd: join(import.meta.dirname, ".."),
      env: { ...process.env, DEV_PERSIST_TO: state, CI: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  server.stdout?.on("data", (chunk) => (log += chunk));
  server.stderr?.on("data", (chunk) => (log += chunk));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = () => {
    // The whole group: npm, wrangler and workerd.
    if (server.pid && server.exitCode === null) process.kill(-server.pid, "SIGTERM");
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await waitForHealth(baseUrl, server, () => log);
  } catch (error) {
    stop();
    throw error;
  }
  project.provide("baseUrl", baseUrl);
  return stop;
}
