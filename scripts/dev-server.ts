// Starting the service as a user does, `npm run dev`, on a port of our choosing with its own local
// state, and waiting for it to answer: shared by the browser tests (test-browser/global-setup.ts) and
// the walkthrough check (scripts/check-readme.ts; docs/development.md, The README check).

import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";

/** The repository root, where npm scripts run. */
export const REPOSITORY_ROOT = join(import.meta.dirname, "..");

/** A free TCP port on 127.0.0.1, as the kernel hands one out (it may be taken again before use). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

/**
 * Whether `port` can be listened on at 127.0.0.1 and at ::1 (a server on either would answer
 * `http://localhost:<port>`). A host without IPv6 counts as free there.
 */
export async function portIsFree(port: number): Promise<boolean> {
  const tryListen = (host: string) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EADDRNOTAVAIL"));
      server.listen(port, host, () => server.close(() => resolve(true)));
    });
  return (await tryListen("127.0.0.1")) && (await tryListen("::1"));
}

/** A running `npm run <script>`: the npm process (leader of its own process group) and its output so far. */
export interface NpmScript {
  child: ChildProcess;
  /** Everything it printed on stdout and stderr, interleaved as it came. */
  output: () => string;
}

/**
 * Starts `npm run <script> [-- args]` in the repository root, in its own process group (so that
 * `process.kill(-child.pid)` reaches npm and everything it started), with `env` over this process's
 * environment, collecting its output.
 */
export function startNpmScript(script: string, args: string[], env: Record<string, string>): NpmScript {
  let log = "";
  const child = spawn("npm", ["run", script, ...(args.length > 0 ? ["--", ...args] : [])], {
    cwd: REPOSITORY_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  return { child, output: () => log };
}

/**
 * Starts the service as a newcomer does, `npm run dev` (whose predev, scripts/dev-setup.mjs, applies
 * the D1 migrations), listening on 127.0.0.1:`port` with its local state in the folder `state`
 * (`--persist-to`, and `DEV_PERSIST_TO` for the migrations), so a developer's own `npm run dev` and
 * its data are untouched. `args` go to `wrangler dev` after those (e.g. `--var NAME:value`).
 */
export function startDevServer(port: number, state: string, args: string[] = []): NpmScript {
  return startNpmScript(
    "dev",
    ["--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, ...args],
    // CI: wrangler runs without its interactive hotkeys.
    { DEV_PERSIST_TO: state, CI: "1" },
  );
}

/**
 * Waits until `url` answers 2xx while `server` runs (`what` names it in the error): up to
 * `timeoutMs` (180 s by default, since `npm run dev` on a fresh state first applies the migrations
 * of every local D1 database, the directory and two account databases, about 20 s each).
 *
 * @throws Error with the server's output when it exits first or the time runs out.
 */
export async function waitFor(
  what: string,
  url: string,
  server: ChildProcess,
  output: () => string,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`${what} exited (${server.exitCode}):\n${output()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
      last = `the last answer was ${response.status}: ${(await response.text()).slice(0, 500)}`;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} did not answer ${url} within ${timeoutMs / 1000} s (${last}):\n${output()}`);
}

/**
 * Stops the process group that `child` leads: SIGTERM, then SIGKILL for whatever is left after
 * `graceMs` milliseconds. Resolves once no process of the group is left (or after the SIGKILL).
 */
export async function stopGroup(child: ChildProcess, graceMs = 5_000): Promise<void> {
  const group = child.pid;
  if (!group) return;
  const alive = () => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  try {
    process.kill(-group, "SIGTERM");
  } catch {}
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  if (alive()) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {}
  }
}
