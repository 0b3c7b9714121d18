import { beforeAll, describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem, phoneText } from "./helpers";
import { driveAlarmUntil, getMessage } from "./message-fixtures";

// GET /v1/apps/{id}/otp-stats (docs/otp.md, OTP statistics): OTPs made through the API on
// two sandbox sessions, some verified, one failed, one expired, one pending; their start times are
// then moved into two known hours (tests own their clock). The statistics must equal a recount of
// the rows done here, independently of the route's SQL.

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const HOUR = 3_600_000;
/** Two whole UTC hours in the past: the buckets the OTPs are moved into. */
const H0 = Date.parse("2026-11-02T10:00:00Z");
const H1 = H0 + HOUR;

interface Bucket {
  start: string;
  sent: number;
  delivered: number;
  verified: number;
  failed: number;
  expired: number;
  conversion_rate: number | null;
  median_seconds_to_verify: number | null;
  by_channel: ({ session_id: string | null } & Counts)[];
  by_mode: ({ mode: string } & Counts)[];
}
type Counts = { sent: number; delivered: number; verified: number; failed: number; expired: number };
interface Stats {
  app_id: string;
  granularity: string;
  time_from: string;
  time_to: string;
  buckets: Bucket[];
}

let key: string;
let accountId: string;
let appId: string;
const sessions: string[] = [];

async function connectedSession(): Promise<string> {
  const created = await call<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { key });
  const id = created.body.session.id;
  await call("POST", `/sandbox/sessions/${id}/scan`, { key, body: {} });
  return id;
}

/**
 * The code the sandbox phone of `to` received in message `messageId`, once it is delivered: the
 * outbound queue hands the message to the session (the runtime delivers it: phoneText waits),
 * then the session's alarm is driven through the write to D1 and the sandbox's `delivered`
 * receipt, rather than waiting for them on the wall clock.
 */
async function deliveredCode(sessionId: string, messageId: string, to: string): Promise<string> {
  const text = await phoneText(sessionId, to, messageId);
  // Delivered, or read already: the same alarm takes the `read` receipt when it falls due.
  await driveAlarmUntil(sessionId, async () =>
    ["delivered", "read"].includes((await getMessage(key, messageId)).status),
  );
  return /(\d{6})/.exec(text)?.[1] ?? "";
}

async function startOtp(to: string): Promise<{ id: string; messageId: string }> {
  const res = await call<{ data: { id: string; message_id: string } }>("POST", `/v1/apps/${appId}/otp`, {
    key,
    body: { to_number: to },
  });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, messageId: res.body.data.message_id };
}

const verify = (id: string, code: string) => call("POST", `/v1/otp/${id}/verify`, { key, body: { code } });

const stats = (query: string) =>
  call<{ data: Stats }>("GET", `/v1/apps/${appId}/otp-stats?${query}`, { key });

/** Moves an OTP's start (and, keeping its offset, its verification) to `at`. */
async function startAt(id: string, at: number, verifiedAfterMs?: number): Promise<void> {
  await (await accountD1(accountId))
    .prepare(
      "UPDATE otps SET created_at = ?1, verified_at = CASE WHEN verified_at IS NULL THEN NULL ELSE ?1 + ?2 END WHERE id = ?3",
    )
    .bind(at, verifiedAfterMs ?? 0, id)
    .run();
}

beforeAll(async () => {
  ({ key, accountId } = await createAccount(100));
  sessions.push(await connectedSession(), await connectedSession());
  const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: { name: "Acme", sender_id: SENDER, chatapp_session_id: sessions[0] },
  });
  appId = app.body.data.id;

  // Hour H0, first session: verified after 4 s, failed after 5 wrong codes, expired.
  const a = await startOtp("+14155550101");
  const b = await startOtp("+14155550102");
  const c = await startOtp("+14155550103");
  const codeA = await deliveredCode(sessions[0] as string, a.messageId, "+14155550101");
  const codeB = await deliveredCode(sessions[0] as string, b.messageId, "+14155550102");
  const wrongB = codeB.slice(0, -1) + String((Number(codeB.at(-1)) + 1) % 10);
  expect((await verify(a.id, codeA)).status).toBe(200);
  for (let i = 0; i < 5; i++) await verify(b.id, wrongB);
  await deliveredCode(sessions[0] as string, c.messageId, "+14155550103");
  await (await accountD1(accountId)).prepare("UPDATE otps SET expires_at = 1 WHERE id = ?").bind(c.id).run();
  await startAt(a.id, H0 + 60_000, 4_000);
  await startAt(b.id, H0 + 120_000);
  await startAt(c.id, H0 + 180_000);

  // Hour H1, second session: three verified (2 s, 9 s, 30 s) and one pending.
  await call("PATCH", `/v1/apps/${appId}`, { key, body: { chatapp_session_id: sessions[1] } });
  const later = [];
  for (const to of ["+14155550104", "+14155550105", "+14155550106", "+14155550107"]) {
    later.push({ ...(await startOtp(to)), to });
  }
  for (const [i, otp] of later.slice(0, 3).entries()) {
    const code = await deliveredCode(sessions[1] as string, otp.messageId, otp.to);
    expect((await verify(otp.id, code)).status).toBe(200);
    await startAt(otp.id, H1 + i * 1000, [2_000, 9_000, 30_000][i]);
  }
  await startAt(later[3]?.id ?? "", H1 + 5000);

  // Hour H1, a reverse OTP the user's message verifies after 5 s, on the same (first connected) channel.
  const reverse = await call<{ data: { id: string; code: string } }>("POST", `/v1/apps/${appId}/otp`, {
    key,
    body: { mode: "reverse" },
  });
  expect(reverse.status).toBe(201);
  await call("POST", `/sandbox/sessions/${sessions[1]}/inbound`, {
    key,
    body: { from_number: "+14155550108", type: "text", content: `My code: ${reverse.body.data.code}` },
  });
  const shown = await call<{ data: { status: string } }>("GET", `/v1/otp/${reverse.body.data.id}`, { key });
  expect(shown.body.data.status).toBe("verified");
  await startAt(reverse.body.data.id, H1 + 10_000, 5_000);
}, 60_000);

