// The campaign rows of `npm run bench`: campaigns sent through the sandbox gateway with
// delay_between 0, and the D1 statements they cost, read from `GET /admin/metrics` (the counters of
// the isolate that answers: under `wrangler dev` the Worker, its queue consumers and its session
// objects run in one isolate, so they count everything). The bench's own requests during a
// measurement (polling the campaign) are subtracted, at their cost measured on the idle server.
//
//  7.–8. scaling: one campaign per size (2,000 recipients on 1 session, 5,000 on 10, 10,000 on
//     20): messages per second from the start until `stats.queued` is 0, and from the first to the
//     last `sent_at`; then D1 statements per message from before the start until every message is
//     `read`;
//  9. pause latency: a campaign of 5,000 on 5 sessions is paused while it sends (its statistics
//     moved since the last look, 50 ms before); from the moment the pause request is sent to the
//     last gateway call (the latest `sent_at` once its sessions settle; the bench and the server
//     share the machine's clock), and the POST's own duration; then it is cancelled;
// 10. a 100,000-recipient campaign on 10 sessions: created with 10,000 recipients, 9 adds of
//     10,000, and started; then cancelled (balance and statistics must agree after the refund) or,
//     with `--campaign-full` (BENCH_CAMPAIGN_FULL=1), run to completion: duration, throughput,
//     statements per message, and balance, statistics and message rows agreeing exactly.

import { performance } from "node:perf_hooks";
import {
  ADMIN_TOKEN,
  allMessages,
  api,
  CAMPAIGN_FULL,
  cleanUp,
  connectedSession,
  createAccount,
  d1Change,
  d1Counters,
  epochMs,
  fmt,
  HttpError,
  log,
  median,
  row,
  STALL_MS,
  sleep,
} from "./common.mjs";

/** Recipients one request may carry (docs/campaigns.md, Campaigns). */
const PER_REQUEST = 10_000;
/** 2,000 messages for the single session, 500 per session for 10 and 20: the run stays short. */
const SCALING = [
  { sessions: 1, recipients: 2_000 },
  { sessions: 10, recipients: 5_000 },
  { sessions: 20, recipients: 10_000 },
];
const PAUSE_SESSIONS = 5;
const PAUSE_RECIPIENTS = 5_000;
/** The pause is sent once this many messages have gone out. */
const PAUSE_AFTER_SENT = 500;
const LARGE_SESSIONS = 10;
const LARGE_RECIPIENTS = 100_000;
/** Most statements per message from start to read that rows 7–8 accept (docs/benchmark.md, Overview). */
const STATEMENTS_TARGET = 0.2;
const SEND_WAIT_MS = 150_000;
const FULL_WAIT_MS = 30 * 60_000;

/**
 * `count` recipients with distinct numbers +1415<exchange><suffix> from exchange 201 on, each
 * with a `name` for the template. Suffixes 0000–0002 are skipped: the sandbox fails them on
 * purpose.
 */
export function recipients(count) {
  const out = [];
  for (let exchange = 201; out.length < count; exchange++) {
    for (let suffix = 3; suffix <= 9999 && out.length < count; suffix++) {
      out.push({
        to_number: `+1415${exchange}${String(suffix).padStart(4, "0")}`,
        variables: { name: `R${out.length + 1}` },
      });
    }
  }
  return out;
}

const showCampaign = async (apiKey, id) =>
  (await api("GET", `/v1/chatapp/campaigns/${id}`, { token: apiKey })).json.data;

/**
 * D1 statements one `GET` of a campaign costs (API key lookup and the campaign), measured over a
 * few on the idle server, to take the bench's own polls out of a measurement. The key's
 * `last_used_at` write (once a minute) is not in it: one statement a minute at most.
 */
async function pollCost(apiKey, id) {
  const polls = 5;
  const before = await d1Counters();
  for (let i = 0; i < polls; i++) await showCampaign(apiKey, id);
  return Math.round(d1Change(before, await d1Counters()).statements / polls);
}

/**
 * A draft campaign on `sessionIds` for `list`: created with its first 10,000 recipients, the rest
 * added 10,000 a request. Returns its id and each request's duration.
 */
