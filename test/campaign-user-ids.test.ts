import { describe, expect, it } from "vitest";
import { BSUID_PATTERN, LID_PATTERN, USER_ID_GLOB, userIdKind } from "../src/lib/contact-identity";
import {
  campaignMessages,
  command,
  createCampaign,
  number,
  recount,
  showCampaign,
  waitForCampaign,
} from "./campaign-fixtures";
import { accountD1, firstAccountD1 } from "./databases";
import { call, createAccount, expectProblem, phoneReceived } from "./helpers";
import { balanceOf, connectedSession, ledgerOf } from "./message-fixtures";

// Campaign recipients known by a user id (docs/campaigns.md, Campaigns and docs/contacts.md, Contacts):
// `{to_user_id}` beside `{to_number}`, the address stored as given and kept once, sent to as a single send
// would be, skipped when the user opted out, never number-checked, and shown with `to_number` null.
// The Cloud API's refusals are in test/cloud-api/campaign-user-ids.test.ts.

const BSUID = "US.13491208655302741918";
const LID = "120363025246125888@lid";
const OTHER_LID = "120363025246125999@lid";

interface Recipient {
  seq: number;
  to_number: string | null;
  to_user_id: string | null;
  variables: Record<string, string> | null;
  status: string;
  reason: string | null;
  message_id: string | null;
}

interface Message {
  id: string;
  to_number: string | null;
  content: string | null;
  status: string;
  campaign_id: string | null;
  contact: { user_id: string | null; phone_number: string | null } | null;
}

async function account(balance = 10) {
  const { key, accountId } = await createAccount(balance);
  const { id } = await connectedSession(key);
  return { key, accountId, sessionId: id };
}

