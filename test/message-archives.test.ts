import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { archiveCutoff, utcDay } from "../src/archives/archive";
import { archivesOf, runArchiveJob, setRetention } from "./archive-fixtures";
import { accountD1, accountDb } from "./databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem, TIMESTAMP } from "./helpers";
import {
  connectedSession,
  driveAlarmUntil,
  getMessage,
  type Message,
  seedMessages,
  sendText,
} from "./message-fixtures";

// Message retention and archives (docs/retention.md, Archives): the hourly job `archive_messages` moves
// final messages past the account's `message_retention_days` to R2 as gzipped NDJSON per UTC day.

const DAY_MS = 86_400_000;

/** `GET /v1/account/archives/{id}` with `headers`, as the raw response (the test decodes it). */
function download(key: string, id: string, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(
    new Request(`http://localhost/v1/account/archives/${id}`, {
      headers: { Authorization: `Bearer ${key}`, ...headers },
    }),
  );
}

async function gunzipText(bytes: ArrayBuffer): Promise<string> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}

const lines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Message);

const rowsOf = async (accountId: string) =>
  (
    await (
      await accountD1(accountId)
    )
      .prepare("SELECT id FROM messages WHERE account_id = ? ORDER BY created_at, id")
      .bind(accountId)
      .all<{ id: string }>()
  ).results.map((row) => row.id);

describe("message retention", () => {
  it("is the deployment's MESSAGE_RETENTION_DAYS until the admin sets the account's own; GET /v1/account shows it", async () => {
    const { accountId, key } = await createAccount();
    const shown = async () =>
      (await call<{ data: { message_retention_days: number } }>("GET", "/v1/account", { key })).body.data
        .message_retention_days;
    expect(await shown()).toBe(90);
    expect(await setRetention(accountId, 0)).toBe(0);
    expect(await shown()).toBe(0);
    expect(await setRetention(accountId, 3650)).toBe(3650);
    expect(await setRetention(accountId, null)).toBe(90);
    expect(await shown()).toBe(90);
    for (const bad of [-1, 3651, 1.5, "30"]) {
      const res = await call("PATCH", `/admin/accounts/${accountId}`, {
        key: ADMIN_TOKEN,
        body: { message_retention_days: bad },
      });
      expectProblem(res, 422, "validation_failed");
    }
  });
});