export async function createCampaign(apiKey, sessionIds, list, delayBetween, name) {
  const { json, ms: createMs } = await api("POST", "/v1/chatapp/campaigns", {
    token: apiKey,
    expect: 201,
    body: {
      name,
      chatapp_session_ids: sessionIds,
      type: "text",
      content: "Hi {{name}}, this is the bench.",
      recipients: list.slice(0, PER_REQUEST),
      delay_between: delayBetween,
    },
  });
  const id = json.data.id;
  if (json.recipients.added !== Math.min(PER_REQUEST, list.length))
    throw new Error(`campaigns: create took ${json.recipients.added} recipients`);
  const addMs = [];
  for (let from = PER_REQUEST; from < list.length; from += PER_REQUEST) {
    const chunk = list.slice(from, from + PER_REQUEST);
    const { json: added, ms } = await api("POST", `/v1/chatapp/campaigns/${id}/recipients`, {
      token: apiKey,
      body: { recipients: chunk },
    });
    if (added.data.added !== chunk.length)
      throw new Error(`campaigns: an add took ${added.data.added} of ${chunk.length}`);
    addMs.push(ms);
  }
  return { id, createMs, addMs };
}

/**
 * How long a campaign command may take to answer. Longer than other requests: `wrangler dev` runs
 * the Worker, D1 and the queues on one thread, so a command waits out any long D1 statement of
 * the campaign queue (a step of a large campaign), and its answer is the row's measurement.
 */
const COMMAND_TIMEOUT_MS = 120_000;

/** POST …/{id}/{command}; returns the campaign after it and the request's duration. */
export async function command(apiKey, id, name) {
  const { json, ms } = await api("POST", `/v1/chatapp/campaigns/${id}/${name}`, {
    token: apiKey,
    timeoutMs: COMMAND_TIMEOUT_MS,
  });
  return { campaign: json.data, ms };
}

/** Cancels a campaign; tried again if the server is slow to answer (a second cancel is a 409). */
async function cancel(apiKey, id) {
  await api("POST", `/v1/chatapp/campaigns/${id}/cancel`, {
    token: apiKey,
    retry: true,
    accept: [409],
    timeoutMs: COMMAND_TIMEOUT_MS,
  });
}

/** Messages that left (sent, delivered, read) or failed. */
export const done = (stats) => stats.sent + stats.delivered + stats.read + stats.failed;

/**
 * Polls the campaign every `pollMs` until `until(campaign)`; returns `{ campaign, ms, polls }`,
 * or with `stalled` when `limitMs` passes or its status and statistics did not change for
 * {@link STALL_MS}. `onPoll(campaign, msSinceStart)` sees every answer; `progress` logs every
 * 10 s.
 */
export async function waitCampaign(apiKey, id, until, { limitMs, pollMs = 100, onPoll, progress = false }) {
  const started = performance.now();
  let polls = 0;
  let last = "";
  let lastChangeAt = started;
  let nextLogAt = started + 10_000;
  for (;;) {
    const campaign = await showCampaign(apiKey, id);
    polls++;
    const now = performance.now();
    onPoll?.(campaign, now - started);
    if (until(campaign)) return { campaign, ms: now - started, polls };
    const seen = `${campaign.status} ${JSON.stringify(campaign.stats)}`;
    if (seen !== last) {
      last = seen;
      lastChangeAt = now;
    } else if (now - lastChangeAt >= STALL_MS) return { campaign, polls, stalled: "no progress" };
    if (now - started >= limitMs) return { campaign, polls, stalled: "time limit" };
    if (progress && now >= nextLogAt) {
      log(`  ${fmt((now - started) / 1000)} s: ${seen}`);
      nextLogAt = now + 10_000;
    }
    await sleep(pollMs);
  }
}

/** Every message of the campaign on `sessionIds`: counts by status, and `sent_at` as epoch ms. */
async function campaignMessages(apiKey, sessionIds, campaignId) {
  const byStatus = {};
  const sentAt = [];
  const ids = new Set();
  for (const sessionId of sessionIds) {
    for (const m of await allMessages(apiKey, sessionId)) {
      if (m.campaign_id !== campaignId) continue;
      ids.add(m.id);
      byStatus[m.status] = (byStatus[m.status] ?? 0) + 1;
      if (m.sent_at) sentAt.push(epochMs(m.sent_at));
    }
  }
  const first = sentAt.reduce((a, b) => Math.min(a, b), Infinity);
  const last = sentAt.reduce((a, b) => Math.max(a, b), -Infinity);
  return { count: ids.size, byStatus, sentAt, first, last };
}

export async function connectedSessions(apiKey, count) {
  const ids = [];
  for (let i = 0; i < count; i++) ids.push(await connectedSession(apiKey));
  return ids;
}

export const rate = (count, ms) => `${fmt((count / Math.max(1, ms)) * 1000)} msg/s`;
const perMessage = (statements, messages) => statements / Math.max(1, messages);

