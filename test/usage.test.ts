import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { materialiseStep } from "../src/campaigns/materialise";
import { startCampaign } from "../src/campaigns/start";
import { batchSql } from "../src/db/client";
import { insertOutgoingStatements, type NewMessages } from "../src/db/queries/messages";
import { applyFailMoves, applyMoves } from "../src/moves/apply";
import { failMoves } from "../src/moves/message";
import { command, createCampaign, heldCampaignQueue, recipients, waitForCampaign } from "./campaign-fixtures";
import { accountD1, accountDb } from "./databases";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession, seedMessages, sendText, waitForMessages } from "./message-fixtures";

// GET /v1/account/usage and the counters behind it (table `account_usage`): a send's messages are
// counted by the statement before their INSERT (src/db/queries/messages.ts
// `insertOutgoingStatements`), and a trigger on `messages` moves them as their status moves
// (migrations/accounts/0016_account_usage.sql, defined in src/moves/counters.ts).

const HOUR = 3_600_000;
const DAY = 86_400_000;
const STATUSES = ["queued", "scheduled", "sent", "delivered", "read", "failed"] as const;

interface Counters {
  hour: number;
  type: string;
  queued: number;
  scheduled: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  cost: number;
  refunded: number;
}

interface Bucket {
  start: string;
  type: string;
  counts: Record<(typeof STATUSES)[number], number>;
  cost: number;
  refunded: number;
}

interface Usage {
  success: true;
  data: { granularity: string; time_from: string; time_to: string; buckets: Bucket[] };
}

/** The account's counters, as stored. */
async function counters(accountId: string): Promise<Counters[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(
      `SELECT hour, type, queued, scheduled, sent, delivered, "read", failed, cost, refunded
     FROM account_usage WHERE account_id = ? ORDER BY hour, type`,
    )
    .bind(accountId)
    .all<Counters>();
  return results;
}

/** The same counters recounted from the account's outgoing message rows. */
async function recount(accountId: string): Promise<Counters[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(
      `SELECT created_at - created_at % 3600000 AS hour, type, SUM(status = 'queued') AS queued,
       SUM(status = 'scheduled') AS scheduled, SUM(status = 'sent') AS sent, SUM(status = 'delivered') AS delivered,
       SUM(status = 'read') AS "read", SUM(status = 'failed') AS failed, SUM(cost) AS cost,
       SUM(CASE WHEN refund_id IS NULL THEN 0 ELSE cost END) AS refunded
     FROM messages WHERE account_id = ? AND direction = 'outgoing'
     GROUP BY created_at - created_at % 3600000, type ORDER BY hour, type`,
    )
    .bind(accountId)
    .all<Counters>();
  return results;
}

const usage = (key: string, query: string) => call<Usage>("GET", `/v1/account/usage?${query}`, { key });

const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");

/** A bucket as the API shows it, with zero counts unless given. */
const bucket = (
  start: string,
  type: string,
  counts: Partial<Bucket["counts"]>,
  cost: number,
  refunded = 0,
): Bucket => ({
  start,
  type,
  counts: { queued: 0, scheduled: 0, sent: 0, delivered: 0, read: 0, failed: 0, ...counts },
  cost,
  refunded,
});

