// The account databases' row of `npm run bench` (docs/databases.md, Databases): the same campaign load run
// twice on the dev server, first with every account in one account database (DB_ACCOUNTS_0), then
// with the accounts spread over two (DB_ACCOUNTS_0 and DB_ACCOUNTS_1): ACCOUNTS accounts, each
// with one session and a campaign of RECIPIENTS recipients at delay_between 0, all started
// together. For each run: messages per second from the starts until no campaign has a message
// `queued`, and D1 statements per message in each database from before the starts until every
// message is `read` (GET /admin/metrics `databases`; the bench's own polls of the campaigns, each a
// read of the account's database, included). Under `wrangler dev` every database runs in the one
// local process, so the second database adds little speed here; deployed, each is its own writer.

import { performance } from "node:perf_hooks";
import { command, connectedSessions, createCampaign, rate, recipients, waitCampaign } from "./campaigns.mjs";
import { ADMIN_TOKEN, api, cleanUp, createAccount, d1Change, d1Counters, fmt, log, row } from "./common.mjs";

const ACCOUNTS = 4;
const RECIPIENTS = 1_000;
const WAIT_MS = 150_000;

/** One run: ACCOUNTS accounts placed by `placeOf(i)`, their campaigns started together. */
async function run(label, placeOf) {
  const accounts = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await createAccount(placeOf(i));
    const sessionIds = await connectedSessions(account.apiKey, 1);
    const { id } = await createCampaign(
      account.apiKey,
      sessionIds,
      recipients(RECIPIENTS),
      0,
      `bench: ${label}`,
    );
    accounts.push({ ...account, campaignId: id });
  }
  const before = await d1Counters();
  const started = performance.now();
  await Promise.all(accounts.map((a) => command(a.apiKey, a.campaignId, "start")));
  const sending = await Promise.all(
    accounts.map((a) =>
      waitCampaign(a.apiKey, a.campaignId, (c) => c.stats.queued === 0, { limitMs: WAIT_MS, pollMs: 250 }),
    ),
  );
  const elapsed = performance.now() - started;
  const reading = await Promise.all(
    accounts.map((a) =>
      waitCampaign(a.apiKey, a.campaignId, (c) => c.stats.read + c.stats.failed === c.stats.total, {
        limitMs: 60_000,
        pollMs: 1000,
      }),
    ),
  );
  const change = d1Change(before, await d1Counters());
  const stalled = [...sending, ...reading].some((w) => w.stalled);
  const messages = reading.reduce((n, w) => n + w.campaign.stats.total, 0);
  const perDatabase = Object.entries(change.byDatabase)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ${fmt(n / Math.max(1, messages), 3)}`)
    .join(", ");
  log(
    `databases: ${label}: ${fmt(messages)} messages, ${fmt(elapsed)} ms, statements ${JSON.stringify(change.byDatabase)}`,
  );
  await cleanUp();
  return { messages, elapsed, perDatabase, stalled };
}

const MOVE_RECIPIENTS = 2_000;

/**
 * The move row: one account with a campaign of MOVE_RECIPIENTS messages, all read, moved from
 * DB_ACCOUNTS_0 to DB_ACCOUNTS_1 (POST /admin/accounts/{id}/move; docs/databases.md,
 * Databases, Moving an account), followed every 400 ms (the admin API's limit is 30 requests in
 * 10 s) to its end:
 * rows copied per second of the copy (from the hold's end to the switch, by the move's own
 * times), how long the account was refused (from the post to the switch: the 30-second hold and
 * the copy), and whether the campaign reads the same from the new database.
 */
async function moveRow() {
  const account = await createAccount("DB_ACCOUNTS_0");
  const sessionIds = await connectedSessions(account.apiKey, 1);
  const { id } = await createCampaign(
    account.apiKey,
    sessionIds,
    recipients(MOVE_RECIPIENTS),
    0,
    "bench: move",
  );
  await command(account.apiKey, id, "start");
  const read = await waitCampaign(
    account.apiKey,
    id,
    (c) => c.stats.read + c.stats.failed === c.stats.total,
    {
      limitMs: WAIT_MS,
      pollMs: 1000,
    },
  );
  log(`databases: moving an account of ${fmt(read.campaign.stats.total)} messages …`);
  const posted = performance.now();
  await api("POST", `/admin/accounts/${account.id}/move`, {
    token: ADMIN_TOKEN,
    body: { database: "DB_ACCOUNTS_1" },
  });
  let move = null;
  while (performance.now() - posted < WAIT_MS) {
    const { json, status } = await api("GET", `/admin/accounts/${account.id}`, {
      token: ADMIN_TOKEN,
      accept: [429],
    });
    if (status === 200) {
      move = json.data.account.move;
      if (move.phase === "done" || move.phase === "failed") break;
    }
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  // The service's own times: the hold's end, the switch, the post.
  const at = (timestamp) => Date.parse(timestamp ?? "");
  const copyMs = at(move?.switched_at) - at(move?.copy_after);
  const refusedMs = at(move?.switched_at) - at(move?.created_at);
  const after = await waitCampaign(account.apiKey, id, () => true, { limitMs: 10_000, pollMs: 500 });
  const same = JSON.stringify(after.campaign.stats) === JSON.stringify(read.campaign.stats);
  log(`databases: move ${JSON.stringify(move)}, copy ${fmt(copyMs)} ms, refused ${fmt(refusedMs)} ms`);
  await cleanUp();
  row(
    `account move, ${fmt(read.campaign.stats.total)} messages: rows copied/s; refused (hold + copy)`,
    `${fmt(((move?.rows_copied ?? 0) / Math.max(1, copyMs)) * 1000)} rows/s of ${fmt(move?.rows_copied ?? 0)}; ${fmt(refusedMs / 1000, 1)} s`,
    "done, same campaign",
    move?.phase === "done" && same,
  );
}

/** The one-versus-two-databases row, then the move row. */
export async function benchDatabases() {
  const label = `${ACCOUNTS} accounts × ${fmt(RECIPIENTS)} rcpts`;
  log(`databases: ${label} on one account database, then on two …`);
  const one = await run("one database", () => "DB_ACCOUNTS_0");
  const two = await run("two databases", (i) => `DB_ACCOUNTS_${i % 2}`);
  row(
    `campaigns @0 ms, ${label}: one database / two (msg/s, start → none queued)`,
    `${rate(one.messages, one.elapsed)} / ${rate(two.messages, two.elapsed)}`,
    "all sent",
    !one.stalled && !two.stalled,
  );
  row(
    `D1 statements/msg by database, start → read, ${label}: one / two`,
    `${one.perDatabase} / ${two.perDatabase}`,
    "info",
    null,
  );
  await moveRow();
}
