// The exactly-once row of `npm run bench`: one send of 150 text messages through the sandbox under
// a fault mix (docs/exactly-once.md, "Exactly once"; the mix of test/exactly-once.test.ts, here against a
// running server and its real clock): 20% of the first attempts answer 500 before reaching the phone, 10%
// time out before it, 5% reach the phone but lose the answer, the rest go through. A lost outcome
// is settled by asking the sandbox only after OUTCOME_GRACE_SECONDS, so the row waits that long;
// then it reads what every recipient's phone received and the account's refunds, and counts what
// exactly once forbids.

import { performance } from "node:perf_hooks";
import {
  allMessages,
  api,
  connectedSession,
  createAccount,
  fmt,
  log,
  row,
  send,
  sleep,
  waitUntilNoneQueued,
} from "./common.mjs";

const MESSAGES = 150;
/**
 * First-attempt faults of the sandbox's area code 212, by the recipient's last digits
 * (src/gateways/sandbox.ts); every other recipient ends in {@link FINE}.
 */
const FAULTS = [
  { suffix: "0004", count: 30 }, // 20%: a 500 before the phone got it → asked, absent, sent again
  { suffix: "0006", count: 15 }, // 10%: a time-out before the phone got it → as 0004
  { suffix: "0003", count: 8 }, // 5%: the phone got it, the answer was lost → asked, found
];
const LOST_ANSWER = "0003";
const FINE = "0007";
/** wrangler.toml [vars] OUTCOME_GRACE_SECONDS: no lost outcome is asked about before it. */
const OUTCOME_GRACE_MS = 30_000;
/** The lookups come after the grace; one that answers "absent" is sent again at once. */
const SETTLE_LIMIT_MS = 120_000;
const PHONE_READS_AT_ONCE = 10;

/**
 * The recipients, `+1212` + exchange `200 + i` + the fault's suffix. The faults are spread through
 * the send (slot i takes the suffix at (7 i) mod 150; 7 is coprime with 150), so the fine messages
 * are dispatched between and after the failing ones.
 */
function recipients() {
  const suffixes = FAULTS.flatMap(({ suffix, count }) => Array(count).fill(suffix));
  while (suffixes.length < MESSAGES) suffixes.push(FINE);
  return suffixes.map((_, i) => `+1212${200 + i}${suffixes[(i * 7) % MESSAGES]}`);
}

/** What the sandbox phone of each number received from the session: number → message ids. */
async function phones(apiKey, sessionId, toNumbers) {
  const held = new Map();
  const queue = [...toNumbers];
  const reader = async () => {
    for (let to = queue.shift(); to; to = queue.shift()) {
      const { json } = await api(
        "GET",
        `/sandbox/sessions/${sessionId}/received?to_number=${encodeURIComponent(to)}`,
        { token: apiKey },
      );
      held.set(
        to,
        json.data.map((m) => m.message_id),
      );
    }
  };
  await Promise.all(Array.from({ length: PHONE_READS_AT_ONCE }, reader));
  return held;
}

