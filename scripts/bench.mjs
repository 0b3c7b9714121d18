// `npm run bench`: measures the messaging path against a running local server (issue 3,
// "Benchmark") and prints one table. Start the server first with `npm run dev`.
//
//   npm run bench                      # http://localhost:8787, admin token dev-admin-token
//   npm run bench -- --url http://localhost:8787
//   BENCH_URL=… ADMIN_TOKEN=… npm run bench
//
// It creates one account (balance 100,000) and a few sandbox sessions, sends 16,020 text messages
// through the sandbox gateway and deletes its sessions at the end (messages it parked unsent are
// failed and refunded). It stops by itself: every request has a timeout, every wait is bounded,
// and the whole run is capped (BENCH_TIMEOUT_S, default 600 s).
//
// Rows:
//  1. time to accept a send to 1,000 recipients (POST latency): 5 runs on fresh sessions of an
//     otherwise idle server (each send's fan-out is stopped by disconnecting its session), and
//     the 10 seed sends of row 4, made back to back while their session fans out;
//  2. fan-out throughput with delay_between 0: 1,000 messages, from the POST until none is
//     `queued` (polled with limit=1), and from the first to the last `sent_at`;
//  3. pacing at delay_between 500 over 20 recipients: mean and p95 absolute error of the gaps
//     between consecutive `sent_at` (acceptance order), and whether `sent_at` follows the order
//     of `to_number`;
//  4. time per message-list page (limit 100, following `next_cursor`) with 10,000 messages stored
//     on one session: that session's list, the whole account's, and a status filter.
// Progress goes to stderr, the table to stdout.

import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: { url: { type: "string" }, help: { type: "boolean", short: "h" } },
  allowPositionals: false,
});
if (args.help) {
  console.log(
    "usage: npm run bench [-- --url http://localhost:8787]  (env: BENCH_URL, ADMIN_TOKEN, BENCH_TIMEOUT_S)",
  );
  process.exit(0);
}

const BASE = (args.url ?? process.env.BENCH_URL ?? "http://localhost:8787").replace(/\/+$/, "");
const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? "dev-admin-token";
const RUN_LIMIT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000;
const REQUEST_TIMEOUT_MS = 30_000;
const POLL_MS = 100;
/** A wait gives up when the number of queued messages has not moved for this long. */
const STALL_MS = 20_000;
const STALL_CHECK_MS = 5_000;

const ACCEPT_RUNS = 5;
const FANOUT_RECIPIENTS = 1_000;
const FANOUT_WAIT_MS = 120_000;
const PACING_RECIPIENTS = 20;
const PACING_DELAY_MS = 500;
const SEED_SENDS = 10;
const PAGE_FETCHES = 20;

// The whole run is bounded: past the limit, give up with a message.
setTimeout(() => {
  console.error(`\nbench: gave up after ${RUN_LIMIT_MS / 1000} s (BENCH_TIMEOUT_S).`);
  process.exit(1);
}, RUN_LIMIT_MS).unref();

