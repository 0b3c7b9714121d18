// The list-ratio row of `npm run bench`: requests per second of a filtered message-list page
// (`GET /v1/chatapp/messages?filter[status]=read&limit=100`, 2,000 messages stored) against those
// of `/health` on the same server, under the same load: 8 connections, the list's requests spread
// over four API keys (so the per-key `api` limit, 1,000 per 10 s, is never what stops them). The
// two are measured side by side, alternately, three times, so a machine busy with other work
// slows both alike; the row gives the median ratio and each run's.

import { performance } from "node:perf_hooks";
import {
  api,
  BASE,
  connectedSession,
  fmt,
  log,
  median,
  numbers,
  row,
  send,
  sleep,
  waitUntilNoneQueued,
} from "./common.mjs";

const CONNECTIONS = 8;
const KEYS = 4;
const RUNS = 3;
const WINDOW_MS = 5_000;
const LIST_PATH = "/v1/chatapp/messages?filter[status]=read&limit=100";

/**
 * Requests per second of `path` with {@link CONNECTIONS} requests in flight for `ms`, each
 * connection taking the next of `tokens` in turn (none for `/health`). Any answer other than 200
 * stops the run: a 429 would make the list look fast.
 */
async function load(path, tokens, ms) {
  let count = 0;
  let next = 0;
  const until = performance.now() + ms;
  const worker = async () => {
    while (performance.now() < until) {
      const token = tokens[next++ % tokens.length];
      const response = await fetch(`${BASE}${path}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(30_000),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`list-ratio: ${path} answered ${response.status}`);
      count++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return (count / (performance.now() - started)) * 1000;
}

/** The list-ratio row: list page req/s ÷ /health req/s, median of three side-by-side runs. */
export async function benchListRatio(apiKey) {
  log("list-ratio: seeding 2,000 messages and 4 keys …");
  const sessionId = await connectedSession(apiKey);
  await send(apiKey, sessionId, numbers(1_000, 1_000), 0, "bench: list-ratio a");
  await send(apiKey, sessionId, numbers(1_000, 3_000), 0, "bench: list-ratio b");
  const waited = await waitUntilNoneQueued(apiKey, sessionId, 120_000);
  if (waited.stalled)
    throw new Error(`list-ratio: ${waited.queued} messages still queued (${waited.stalled})`);
  // The sandbox reads each message SANDBOX_READ_MS (3 s) after it is sent.
  await sleep(3_500);
  const extra = [];
  for (let i = 1; i < KEYS; i++) {
    const { json } = await api("POST", "/v1/api-keys", {
      token: apiKey,
      body: { name: `bench: list-ratio ${i}`, scopes: ["messages:read"] },
      expect: 201,
    });
    extra.push({ id: json.data.key.id, token: json.data.api_key });
  }
  const tokens = [apiKey, ...extra.map((key) => key.token)];
  const { json: page } = await api("GET", LIST_PATH, { token: apiKey });
  if (page.data.length !== 100) throw new Error(`list-ratio: the page holds ${page.data.length} messages`);

  const ratios = [];
  try {
    // A short warm-up of each, then the runs.
    await load("/health", [null], 1_000);
    await load(LIST_PATH, tokens, 1_000);
    for (let run = 0; run < RUNS; run++) {
      const health = await load("/health", [null], WINDOW_MS);
      const list = await load(LIST_PATH, tokens, WINDOW_MS);
      ratios.push(list / health);
      log(
        `list-ratio: run ${run + 1}: /health ${fmt(health)} req/s, list ${fmt(list)} req/s (${fmt(list / health, 2)}×)`,
      );
    }
  } finally {
    for (const key of extra) await api("DELETE", `/v1/api-keys/${key.id}`, { token: apiKey, expect: 204 });
  }
  const ratio = median(ratios);
  row(
    `list page (filter[status], limit 100, 2,000 msgs, 4 keys, ${CONNECTIONS} conns) ÷ /health req/s, median of ${RUNS}`,
    `${fmt(ratio, 2)}× (runs ${ratios.map((r) => fmt(r, 2)).join(", ")})`,
    ">= 0.90×",
    ratio >= 0.9,
  );
}
