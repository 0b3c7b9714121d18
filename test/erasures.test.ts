import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { incomingMediaKey } from "../src/media/incoming";
import { command, createCampaign, number, waitForCampaign } from "./campaign-fixtures";
import { expectCampaignSkips } from "./contact-fixtures";
import { accountD1 } from "./databases";
import { ERASED, type Erasure, erase, moneyOf, NOTHING, rowsNaming, shownErasure } from "./erasure-fixtures";
import { EVENTS } from "./event-fixtures";
import { ADMIN_TOKEN, call, createAccount, waitFor } from "./helpers";
import { MEDIA_HOST } from "./media-host";
import {
  connectedSession,
  driveAlarmUntil,
  getMessage,
  type SeedRow,
  seedMessages,
} from "./message-fixtures";
import { metadataProblems } from "./metadata-check";
import { createEndpoint, Receiver } from "./webhook-fixtures";

// The erasure of a contact (docs/contacts.md, Erasure; GDPR Art. 17): a contact with messages both ways (one
// of each with media), an OTP, campaign recipients, a window, an opt-out, events and webhook
// deliveries is erased; then neither their number nor their texts are anywhere in D1, the MEDIA
// bucket or the API's answers, the money is as it was, and the opt-out still holds.

/** A number and texts of this run only, so that a scan of every table finds this test's rows alone. */
function unique() {
  const tag = crypto.randomUUID().slice(0, 8);
  const n = Number.parseInt(tag.slice(0, 6), 16) % 9_000;
  return {
    contact: number(n),
    other: number(n + 1),
    textIn: `incoming words ${tag}`,
    captionIn: `incoming caption ${tag}`,
    textOut: `outgoing words ${tag}`,
    captionOut: `outgoing caption ${tag}`,
    archivedText: `archived words ${tag}`,
    name: `Zelda${tag}`,
  };
}

/**
 * Seeds `rows` two days old and archives them (the account's retention set to 1 day, then the
 * job `archive_messages`). @returns the archive's object key in `ARCHIVES`.
 */
async function archiveOldMessages(
  accountId: string,
  sessionId: string,
  rows: Omit<SeedRow, "accountId" | "sessionId" | "createdAt">[],
): Promise<string> {
  const createdAt = Date.now() - 2 * 86_400_000;
  await seedMessages(
    rows.map((row, i) => ({ ...row, accountId, sessionId, createdAt: createdAt + i, status: "read" })),
  );
  const admin = { key: ADMIN_TOKEN };
  expect(
    (await call("PATCH", `/admin/accounts/${accountId}`, { ...admin, body: { message_retention_days: 1 } }))
      .status,
  ).toBe(200);
  expect((await call("POST", "/admin/jobs/archive_messages", admin)).status).toBe(200);
  const row = await (await accountD1(accountId))
    .prepare("SELECT object_key AS key, message_count AS n FROM message_archives WHERE account_id = ?")
    .bind(accountId)
    .first<{ key: string; n: number }>();
  expect(row?.n).toBe(rows.length);
  return row?.key ?? "";
}

/** The NDJSON text of archive object `key`, decompressed. */
async function archiveTexts(key: string): Promise<string> {
  const object = await env.ARCHIVES.get(key);
  const text = await new Response(object?.body.pipeThrough(new DecompressionStream("gzip"))).text();
  return text.trim();
}

/** `POST /sandbox/sessions/{id}/inbound`: the contact writes to the session. @returns the message id. */
async function inbound(key: string, sessionId: string, body: Record<string, unknown>): Promise<string> {
  const res = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${sessionId}/inbound`, {
    key,
    body: { type: "text", ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

/** `POST /v1/chatapp/messages`; asserts 201. @returns the message ids, in recipient order. */
async function send(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
    key,
    body: { type: "text", delay_between: 0, ...body },
    headers,
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.messages.map((m) => m.id);
}

/** A message as `GET /v1/chatapp/messages/{id}` shows it, with what these tests read. */
async function shownMessage(key: string, id: string) {
  const res = await call<{
    data: {
      to_number: string | null;
      from_number: string | null;
      content: string | null;
      media_url: string | null;
      metadata: object;
    };
  }>("GET", `/v1/chatapp/messages/${id}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** Account `accountId`'s message row's stored media key, straight from D1. */
async function mediaKeyOf(accountId: string, id: string): Promise<string | null> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT media_key FROM messages WHERE id = ?")
    .bind(id)
    .first<{ media_key: string | null }>();
  return row?.media_key ?? null;
}

