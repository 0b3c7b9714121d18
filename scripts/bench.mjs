// `npm run bench`: measures the messaging, webhook and campaign paths against a running local
// server and prints one table. Start the server first with `npm run dev`.
//
//   npm run bench                      # http://localhost:8787, the admin token of .dev.vars.example
//   npm run bench -- --url http://localhost:8787
//   npm run bench -- --campaign-full   # also runs a 100,000-message campaign to completion
//   npm run bench -- --only exactly-once,pacing   # only these steps (names: STEPS below)
//   npm run bench -- --only footprint --footprint-messages 500 --state-dir ../other/.wrangler/state
//   BENCH_URL=… ADMIN_TOKEN=… BENCH_CAMPAIGN_FULL=1 npm run bench
//
// It creates one account (balance 100,000) and a few sandbox sessions, sends 16,020 text messages
// through the sandbox gateway (and 700 more from accounts of their own: 550 from the two of the
// webhook rows, each with an endpoint on a local receiver, 150 from the exactly-once row's and
// 10,000 from the footprint rows'),
// then runs campaigns: 17,000 messages over 1, 10 and 20 sessions, one of 5,000 paused while it
// sends, and one of 100,000 (an account of its own) that is started and cancelled, or with
// --campaign-full sent to the end. It deletes its sessions and endpoints at the end (messages it
// parked unsent are failed and refunded). It stops by itself: every request has a timeout, every
// wait is bounded, and the whole run is capped (BENCH_TIMEOUT_S, default 900 s, 2,700 s with
// --campaign-full).
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
//  7.–10. campaigns (scripts/bench/campaigns.mjs): messages/s with delay_between 0 across 1, 10
//     and 20 sessions; D1 statements per message from the start until every message is `read`
//     (GET /admin/metrics); pause latency, from the pause request to the last gateway call; the
//     time to create a 100,000-recipient campaign (one create and 9 adds of 10,000) and start it,
//     and with --campaign-full its run to the end, with balance, statistics and message rows
//     agreeing exactly.
// 11. what authentication costs a request: the key lookup, the per-key rate limit and the scope
//     check, as the median latency of a 403 for a missing scope against that of /health
//     (scripts/bench/auth.mjs).
// 12. exactly once under faults (scripts/bench/exactly-once.mjs): 150 messages with delay_between
//     0 to the sandbox's fault numbers (20% answer 500 and 10% time out before the phone gets
//     them, 5% reach the phone and lose the answer): the messages still `queued` at the end, those
//     a phone received twice, those refunded although their phone received them, those settled by
//     a lookup (exactly the lost answers), and the time until none is `queued` (the lookups wait
//     OUTCOME_GRACE_SECONDS, 30 s).
// 13. one-time codes (scripts/bench/otp.mjs): the median time from starting an OTP to `verified`
//     on the sandbox, 20 in send mode (the code read on the sandbox phone, then verified) and 20
//     in reverse mode (the sandbox phone sends the code back).
// 14. list ratio (scripts/bench/list-ratio.mjs): requests per second of a filtered list page
//     (filter[status], limit 100, 2,000 messages stored, four keys, 8 connections) ÷ those of
//     /health, measured side by side three times; target at least 0.9.
// 15.–16. footprint (scripts/bench/footprint.mjs): 10,000 messages (--footprint-messages,
//     BENCH_FOOTPRINT_MESSAGES) sent, read and delivered to one webhook endpoint as
//     `message.sent`, `message.delivered` and `message.read`: the D1 page bytes per message at
//     rest (SQLite's dbstat over the dev server's D1 files, --state-dir / BENCH_STATE_DIR, default
//     .wrangler/state of the current directory; target at most 1,500) and the D1 rows written per
//     message (target at most 25); the bytes of each table go to stderr.
// 17.–18. account databases (scripts/bench/databases.mjs): the same campaigns (4 accounts × 1,000
//     recipients, delay_between 0, started together) with every account in one account database,
//     then spread over two: messages per second, and D1 statements per message in each database.
// Progress goes to stderr, the table to stdout.

import { performance } from "node:perf_hooks";
import { benchAuthCost } from "./bench/auth.mjs";
import { benchCampaignLarge, benchCampaignPause, benchCampaignScaling } from "./bench/campaigns.mjs";
import {
  api,
  BASE,
  cleanUp,
  createAccount,
  fmt,
  HttpError,
  log,
  ONLY,
  printTable,
  retriedRequestCount,
  rows,
} from "./bench/common.mjs";
import { benchDatabases } from "./bench/databases.mjs";
import { benchExactlyOnce } from "./bench/exactly-once.mjs";
import { benchFootprint } from "./bench/footprint.mjs";
import { benchListRatio } from "./bench/list-ratio.mjs";
import { benchAccept, benchFanOut, benchListPages, benchPacing } from "./bench/messages.mjs";
import { benchOtp } from "./bench/otp.mjs";
import { benchReadWebhook, benchWebhookThroughput } from "./bench/webhooks.mjs";

/** The run, in order, by the names `--only` takes; each step is given the shared account's key. */
const STEPS = [
  // Quietest measurements first: pacing and webhook latency see an idle server.
  ["pacing", benchPacing],
  ["auth", benchAuthCost],
  [
    "list-ratio",
    async (apiKey) => {
      await benchListRatio(apiKey);
      await cleanUp();
    },
  ],
  ["read-webhook", benchReadWebhook],
  ["otp", benchOtp],
  // 150 messages on an account of its own; its wait for the outcome grace leaves the server idle.
  ["exactly-once", benchExactlyOnce],
  ["fan-out", benchFanOut],
  ["accept", benchAccept],
  [
    "list",
    async (apiKey) => {
      await benchListPages(apiKey);
      await cleanUp();
    },
  ],
  [
    "webhook-throughput",
    async () => {
      await benchWebhookThroughput();
      await cleanUp();
    },
  ],
  // Before the campaigns, whose cancelled 100,000 leaves work behind: it measures all of D1.
  ["footprint", benchFootprint],
  // Campaigns last: the 100,000-recipient one leaves the largest tables behind.
  ["databases", benchDatabases],
  ["campaign-scaling", benchCampaignScaling],
  ["campaign-pause", benchCampaignPause],
  ["campaign-large", benchCampaignLarge],
];

async function main() {
  const unknown = [...ONLY].filter((name) => !STEPS.some(([step]) => step === name));
  if (unknown.length > 0) {
    console.error(
      `bench: no step ${unknown.join(", ")}; the steps are ${STEPS.map(([step]) => step).join(", ")}.`,
    );
    process.exit(1);
  }
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
  log(`bench against ${BASE}${ONLY.size > 0 ? ` (only ${[...ONLY].join(", ")})` : ""}`);
  const { apiKey } = await createAccount();
  for (const [name, run] of STEPS) if (ONLY.size === 0 || ONLY.has(name)) await run(apiKey);
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