const log = (line) => process.stderr.write(`${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class HttpError extends Error {}

/** Requests tried again after the server dropped them (a `wrangler dev` reload, a time-out). */
let retriedRequests = 0;

/**
 * One JSON request; returns the parsed body, the status and the wall time in ms. A status other
 * than `expect` (or any non-2xx without it) throws, unless listed in `accept`. `wrangler dev`
 * drops connections, or answers 503 "restarted mid-request", when it reloads after a source
 * change: GETs and requests marked `retry` (safe to repeat) are then tried twice more; a retried
 * request's `ms` covers the last try only.
 */
async function api(
  method,
  path,
  { token, body, expect, accept = [], idempotencyKey, retry = method === "GET" } = {},
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
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
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
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
function median(xs) {
  const s = sorted(xs);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
/** Nearest-rank percentile. */
function percentile(xs, p) {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const fmt = (n, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

// ---- fixtures ---------------------------------------------------------------------------------

/**
 * US numbers +1415555XXXX from `first` on. The sandbox fails numbers ending in 0000, 0001 and
 * 0002 on purpose, so those are skipped.
 */
function numbers(count, first) {
  const out = [];
  for (let n = first; out.length < count; n++) {
    const suffix = String(n % 10_000).padStart(4, "0");
    if (suffix === "0000" || suffix === "0001" || suffix === "0002") continue;
    out.push(`+1415555${suffix}`);
  }
  return out;
}

async function createAccount() {
  const { json } = await api("POST", "/admin/accounts", {
    token: ADMIN_TOKEN,
    body: { name: `bench ${new Date().toISOString()}`, balance: 100_000 },
  });
  return { id: json.data.account.id, apiKey: json.data.api_key };
}

/** A fresh session, linked through the sandbox. */
async function connectedSession(apiKey) {
  const { json } = await api("POST", "/v1/chatapp/sessions", {
    token: apiKey,
    idempotencyKey: crypto.randomUUID(),
    retry: true,
  });
  const id = json.session.id;
  benchSessions.push(id);
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
async function send(apiKey, sessionId, to, delayBetween, content) {
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

const listPath = (sessionId) =>
  sessionId ? `/v1/chatapp/messages/${sessionId}/session` : "/v1/chatapp/messages";

/** True when the session (or, without one, the account) has a message in `status`. */
async function hasStatus(apiKey, sessionId, status) {
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
async function waitUntilNoneQueued(apiKey, sessionId, limitMs, since = performance.now(), quietMs = 0) {
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
async function allMessages(apiKey, sessionId) {
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

const epochMs = (iso) => (iso ? Date.parse(iso) : null);

// ---- benchmarks -------------------------------------------------------------------------------

const rows = [];
/** `pass`: true, false, or null (informational row, no target). */
function row(metric, value, target, pass) {
  rows.push({ metric, value, target, result: pass === null ? "info" : pass ? "pass" : "FAIL" });
}

async function benchPacing(apiKey) {
  log(`pacing: ${PACING_RECIPIENTS} recipients, delay_between ${PACING_DELAY_MS} ms …`);
  const sessionId = await connectedSession(apiKey);
  // A permutation of 20 numbers (7 is coprime with 20), so the order check means something.
  const pool = numbers(PACING_RECIPIENTS, 3_000);
  const to = pool.map((_, i) => pool[(i * 7) % PACING_RECIPIENTS]);
  const { messages } = await send(apiKey, sessionId, to, PACING_DELAY_MS, "bench: pacing");
  // The run takes (n − 1) × delay: poll only near its end.
  const quiet = (PACING_RECIPIENTS - 1) * PACING_DELAY_MS - 1000;
  const waited = await waitUntilNoneQueued(apiKey, sessionId, 60_000, performance.now(), quiet);
  if (waited.stalled) throw new Error(`pacing: ${waited.queued} messages still queued (${waited.stalled})`);
  const byId = new Map((await allMessages(apiKey, sessionId)).map((m) => [m.id, m]));
  const accepted = messages.map((m) => byId.get(m.id));
  const unsent = accepted.filter((m) => !m?.sent_at);
  if (unsent.length > 0)
    throw new Error(
      `pacing: ${unsent.length} messages never sent (${unsent[0]?.status}: ${unsent[0]?.reason})`,
    );
  const sentAt = accepted.map((m) => epochMs(m.sent_at));
  const gaps = sentAt.slice(1).map((t, i) => t - sentAt[i]);
  const errors = gaps.map((g) => Math.abs(g - PACING_DELAY_MS));
  const bySentAt = [...accepted].sort((a, b) => epochMs(a.sent_at) - epochMs(b.sent_at));
  const inOrder =
    bySentAt.every((m, i) => m.id === accepted[i].id) && accepted.every((m, i) => m.to_number === to[i]);
  log(`pacing: gaps (ms) ${gaps.join(" ")}`);
  const meanErr = mean(errors);
  const p95Err = percentile(errors, 95);
  row(
    `pacing @${PACING_DELAY_MS} ms, ${PACING_RECIPIENTS} rcpts: mean |gap error|`,
    `${fmt(meanErr, 1)} ms (mean gap ${fmt(mean(gaps), 1)} ms)`,
    `<= ${PACING_DELAY_MS * 0.05} ms (5%)`,
    meanErr <= PACING_DELAY_MS * 0.05,
  );
  row(
    `pacing @${PACING_DELAY_MS} ms, ${PACING_RECIPIENTS} rcpts: p95 |gap error|`,
    `${fmt(p95Err, 1)} ms (gaps ${fmt(Math.min(...gaps))}–${fmt(Math.max(...gaps))} ms)`,
    "< 50 ms",
    p95Err < 50,
  );
  row("pacing: sent_at order = to_number order", inOrder ? "yes" : "no", "yes", inOrder);
}

async function benchFanOut(apiKey) {
  log(`fan-out: ${FANOUT_RECIPIENTS} recipients, delay_between 0 …`);
  const sessionId = await connectedSession(apiKey);
  const to = numbers(FANOUT_RECIPIENTS, 1_000);
  const started = performance.now();
  const postedAtWall = Date.now();
  await send(apiKey, sessionId, to, 0, "bench: fan-out");
  const waited = await waitUntilNoneQueued(apiKey, sessionId, FANOUT_WAIT_MS, started);
  if (waited.stalled) {
    const after = fmt((performance.now() - started) / 1000, 1);
    row(
      "fan-out @0 ms, 1,000 rcpts: POST → none queued",
      `stalled (${waited.stalled}): ${waited.queued} still queued after ${after} s`,
      "all 1,000 sent",
      false,
    );
    return;
  }
  const elapsed = waited.ms;
  const all = await allMessages(apiKey, sessionId);
  const sentAt = all.map((m) => epochMs(m.sent_at)).filter((t) => t !== null);
  const failed = all.filter((m) => m.status === "failed").length;
  const first = Math.min(...sentAt);
  const last = Math.max(...sentAt);
  const overall = (sentAt.length / elapsed) * 1000;
  const steady = ((sentAt.length - 1) / Math.max(1, last - first)) * 1000;
  log(
    `fan-out: ${sentAt.length} sent, ${failed} failed; first sent_at ${first - postedAtWall} ms after the POST`,
  );
  row(
    "fan-out @0 ms, 1,000 rcpts: POST → none queued",
    `${fmt(overall, 1)} msg/s (${fmt(elapsed / 1000, 2)} s)`,
    "all 1,000 sent",
    sentAt.length === FANOUT_RECIPIENTS && failed === 0,
  );
  row(
    "fan-out @0 ms: first → last sent_at",
    `${fmt(steady, 1)} msg/s (${fmt((last - first) / 1000, 2)} s; 1st sent_at +${fmt(first - postedAtWall)} ms)`,
    "—",
    null,
  );
}

/** Every session the run created, deleted at the end. */
const benchSessions = [];

/** Stops a session's fan-out: its queued messages wait (they are failed and refunded on delete). */
async function park(apiKey, sessionId) {
  // 409 session_not_connected: a repeated try after the first one went through.
  await api("PATCH", `/v1/chatapp/sessions/${sessionId}/disconnect`, {
    token: apiKey,
    retry: true,
    accept: [409],
  });
}

async function benchAccept(apiKey) {
  log(`accept: ${ACCEPT_RUNS} sends of ${FANOUT_RECIPIENTS} on fresh sessions …`);
  const times = [];
  for (let run = 0; run < ACCEPT_RUNS; run++) {
    const sessionId = await connectedSession(apiKey);
    const { ms } = await send(
      apiKey,
      sessionId,
      numbers(FANOUT_RECIPIENTS, 1_000),
      0,
      `bench: accept ${run}`,
    );
    times.push(ms);
    // Each run measures an otherwise idle server: this send's fan-out is stopped at once.
    await park(apiKey, sessionId);
    await sleep(500);
  }
  log(`accept: ${times.map((t) => fmt(t)).join(" ")} ms`);
  row(
    `accept 1,000 rcpts, idle server (${ACCEPT_RUNS} runs): median`,
    `${fmt(median(times))} ms`,
    "< 1,500 ms",
    median(times) < 1500,
  );
  row(
    `accept 1,000 rcpts, idle server (${ACCEPT_RUNS} runs): max`,
    `${fmt(Math.max(...times))} ms`,
    "< 1,500 ms",
    Math.max(...times) < 1500,
  );
}

async function benchListPages(apiKey) {
  log(`list: seeding ${SEED_SENDS} × ${FANOUT_RECIPIENTS} messages on one session …`);
  const sessionId = await connectedSession(apiKey);
  const seedTimes = [];
  for (let i = 0; i < SEED_SENDS; i++) {
    const { ms } = await send(apiKey, sessionId, numbers(FANOUT_RECIPIENTS, 1_000), 0, `bench: seed ${i}`);
    seedTimes.push(ms);
  }
  log(`list: seed sends took ${seedTimes.map((t) => fmt(t)).join(" ")} ms`);
  // The seed sends ran back to back while the session was already fanning out the earlier ones.
  row(
    `accept 1,000 rcpts, during fan-out (${SEED_SENDS} runs): median / max`,
    `${fmt(median(seedTimes))} / ${fmt(Math.max(...seedTimes))} ms`,
    "< 1,500 ms",
    Math.max(...seedTimes) < 1500,
  );
  // Time the pages on a quiet server: stop the seed session's fan-out (10,000 rows stay stored)
  // and let the sandbox's read receipts for what it did send (3 s by default) land first.
  await park(apiKey, sessionId);
  await sleep(3500);

  const timePages = async (path) => {
    const times = [];
    let cursor = null;
    while (times.length < PAGE_FETCHES) {
      const query = `${path.includes("?") ? "&" : "?"}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const { json, ms } = await api("GET", `${path}${query}`, { token: apiKey });
      if (json.data.length === 0) throw new Error(`list: empty page from ${path}`);
      times.push(ms);
      cursor = json.meta.next_cursor; // back to the first page at the end
    }
    return times;
  };
  const session = await timePages(listPath(sessionId));
  const account = await timePages(listPath(null));
  const queued = await timePages(`${listPath(null)}?filter[status]=queued`);
  const describe = (t) => `${fmt(median(t), 1)} / ${fmt(percentile(t, 95), 1)} ms`;
  const pages = `${PAGE_FETCHES} pages of 100`;
  row(`list, session with 10,000 msgs (${pages}): median / p95`, describe(session), "—", null);
  row(`list, whole account, 16,020 msgs (${pages}): median / p95`, describe(account), "—", null);
  row(`list, account filter[status]=queued (${pages}): median / p95`, describe(queued), "—", null);
}