describe("archive_messages", () => {
  it("takes whole UTC days: at 1 day, what was made before the start of yesterday; at 0, everything final", () => {
    const now = Date.parse("2026-11-28T10:15:00Z");
    expect(archiveCutoff(now, 1)).toBe(Date.parse("2026-11-27T00:00:00Z"));
    expect(archiveCutoff(now, 90)).toBe(Date.parse("2026-08-30T00:00:00Z"));
    expect(archiveCutoff(now, 0)).toBe(now);
  });

  it("archives a read message and an incoming one at retention 0: listed, downloadable, 404 message_archived, events intact", async () => {
    const { accountId, key } = await createAccount();
    const { id: session } = await connectedSession(key);
    const sent = await sendText(key, session, ["+14155550101"]);
    expect(sent.status, sent.text).toBe(201);
    const messageId = sent.body.data.messages[0]?.id ?? "";
    await driveAlarmUntil(session, async () => (await getMessage(key, messageId)).status === "read");
    const [incomingId = ""] = await seedMessages([
      {
        accountId,
        sessionId: session,
        toNumber: "+14155550100",
        fromNumber: "+14155550101",
        direction: "incoming",
        status: "delivered",
        content: "thanks!",
        createdAt: Date.now() - 60_000,
      },
    ]);
    const before = [await getMessage(key, incomingId), await getMessage(key, messageId)];
    const eventsBefore = await call<{ data: { id: string; data: Message }[] }>(
      "GET",
      "/v1/events?filter[type]=message.sent",
      { key },
    );
    expect(eventsBefore.body.data.map((event) => event.data.status)).toEqual(["sent"]);

    // Within the default 90 days nothing moves; at 0 both go.
    await runArchiveJob();
    expect(await rowsOf(accountId)).toHaveLength(2);
    await setRetention(accountId, 0);
    const run = await runArchiveJob();
    expect(run.messages).toBeGreaterThanOrEqual(2);
    expect(await rowsOf(accountId)).toEqual([]);

    const [archive, ...others] = await archivesOf(key);
    expect(others).toEqual([]);
    expect(archive).toMatchObject({ day: utcDay(Date.now() - 60_000), message_count: 2 });
    expect(archive?.id).toMatch(/^arc_[0-9a-f]{32}$/);
    expect(archive?.created_at).toMatch(TIMESTAMP);
    const archiveId = archive?.id ?? "";

    // gzip-encoded NDJSON for a client that accepts gzip: each line the message as GET showed it.
    const encoded = await download(key, archiveId, { "Accept-Encoding": "gzip" });
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get("content-type")).toBe("application/x-ndjson");
    expect(encoded.headers.get("content-encoding")).toBe("gzip");
    // (The runtime's fetch decodes gzip for its caller, as a browser does.)
    expect(lines(await encoded.text())).toEqual(before);
    const stored = await env.ARCHIVES.get(`${accountId}/${archive?.day}/${archiveId}.ndjson.gz`);
    const gzipped = await stored?.arrayBuffer();
    expect(gzipped?.byteLength).toBe(archive?.bytes);
    expect(lines(await gunzipText(gzipped ?? new ArrayBuffer(0)))).toEqual(before);
    // Decoded for one that does not; the file itself with Accept: application/gzip.
    const plain = await download(key, archiveId);
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(lines(await plain.text())).toEqual(before);
    const file = await download(key, archiveId, { Accept: "application/gzip" });
    expect(file.headers.get("content-type")).toBe("application/gzip");
    expect(file.headers.get("content-disposition")).toBe(
      `attachment; filename="${archive?.day}-${archiveId}.ndjson.gz"`,
    );
    expect(lines(await gunzipText(await file.arrayBuffer()))).toEqual(before);

    for (const id of [messageId, incomingId]) {
      const gone = expectProblem(
        await call("GET", `/v1/chatapp/messages/${id}`, { key }),
        404,
        "message_archived",
      );
      expect(gone.archive_id).toBe(archiveId);
      expect(gone.detail).toContain(`/v1/account/archives/${archiveId}`);
    }
    // The message's events render as they did (a message.sent still shows `sent`).
    const eventsAfter = await call<{ data: { id: string; data: Message }[] }>(
      "GET",
      "/v1/events?filter[type]=message.sent",
      { key },
    );
    expect(eventsAfter.body).toEqual(eventsBefore.body);
    const read = await call<{ data: { data: Message }[] }>("GET", "/v1/events?filter[type]=message.read", {
      key,
    });
    expect(read.body.data.map((event) => event.data)).toEqual([before[1]]);

    // Another account sees neither the archive nor the message's fate.
    const other = await createAccount();
    expectProblem(await download(other.key, archiveId).then(asProblem), 404, "not_found");
    expectProblem(
      await call("GET", `/v1/chatapp/messages/${messageId}`, { key: other.key }),
      404,
      "not_found",
    );
    expect(await archivesOf(other.key)).toEqual([]);
    expectProblem(await call("GET", "/v1/account/archives/arc_nope", { key }), 404, "not_found");
  });

  it("never archives what is not final: queued, scheduled, an unknown outcome, kept media, a running campaign's", async () => {
    const { accountId, key } = await createAccount();
    const { id: session } = await connectedSession(key);
    await setRetention(accountId, 1);
    const old = Date.now() - 3 * DAY_MS;
    const seed = (extra: Partial<Parameters<typeof seedMessages>[0][number]>) =>
      seedMessages([{ accountId, sessionId: session, toNumber: "+14155550123", createdAt: old, ...extra }]);
    const [queued] = await seed({ status: "queued" });
    const [scheduled] = await seed({ status: "scheduled" });
    const [unknown] = await seed({ status: "queued" });
    const [media] = await seed({ direction: "incoming", status: "delivered", type: "image" });
    const [campaignRead] = await seed({ status: "read" });
    const [recent] = await seed({ status: "read", createdAt: Date.now() - 60_000 });
    const [otpMessage] = await seed({ status: "read" });
    // The code of an OTP already archived (no row left) goes like any message.
    const [archivedOtpMessage] = await seed({ status: "read" });
    const [final] = await seed({ status: "failed" });
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", chatapp_session_id: session },
    });
    expect(app.status, app.text).toBe(201);
    const otpId = crypto.randomUUID();
    const campaign = await call<{ data: { id: string } }>("POST", "/v1/chatapp/campaigns", {
      key,
      body: {
        name: "Run",
        type: "text",
        content: "Hi",
        chatapp_session_ids: [session],
        recipients: [{ to_number: "+14155550123" }],
      },
    });
    expect(campaign.status, campaign.text).toBe(201);
    const campaignId = campaign.body.data.id;
    const d1 = await accountD1(accountId);
    await d1.batch([
      d1.prepare(`UPDATE messages SET metadata = '{"outcome":"unknown"}' WHERE id = ?`).bind(unknown),
      d1.prepare("UPDATE messages SET media_key = 'kept-object' WHERE id = ?").bind(media),
      d1
        .prepare("UPDATE messages SET campaign_id = ?, send_index = 1, reason = NULL WHERE id = ?")
        .bind(campaignId, campaignRead),
      d1
        .prepare(
          "UPDATE campaign_recipients SET status = 'queued', message_id = ? WHERE campaign_id = ? AND seq = 1",
        )
        .bind(campaignRead, campaignId),
      d1.prepare("UPDATE campaigns SET status = 'running' WHERE id = ?").bind(campaignId),
      // A pending OTP still in D1: its attempts read its message, which stays while it does.
      d1
        .prepare(
          `INSERT INTO otps (id, account_id, app_id, to_number, code_hmac, status, last_sent_at, expires_at, created_at, updated_at)
          VALUES (?1, ?2, ?3, '+14155550123', 'x', 'pending', ?4, ?4 + 600000, ?4, ?4)`,
        )
        .bind(otpId, accountId, app.body.data.id, Date.now()),
      d1.prepare("UPDATE messages SET otp_id = ? WHERE id = ?").bind(otpId, otpMessage),
      d1.prepare("UPDATE messages SET otp_id = ? WHERE id = ?").bind(crypto.randomUUID(), archivedOtpMessage),
    ]);

    await runArchiveJob();
    const stays = [queued, scheduled, unknown, media, campaignRead, recent, otpMessage].sort();
    expect((await rowsOf(accountId)).sort()).toEqual(stays);
    expect((await archivesOf(key)).map((archive) => archive.message_count)).toEqual([2]);
    expectProblem(await call("GET", `/v1/chatapp/messages/${final}`, { key }), 404, "message_archived");
    expectProblem(
      await call("GET", `/v1/chatapp/messages/${archivedOtpMessage}`, { key }),
      404,
      "message_archived",
    );

    // Once the campaign is over, its final messages go too; the recipient keeps showing its status.
    const recipientsOf = async () =>
      (
        await call<{ data: { status: string; message_id: string | null }[] }>(
          "GET",
          `/v1/chatapp/campaigns/${campaignId}/recipients`,
          { key },
        )
      ).body.data;
    expect(await recipientsOf()).toMatchObject([{ status: "read", message_id: campaignRead }]);
    await d1.prepare("UPDATE campaigns SET status = 'completed' WHERE id = ?").bind(campaignId).run();
    await runArchiveJob();
    expect((await rowsOf(accountId)).sort()).toEqual(stays.filter((id) => id !== campaignRead));
    expect(await recipientsOf()).toMatchObject([{ status: "read", message_id: campaignRead }]);
    expect((await archivesOf(key)).map((archive) => archive.day)).toEqual([utcDay(old), utcDay(old)]);
  });

  it("keeps a message that changed while it was being archived, and archives it once", async () => {
    const { accountId, key } = await createAccount();
    await setRetention(accountId, 0);
    const { id: session } = await connectedSession(key);
    const [id = ""] = await seedMessages([
      {
        accountId,
        sessionId: session,
        toNumber: "+14155550124",
        status: "sent",
        createdAt: Date.now() - 1_000,
      },
    ]);
    // The job reads the row, then a receipt moves it before the delete: the archive is empty of it.
    const { archivableMessages, recordArchive } = await import("../src/db/queries/archives");
    const db = await accountDb(accountId);
    const rule = {
      before: Date.now(),
      now: Date.now(),
      otpSendWindowMs: 0,
      waiting: ["queued", "scheduled"] as const,
      finishedCampaign: [],
      messageEventTypes: [],
    };
    const [row] = await archivableMessages(db, accountId, rule, null, 10);
    expect(row?.id).toBe(id);
    await (await accountD1(accountId))
      .prepare("UPDATE messages SET status = 'delivered', updated_at = updated_at + 1 WHERE id = ?")
      .bind(id)
      .run();
    const archive = {
      id: `arc_${"0".repeat(31)}1`,
      accountId,
      kind: "messages" as const,
      campaignId: null,
      day: utcDay(Date.now()),
      objectKey: "test/none",
      messageCount: 1,
      bytes: 0,
      createdAt: Date.now(),
    };
    expect(await recordArchive(db, archive, [{ id, updatedAt: row?.updatedAt ?? 0 }], rule)).toEqual([]);
    expect(await rowsOf(accountId)).toEqual([id]);
    expect((await getMessage(key, id)).status).toBe("delivered");
    // The next run takes it as it is now.
    await runArchiveJob();
    expect(await rowsOf(accountId)).toEqual([]);
    const listed = await archivesOf(key);
    const latest = listed.find((archive) => archive.id !== `arc_${"0".repeat(31)}1`);
    const body = await download(key, latest?.id ?? "");
    expect(lines(await body.text()).map((message) => [message.id, message.status])).toEqual([
      [id, "delivered"],
    ]);
  });
});

/** A raw Response as the shape {@link expectProblem} reads. */
async function asProblem(response: Response) {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
}
