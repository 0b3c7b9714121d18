import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { startCampaign } from "../src/campaigns/start";
import { createDb } from "../src/db/client";
import worker from "../src/index";
import { formatTimestamp } from "../src/lib/time";
import { type OutgoingSweep, sweepOutgoingMedia } from "../src/messages/media-retention";
import { command, createCampaign, heldCampaignQueue, recipients, waitForCampaign } from "./campaign-fixtures";
import { accountD1, accountDb, everyAccountD1 } from "./databases";
import { call, createAccount } from "./helpers";
import { MEDIA_HOST } from "./media-host";
import { connectedSession, type SendResponse, waitForMessages } from "./message-fixtures";

// The retention of outgoing media (docs/security.md, Media): the stored copy of a send's or a
// campaign's media is deleted by the hourly sweep once no message can still need it, and its
// messages record `metadata.media_expired_at`. The media host (test/media-host.ts) answers every
// path with bytes of the extension's type; the sandbox gateway sends.

const DAY = 86_400_000;
const RETENTION_DAYS = 30;
const TO = ["+14155552671", "+14155552672"];

/** Runs the sweep as the hourly job does (on every account database), at `now` (epoch ms); the sums. */
async function sweep(now = Date.now()): Promise<OutgoingSweep> {
  const done = { campaigns: 0, messages: 0 };
  for (const d1 of everyAccountD1()) {
    const one = await sweepOutgoingMedia(env.MEDIA, createDb(d1), now, RETENTION_DAYS);
    done.campaigns += one.campaigns;
    done.messages += one.messages;
  }
  return done;
}

interface MediaRow {
  id: string;
  status: string;
  media_url: string | null;
  media_key: string | null;
  media_content_type: string | null;
  metadata: string;
}

/** The media columns of account `accountId`'s messages `ids`, in that order. */
async function mediaRows(accountId: string, ids: string[]): Promise<MediaRow[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(
      `SELECT id, status, media_url, media_key, media_content_type, metadata FROM messages
     WHERE id IN (SELECT value FROM json_each(?)) ORDER BY to_number`,
    )
    .bind(JSON.stringify(ids))
    .all<MediaRow>();
  return results;
}

/** The stored copy's key of account `accountId`'s campaign `id`, or null. */
async function campaignKey(accountId: string, id: string): Promise<string | null> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT media_key FROM campaigns WHERE id = ?")
    .bind(id)
    .first<{ media_key: string | null }>();
  return row?.media_key ?? null;
}

/** The media columns of the messages of account `accountId`'s campaign `id`. */
async function campaignRows(accountId: string, id: string): Promise<MediaRow[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(
      "SELECT id, status, media_url, media_key, media_content_type, metadata FROM messages WHERE campaign_id = ?",
    )
    .bind(id)
    .all<MediaRow>();
  return results;
}

const expiredAt = (row: MediaRow) => JSON.parse(row.metadata).media_expired_at ?? null;

/**
 * Sends an image at `path` of the media host to `TO` as account `accountId` (API key `key`);
 * returns the messages' ids and copy's key.
 */
