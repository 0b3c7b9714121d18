// The webhook rows of `npm run bench`, against a receiver this script runs on 127.0.0.1 (the dev
// server must allow http://127.0.0.1 endpoints: WEBHOOK_ALLOW_HTTP_LOCALHOST=true, as
// .dev.vars.example sets it). The receiver checks every delivery's signature with the
// `standardwebhooks` package's own `verify`.
//
//  5. read ack → `message.read` webhook: for each of 50 messages, the time from the `read_at` the
//     event carries (when the service took the sandbox's read receipt) to the webhook's arrival;
//  6. deliveries per second to one endpoint: a receiver that answers 503 with a `Retry-After`
//     date until a moment T0 makes every delivery of 500 messages (about 1,500 events) retry at
//     T0; the row is the rate of their 2xx arrivals, and the check that each event the account's
//     `GET /v1/events` lists arrived exactly once.

import {
  api,
  connectedSession,
  createAccount,
  createEndpoint,
  fmt,
  log,
  median,
  numbers,
  percentile,
  row,
  send,
  sleep,
  startReceiver,
} from "./common.mjs";

const LATENCY_MESSAGES = 50;
const LATENCY_SPACING_MS = 100;
const BURST_MESSAGES = 500;
/** How long the burst's receiver refuses deliveries: time for all of them to be made once. */
const BURST_HOLD_MS = 25_000;
const WAIT_MS = 90_000;

async function until(done, limitMs, what) {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > limitMs) throw new Error(`webhooks: gave up waiting for ${what}`);
    await sleep(100);
  }
}

/** Every event id of the account, following `next_cursor`. */
async function eventIds(apiKey) {
  const ids = [];
  let cursor = null;
  do {
    const query = `?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const { json } = await api("GET", `/v1/events${query}`, { token: apiKey });
    ids.push(...json.data.map((e) => e.id));
    cursor = json.meta.next_cursor;
  } while (cursor);
  return ids;
}

/** Row 5: read ack → `message.read` webhook, p50 and p95. */
export async function benchReadWebhook() {
  const { apiKey } = await createAccount();
  log(`webhooks: read ack → message.read webhook, ${LATENCY_MESSAGES} messages …`);
  const receiver = await startReceiver(() => ({ status: 204 }));
  const endpointId = await createEndpoint(apiKey, receiver, "/read", ["message.read"]);
  try {
    const sessionId = await connectedSession(apiKey);
    const to = numbers(LATENCY_MESSAGES, 6_000);
    await send(apiKey, sessionId, to, LATENCY_SPACING_MS, "bench: webhook latency");
    await until(() => receiver.got.length >= LATENCY_MESSAGES, WAIT_MS, "the message.read webhooks");
    await sleep(1000);
    const latencies = receiver.got.map((r) => r.at - Date.parse(r.event.data.read_at));
    const ids = new Set(receiver.got.map((r) => r.event.id));
    const good =
      receiver.got.length === LATENCY_MESSAGES &&
      ids.size === LATENCY_MESSAGES &&
      receiver.got.every((r) => r.verified && r.event.type === "message.read");
    const p95 = percentile(latencies, 95);
    row(
      `read ack → message.read webhook, ${LATENCY_MESSAGES} msgs: p50 / p95`,
      `${fmt(median(latencies))} / ${fmt(p95)} ms (max ${fmt(Math.max(...latencies))} ms)`,
      "p95 < 1,000 ms",
      p95 < 1000 && good,
    );
    if (!good)
      log(
        `webhooks: ${receiver.got.length} deliveries, ${ids.size} distinct, not all verified or of the type`,
      );
  } finally {
    await api("DELETE", `/v1/webhooks/${endpointId}`, { token: apiKey, retry: true, accept: [404] });
    await receiver.close();
  }
}

/** Row 6: deliveries per second to one endpoint, each event once. */
export async function benchWebhookThroughput() {
  // An account of its own: its event list is exactly what the endpoint should get.
  const { apiKey } = await createAccount();
  log(`webhooks: burst of every delivery of ${BURST_MESSAGES} messages to one endpoint …`);
  // A whole second: an HTTP date has no fraction, so a T0 inside a second would come early.
  const t0 = Math.ceil((Date.now() + BURST_HOLD_MS) / 1000) * 1000;
  const holding = { "Retry-After": new Date(t0).toUTCString() };
  const receiver = await startReceiver((_path, now) =>
    now < t0 ? { status: 503, headers: holding } : { status: 204 },
  );
  const endpointId = await createEndpoint(apiKey, receiver, "/burst", null);
  try {
    const sessionId = await connectedSession(apiKey);
    await send(apiKey, sessionId, numbers(BURST_MESSAGES, 7_000), 0, "bench: webhook burst");
    await until(() => Date.now() >= t0, BURST_HOLD_MS + 1000, "T0");
    const expected = new Set(await eventIds(apiKey));
    const acked = () => receiver.got.filter((r) => r.status === 204);
    const progress = setInterval(
      () =>
        log(`  ${acked().length} of ${expected.size} acknowledged, ${receiver.got.length} requests in all`),
      5000,
    );
    try {
      await until(() => new Set(acked().map((r) => r.event.id)).size >= expected.size, WAIT_MS, "the burst");
    } finally {
      clearInterval(progress);
    }
    await sleep(2000);
    const ok = acked();
    const late = receiver.got.filter((r) => r.status === 503).length;
    const received = new Set(ok.map((r) => r.event.id));
    const missing = [...expected].filter((id) => !received.has(id)).length;
    const duplicates = ok.length - received.size;
    const unverified = receiver.got.filter((r) => !r.verified).length;
    const first = Math.min(...ok.map((r) => r.at));
    const last = Math.max(...ok.map((r) => r.at));
    const rate = ((ok.length - 1) / Math.max(1, last - first)) * 1000;
    log(
      `webhooks: ${expected.size} events, ${late} held with 503, ${ok.length} acknowledged from T0${first >= t0 ? "" : " (some before T0)"} over ${fmt(last - first)} ms`,
    );
    row(
      `webhook deliveries to one endpoint, ${fmt(expected.size)} events: rate`,
      `${fmt(rate, 1)} /s (${fmt((last - first) / 1000, 2)} s)`,
      ">= 200 /s",
      rate >= 200,
    );
    row(
      "webhook burst: missing / duplicate / unverified",
      `${missing} / ${duplicates} / ${unverified}`,
      "0 / 0 / 0",
      missing === 0 && duplicates === 0 && unverified === 0,
    );
  } finally {
    await api("DELETE", `/v1/webhooks/${endpointId}`, { token: apiKey, retry: true, accept: [404] });
    await receiver.close();
  }
}