/** The recount: the app's OTP rows and their messages, bucketed here. */
async function recount(bucketMs: number): Promise<Bucket[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(
      `SELECT o.id, o.created_at, o.status, o.expires_at, o.verified_at, o.mode, m.status AS message_status,
       COALESCE(m.chatapp_session_id, o.session_id) AS session_id
     FROM otps o LEFT JOIN messages m ON m.id = o.message_id WHERE o.app_id = ?`,
    )
    .bind(appId)
    .all<{
      created_at: number;
      status: string;
      expires_at: number;
      verified_at: number | null;
      mode: string;
      message_status: string | null;
      session_id: string | null;
    }>();
  const now = Date.now();
  const byStart = new Map<number, typeof results>();
  for (const row of results) {
    const start = row.created_at - (row.created_at % bucketMs);
    byStart.set(start, [...(byStart.get(start) ?? []), row]);
  }
  const countsOf = (rows: typeof results): Counts => ({
    sent: rows.length,
    delivered: rows.filter((r) => r.message_status === "delivered" || r.message_status === "read").length,
    verified: rows.filter((r) => r.status === "verified").length,
    failed: rows.filter((r) => r.status === "failed").length,
    expired: rows.filter((r) => r.status === "expired" || (r.status === "pending" && r.expires_at <= now))
      .length,
  });
  return [...byStart.keys()]
    .sort((x, y) => x - y)
    .map((start) => {
      const rows = byStart.get(start) ?? [];
      const times = rows
        .filter((r) => r.status === "verified")
        .map((r) => (r.verified_at ?? 0) - r.created_at)
        .sort((x, y) => x - y);
      const mid = times.length / 2;
      const median =
        times.length === 0
          ? null
          : times.length % 2
            ? (times[Math.floor(mid)] ?? 0)
            : ((times[mid - 1] ?? 0) + (times[mid] ?? 0)) / 2;
      const counts = countsOf(rows);
      const channels = [...new Set(rows.map((r) => r.session_id))];
      const modes = [...new Set(rows.map((r) => r.mode))];
      return {
        start: new Date(start).toISOString().replace("Z", "000Z"),
        ...counts,
        conversion_rate: Math.round((counts.verified / counts.sent) * 10_000) / 10_000,
        median_seconds_to_verify: median === null ? null : median / 1000,
        by_channel: channels.map((id) => ({
          session_id: id,
          ...countsOf(rows.filter((r) => r.session_id === id)),
        })),
        by_mode: modes.map((mode) => ({ mode, ...countsOf(rows.filter((r) => r.mode === mode)) })),
      };
    });
}

/** Buckets with their groups in a fixed order, so two answers compare whatever order groups came in. */
function sorted(buckets: Bucket[]): Bucket[] {
  return buckets.map((b) => ({
    ...b,
    by_channel: [...b.by_channel].sort((x, y) => String(x.session_id).localeCompare(String(y.session_id))),
    by_mode: [...b.by_mode].sort((x, y) => x.mode.localeCompare(y.mode)),
  }));
}

