// The account databases' row of `npm run bench` (README, Databases): the same campaign load run
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
import { cleanUp, createAccount, d1Change, d1Counters, fmt, log, row } from "./common.mjs";

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

/** The one-versus-two-databases row. */
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
}