/** Rows 7–8: throughput across 1, 10 and 20 sessions, and D1 statements per message. */
export async function benchCampaignScaling(apiKey) {
  for (const size of SCALING) {
    const label = `${fmt(size.recipients)} rcpts / ${size.sessions} session${size.sessions > 1 ? "s" : ""}`;
    log(`campaign: ${label}, delay_between 0 …`);
    const sessionIds = await connectedSessions(apiKey, size.sessions);
    const { id } = await createCampaign(
      apiKey,
      sessionIds,
      recipients(size.recipients),
      0,
      `bench: scaling ${label}`,
    );
    const perPoll = await pollCost(apiKey, id);
    const before = await d1Counters();
    const started = performance.now();
    const { ms: startMs } = await command(apiKey, id, "start");
    let firstMovedMs = null;
    const sending = await waitCampaign(apiKey, id, (c) => c.stats.queued === 0, {
      limitMs: SEND_WAIT_MS,
      onPoll: (c, ms) => {
        if (firstMovedMs === null && done(c.stats) > 0) firstMovedMs = ms;
      },
    });
    const elapsed = performance.now() - started;
    if (sending.stalled) {
      row(
        `campaign @0 ms, ${label}: start → none queued`,
        `stalled (${sending.stalled}): ${sending.campaign.stats.queued} queued after ${fmt(elapsed / 1000, 1)} s`,
        "all sent",
        false,
      );
      await cancel(apiKey, id);
      await cleanUp();
      continue;
    }
    // Receipts come SANDBOX_READ_MS (3 s) after each send.
    const reading = await waitCampaign(
      apiKey,
      id,
      (c) => c.stats.read + c.stats.failed + c.stats.skipped === c.stats.total,
      { limitMs: 60_000, pollMs: 250 },
    );
    const after = await d1Counters();
    const polls = sending.polls + reading.polls;
    const change = d1Change(before, after);
    const statements = change.statements - polls * perPoll;
    const stats = reading.campaign.stats;
    const messages = stats.total - stats.skipped;
    const scanStarted = performance.now();
    const scan = await campaignMessages(apiKey, sessionIds, id);
    const span = scan.last - scan.first;
    log(
      `campaign: read ${fmt(scan.count)} messages in ${fmt((performance.now() - scanStarted) / 1000, 1)} s`,
    );
    log(
      `campaign: ${label}: start POST ${fmt(startMs)} ms, first send seen at +${fmt(firstMovedMs ?? 0)} ms, ` +
        `none queued at ${fmt(elapsed)} ms; stats ${JSON.stringify(stats)}; ${fmt(change.statements)} statements ` +
        `counted, less ${polls} polls × ${perPoll}; ${fmt(change.rowsWritten)} rows written`,
    );
    const allSent = scan.sentAt.length === messages && stats.failed === 0 && !reading.stalled;
    row(
      `campaign @0 ms, ${label}: start → none queued / first → last sent_at`,
      `${rate(messages, elapsed)} (${fmt(elapsed / 1000, 1)} s) / ${rate(scan.sentAt.length - 1, span)} (${fmt(span / 1000, 1)} s)`,
      "all sent",
      allSent,
    );
    const ratio = perMessage(statements, messages);
    row(
      `D1 statements/msg, start → read, ${label}`,
      `${fmt(ratio, 3)} (${fmt(statements)} for ${fmt(messages)}; ${fmt(change.rowsWritten / messages, 1)} rows written/msg)`,
      `<= ${STATEMENTS_TARGET}`,
      ratio <= STATEMENTS_TARGET && !reading.stalled,
    );
    await cleanUp();
  }
}

