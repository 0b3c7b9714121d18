// What every benchmark of `npm run bench` shares: the server's address, one JSON request
// helper with bounded retries, statistics, fixtures (accounts, linked sandbox sessions, sends and
// message lists), a webhook receiver, the D1 counters of `GET /admin/metrics` and the result
// table.

import { createServer } from "node:http";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Webhook } from "standardwebhooks";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    "campaign-full": { type: "boolean" },
    only: { type: "string" },
    "state-dir": { type: "string" },
    "footprint-messages": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: false,
});
if (args.help) {
  console.log(
    "usage: npm run bench [-- [--url http://localhost:8787] [--campaign-full] [--only <step>[,<step>…]]\n" +
      "                        [--state-dir <dev server's .wrangler/state>] [--footprint-messages <n>]]\n" +
      "  (env: BENCH_URL, ADMIN_TOKEN, BENCH_TIMEOUT_S, BENCH_CAMPAIGN_FULL=1, BENCH_STATE_DIR,\n" +
      "   BENCH_FOOTPRINT_MESSAGES)",
  );
  process.exit(0);
}

export const BASE = (args.url ?? process.env.BENCH_URL ?? "http://localhost:8787").replace(/\/+$/, "");
export const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? "dev-admin-token-change-me-0123456789abcdef";
/** Whether the 100,000-recipient campaign runs to completion (opt-in: it takes minutes). */
export const CAMPAIGN_FULL = Boolean(args["campaign-full"]) || process.env.BENCH_CAMPAIGN_FULL === "1";
/** The steps to run (`--only`, comma-separated names of scripts/bench.mjs's steps); empty: all. */
export const ONLY = new Set((args.only ?? "").split(",").filter(Boolean));
/**
 * The dev server's local state (`wrangler dev --persist-to`, by default `.wrangler/state` of the
 * directory it was started in), whose D1 files the footprint step reads.
 */
export const STATE_DIR = resolve(args["state-dir"] ?? process.env.BENCH_STATE_DIR ?? ".wrangler/state");
/** Messages the footprint step sends (scripts/bench/footprint.mjs). */
export const FOOTPRINT_MESSAGES = Number(
  args["footprint-messages"] ?? process.env.BENCH_FOOTPRINT_MESSAGES ?? 10_000,
);
// The footprint step's 10,000 messages and 30,000 webhooks take about four minutes of it.
const RUN_LIMIT_MS = Number(process.env.BENCH_TIMEOUT_S ?? (CAMPAIGN_FULL ? 2700 : 900)) * 1000;
const REQUEST_TIMEOUT_MS = 30_000;
const POLL_MS = 100;
/** A wait gives up when the number of queued messages has not moved for this long. */
export const STALL_MS = 20_000;
const STALL_CHECK_MS = 5_000;

// The whole run is bounded: past the limit, give up with a message and the rows measured so far.
setTimeout(() => {
  console.error(`\nbench: gave up after ${RUN_LIMIT_MS / 1000} s (BENCH_TIMEOUT_S).`);
  if (rows.length > 0) printTable();
  process.exit(1);
}, RUN_LIMIT_MS).unref();

export const log = (line) => process.stderr.write(`${line}\n`);
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class HttpError extends Error {}

/** Requests tried again after the server dropped them (a `wrangler dev` reload, a time-out). */
let retriedRequests = 0;
/** How many requests were tried again (a restarted server disturbs the figures). */
export const retriedRequestCount = () => retriedRequests;

/**
 * One JSON request; returns the parsed body, the status and the wall time in ms. A status other
 * than `expect` (or any non-2xx without it) throws, unless listed in `accept`. `wrangler dev`
 * drops connections, or answers 503 "restarted mid-request", when it reloads after a source
 * change: GETs and requests marked `retry` (safe to repeat) are then tried twice more; a retried
 * request's `ms` covers the last try only. `timeoutMs` bounds each try.
 */