describe("usage counters", () => {
  it("equal a recount of the messages as they are sent, read, failed and refunded; incoming ones are not counted", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedSession(key);
    const texts = await sendText(key, session.id, ["+14155552671", "+14155552672", "+14155550000"], {
      delay_between: 0,
    });
    const image = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: ["+14155552673"],
        type: "image",
        media_url: "https://cdn.example.test/cat.png",
        delay_between: 0,
      },
    });
    const later = await sendText(key, session.id, ["+14155552674"], {
      scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect([texts.status, image.status, later.status]).toEqual([201, 201, 201]);
    expect(await counters(accountId)).toEqual(await recount(accountId));
    const inbound = await call("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: "+14155552671", type: "text", content: "Hi!" },
    });
    expect(inbound.status).toBe(201);

    const ids = [...texts.body.data.messages, ...image.body.data.messages].map((m) => m.id);
    await waitForMessages(key, ids, (m) => m.status === "read" || m.status === "failed");
    const stored = await counters(accountId);
    expect(stored).toEqual(await recount(accountId));

    // Summed over the buckets (the test may straddle an hour).
    const now = Date.now();
    const res = await usage(key, `granularity=hour&time_from=${iso(now - HOUR)}&time_to=${iso(now + HOUR)}`);
    expect(res.status).toBe(200);
    expect(res.body.data.buckets.length).toBe(stored.length);
    const totals: Record<string, Bucket> = {};
    for (const b of res.body.data.buckets) {
      const sum = totals[b.type] ?? bucket("", b.type, {}, 0);
      totals[b.type] = sum;
      for (const status of STATUSES) sum.counts[status] += b.counts[status];
      sum.cost = Math.round((sum.cost + b.cost) * 100) / 100;
      sum.refunded = Math.round((sum.refunded + b.refunded) * 100) / 100;
    }
    expect(totals).toEqual({
      image: bucket("", "image", { read: 1 }, 0.02),
      text: bucket("", "text", { scheduled: 1, read: 2, failed: 1 }, 0.04, 0.01),
    });
  });

  it("equal a recount after a campaign run", async () => {
    const { key, accountId } = await createAccount(10);
    const sessions = [(await connectedSession(key)).id, (await connectedSession(key)).id];
    const draft = await createCampaign(key, {
      chatapp_session_ids: sessions,
      recipients: recipients(6),
      delay_between: 0,
    });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    await waitForCampaign(key, draft.id, (c) => c.stats.read === 6);
    const stored = await counters(accountId);
    expect(stored).toEqual(await recount(accountId));
    expect(stored.reduce((n, row) => n + row.read, 0)).toBe(6);
  });

  it("count each outgoing message once, on every path that creates one, and nothing for a replay or a refused send", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const total = async () =>
      (await counters(accountId)).reduce(
        (n, c) => n + c.queued + c.scheduled + c.sent + c.delivered + c.read + c.failed,
        0,
      );
    // A send, and its retry with the same Idempotency-Key (replayed: nothing is created again).
    const idempotent = {
      key,
      headers: { "Idempotency-Key": "usage-once" },
      body: {
        chatapp_session_id: session,
        to_number: ["+14155552671", "+14155552672", "+14155550000"],
        type: "text",
        content: "Hello",
      },
    };
    const first = await call("POST", "/v1/chatapp/messages", idempotent);
    const retried = await call("POST", "/v1/chatapp/messages", idempotent);
    expect([first.status, retried.status]).toEqual([201, 201]);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    // Media, and a scheduled send.
    const image = await call("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_number: ["+14155552673"],
        type: "image",
        media_url: "https://cdn.example.test/cat.png",
      },
    });
    const later = await sendText(key, session, ["+14155552674"], {
      scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    // A one-time code.
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: {
        name: "Acme",
        sender_id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        message_template: "Your code is {{code}}.",
        chatapp_session_id: session,
      },
    });
    const otp = await call("POST", `/v1/apps/${app.body.data.id}/otp`, {
      key,
      body: { to_number: "+14155552675" },
    });
    expect([image.status, later.status, app.status, otp.status]).toEqual([201, 201, 201, 201]);
    // A campaign's step, run twice at once: one makes its messages, the other nothing.
    const draft = await createCampaign(key, { chatapp_session_ids: [session], recipients: recipients(3) });
    await startCampaign(heldCampaignQueue().env, await accountDb(accountId), accountId, draft.id);
    await Promise.all([
      materialiseStep(env, await accountDb(accountId), draft.id),
      materialiseStep(env, await accountDb(accountId), draft.id),
    ]);
    expect(await total()).toBe(3 + 1 + 1 + 1 + 3);
    expect(await counters(accountId)).toEqual(await recount(accountId));

    // The statements of a send run again (as a campaign's ids, derived, may be made twice): its
    // messages exist, so nothing is counted again.
    const again: NewMessages = {
      accountId,
      sessionId: session,
      type: "video",
      content: null,
      mediaUrl: null,
      mediaKey: null,
      mediaContentType: null,
      delayBetween: 0,
      scheduledAt: null,
      price: 7,
      otpId: null,
      chargeId: crypto.randomUUID(),
      recipients: [
        { id: crypto.randomUUID(), to: "+14155552676" },
        { id: crypto.randomUUID(), to: "+14155552677" },
      ],
      now: Date.now(),
    };
    for (let run = 0; run < 2; run++)
      await batchSql(await accountDb(accountId), insertOutgoingStatements(again, sql`1`));
    expect(await total()).toBe(11);
    // A send the balance cannot cover creates and counts nothing.
    const refused = await sendText(
      key,
      session,
      Array.from({ length: 1000 }, (_, i) => `+1415556${String(i).padStart(4, "0")}`),
    );
    expectProblem(refused, 402, "insufficient_balance");
    expect(await total()).toBe(11);
    expect(await counters(accountId)).toEqual(await recount(accountId));
    expect((await counters(accountId)).find((c) => c.type === "video")).toMatchObject({
      queued: 2,
      cost: 14,
    });
  });

  it("count a batch's moves into sent in one write per hour and type, each message once", async () => {
    const { key, accountId } = await createAccount(10);
    const other = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const otherSession = (await connectedSession(other.key)).id;
    const at = Date.parse("2026-03-03T10:00:00Z");
    const seed = (
      account: string,
      sessionId: string,
      status: "queued" | "scheduled" | "sent",
      type = "text",
    ) => ({
      accountId: account,
      sessionId,
      toNumber: "+14155552671",
      type: type as "text" | "image",
      status,
      createdAt: at,
    });
    const ids = await seedMessages([
      seed(accountId, session, "queued"),
      seed(accountId, session, "queued"),
      seed(accountId, session, "scheduled"),
      seed(accountId, session, "queued", "image"),
      seed(accountId, session, "sent"),
      seed(other.accountId, otherSession, "queued"),
    ]);
    const sentMove = (id: string) => ({
      kind: "sent" as const,
      id,
      at: Date.now(),
      providerMessageId: `p-${id}`,
      fromNumber: null,
      attempts: 1,
      gateway: "sandbox" as const,
      settledBy: "answer" as const,
    });
    // The first message twice, the already sent one again; and the other account's, in its batch.
    const moved = [
      ...(await applyMoves(
        env,
        accountId,
        [...ids.slice(0, 5), ids[0]].map((id) => sentMove(id ?? "")),
      )),
      ...(await applyMoves(env, other.accountId, [sentMove(ids[5] ?? "")])),
    ];
    expect(moved.every(Boolean)).toBe(true);
    expect(await counters(accountId)).toEqual(await recount(accountId));
    expect(await counters(other.accountId)).toEqual(await recount(other.accountId));
    const textRow = (await counters(accountId)).find((row) => row.type === "text");
    expect(textRow).toMatchObject({ queued: 0, scheduled: 0, sent: 4 });
    // Applied again, nothing moves and nothing is counted twice.
    await applyMoves(
      env,
      accountId,
      ids.slice(0, 5).map((id) => sentMove(id ?? "")),
    );
    await applyMoves(env, other.accountId, [sentMove(ids[5] ?? "")]);
    expect(await counters(accountId)).toEqual(await recount(accountId));
  });

  it("count each message in the UTC hour it was created, and move it between statuses as it moves", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const at = (time: string) => Date.parse(`2026-03-0${time}Z`);
    const seed = (
      time: string,
      type: "text" | "image" | "video" = "text",
      status: "queued" | "scheduled" = "queued",
    ) => ({
      accountId,
      sessionId: session,
      toNumber: "+14155552671",
      type,
      status,
      createdAt: at(time),
    });
    // Seeded rows cost 0.01 each (test/message-fixtures.ts).
    const [late, failing, sent, , , due] = await seedMessages([
      seed("1T23:30:00"),
      seed("2T00:10:00"),
      seed("2T00:10:00"),
      seed("2T00:10:00", "image"),
      seed("2T00:59:59.999"),
      seed("2T05:00:00", "video", "scheduled"),
    ]);
    const now = Date.now();
    await applyMoves(env, accountId, [
      ...failMoves([{ id: failing ?? "", accountId }], "retries_exhausted", now),
      {
        kind: "sent",
        id: sent ?? "",
        at: now,
        providerMessageId: "p-1",
        fromNumber: null,
        attempts: 1,
        gateway: "sandbox",
        settledBy: "answer",
      },
      { kind: "due", target: { ids: [due ?? ""] }, at: now },
      { kind: "delivered", target: { ids: [late ?? ""] }, at: now, gatewayAt: now },
    ]);
    expect(await counters(accountId)).toEqual(await recount(accountId));

    const byHour = await usage(
      key,
      "granularity=hour&time_from=2026-03-01T23:00:00Z&time_to=2026-03-02T06:00:00Z",
    );
    expect(byHour.body.data).toEqual({
      granularity: "hour",
      time_from: "2026-03-01T23:00:00.000000Z",
      time_to: "2026-03-02T06:00:00.000000Z",
      buckets: [
        // The delivered move finds `late` queued: only sent messages are delivered, so it stays.
        bucket("2026-03-01T23:00:00.000000Z", "text", { queued: 1 }, 0.01),
        bucket("2026-03-02T00:00:00.000000Z", "image", { queued: 1 }, 0.01),
        bucket("2026-03-02T00:00:00.000000Z", "text", { queued: 1, sent: 1, failed: 1 }, 0.03, 0.01),
        bucket("2026-03-02T05:00:00.000000Z", "video", { queued: 1 }, 0.01),
      ],
    });

    const byDay = await usage(key, "granularity=day&time_from=2026-03-01&time_to=2026-03-03");
    expect(byDay.body.data).toEqual({
      granularity: "day",
      time_from: "2026-03-01T00:00:00.000000Z",
      time_to: "2026-03-03T00:00:00.000000Z",
      buckets: [
        bucket("2026-03-01T00:00:00.000000Z", "text", { queued: 1 }, 0.01),
        bucket("2026-03-02T00:00:00.000000Z", "image", { queued: 1 }, 0.01),
        bucket("2026-03-02T00:00:00.000000Z", "text", { queued: 1, sent: 1, failed: 1 }, 0.03, 0.01),
        bucket("2026-03-02T00:00:00.000000Z", "video", { queued: 1 }, 0.01),
      ],
    });
    // The day is the sum of its 24 hours.
    const hoursOfDay = await usage(key, "granularity=hour&time_from=2026-03-02&time_to=2026-03-03");
    const summed = hoursOfDay.body.data.buckets.reduce(
      (sum, b) => sum + b.counts.queued + b.counts.sent + b.counts.failed,
      0,
    );
    expect(summed).toBe(5);

    // Bounds round outwards to whole buckets: 00:30–04:59 covers 00:00–05:00, without 05:00's video.
    const rounded = await usage(
      key,
      "granularity=hour&time_from=2026-03-02T00:30:00Z&time_to=2026-03-02T04:59:00Z",
    );
    expect(rounded.body.data).toMatchObject({
      time_from: "2026-03-02T00:00:00.000000Z",
      time_to: "2026-03-02T05:00:00.000000Z",
    });
    expect(rounded.body.data.buckets.map((b) => [b.start, b.type])).toEqual([
      ["2026-03-02T00:00:00.000000Z", "image"],
      ["2026-03-02T00:00:00.000000Z", "text"],
    ]);
    // Granularity defaults to day.
    const byDefault = await usage(key, "time_from=2026-03-02&time_to=2026-03-02T12:00:00Z");
    expect(byDefault.body.data.granularity).toBe("day");
    expect(byDefault.body.data.buckets).toHaveLength(3);
  });

  it("show only the caller's messages", async () => {
    const mine = await createAccount(1);
    const theirs = await createAccount(1);
    await seedMessages([
      {
        accountId: theirs.accountId,
        sessionId: null,
        toNumber: "+14155552671",
        createdAt: Date.parse("2026-04-01T10:00:00Z"),
      },
    ]);
    const query = "granularity=hour&time_from=2026-04-01&time_to=2026-04-02";
    expect((await usage(mine.key, query)).body.data.buckets).toEqual([]);
    expect((await usage(theirs.key, query)).body.data.buckets).toEqual([
      bucket("2026-04-01T10:00:00.000000Z", "text", { queued: 1 }, 0.01),
    ]);
  });

  it("refuses a range that is empty, reversed or too long with 422 time_range_invalid, and bad parameters with 422 validation_failed", async () => {
    const { key } = await createAccount(1);
    const invalid: string[] = [
      "time_from=2026-03-02&time_to=2026-03-02",
      "time_from=2026-03-02&time_to=2026-03-01",
      "granularity=hour&time_from=2026-03-01&time_to=2026-04-01T00:00:01Z",
      "granularity=hour&time_from=2026-03-01T00:30:00Z&time_to=2026-04-01T00:30:00Z",
      "granularity=day&time_from=2026-01-01&time_to=2027-01-02T00:00:01Z",
    ];
    for (const query of invalid) {
      const problem = expectProblem(await usage(key, query), 422, "time_range_invalid");
      expect(Object.keys(problem.errors as object)).toEqual(["time_to"]);
    }
    expect((await usage(key, "granularity=hour&time_from=2026-03-01&time_to=2026-04-01")).status).toBe(200);
    expect((await usage(key, "granularity=day&time_from=2026-01-01&time_to=2027-01-02")).status).toBe(200);

    const bad: [string, string][] = [
      ["granularity=week&time_from=2026-03-01&time_to=2026-03-02", "granularity"],
      ["time_from=yesterday&time_to=2026-03-02", "time_from"],
    ];
    for (const [query, field] of bad) {
      const problem = expectProblem(await usage(key, query), 422, "validation_failed");
      expect(Object.keys(problem.errors as object)).toEqual([field]);
    }
  });

  it("default to the last 30 UTC days by day without time_from and time_to; a lone bound keeps, the other defaults", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedSession(key);
    const sent = await sendText(key, session.id, ["+14155552671", "+14155552672", "+14155550000"], {
      delay_between: 0,
    });
    expect(sent.status).toBe(201);
    await waitForMessages(
      key,
      sent.body.data.messages.map((m) => m.id),
      (m) => m.status === "read" || m.status === "failed",
    );
    const now = Date.now();
    const today = now - (now % DAY);
    // The first day of the default range, its last millisecond before it, and four days ago.
    await seedMessages(
      [today - 29 * DAY, today - 29 * DAY - 1, today - 4 * DAY + 5 * HOUR].map((createdAt) => ({
        accountId,
        sessionId: session.id,
        toNumber: "+14155552671",
        createdAt,
      })),
    );

    const last30 = await usage(key, "");
    expect(last30.status).toBe(200);
    const { data } = last30.body;
    expect(data.granularity).toBe("day");
    expect(data.time_from).toBe(iso(today - 29 * DAY));
    expect(data.time_to).toBe(iso(today + DAY));
    expect((Date.parse(data.time_to) - Date.parse(data.time_from)) / DAY).toBe(30);
    expect(data.buckets).toEqual([
      bucket(iso(today - 29 * DAY), "text", { queued: 1 }, 0.01),
      bucket(iso(today - 4 * DAY), "text", { queued: 1 }, 0.01),
      // What the test sent: two read, one failed (…0000) and refunded.
      bucket(iso(today), "text", { read: 2, failed: 1 }, 0.03, 0.01),
    ]);

    // By hour, the same start; the end is now rounded up to its hour.
    const byHour = await usage(key, "granularity=hour");
    expect(byHour.body.data).toMatchObject({
      granularity: "hour",
      time_from: iso(today - 29 * DAY),
      time_to: iso(Math.ceil(Date.now() / HOUR) * HOUR),
    });
    expect(byHour.body.data.buckets.map((b) => [b.start, b.counts.queued])).toEqual([
      [iso(today - 29 * DAY), 1],
      [iso(today - 4 * DAY + 5 * HOUR), 1],
      ...byHour.body.data.buckets.slice(2).map((b) => [b.start, 0]),
    ]);
    expect(byHour.body.data.buckets.slice(2).reduce((n, b) => n + b.counts.read + b.counts.failed, 0)).toBe(
      3,
    );

    // Only time_to: the 30 UTC days that end where time_to rounds up to.
    const upTo = await usage(key, "time_to=2026-03-10");
    expect(upTo.body.data).toMatchObject({
      time_from: "2026-02-08T00:00:00.000000Z",
      time_to: "2026-03-10T00:00:00.000000Z",
    });
    const upToNoon = await usage(key, "time_to=2026-03-10T12:00:00Z");
    expect(upToNoon.body.data).toMatchObject({
      time_from: "2026-02-09T00:00:00.000000Z",
      time_to: "2026-03-11T00:00:00.000000Z",
    });
    // Only time_from: up to now.
    const since = await usage(key, `time_from=${new Date(today - 4 * DAY).toISOString().slice(0, 10)}`);
    expect(since.body.data).toMatchObject({ time_from: iso(today - 4 * DAY), time_to: iso(today + DAY) });
    expect(since.body.data.buckets.map((b) => b.start)).toEqual([iso(today - 4 * DAY), iso(today)]);

    // The range rules hold for a defaulted bound too.
    const tooLong = await usage(key, "granularity=hour&time_from=2026-01-01");
    expect(Object.keys(expectProblem(tooLong, 422, "time_range_invalid").errors as object)).toEqual([
      "time_to",
    ]);
    const future = await usage(key, `time_from=${iso(now + 2 * DAY)}`);
    expect(Object.keys(expectProblem(future, 422, "time_range_invalid").errors as object)).toEqual([
      "time_to",
    ]);
  });

  it("are what the migration's backfill builds from the messages", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    await seedMessages(
      Array.from({ length: 30 }, (_, i) => ({
        accountId,
        sessionId: session,
        toNumber: "+14155552671",
        type: (["text", "image", "audio"] as const)[i % 3],
        createdAt: Date.parse("2026-05-01T00:00:00Z") + i * 20 * 60_000,
      })),
    );
    const d1 = await accountD1(accountId);
    const { results } = await d1
      .prepare("SELECT id FROM messages WHERE account_id = ? ORDER BY created_at")
      .bind(accountId)
      .all<{ id: string }>();
    await applyFailMoves(
      env,
      failMoves(
        results.slice(0, 7).map((r) => ({ id: r.id, accountId })),
        "retries_exhausted",
        Date.now(),
      ),
    );
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.endsWith("_account_usage.sql"));
    const backfill = migration?.queries.find((q) => q.includes("INSERT INTO `account_usage`"));
    expect(backfill).toContain("GROUP BY");
    // The counters of every account in this account's database before, rebuilt by the backfill
    // alone, and a recount of every one of that database's messages, read in one transaction.
    const all = `SELECT account_id, hour, type, queued, scheduled, sent, delivered, "read", failed, cost, refunded`;
    const [stored, , , rebuilt, recounted] = await d1.batch([
      d1.prepare(`${all} FROM account_usage ORDER BY 1, 2, 3`),
      d1.prepare("DELETE FROM account_usage"),
      d1.prepare(backfill ?? ""),
      d1.prepare(`${all} FROM account_usage ORDER BY 1, 2, 3`),
      d1.prepare(`SELECT account_id, created_at - created_at % 3600000 AS hour, type, SUM(status = 'queued') AS queued,
          SUM(status = 'scheduled') AS scheduled, SUM(status = 'sent') AS sent, SUM(status = 'delivered') AS delivered,
          SUM(status = 'read') AS "read", SUM(status = 'failed') AS failed, SUM(cost) AS cost,
          SUM(CASE WHEN refund_id IS NULL THEN 0 ELSE cost END) AS refunded
        FROM messages WHERE direction = 'outgoing' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    ]);
    expect(rebuilt?.results).toEqual(stored?.results);
    expect(recounted?.results).toEqual(stored?.results);
    expect(stored?.results.length).toBeGreaterThan(10);
    expect((await counters(accountId)).reduce((n, row) => n + row.failed, 0)).toBe(7);
  });
});