describe("GET /v1/apps/{id}/otp-stats", () => {
  it("counts each hour as a recount of the rows does", async () => {
    const res = await stats(
      `time_from=${new Date(H0).toISOString()}&time_to=${new Date(H1 + 1).toISOString()}&granularity=hour`,
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      app_id: appId,
      granularity: "hour",
      time_from: "2026-11-02T10:00:00.000000Z",
      time_to: "2026-11-02T12:00:00.000000Z",
    });
    expect(sorted(res.body.data.buckets)).toEqual(sorted(await recount(HOUR)));
    // The figures themselves, so a recount sharing a mistake with the route cannot pass alone.
    const [first, second] = res.body.data.buckets;
    expect(first).toMatchObject({ sent: 3, delivered: 3, verified: 1, failed: 1, expired: 1 });
    expect(first?.median_seconds_to_verify).toBe(4);
    expect(first?.conversion_rate).toBe(0.3333);
    expect(first?.by_channel).toEqual([
      { session_id: sessions[0], sent: 3, delivered: 3, verified: 1, failed: 1, expired: 1 },
    ]);
    expect(second).toMatchObject({
      sent: 5,
      verified: 4,
      failed: 0,
      expired: 0,
      median_seconds_to_verify: 7,
    });
    expect(second?.conversion_rate).toBe(0.8);
    expect(sorted([second as Bucket])[0]?.by_mode).toEqual([
      { mode: "reverse", sent: 1, delivered: 0, verified: 1, failed: 0, expired: 0 },
      { mode: "send", sent: 4, delivered: 4, verified: 3, failed: 0, expired: 0 },
    ]);
  });

  it("puts both hours in one day", async () => {
    const res = await stats("time_from=2026-11-02&time_to=2026-11-02T23:00:00Z");
    expect(res.body.data.granularity).toBe("day");
    expect(sorted(res.body.data.buckets)).toEqual(sorted(await recount(24 * HOUR)));
    const [day] = res.body.data.buckets;
    expect(day).toMatchObject({ sent: 8, verified: 5, median_seconds_to_verify: 5 });
    expect(day?.by_channel.map((c) => c.session_id).sort()).toEqual([...sessions].sort());
  });

  it("leaves out buckets without OTPs", async () => {
    const res = await stats("time_from=2026-10-01&time_to=2026-10-02&granularity=hour");
    expect(res.body.data.buckets).toEqual([]);
  });

  it("refuses a reversed or too long range, and another account's app", async () => {
    expectProblem(await stats("time_from=2026-11-03&time_to=2026-11-02"), 422, "time_range_invalid");
    expectProblem(
      await stats("time_from=2026-01-01&time_to=2026-03-01&granularity=hour"),
      422,
      "time_range_invalid",
    );
    expectProblem(await stats("time_to=2026-11-02"), 422, "validation_failed");
    const other = await createAccount();
    const res = await call("GET", `/v1/apps/${appId}/otp-stats?time_from=2026-11-01&time_to=2026-11-03`, {
      key: other.key,
    });
    expectProblem(res, 404, "not_found");
  });
});

describe("OTP statistics once the OTPs are archived", () => {
  it("stay as they were, each OTP counted once, from the counts the archive kept", async () => {
    const hours = `time_from=${new Date(H0).toISOString()}&time_to=${new Date(H1 + 1).toISOString()}&granularity=hour`;
    const days = "time_from=2026-11-02&time_to=2026-11-02T23:00:00Z";
    const read = async () =>
      Promise.all([hours, days].map(async (q) => sorted((await stats(q)).body.data.buckets)));
    const before = await read();
    const retention = await call("PATCH", `/admin/accounts/${accountId}`, {
      key: ADMIN_TOKEN,
      body: { message_retention_days: 0 },
    });
    expect(retention.status).toBe(200);
    // Codes older than the per-number limit's hour (the archive takes their send log).
    await (await accountD1(accountId))
      .prepare("UPDATE otps SET last_sent_at = last_sent_at - 3601000 WHERE app_id = ?")
      .bind(appId)
      .run();
    const job = () =>
      call<{ data: { result: { otps: number } } }>("POST", "/admin/jobs/archive_messages", {
        key: ADMIN_TOKEN,
      });

    // Every OTP but the pending one leaves D1; the next run finds nothing more to add.
    expect((await job()).body.data.result.otps).toBe(7);
    const left = await (await accountD1(accountId))
      .prepare("SELECT status FROM otps WHERE app_id = ?")
      .bind(appId)
      .all();
    expect(left.results).toEqual([{ status: "pending" }]);
    expect(await read()).toEqual(before);
    expect((await job()).body.data.result.otps).toBe(0);
    expect(await read()).toEqual(before);
    // The figures, as the first test read them from the rows (verify times were whole seconds).
    const [[first, second]] = before as [Bucket[]];
    expect(first).toMatchObject({
      sent: 3,
      delivered: 3,
      verified: 1,
      failed: 1,
      expired: 1,
      median_seconds_to_verify: 4,
    });
    expect(second).toMatchObject({ sent: 5, verified: 4, median_seconds_to_verify: 7 });
  });
});
