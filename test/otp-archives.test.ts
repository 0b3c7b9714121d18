import { describe, expect, it } from "vitest";
import { utcDay } from "../src/archives/archive";
import { recordOtpArchive } from "../src/db/queries/otp-archives";
import { archiveLines, archivesOf, runArchiveJob, setRetention } from "./archive-fixtures";
import { accountD1, accountDb } from "./databases";
import { ERASED, erase } from "./erasure-fixtures";
import { call, createAccount, expectProblem, phoneText } from "./helpers";
import { connectedSession, driveAlarmUntil, getMessage } from "./message-fixtures";

// OTP archives (docs/retention.md, Archives): the hourly job `archive_messages` moves an account's
// final OTPs past its `message_retention_days` to R2 with their attempts, before their messages,
// and adds them to their app's OTP statistics.

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";

interface Otp {
  id: string;
  status: string;
  to_number: string | null;
  message_id: string | null;
  attempts: { message_id: string; status: string }[];
}

/** An account keeping nothing (retention 0), with a connected session and an app sending on it. */
async function otpAccount() {
  const { accountId, key } = await createAccount(100);
  const session = await connectedSession(key);
  const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: { name: "Acme", sender_id: SENDER, chatapp_session_id: session.id },
  });
  expect(app.status, app.text).toBe(201);
  await setRetention(accountId, 0);
  return { accountId, key, sessionId: session.id, appId: app.body.data.id };
}

type Account = Awaited<ReturnType<typeof otpAccount>>;