/** Row 9: from the pause request to the campaign's last gateway call. */
export async function benchCampaignPause(apiKey) {
  log(`campaign pause: ${fmt(PAUSE_RECIPIENTS)} rcpts on ${PAUSE_SESSIONS} sessions, delay_between 0 …`);
  const sessionIds = await connectedSessions(apiKey, PAUSE_SESSIONS);
  const { id } = await createCampaign(apiKey, sessionIds, recipients(PAUSE_RECIPIENTS), 0, "bench: pause");
  await command(apiKey, id, "start");
  // Paused while its sessions are sending: statistics that moved since the last look (they move
  // as sessions write their sent messages, in batches).
  let seen = 0;
  const sending = await waitCampaign(
    apiKey,
    id,
    (c) => {
      const moved = done(c.stats) > seen;
      seen = done(c.stats);
      return moved && seen >= PAUSE_AFTER_SENT;
    },
    { limitMs: SEND_WAIT_MS, pollMs: 50 },
  );
  if (sending.stalled) throw new Error(`campaign pause: never sent ${PAUSE_AFTER_SENT} (${sending.stalled})`);
  // Wall clock: `sent_at` is the server's, and the server runs on this machine.
  const requestedAt = Date.now();
  const { campaign: paused, ms: postMs } = await command(apiKey, id, "pause");
  // Settled: nothing more reached D1 for 2 s (sent outcomes are written in batches).
  let last = -1;
  const settled = await waitCampaign(
    apiKey,
    id,
    (c) => {
      const now = done(c.stats);
      const same = now === last;
      last = now;
      return same;
    },
    { limitMs: 30_000, pollMs: 2000 },
  );
  const scan = await campaignMessages(apiKey, sessionIds, id);
  const after = scan.sentAt.filter((t) => t > requestedAt);
  const secondBefore = scan.sentAt.filter((t) => t > requestedAt - 1000 && t <= requestedAt).length;
  const latency = Math.max(0, scan.last - requestedAt);
  const stillQueued = settled.campaign.stats.queued;
  log(
    `campaign pause: ${scan.sentAt.length} sent, ${after.length} of them after the request; last sent_at ` +
      `${fmt(scan.last - requestedAt)} ms after it; ${stillQueued} still queued, status ${settled.campaign.status}`,
  );
  const held = paused.status === "paused" && settled.campaign.status === "paused" && stillQueued > 0;
  row(
    `campaign pause (${PAUSE_SESSIONS} sessions @0 ms): request → last gateway call`,
    `${fmt(latency)} ms (${after.length} sent after the request, ${secondBefore} in the second before)`,
    "< 1,000 ms",
    latency < 1000 && held && !settled.stalled,
  );
  row(`campaign pause: POST …/pause duration`, `${fmt(postMs)} ms`, "—", null);
  await cancel(apiKey, id);
  await cleanUp();
}

/** Balance of an account in minor units (GET /admin/accounts/{id}). */
async function balanceOf(accountId) {
  const { json } = await api("GET", `/admin/accounts/${accountId}`, { token: ADMIN_TOKEN });
  return Math.round(json.data.account.balance * 100);
}

/**
 * Whether money and statistics agree: balance before the start − cost + refunded = balance after,
 * and the statistics add up to `total`. Returns the problems (none when they agree).
 */
function disagreements(campaign, balanceBefore, balanceAfter) {
  const { stats } = campaign;
  const problems = [];
  const cost = Math.round(campaign.cost * 100);
  const refunded = Math.round(campaign.refunded * 100);
  if (balanceBefore - cost + refunded !== balanceAfter)
    problems.push(`balance ${balanceBefore} − cost ${cost} + refunded ${refunded} ≠ ${balanceAfter}`);
  const sum = stats.queued + stats.sent + stats.delivered + stats.read + stats.failed + stats.skipped;
  if (sum !== stats.total) problems.push(`statistics add up to ${sum}, not ${stats.total}`);
  return problems;
}

/**
 * Row 10: a 100,000-recipient campaign created, filled and started; then cancelled, or run to
 * completion with `--campaign-full`.
 */