/** The ids of the messages the account's refund entries list, and whether a list was cut short. */
async function refunds(apiKey) {
  const ids = new Set();
  let truncated = false;
  let cursor = null;
  for (let page = 0; page < 100; page++) {
    const query = `?filter[kind]=refund&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const { json } = await api("GET", `/v1/account/ledger${query}`, { token: apiKey });
    for (const entry of json.data) {
      for (const id of entry.source.message_ids) ids.add(id);
      truncated ||= entry.source.message_ids_truncated;
    }
    cursor = json.meta.next_cursor;
    if (!cursor) break;
  }
  return { ids, truncated };
}

const balanceOf = async (apiKey) => (await api("GET", "/v1/account", { token: apiKey })).json.data.balance;

/**
 * Row 12: 150 messages under the fault mix on a session of an account of its own, from the POST
 * until none is `queued`; then the messages still `queued` (stuck), those a phone received more
 * than once (duplicates), those failed and refunded although their phone received them, and those
 * settled by a lookup (exactly the lost answers, {@link LOST_ANSWER}).
 */
export async function benchExactlyOnce() {
  log(`exactly once: ${MESSAGES} messages, 20% 500 / 10% time-out / 5% answer lost, delay_between 0 …`);
  const { apiKey } = await createAccount();
  const sessionId = await connectedSession(apiKey);
  const balanceBefore = await balanceOf(apiKey);
  const to = recipients();
  const started = performance.now();
  const { messages } = await send(apiKey, sessionId, to, 0, "bench: exactly once");
  // Nothing can settle before the grace: poll only near its end (a wait gives up after 20 s
  // without progress, which the grace alone would trip).
  const waited = await waitUntilNoneQueued(
    apiKey,
    sessionId,
    SETTLE_LIMIT_MS,
    started,
    OUTCOME_GRACE_MS - 5_000,
  );
  const elapsed = (performance.now() - started) / 1000;
  log(
    waited.stalled
      ? `exactly once: ${waited.queued} still queued after ${fmt(elapsed, 1)} s (${waited.stalled})`
      : `exactly once: none queued after ${fmt(waited.ms / 1000, 1)} s`,
  );

  const ids = new Set(messages.map((m) => m.id));
  const settled = (await allMessages(apiKey, sessionId)).filter((m) => ids.has(m.id));
  const held = await phones(apiKey, sessionId, to);
  const { ids: refunded, truncated } = await refunds(apiKey);
  // Each recipient is sent one message, and the sandbox keeps one copy per message id: a second
  // entry on a phone is a second message sent for one recipient. (A repeated call with the same
  // id leaves nothing new on the phone, as a gateway that honours client ids does.)
  const copies = (m) => held.get(m.to_number)?.length ?? 0;
  const received = (m) => held.get(m.to_number)?.includes(m.id) ?? false;
  const stuck = settled.filter((m) => m.status === "queued");
  const failed = settled.filter((m) => m.status === "failed");
  const duplicates = settled.filter((m) => copies(m) > 1);
  const refundedButSent = failed.filter((m) => (refunded.has(m.id) || truncated) && received(m));
  const sentButMissing = settled.filter((m) => m.sent_at && !received(m));
  const byLookup = settled.filter((m) => m.metadata?.settled_by === "lookup");
  const lostAnswers = settled.filter((m) => m.to_number.endsWith(LOST_ANSWER));
  const lookupsRight =
    byLookup.length === lostAnswers.length && byLookup.every((m) => m.to_number.endsWith(LOST_ANSWER));
  const charged = balanceBefore - (await balanceOf(apiKey));
  const owed = settled.filter((m) => m.status !== "failed").reduce((sum, m) => sum + m.cost, 0);

  const byStatus = new Map();
  for (const m of settled) byStatus.set(m.status, (byStatus.get(m.status) ?? 0) + 1);
  log(
    `exactly once: ${[...byStatus].map(([status, n]) => `${n} ${status}`).join(", ")}; ${sentButMissing.length} sent but not on the phone; charged ${fmt(charged, 2)} for ${fmt(owed, 2)} of messages kept`,
  );
  for (const m of [...stuck, ...failed, ...duplicates].slice(0, 5))
    log(`  ${m.to_number} ${m.status} ${m.reason ?? ""} ${JSON.stringify(m.metadata)}`);
  if (Math.abs(charged - owed) >= 0.005)
    log(
      `exactly once: warning: the balance fell by ${fmt(charged, 2)}, the messages kept cost ${fmt(owed, 2)}`,
    );

  const time = waited.stalled
    ? `not settled after ${fmt(elapsed, 1)} s (${waited.stalled})`
    : `settled in ${fmt(waited.ms / 1000, 1)} s`;
  row(
    `exactly once under faults, ${MESSAGES} msgs: stuck / dup / refunded-but-sent / by lookup`,
    `${stuck.length} / ${duplicates.length} / ${refundedButSent.length} / ${byLookup.length} of ${lostAnswers.length} lost; ${time}`,
    `0 / 0 / 0 / ${lostAnswers.length} of ${lostAnswers.length}`,
    !waited.stalled &&
      stuck.length === 0 &&
      duplicates.length === 0 &&
      refundedButSent.length === 0 &&
      sentButMissing.length === 0 &&
      lookupsRight,
  );
  // The messages sent last get their read receipts 3 s later (SANDBOX_READ_MS): let them land
  // before the next row measures.
  await sleep(3500);
}