/** The campaign's recipients through the API, in the order added. */
async function listRecipients(key: string, id: string): Promise<Recipient[]> {
  const res = await call<{ data: Recipient[] }>("GET", `/v1/chatapp/campaigns/${id}/recipients?limit=100`, {
    key,
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data.reverse();
}

/** The sandbox phone of session `session` receiving a text from `from` (a user id, a number or both). */
async function inbound(key: string, session: string, from: Record<string, string>, content: string) {
  const res = await call("POST", `/sandbox/sessions/${session}/inbound`, {
    key,
    body: { ...from, type: "text", content },
  });
  expect(res.status, res.text).toBe(201);
}

describe("a campaign with number and user-id recipients", () => {
  it("keeps each address once, shows to_number or to_user_id, and sends each its own message", async () => {
    const { key, accountId, sessionId } = await account();
    const res = await call<{ data: { id: string }; recipients: Record<string, number> }>(
      "POST",
      "/v1/chatapp/campaigns",
      {
        key,
        body: {
          name: "Mixed",
          chatapp_session_ids: [sessionId],
          type: "text",
          content: "Hi {{name}}",
          delay_between: 0,
          recipients: [
            { to_number: number(0), variables: { name: "Ada" } },
            { to_user_id: BSUID, variables: { name: "Bo" } },
            { to_user_id: LID, variables: { name: "Cy" } },
            // Repeats: the same user id, and the same number written another way.
            { to_user_id: BSUID, variables: { name: "again" } },
            { to_number: `+1 415 555 ${number(0).slice(-4)}`, variables: { name: "again" } },
          ],
        },
      },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.recipients).toEqual({ added: 3, duplicates: 2, total: 3 });
    const id = res.body.data.id;
    const added = await call<{ data: Record<string, number> }>(
      "POST",
      `/v1/chatapp/campaigns/${id}/recipients`,
      {
        key,
        body: {
          recipients: [
            { to_user_id: LID, variables: { name: "again" } },
            { to_user_id: OTHER_LID, variables: { name: "Di" } },
          ],
        },
      },
    );
    expect(added.status, added.text).toBe(200);
    expect(added.body.data).toEqual({ added: 1, duplicates: 1, total: 4 });
    const pending = { status: "pending", reason: null, message_id: null };
    expect(await listRecipients(key, id)).toEqual([
      { seq: 1, to_number: number(0), to_user_id: null, variables: { name: "Ada" }, ...pending },
      { seq: 2, to_number: null, to_user_id: BSUID, variables: { name: "Bo" }, ...pending },
      { seq: 3, to_number: null, to_user_id: LID, variables: { name: "Cy" }, ...pending },
      // `seq` follows the order of addition; the repeat left a gap, as a repeated number does.
      { seq: 5, to_number: null, to_user_id: OTHER_LID, variables: { name: "Di" }, ...pending },
    ]);

    const started = await command(key, id, "start");
    expect(started.status, started.text).toBe(200);
    expect(started.body.data).toMatchObject({
      status: "running",
      cost: 0.04,
      stats: { total: 4, queued: 4 },
    });
    const done = await waitForCampaign(key, id, (c) => c.status === "completed");
    expect(done.stats).toMatchObject({ total: 4, sent: 4, failed: 0, skipped: 0 });
    expect(done.stats).toEqual(await recount(id));
    expect(await balanceOf(accountId)).toBe(9.96);

    // Each message to its recipient's address, with its recipient's variables.
    const rows = await campaignMessages(id);
    expect(rows.map((m) => [m.send_index, m.to_number, m.content, m.status])).toEqual([
      [1, number(0), "Hi Ada", "sent"],
      [2, BSUID, "Hi Bo", "sent"],
      [3, LID, "Hi Cy", "sent"],
      [5, OTHER_LID, "Hi Di", "sent"],
    ]);
    // As the API shows them: a user id's message has `to_number` null and names the user id.
    const shown = await Promise.all(
      rows.map(async (row) => {
        const got = await call<{ data: Message }>("GET", `/v1/chatapp/messages/${row.id}`, { key });
        expect(got.status).toBe(200);
        return [got.body.data.to_number, got.body.data.contact?.user_id ?? null, got.body.data.campaign_id];
      }),
    );
    expect(shown).toEqual([
      [number(0), null, id],
      [null, BSUID, id],
      [null, LID, id],
      [null, OTHER_LID, id],
    ]);
    // The sandbox phones received them at those addresses.
    expect((await phoneReceived(sessionId, BSUID)).map((m) => m.content)).toEqual(["Hi Bo"]);
    expect((await phoneReceived(sessionId, LID)).map((m) => m.content)).toEqual(["Hi Cy"]);
    expect((await phoneReceived(sessionId, number(0))).map((m) => m.content)).toEqual(["Hi Ada"]);
    // The recipients list follows their messages.
    expect((await listRecipients(key, id)).map((r) => [r.to_number, r.to_user_id, r.status])).toEqual([
      [number(0), null, "sent"],
      [null, BSUID, "sent"],
      [null, LID, "sent"],
      [null, OTHER_LID, "sent"],
    ]);
  });

  it("counts a reply from a user-id recipient in replied, once", async () => {
    const { key, sessionId } = await account();
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      delay_between: 0,
      recipients: [{ to_user_id: LID, variables: { name: "Cy" } }],
    });
    await command(key, draft.id, "start");
    await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    await inbound(key, sessionId, { from_user_id: LID }, "Thanks!");
    await inbound(key, sessionId, { from_user_id: LID }, "See you");
    const campaign = await showCampaign(key, draft.id);
    expect(campaign.stats.replied).toBe(1);
    expect(campaign.stats).toEqual(await recount(draft.id));
  });
});

describe("a user id that opted out", () => {
  it("is skipped at start like an opted-out number, and not charged", async () => {
    const { key, accountId, sessionId } = await account();
    await inbound(key, sessionId, { from_user_id: LID }, "STOP");
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      delay_between: 0,
      recipients: [
        { to_user_id: LID, variables: { name: "Cy" } },
        { to_user_id: BSUID, variables: { name: "Bo" } },
      ],
    });
    const started = await command(key, draft.id, "start");
    expect(started.status, started.text).toBe(200);
    expect(started.body.data).toMatchObject({ cost: 0.01, stats: { total: 2, queued: 1, skipped: 1 } });
    expect((await ledgerOf(accountId)).at(-1)).toMatchObject({
      kind: "charge",
      amount: -1,
      message_count: 1,
    });
    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    expect(done.stats).toMatchObject({ total: 2, sent: 1, skipped: 1 });
    expect((await listRecipients(key, draft.id)).map((r) => [r.to_user_id, r.status, r.reason])).toEqual([
      [LID, "skipped", "recipient_opted_out"],
      [BSUID, "sent", null],
    ]);
    expect((await campaignMessages(draft.id)).map((m) => m.to_number)).toEqual([BSUID]);
    expect(await phoneReceived(sessionId, LID)).toEqual([]);
    expect(await balanceOf(accountId)).toBe(9.99);
  });

  it("is skipped when the contact opted out by its number and later gave the user id", async () => {
    const { key, sessionId } = await account();
    const phone = number(7);
    await inbound(key, sessionId, { from_number: phone }, "STOP");
    // The same contact writes again with its user id: the opt-out follows it (docs/campaigns.md, Opt-outs).
    await inbound(key, sessionId, { from_number: phone, from_user_id: LID }, "hello");
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      recipients: [{ to_user_id: LID, variables: { name: "Cy" } }],
    });
    const started = await command(key, draft.id, "start");
    expect(started.body.data).toMatchObject({ status: "completed", stats: { total: 1, skipped: 1 } });
  });
});

