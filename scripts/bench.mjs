// `npm run bench`: measures the messaging and webhook paths against a running local server and
// prints one table. Start the server first with `npm run dev`.
//
//   npm run bench                      # http://localhost:8787, admin token dev-admin-token
//   npm run bench -- --url http://localhost:8787
//   BENCH_URL=… ADMIN_TOKEN=… npm run bench
//
// It creates one account (balance 100,000) and a few sandbox sessions, sends 16,020 text messages
// through the sandbox gateway (and 550 more from two accounts of the webhook rows, each with an
// endpoint on a local receiver) and deletes its sessions and endpoints at the end (messages it parked unsent are
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
//  5.–6. webhooks: read ack → `message.read` webhook latency, and deliveries per second to one
//     endpoint with nothing missing or duplicated (scripts/bench/webhooks.mjs).
// Progress goes to stderr, the table to stdout.

import { performance } from "node:perf_hooks";
import {
  api,
  BASE,
  cleanUp,
  createAccount,
  fmt,
  HttpError,
  log,
  printTable,
  retriedRequestCount,
  rows,
} from "./bench/common.mjs";
import { benchAccept, benchFanOut, benchListPages, benchPacing } from "./bench/messages.mjs";
import { benchReadWebhook, benchWebhookThroughput } from "./bench/webhooks.mjs";

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
  // Quietest measurements first: pacing and webhook latency see an idle server.
  await benchPacing(apiKey);
  await benchReadWebhook();
  await benchFanOut(apiKey);
  await benchAccept(apiKey);
  await benchListPages(apiKey);
  await cleanUp();
  await benchWebhookThroughput();
  await cleanUp();
  log(`done in ${fmt((performance.now() - startedAt) / 1000, 1)} s`);
  if (retriedRequestCount() > 0)
    log(
      `warning: ${retriedRequestCount()} request(s) tried again: the server restarted during the run, so its figures may be disturbed`,
    );
  log("");
  printTable();
}

main().catch(async (error) => {
  await cleanUp().catch(() => {});
  if (rows.length > 0) printTable();
  console.error(`\nbench: ${error instanceof HttpError ? error.message : (error.stack ?? error)}`);
  process.exit(1);
});