/** Deletes the run's sessions: parked messages are failed and refunded, nothing keeps running. */
async function cleanUp(apiKey) {
  for (const id of benchSessions) {
    try {
      await api("DELETE", `/v1/chatapp/sessions/${id}`, { token: apiKey, retry: true, accept: [404] });
    } catch (error) {
      log(`cleanup: ${error.message}`);
    }
  }
}

function printTable() {
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

async function main() {
  try {
    const { json } = await api("GET", "/health", {});
    if (json?.status !== "ok") throw new Error(`unexpected /health answer ${JSON.stringify(json)}`);
  } catch (error) {
    console.error(`bench: no server answering at ${BASE} (${error.cause?.code ?? error.message}).`);
    console.error(
      "Start it first with `npm run dev` (or pass --url / BENCH_URL), then run `npm run bench` again.",
    );
    process.exit(1);
  }
  const startedAt = performance.now();
  log(`bench against ${BASE}`);
  const { apiKey } = await createAccount();
  runApiKey = apiKey;
  // Quietest measurement first: the pacing run sees an idle server.
  await benchPacing(apiKey);
  await benchFanOut(apiKey);
  await benchAccept(apiKey);
  await benchListPages(apiKey);
  await cleanUp(apiKey);
  log(`done in ${fmt((performance.now() - startedAt) / 1000, 1)} s`);
  if (retriedRequests > 0)
    log(
      `warning: ${retriedRequests} request(s) tried again: the server restarted during the run, so its figures may be disturbed`,
    );
  log("");
  printTable();
}

let runApiKey = null;

main().catch(async (error) => {
  if (runApiKey) await cleanUp(runApiKey).catch(() => {});
  if (rows.length > 0) printTable();
  console.error(`\nbench: ${error instanceof HttpError ? error.message : (error.stack ?? error)}`);
  process.exit(1);
});