describe("number checks", () => {
  it("check numbers only: a user id is sent unchecked, a number off the network is skipped", async () => {
    const { key, accountId, sessionId } = await account();
    const off = "+14155550000";
    const draft = await createCampaign(key, {
      chatapp_session_ids: [sessionId],
      delay_between: 0,
      check_numbers: true,
      recipients: [
        { to_number: off, variables: { name: "Off" } },
        { to_user_id: LID, variables: { name: "Cy" } },
        { to_user_id: BSUID, variables: { name: "Bo" } },
      ],
    });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    expect(done.stats).toMatchObject({ total: 3, sent: 2, skipped: 1 });
    expect((await listRecipients(key, draft.id)).map((r) => [r.status, r.reason])).toEqual([
      ["skipped", "recipient_not_on_chatapp"],
      ["sent", null],
      ["sent", null],
    ]);
    // Only the number was asked about (and cached).
    const { results } = await (await accountD1(accountId))
      .prepare("SELECT number FROM contact_checks WHERE account_id = ?")
      .bind(accountId)
      .all<{ number: string }>();
    expect(results.map((r) => r.number)).toEqual([off]);
  });
});

describe("recipient shapes", () => {
  it("a recipient names exactly one of to_number and to_user_id, a user id of a known kind: 422 naming the field", async () => {
    const { key, accountId, sessionId } = await account();
    const res = await call("POST", "/v1/chatapp/campaigns", {
      key,
      body: {
        name: "Bad",
        chatapp_session_ids: [sessionId],
        type: "text",
        content: "Hi",
        recipients: [
          { to_number: number(0) },
          { variables: { name: "nobody" } },
          { to_number: number(1), to_user_id: LID },
          { to_user_id: "jane" },
          { to_user_id: "+14155552671" },
        ],
      },
    });
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual({
      "recipients.1.to_number": ["required (or to_user_id)"],
      "recipients.2.to_user_id": ["give to_number or to_user_id, not both"],
      "recipients.3.to_user_id": [expect.stringMatching(/^invalid user id/)],
      "recipients.4.to_user_id": [expect.stringMatching(/^invalid user id/)],
    });
    const count = await (await accountD1(accountId))
      .prepare("SELECT count(*) AS n FROM campaigns WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);

    const draft = await createCampaign(key, { chatapp_session_ids: [sessionId] });
    const add = await call("POST", `/v1/chatapp/campaigns/${draft.id}/recipients`, {
      key,
      body: { recipients: [{ to_user_id: LID, variables: { name: "Cy" } }, { variables: { name: "x" } }] },
    });
    expect(expectProblem(add, 422, "validation_failed").errors).toEqual({
      "recipients.1.to_number": ["required (or to_user_id)"],
    });
    expect((await showCampaign(key, draft.id)).stats.total).toBe(0);
  });
});

describe("USER_ID_GLOB", () => {
  it("tells a stored address's kind as userIdKind does", async () => {
    const addresses = [BSUID, "US.ENT.1234", "BR.abcDEF123", LID, "1@lid", "+14155552671"];
    const kinds = await Promise.all(
      addresses.map(async (address) => {
        // The GLOB runs where the stored addresses live: in an account database.
        const row = await firstAccountD1()
          .prepare("SELECT ? GLOB ? AS bsuid, ? GLOB ? AS lid")
          .bind(address, USER_ID_GLOB.bsuid, address, USER_ID_GLOB.lid)
          .first<{ bsuid: number; lid: number }>();
        return row?.bsuid ? "bsuid" : row?.lid ? "lid" : null;
      }),
    );
    expect(kinds).toEqual(addresses.map(userIdKind));
    expect(addresses.filter((a) => BSUID_PATTERN.test(a) || LID_PATTERN.test(a))).toHaveLength(5);
  });
});