async function startOtp(a: Account, to: string): Promise<Otp> {
  const res = await call<{ data: Otp }>("POST", `/v1/apps/${a.appId}/otp`, {
    key: a.key,
    body: { to_number: to },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** Starts an OTP to `to` and waits until its message is read: the code the sandbox phone received. */
async function readOtp(a: Account, to: string): Promise<{ otp: Otp; code: string }> {
  const otp = await startOtp(a, to);
  const text = await phoneText(a.sessionId, to, otp.message_id);
  await driveAlarmUntil(
    a.sessionId,
    async () => (await getMessage(a.key, otp.message_id ?? "")).status === "read",
  );
  return { otp, code: /(\d{6})/.exec(text)?.[1] ?? "" };
}

/** An OTP to `to`, verified with its code once its message is read, as GET shows it. */
async function verifiedOtp(a: Account, to: string): Promise<Otp> {
  const { otp, code } = await readOtp(a, to);
  const verified = await call("POST", `/v1/otp/${otp.id}/verify`, { key: a.key, body: { code } });
  expect(verified.status, verified.text).toBe(200);
  return showOtp(a, otp.id);
}

async function showOtp(a: Account, id: string): Promise<Otp> {
  const res = await call<{ data: Otp }>("GET", `/v1/otp/${id}`, { key: a.key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/**
 * Dates the account's codes an hour and a second back: the per-number limit no longer counts them,
 * so their OTPs may be archived (docs/retention.md, Archives).
 */
async function sentAnHourAgo(accountId: string): Promise<void> {
  await (await accountD1(accountId))
    .prepare("UPDATE otps SET last_sent_at = last_sent_at - 3601000 WHERE account_id = ?")
    .bind(accountId)
    .run();
}

/** The count `query` reads in account `accountId`'s database. */
const count = async (accountId: string, query: string, ...params: unknown[]) =>
  (
    await (
      await accountD1(accountId)
    )
      .prepare(query)
      .bind(...params)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("OTP archives", () => {
  it("archive a final OTP with its attempts, then its message, and answer 404 otp_archived", async () => {
    const a = await otpAccount();
    const verified = await verifiedOtp(a, "+14155550111");
    // Pending, its message read: both stay.
    const { otp: pending } = await readOtp(a, "+14155550112");
    // Expired, but its message still waits to be sent: neither goes. (Delivered first, so that
    // nothing moves it on while the test looks.)
    const waiting = await verifiedOtp(a, "+14155550113");
    const d1 = await accountD1(a.accountId);
    await d1
      .prepare("UPDATE otps SET status = 'pending', expires_at = 1 WHERE id = ?")
      .bind(waiting.id)
      .run();
    await d1.prepare("UPDATE messages SET status = 'queued' WHERE id = ?").bind(waiting.message_id).run();

    // Within the hour of its code the per-number limit still counts its send: it stays.
    expect(await runArchiveJob()).toEqual({ archives: 0, otps: 0, messages: 0, campaign_recipients: 0 });
    await sentAnHourAgo(a.accountId);
    expect(await runArchiveJob()).toEqual({ archives: 2, otps: 1, messages: 1, campaign_recipients: 0 });

    const archives = await archivesOf(a.key);
    const otpArchive = archives.find((archive) => archive.kind === "otps");
    const messageArchive = archives.find((archive) => archive.kind === "messages");
    expect(otpArchive).toMatchObject({ day: utcDay(Date.now()), count: 1, message_count: 0 });
    expect(messageArchive).toMatchObject({ count: 1, message_count: 1 });
    // The line is the OTP as GET showed it, attempts and all.
    expect(await archiveLines(a.key, otpArchive?.id ?? "")).toEqual([verified]);
    expect(verified.attempts.map((attempt) => attempt.message_id)).toEqual([verified.message_id]);
    expect((await archiveLines(a.key, messageArchive?.id ?? "")).map((line) => line.id)).toEqual([
      verified.message_id,
    ]);

    const gone = await call<{ archive_id: string }>("GET", `/v1/otp/${verified.id}`, { key: a.key });
    expectProblem(gone, 404, "otp_archived");
    expect(gone.body.archive_id).toBe(otpArchive?.id);
    const verifyAgain = await call<{ archive_id: string }>("POST", `/v1/otp/${verified.id}/verify`, {
      key: a.key,
      body: { code: "123456" },
    });
    expectProblem(verifyAgain, 404, "otp_archived");
    const message = await call<{ archive_id: string }>("GET", `/v1/chatapp/messages/${verified.message_id}`, {
      key: a.key,
    });
    expectProblem(message, 404, "message_archived");
    expect(message.body.archive_id).toBe(messageArchive?.id);
    // Nothing of it is left in D1 but its tombstone; another account finds nothing at all.
    for (const table of ["otps", "otp_attempts", "otp_sends"]) {
      const column = table === "otps" ? "id" : "otp_id";
      expect(
        await count(a.accountId, `SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`, verified.id),
      ).toBe(0);
    }
    const other = await createAccount();
    expectProblem(await call("GET", `/v1/otp/${verified.id}`, { key: other.key }), 404, "not_found");

    // The pending OTP and the one whose message waits stay, with their messages.
    expect((await showOtp(a, pending.id)).status).toBe("pending");
    expect((await showOtp(a, waiting.id)).status).toBe("expired");
    expect((await getMessage(a.key, pending.message_id ?? "")).status).toBe("read");
    expect((await getMessage(a.key, waiting.message_id ?? "")).status).toBe("queued");
    expect(await runArchiveJob()).toEqual({ archives: 0, otps: 0, messages: 0, campaign_recipients: 0 });
  });

  it("add an OTP to its app's statistics once, however many runs race for it", async () => {
    const a = await otpAccount();
    const otp = await verifiedOtp(a, "+14155550121");
    const d1 = await accountD1(a.accountId);
    const row = await d1
      .prepare("SELECT updated_at AS updatedAt FROM otps WHERE id = ?")
      .bind(otp.id)
      .first<{ updatedAt: number }>();
    const now = Date.now();
    const rule = {
      before: now,
      now,
      otpSendWindowMs: 0,
      waiting: [],
      finishedCampaign: [],
      messageEventTypes: [],
    };
    const versions = [{ id: otp.id, updatedAt: row?.updatedAt ?? 0 }];
    const archive = (n: number) => ({
      id: `arc_${"0".repeat(31)}${n}`,
      accountId: a.accountId,
      kind: "otps" as const,
      campaignId: null,
      day: utcDay(now),
      objectKey: `test/${n}`,
      messageCount: 1,
      bytes: 0,
      createdAt: now,
    });
    const db = await accountDb(a.accountId);
    // Two runs that read the same OTP: the first batch moves it, the second finds nothing to add.
    const results = await Promise.all([
      recordOtpArchive(db, archive(1), versions, rule),
      recordOtpArchive(db, archive(2), versions, rule),
    ]);
    expect(results.flat()).toEqual([otp.id]);
    const stats = await d1
      .prepare(
        "SELECT sum(sent) AS sent, sum(delivered) AS delivered, sum(verified) AS verified FROM otp_stats_hours WHERE app_id = ?",
      )
      .bind(a.appId)
      .first();
    expect(stats).toEqual({ sent: 1, delivered: 1, verified: 1 });
    expect(
      await count(a.accountId, "SELECT sum(count) AS n FROM otp_verify_times WHERE app_id = ?", a.appId),
    ).toBe(1);
    expect(
      await count(
        a.accountId,
        "SELECT count(*) AS n FROM archived_otps WHERE otp_id = unhex(replace(?, '-', ''))",
        otp.id,
      ),
    ).toBe(1);
  });

  it("are rewritten by an erasure of the OTP's number", async () => {
    const a = await otpAccount();
    const to = "+14155550131";
    const kept = await verifiedOtp(a, "+14155550132");
    const otp = await verifiedOtp(a, to);
    await sentAnHourAgo(a.accountId);
    await runArchiveJob();
    const [archive] = (await archivesOf(a.key)).filter((listed) => listed.kind === "otps");
    expect(archive?.count).toBe(2);

    const erased = await erase(a.key, { phone_number: to });

    expect(erased.status).toBe("completed");
    expect(erased.counts).toMatchObject({ archived_otps: 1, otps: 0 });
    const lines = await archiveLines(a.key, archive?.id ?? "");
    expect(JSON.stringify(lines)).not.toContain(to.slice(1));
    const byId = new Map(lines.map((line) => [line.id, line]));
    expect(byId.get(otp.id)).toEqual({ ...otp, to_number: expect.stringMatching(ERASED) });
    expect(byId.get(kept.id)).toEqual(kept);
  });
});