/** Ids of the account's events whose stored snapshot names `needle`, or that point at one of `messageIds`. */
async function eventsNaming(accountId: string, needle: string, messageIds: string[]): Promise<string[]> {
  const { results } = await (await accountD1(accountId))
    .prepare(
      `SELECT id FROM ${EVENTS} WHERE account_id = ? AND (instr(snapshot, ?) > 0
       OR message_id IN (SELECT value FROM json_each(?)))`,
    )
    .bind(accountId, needle, JSON.stringify(messageIds))
    .all<{ id: string }>();
  return results.map((row) => row.id);
}

describe("POST /v1/erasures: a contact with data everywhere", () => {
  it("leaves their number and texts nowhere in D1, R2 or the API, the money as it was and their opt-out kept", async () => {
    const u = unique();
    const { key, accountId } = await createAccount(100);
    const receiver = new Receiver().reset();
    const endpoint = await createEndpoint(key, "erasure", receiver);
    const session = await connectedSession(key);

    // The contact writes (a text, a photo with a caption, kept in R2); the other contact too.
    const textIn = await inbound(key, session.id, { from_number: u.contact, content: u.textIn });
    const photoIn = await inbound(key, session.id, {
      from_number: u.contact,
      type: "image",
      content: u.captionIn,
      media_url: `${MEDIA_HOST}/in/photo.png`,
    });
    const otherIn = await inbound(key, session.id, { from_number: u.other, content: "from the other one" });
    await driveAlarmUntil(session.id, async () => (await mediaKeyOf(accountId, photoIn)) !== null);

    // The account answers both (the contact's answer kept for an Idempotency-Key replay), and sends
    // the contact a photo.
    const [textOut] = await send(
      key,
      { chatapp_session_id: session.id, to_number: [u.contact], content: u.textOut },
      { "Idempotency-Key": `answer-${crypto.randomUUID()}` },
    );
    const [otherOut] = await send(key, {
      chatapp_session_id: session.id,
      to_number: [u.other],
      content: "to the other one",
    });
    const [photoOut] = await send(key, {
      chatapp_session_id: session.id,
      to_number: [u.contact],
      type: "image",
      content: u.captionOut,
      media_url: `${MEDIA_HOST}/out/picture.png`,
    });

    // A one-time code, a campaign that reached both, and a draft that holds the contact.
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", channels: [session.id] },
    });
    expect(app.status, app.text).toBe(201);
    const otp = await call<{ data: { id: string; message_id: string } }>(
      "POST",
      `/v1/apps/${app.body.data.id}/otp`,
      {
        key,
        body: { to_number: u.contact },
      },
    );
    expect(otp.status, otp.text).toBe(201);
    const campaign = await createCampaign(key, {
      chatapp_session_ids: [session.id],
      delay_between: 0,
      recipients: [
        { to_number: u.contact, variables: { name: u.name } },
        { to_number: u.other, variables: { name: "Other" } },
      ],
    });
    expect((await command(key, campaign.id, "start")).status).toBe(200);
    await waitForCampaign(key, campaign.id, (c) => c.status === "completed");
    const draft = await createCampaign(key, {
      chatapp_session_ids: [session.id],
      recipients: [
        { to_number: u.contact, variables: { name: u.name } },
        { to_number: u.other, variables: { name: "Other" } },
      ],
    });

    // Every outgoing message goes and is read (the sandbox's receipts, driven now), then the
    // contact texts STOP: their opt-out.
    const d1 = await accountD1(accountId);
    const { results: outgoing } = await d1
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'outgoing'")
      .bind(accountId)
      .all<{ id: string }>();
    expect(outgoing).toHaveLength(6);
    await driveAlarmUntil(session.id, async () => {
      const shown = await Promise.all(outgoing.map((m) => getMessage(key, m.id)));
      return shown.every((m) => m.status === "read");
    });
    const stop = await inbound(key, session.id, { from_number: u.contact, content: "STOP" });

    const contactMessages = await d1
      .prepare(`SELECT id FROM messages WHERE account_id = ? AND (to_number = ?2 OR from_number = ?2)`)
      .bind(accountId, u.contact)
      .all<{ id: string }>();
    const contactIds = contactMessages.results.map((m) => m.id);
    expect(contactIds).toHaveLength(7);
    expect(contactIds).toEqual(expect.arrayContaining([textIn, photoIn, textOut, photoOut, stop]));
    // Their events reached the webhook endpoint: deliveries to purge.
    const contactEvents = await eventsNaming(accountId, u.contact, contactIds);
    await waitFor(
      async () => {
        const row = await d1
          .prepare(
            `SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_number = (SELECT number FROM webhook_endpoints WHERE id = ?)
             AND event_id IN (SELECT unhex(substr(value, 5)) FROM json_each(?))`,
          )
          .bind(endpoint.id, JSON.stringify(contactEvents))
          .first<{ n: number }>();
        return (row?.n ?? 0) > 0;
      },
      { reason: "the webhook queue to deliver the contact's events" },
    );
    const keys = {
      photoIn: incomingMediaKey(photoIn),
      photoOut: await mediaKeyOf(accountId, photoOut ?? ""),
    };
    expect(await env.MEDIA.head(keys.photoIn)).not.toBeNull();
    expect(await env.MEDIA.head(keys.photoOut ?? "")).not.toBeNull();
    const contact = await call<{ data: { id: string }[] }>(
      "GET",
      `/v1/contacts?filter[phone_number]=${encodeURIComponent(u.contact)}`,
      { key },
    );
    expect(contact.body.data).toHaveLength(1);
    const contactId = contact.body.data[0]?.id ?? "";
    // An archived day: two days ago the contact wrote, and the other one was written to.
    const archived = await archiveOldMessages(accountId, session.id, [
      { direction: "incoming", fromNumber: u.contact, toNumber: session.phone, content: u.archivedText },
      { direction: "outgoing", fromNumber: session.phone, toNumber: u.other, content: "archived, other" },
    ]);
    const needles = [
      u.contact,
      u.contact.slice(1),
      u.textIn,
      u.captionIn,
      u.textOut,
      u.captionOut,
      u.archivedText,
      u.name,
    ];
    expect(await archiveTexts(archived)).toContain(u.archivedText);
    expect((await rowsNaming(needles)).length).toBeGreaterThan(10);
    const money = await moneyOf(accountId);

    const erased = await erase(key, { phone_number: u.contact });

    expect(erased).toEqual({
      id: expect.stringMatching(/^ers_[0-9a-f]{32}$/),
      address: expect.stringMatching(ERASED),
      status: "completed",
      counts: {
        // In: a text, a photo, STOP. Out: a text, a photo, the code, the campaign's.
        messages: 7,
        media_objects: 2,
        otps: 1,
        // The started campaign's (hashed) and the draft's (removed).
        campaign_recipients: 2,
        contacts: 1,
        opt_outs: 1,
        events: contactEvents.length,
        archived_messages: 1,
        archived_otps: 0,
        archived_campaign_recipients: 0,
      },
      created_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect(erased.counts.events).toBeGreaterThan(10);
    expect(await shownErasure(key, erased.id)).toEqual(erased);

    // Nowhere in D1, and the files are gone from R2.
    expect(await rowsNaming([...needles, contactId])).toEqual([]);
    expect(await env.MEDIA.head(keys.photoIn)).toBeNull();
    expect(await env.MEDIA.head(keys.photoOut ?? "")).toBeNull();
    // Nor in the archived day: their line erased as their rows are, the other's as it was.
    const lines = await archiveTexts(archived);
    for (const needle of needles) expect(lines).not.toContain(needle);
    const [theirs, others] = lines.split("\n").map((line) => JSON.parse(line));
    expect(theirs).toMatchObject({
      from_number: expect.stringMatching(ERASED),
      content: null,
      contact: null,
    });
    expect(theirs.metadata.erased_at).toEqual(expect.any(String));
    expect(others).toMatchObject({ to_number: u.other, content: "archived, other" });
    // Money exact: balance, ledger, usage, campaign counters, costs and statuses as they were.
    expect(await moneyOf(accountId)).toEqual(money);

    // Nowhere through the API either.
    const answers = await Promise.all(
      [
        "/v1/chatapp/messages?limit=100",
        "/v1/events?limit=100",
        "/v1/contacts?limit=100",
        "/v1/opt-outs?limit=100",
        `/v1/chatapp/campaigns/${campaign.id}/recipients`,
        `/v1/chatapp/campaigns/${draft.id}/recipients`,
        `/v1/otp/${otp.body.data.id}`,
        ...contactIds.map((id) => `/v1/chatapp/messages/${id}`),
      ].map((path) => call("GET", path, { key })),
    );
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(200);
      expect(needles.filter((needle) => answer.text.includes(needle))).toEqual([]);
    }
    // The messages stay, erased: counted, priced and dated as before, with the hash for the contact.
    for (const id of contactIds) {
      const shown = await shownMessage(key, id);
      expect(shown.content).toBeNull();
      expect(shown.media_url).toBeNull();
      expect(metadataProblems(shown.metadata)).toEqual([]);
      expect(shown.metadata).toMatchObject({ erased_at: erased.completed_at });
      expect([shown.to_number, shown.from_number]).toContain(erased.address);
    }
    // What was not the contact's is as it was.
    expect((await shownMessage(key, otherIn)).content).toBe("from the other one");
    expect((await shownMessage(key, otherOut ?? "")).content).toBe("to the other one");
    const otpShown = await call<{ data: { to_number: string; to_user_id: null } }>(
      "GET",
      `/v1/otp/${otp.body.data.id}`,
      { key },
    );
    expect(otpShown.body.data).toMatchObject({ to_number: erased.address, to_user_id: null });
    const recipients = await call<{ data: { to_number: string; variables: unknown; status: string }[] }>(
      "GET",
      `/v1/chatapp/campaigns/${campaign.id}/recipients`,
      { key },
    );
    expect(recipients.body.data.map((r) => [r.to_number, r.variables, r.status]).sort()).toEqual(
      [
        [u.other, { name: "Other" }, "read"],
        [erased.address, null, "read"],
      ].sort(),
    );
    const draftAfter = await call<{ data: { stats: { total: number } } }>(
      "GET",
      `/v1/chatapp/campaigns/${draft.id}`,
      { key },
    );
    expect(draftAfter.body.data.stats.total).toBe(1);

    // Their events and webhook history are purged; the erasure is an event of its own.
    const left = await d1
      .prepare(
        "SELECT count(*) AS n FROM webhook_deliveries WHERE event_id IN (SELECT unhex(substr(value, 5)) FROM json_each(?))",
      )
      .bind(JSON.stringify(contactEvents))
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    const erasedEvents = await call<{ data: { type: string; data: Erasure }[] }>(
      "GET",
      "/v1/events?filter[type]=contact.erased",
      { key },
    );
    expect(erasedEvents.body.data.map((e) => [e.type, e.data])).toEqual([["contact.erased", erased]]);

    // The opt-out stays, as the hash: asked by the number, the list still answers.
    const optOut = await call<{ data: Record<string, unknown> }>(
      "GET",
      `/v1/opt-outs/${encodeURIComponent(u.contact)}`,
      { key },
    );
    expect(optOut.status, optOut.text).toBe(200);
    expect(optOut.body.data).toMatchObject({
      to_number: erased.address,
      user_id: null,
      source: "keyword",
      keyword: "STOP",
    });

    // Erased again: nothing is left to erase.
    const again = await erase(key, { phone_number: u.contact });
    expect(again).toMatchObject({ status: "completed", address: erased.address, counts: NOTHING });
    expect(again.id).not.toBe(erased.id);

    // A campaign to the number later skips it, as opted out.
    await expectCampaignSkips(key, session.id, [u.contact]);
    // No delivery outlives the test's fake receiver.
    expect((await call("DELETE", `/v1/webhooks/${endpoint.id}`, { key })).status).toBe(204);
  }, 90_000);
});