export async function api(
  method,
  path,
  {
    token,
    body,
    expect,
    accept = [],
    idempotencyKey,
    retry = method === "GET",
    timeoutMs = REQUEST_TIMEOUT_MS,
  } = {},
) {
  const headers = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    let failure;
    try {
      const response = await fetch(`${BASE}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.text();
      const ms = performance.now() - started;
      const ok = expect ? response.status === expect : response.ok;
      if (ok || accept.includes(response.status)) {
        return { json: text ? JSON.parse(text) : null, ms, status: response.status };
      }
      if (!(response.status === 503 && /restarted mid-request/i.test(text))) {
        throw new HttpError(`${method} ${path} → ${response.status}: ${text.slice(0, 300)}`);
      }
      failure = "503 worker restarted mid-request";
    } catch (error) {
      if (error instanceof HttpError) throw error;
      failure = `network error: ${error.cause?.code ?? error.message}`;
    }
    if (!retry || attempt >= 2) {
      throw new HttpError(`${method} ${path} → ${failure} (did the dev server reload or stop?)`);
    }
    retriedRequests++;
    log(`  ${method} ${path}: ${failure}; trying again in 1 s`);
    await sleep(1000);
  }
}

// ---- statistics -------------------------------------------------------------------------------

const sorted = (xs) => [...xs].sort((a, b) => a - b);
export const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
export function median(xs) {
  const s = sorted(xs);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
/** Nearest-rank percentile. */
export function percentile(xs, p) {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
export const fmt = (n, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

// ---- fixtures ---------------------------------------------------------------------------------

/**
 * Distinct US numbers +1415555XXXX from `first` on (+1415556XXXX from 10,000 on, and so forth).
 * The sandbox fails numbers ending in 0000, 0001 and 0002 on purpose, so those are skipped.
 */
export function numbers(count, first) {
  const out = [];
  for (let n = first; out.length < count; n++) {
    const suffix = String(n % 10_000).padStart(4, "0");
    if (suffix === "0000" || suffix === "0001" || suffix === "0002") continue;
    out.push(`+1415${555 + Math.floor(n / 10_000)}${suffix}`);
  }
  return out;
}

/**
 * A fresh account with a large balance, in account database `database` (a binding's name) when
 * given, else where the service puts it (docs/databases.md, Databases).
 */
export async function createAccount(database) {
  const { json } = await api("POST", "/admin/accounts", {
    token: ADMIN_TOKEN,
    body: { name: `bench ${new Date().toISOString()}`, balance: 100_000, ...(database ? { database } : {}) },
  });
  return { id: json.data.account.id, apiKey: json.data.api_key, database: json.data.account.database };
}

/** A fresh session, linked through the sandbox. */
export async function connectedSession(apiKey) {
  const { json } = await api("POST", "/v1/chatapp/sessions", {
    token: apiKey,
    idempotencyKey: crypto.randomUUID(),
    retry: true,
  });
  const id = json.session.id;
  benchSessions.push({ id, apiKey });
  // A repeated scan of a session the first one linked answers 409 session_not_pending.
  await api("POST", `/sandbox/sessions/${id}/scan`, { token: apiKey, body: {}, retry: true, accept: [409] });
  const { json: shown } = await api("GET", `/v1/chatapp/sessions/${id}`, { token: apiKey });
  if (shown.session.status !== "connected") throw new Error(`session ${id} did not connect`);
  return id;
}

/**
 * One send, timed. Without an Idempotency-Key (storing the replayable ~400 KB response of a
 * 1,000-recipient send costs extra), so it is not retried if the server drops it.
 */
export async function send(apiKey, sessionId, to, delayBetween, content) {
  const { json, ms } = await api("POST", "/v1/chatapp/messages", {
    token: apiKey,
    expect: 201,
    body: {
      chatapp_session_id: sessionId,
      to_number: to,
      type: "text",
      content,
      delay_between: delayBetween,
    },
  });
  if (json.data.count !== to.length) throw new Error(`send accepted ${json.data.count} of ${to.length}`);
  return { messages: json.data.messages, ms };
}

export const listPath = (sessionId) =>
  sessionId ? `/v1/chatapp/messages/${sessionId}/session` : "/v1/chatapp/messages";

/** True when the session (or, without one, the account) has a message in `status`. */
export async function hasStatus(apiKey, sessionId, status) {
  const { json } = await api("GET", `${listPath(sessionId)}?filter[status]=${status}&limit=1`, {
    token: apiKey,
  });
  return json.data.length > 0;
}

/** How many of the session's messages are `queued` (counted a page of 100 at a time). */
async function countQueued(apiKey, sessionId) {
  let count = 0;
  let cursor = null;
  for (let page = 0; page < 20; page++) {
    const query = `?filter[status]=queued&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const { json } = await api("GET", `${listPath(sessionId)}${query}`, { token: apiKey });
    count += json.data.length;
    cursor = json.meta.next_cursor;
    if (!cursor) break;
  }
  return count;
}

/**
 * Polls (limit=1) until nothing is `queued` any more; returns `{ ms }`, or `{ stalled, queued }`
 * when the limit passes or no message left `queued` for {@link STALL_MS} (a local queue loses
 * what it held when `wrangler dev` reloads). The first poll waits `quietMs`, so a run whose
 * length is known is not disturbed by the polling.
 */
export async function waitUntilNoneQueued(
  apiKey,
  sessionId,
  limitMs,
  since = performance.now(),
  quietMs = 0,
) {
  await sleep(quietMs);
  let lastCount = null;
  let lastProgressAt = performance.now();
  let nextCountAt = performance.now() + STALL_CHECK_MS;
  while (performance.now() - since < limitMs) {
    if (!(await hasStatus(apiKey, sessionId, "queued"))) return { ms: performance.now() - since };
    if (performance.now() >= nextCountAt) {
      const count = await countQueued(apiKey, sessionId);
      if (count !== lastCount) lastProgressAt = performance.now();
      else if (performance.now() - lastProgressAt >= STALL_MS)
        return { stalled: "no progress", queued: count };
      lastCount = count;
      nextCountAt = performance.now() + STALL_CHECK_MS;
    }
    await sleep(POLL_MS);
  }
  return { stalled: "time limit", queued: await countQueued(apiKey, sessionId) };
}

/** Every message of a session, following `next_cursor` (100 a page). */
export async function allMessages(apiKey, sessionId) {
  const out = [];
  let cursor = null;
  for (let page = 0; page < 200; page++) {
    const query = `?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const { json } = await api("GET", `${listPath(sessionId)}${query}`, { token: apiKey });
    out.push(...json.data);
    cursor = json.meta.next_cursor;
    if (!cursor) break;
  }
  return out;
}

export const epochMs = (iso) => (iso ? Date.parse(iso) : null);

// ---- webhooks ---------------------------------------------------------------------------------

/**
 * An HTTP receiver on a free port of 127.0.0.1 (the dev server must allow http://127.0.0.1
 * endpoints: WEBHOOK_ALLOW_HTTP_LOCALHOST=true, as .dev.vars.example sets it): `answer(path, now)`
 * gives each request's status and headers; every request is kept with its arrival time (epoch
 * ms), whether its signature verified with the endpoint's secret (`secrets`, by path; checked with
 * the `standardwebhooks` package's own `verify`) and the status it was answered.
 */
export async function startReceiver(answer) {
  const got = [];
  const secrets = new Map();
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString("utf8");
      const path = request.url ?? "/";
      let verified = false;
      try {
        new Webhook(secrets.get(path) ?? "").verify(body, request.headers);
        verified = true;
      } catch {}
      const { status, headers } = answer(path, at);
      got.push({ path, at, verified, status, event: JSON.parse(body) });
      response.writeHead(status, headers).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    got,
    secrets,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A webhook endpoint of the account on `receiver`'s `path` for `events` (null: every event). */
export async function createEndpoint(apiKey, receiver, path, events) {
  const { json } = await api("POST", "/v1/webhooks", {
    token: apiKey,
    expect: 201,
    body: { url: receiver.url(path), events },
  });
  receiver.secrets.set(path, json.data.secret);
  return json.data.id;
}

// ---- D1 counters ------------------------------------------------------------------------------

/**
 * The D1 counters of the isolate that answers (GET /admin/metrics; reading them runs no
 * statement). Under `wrangler dev` the Worker, its queue consumers and its session objects run in
 * one isolate, so they count everything.
 */
export async function d1Counters() {
  const { json } = await api("GET", "/admin/metrics", { token: ADMIN_TOKEN });
  return json.data;
}

/** The counters' change from `before` to `after`; throws if another isolate answered. */
export function d1Change(before, after) {
  if (before.isolate !== after.isolate)
    throw new Error("bench: the server restarted during a measurement (its D1 counters started again)");
  const of = (counts, name) => counts.databases?.[name] ?? { statements: 0, rows_written: 0 };
  const names = new Set([...Object.keys(before.databases ?? {}), ...Object.keys(after.databases ?? {})]);
  return {
    statements: after.d1.statements - before.d1.statements,
    rowsWritten: after.d1.rows_written - before.d1.rows_written,
    /** Statements by database (binding name → count). */
    byDatabase: Object.fromEntries(
      [...names].map((name) => [name, of(after, name).statements - of(before, name).statements]),
    ),
  };
}

export const rows = [];
/** `pass`: true, false, or null (informational row, no target). */
export function row(metric, value, target, pass) {
  rows.push({ metric, value, target, result: pass === null ? "info" : pass ? "pass" : "FAIL" });
}

/** Every session the run created, with its account's key: deleted at the end. */
export const benchSessions = [];

/** Deletes the run's sessions: parked messages are failed and refunded, nothing keeps running. */
export async function cleanUp() {
  for (const { id, apiKey } of benchSessions.splice(0)) {
    try {
      await api("DELETE", `/v1/chatapp/sessions/${id}`, { token: apiKey, retry: true, accept: [404] });
    } catch (error) {
      log(`cleanup: ${error.message}`);
    }
  }
}

export function printTable() {
  const header = { metric: "metric", value: "value", target: "target", result: "result" };
  const all = [header, ...rows];
  const width = (key) => Math.max(...all.map((r) => r[key].length));
  const w = {
    metric: width("metric"),
    value: width("value"),
    target: width("target"),
    result: width("result"),
  };
  const line = (r) =>
    `| ${r.metric.padEnd(w.metric)} | ${r.value.padEnd(w.value)} | ${r.target.padEnd(w.target)} | ${r.result.padEnd(w.result)} |`;
  const rule = `|${"-".repeat(w.metric + 2)}|${"-".repeat(w.value + 2)}|${"-".repeat(w.target + 2)}|${"-".repeat(w.result + 2)}|`;
  console.log([line(header), rule, ...rows.map(line)].join("\n"));
}