export async function benchCampaignLarge() {
  // An account of its own: its balance moves with this campaign only.
  const { id: accountId, apiKey } = await createAccount();
  log(`campaign: ${fmt(LARGE_RECIPIENTS)} recipients on ${LARGE_SESSIONS} sessions …`);
  const sessionIds = await connectedSessions(apiKey, LARGE_SESSIONS);
  const list = recipients(LARGE_RECIPIENTS);
  const { id, createMs, addMs } = await createCampaign(apiKey, sessionIds, list, 0, "bench: 100,000");
  const filledMs = createMs + addMs.reduce((s, ms) => s + ms, 0);
  const balanceBefore = await balanceOf(accountId);
  const perPoll = await pollCost(apiKey, id);
  const before = await d1Counters();
  row(
    "campaign 100,000 rcpts: create (10,000) + 9 adds (10,000)",
    `${fmt(filledMs / 1000, 2)} s (create ${fmt(createMs)} ms, add median ${fmt(median(addMs))} ms)`,
    "—",
    null,
  );
  const started = performance.now();
  let startAnswer;
  try {
    startAnswer = await command(apiKey, id, "start");
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    // The row says so; the cancel then stops whatever the start set going.
    const why = error.message
      .split(" → ")
      .at(-1)
      .replace(/ \(did the dev server.*$/, "");
    row("campaign 100,000 rcpts: create + adds + start", `start failed: ${why}`, "< 10 s", false);
    await cancel(apiKey, id);
    await cleanUp();
    return;
  }
  const { campaign: running, ms: startMs } = startAnswer;
  log(
    `campaign: create ${fmt(createMs)} ms, adds ${addMs.map((ms) => fmt(ms)).join(" ")} ms, start ${fmt(startMs)} ms`,
  );
  row("campaign 100,000 rcpts: start (charge, status)", `${fmt(startMs)} ms`, "—", null);
  row(
    "campaign 100,000 rcpts: create + adds + start",
    `${fmt((filledMs + startMs) / 1000, 2)} s`,
    "< 10 s",
    filledMs + startMs < 10_000 && running.status === "running",
  );
  if (!CAMPAIGN_FULL) {
    await cancel(apiKey, id);
    // Messages on their way to a session when it was cancelled fail there: wait for the last.
    const settled = await waitCampaign(apiKey, id, (c) => c.stats.queued === 0, {
      limitMs: 60_000,
      pollMs: 500,
    });
    const problems = disagreements(settled.campaign, balanceBefore, await balanceOf(accountId));
    if (settled.stalled) problems.push(`${settled.campaign.stats.queued} still queued (${settled.stalled})`);
    const { stats } = settled.campaign;
    row(
      "campaign 100,000 rcpts, cancelled: balance and stats agree",
      problems.length === 0
        ? `yes (${fmt(done(stats) - stats.failed)} sent, ${fmt(stats.failed)} refunded)`
        : problems.join("; "),
      "yes",
      problems.length === 0,
    );
    await cleanUp();
    return;
  }
  const sending = await waitCampaign(apiKey, id, (c) => c.stats.queued === 0, {
    limitMs: FULL_WAIT_MS,
    pollMs: 1000,
    progress: true,
  });
  const sentMs = performance.now() - started;
  if (sending.stalled) {
    row(
      "campaign 100,000 rcpts, full run: start → none queued",
      `stalled (${sending.stalled}): ${JSON.stringify(sending.campaign.stats)}`,
      "completed",
      false,
    );
    await cleanUp();
    return;
  }
  const reading = await waitCampaign(
    apiKey,
    id,
    (c) => c.status === "completed" && c.stats.sent + c.stats.delivered === 0,
    { limitMs: 120_000, pollMs: 1000 },
  );
  const after = await d1Counters();
  const campaign = reading.campaign;
  const { stats } = campaign;
  const statements = d1Change(before, after).statements - (sending.polls + reading.polls) * perPoll;
  const problems = disagreements(campaign, balanceBefore, await balanceOf(accountId));
  if (reading.stalled) problems.push(`not settled (${reading.stalled}): ${JSON.stringify(stats)}`);
  log("campaign: counting the 100,000 message rows …");
  const scan = await campaignMessages(apiKey, sessionIds, id);
  for (const status of ["queued", "sent", "delivered", "read", "failed"]) {
    if ((scan.byStatus[status] ?? 0) !== stats[status])
      problems.push(`${scan.byStatus[status] ?? 0} ${status} rows, stats say ${stats[status]}`);
  }
  if (scan.count !== stats.total - stats.skipped)
    problems.push(`${scan.count} message rows for ${stats.total - stats.skipped} recipients`);
  const span = scan.last - scan.first;
  log(
    `campaign: full run ${JSON.stringify(stats)}, rows ${JSON.stringify(scan.byStatus)}, cost ${campaign.cost}, refunded ${campaign.refunded}`,
  );
  row(
    "campaign 100,000 rcpts, full run: start → none queued / first → last sent_at",
    `${fmt(sentMs / 1000, 1)} s, ${rate(scan.count, sentMs)} / ${rate(scan.sentAt.length - 1, span)}`,
    "completed",
    campaign.status === "completed" && stats.failed === 0,
  );
  row(
    "campaign 100,000 rcpts, full run: D1 statements/msg start → read",
    `${fmt(perMessage(statements, scan.count), 3)} (${fmt(statements)})`,
    `<= ${STATEMENTS_TARGET}`,
    perMessage(statements, scan.count) <= STATEMENTS_TARGET,
  );
  row(
    "campaign 100,000 rcpts, full run: balance, stats and rows agree",
    problems.length === 0 ? "yes" : problems.join("; "),
    "yes",
    problems.length === 0,
  );
  await cleanUp();
}
