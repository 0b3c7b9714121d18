// The messaging rows of `npm run bench`: pacing, fan-out throughput, accept latency and list pages.

import { performance } from "node:perf_hooks";
import {
  allMessages,
  api,
  connectedSession,
  epochMs,
  fmt,
  listPath,
  log,
  mean,
  median,
  numbers,
  percentile,
  row,
  send,
  sleep,
  waitUntilNoneQueued,
} from "./common.mjs";

const ACCEPT_RUNS = 5;
const FANOUT_RECIPIENTS = 1_000;
const FANOUT_WAIT_MS = 120_000;
const PACING_RECIPIENTS = 20;
const PACING_DELAY_MS = 500;
const SEED_SENDS = 10;
const PAGE_FETCHES = 20;

export async function benchPacing(apiKey) {
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

export async function benchFanOut(apiKey) {
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

/** Stops a session's fan-out: its queued messages wait (they are failed and refunded on delete). */
async function park(apiKey, sessionId) {
  // 409 session_not_connected: a repeated try after the first one went through.
  await api("PATCH", `/v1/chatapp/sessions/${sessionId}/disconnect`, {
    token: apiKey,
    retry: true,
    accept: [409],
  });
}

export async function benchAccept(apiKey) {
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

export async function benchListPages(apiKey) {
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