async function sendImage(
  accountId: string,
  key: string,
  session: string,
  path: string,
  extra: Record<string, unknown> = {},
) {
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: {
      chatapp_session_id: session,
      to_number: TO,
      type: "image",
      media_url: `${MEDIA_HOST}${path}`,
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  const ids = res.body.data.messages.map((m) => m.id);
  const [first] = await mediaRows(accountId, ids);
  const mediaKey = first?.media_key ?? "";
  expect(await env.MEDIA.head(mediaKey)).not.toBeNull();
  return { ids, mediaKey };
}

describe("the retention sweep of outgoing media", () => {
  it("deletes a send's copy once every message of it is final, and records media_expired_at", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const { ids, mediaKey } = await sendImage(accountId, key, session, "/out/final.png");
    await waitForMessages(key, ids);

    // The hourly cron runs the sweep.
    const before = Date.now();
    await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env);
    const after = Date.now();

    expect(await env.MEDIA.head(mediaKey)).toBeNull();
    const rows = await mediaRows(accountId, ids);
    expect(rows.map((row) => [row.media_url, row.media_key, row.media_content_type])).toEqual(
      TO.map(() => [`${MEDIA_HOST}/out/final.png`, null, null]),
    );
    const now = Date.parse(expiredAt(rows[0] as MediaRow));
    expect(now).toBeGreaterThanOrEqual(before - 1);
    expect(now).toBeLessThanOrEqual(after);
    expect(rows.map(expiredAt)).toEqual(TO.map(() => formatTimestamp(now)));
    expect(rows.every((row) => ["sent", "delivered", "read"].includes(row.status))).toBe(true);
    // The API still shows the caller's URL, and when the copy went.
    const shown = await call<{ data: { media_url: string; metadata: Record<string, unknown> } }>(
      "GET",
      `/v1/chatapp/messages/${ids[0]}`,
      { key },
    );
    expect(shown.body.data.media_url).toBe(`${MEDIA_HOST}/out/final.png`);
    expect(shown.body.data.metadata.media_expired_at).toBe(formatTimestamp(now));
    // Idempotent: the next run finds nothing more.
    expect(await sweep(now)).toEqual({ campaigns: 0, messages: 0 });
    expect(expiredAt((await mediaRows(accountId, ids))[0] as MediaRow)).toBe(formatTimestamp(now));
  });

  it("keeps a waiting send's copy until MEDIA_RETENTION_DAYS after its messages were due", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const due = Date.now() + 2 * DAY;
    const { ids, mediaKey } = await sendImage(accountId, key, session, "/out/later.png", {
      scheduled_at: new Date(due).toISOString(),
    });

    // Waiting: neither now nor 30 days after its creation (but before 30 days after its time).
    await sweep();
    await sweep(due + RETENTION_DAYS * DAY - 60_000);
    expect(await env.MEDIA.head(mediaKey)).not.toBeNull();
    expect((await mediaRows(accountId, ids)).map((row) => [row.status, row.media_key])).toEqual(
      TO.map(() => ["scheduled", mediaKey]),
    );

    // Past the retention, the copy goes whatever still waits.
    const late = due + RETENTION_DAYS * DAY + 60_000;
    await sweep(late);
    expect(await env.MEDIA.head(mediaKey)).toBeNull();
    expect((await mediaRows(accountId, ids)).map((row) => [row.media_key, expiredAt(row)])).toEqual(
      TO.map(() => [null, formatTimestamp(late)]),
    );
  });

  it("deletes a campaign's copy once it has completed, marking every message of it", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const campaign = await createCampaign(key, {
      chatapp_session_ids: [session],
      type: "image",
      media_url: `${MEDIA_HOST}/out/promo.jpg`,
      recipients: recipients(3),
      delay_between: 0,
    });
    const mediaKey = (await campaignKey(accountId, campaign.id)) ?? "";
    expect(await env.MEDIA.head(mediaKey)).not.toBeNull();
    expect((await command(key, campaign.id, "start")).status).toBe(200);
    await waitForCampaign(key, campaign.id, (c) => c.status === "completed", 20_000);

    const now = Date.now();
    const done = await sweep(now);

    expect(done.campaigns).toBeGreaterThanOrEqual(1);
    expect(await campaignKey(accountId, campaign.id)).toBeNull();
    expect(await env.MEDIA.head(mediaKey)).toBeNull();
    const rows = await campaignRows(accountId, campaign.id);
    expect(rows.map((row) => [row.media_url, row.media_key, expiredAt(row)])).toEqual(
      [0, 1, 2].map(() => [`${MEDIA_HOST}/out/promo.jpg`, null, formatTimestamp(now)]),
    );
  });

  it("keeps a running campaign's copy past MEDIA_RETENTION_DAYS until it is done", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const campaign = await createCampaign(key, {
      chatapp_session_ids: [session],
      type: "document",
      content: "Brochure",
      media_url: `${MEDIA_HOST}/out/brochure.pdf`,
      recipients: recipients(3),
    });
    const mediaKey = (await campaignKey(accountId, campaign.id)) ?? "";
    // Started, its messages not made yet (the campaign queue holds its step).
    const { env: held } = heldCampaignQueue();
    expect((await startCampaign(held, await accountDb(accountId), accountId, campaign.id)).status).toBe(
      "running",
    );

    await sweep(Date.now() + 2 * RETENTION_DAYS * DAY);
    expect(await campaignKey(accountId, campaign.id)).toBe(mediaKey);
    expect(await env.MEDIA.head(mediaKey)).not.toBeNull();

    expect((await command(key, campaign.id, "cancel")).body.data.status).toBe("cancelled");
    await sweep();
    expect(await campaignKey(accountId, campaign.id)).toBeNull();
    expect(await env.MEDIA.head(mediaKey)).toBeNull();
  });

  it("keeps a draft's copy for MEDIA_RETENTION_DAYS after its creation", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const created = Date.now();
    const campaign = await createCampaign(key, {
      chatapp_session_ids: [session],
      type: "image",
      media_url: `${MEDIA_HOST}/out/draft.png`,
      recipients: recipients(1),
    });
    const mediaKey = (await campaignKey(accountId, campaign.id)) ?? "";

    await sweep(created + RETENTION_DAYS * DAY - 60_000);
    expect(await campaignKey(accountId, campaign.id)).toBe(mediaKey);
    expect(await env.MEDIA.head(mediaKey)).not.toBeNull();

    await sweep(created + RETENTION_DAYS * DAY + 60_000);
    expect(await campaignKey(accountId, campaign.id)).toBeNull();
    expect(await env.MEDIA.head(mediaKey)).toBeNull();
  });
});
