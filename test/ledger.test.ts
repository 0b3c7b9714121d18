import { describe, expect, it } from "vitest";
import { startCampaign } from "../src/campaigns/start";
import { createDb } from "../src/db/client";
import { buildLedgerQuery } from "../src/db/queries/ledger";
import {
  campaignMessages,
  command,
  createCampaign,
  heldCampaignQueue,
  recipients,
  waitForCampaign,
} from "./campaign-fixtures";
import { accountD1, accountDb, firstAccountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, expectProblem, TIMESTAMP } from "./helpers";
import { connectedSession, sendText, waitForMessages } from "./message-fixtures";

// GET /v1/account/ledger: every charge, refund and credit, newest first, with what caused it.

interface Entry {
  id: string;
  kind: "credit" | "charge" | "refund";
  amount: number;
  balance_after: number;
  message_count: number;
  source: {
    type: "messages" | "otp" | "campaign" | "admin";
    message_ids: string[];
    message_ids_truncated: boolean;
    campaign_id: string | null;
    otp_id: string | null;
    description: string | null;
  };
  created_at: string;
}

interface LedgerPage {
  success: true;
  data: Entry[];
  links: { prev: string | null; next: string | null };
  meta: { per_page: number; next_cursor: string | null; prev_cursor: string | null };
}

/** `GET /v1/account/ledger` with `query`, or a page's link (a whole URL); asserts 200. */
const ledger = async (key: string, query = "") => {
  const url = query.startsWith("http://localhost")
    ? query.replace("http://localhost", "")
    : `/v1/account/ledger${query}`;
  const res = await call<LedgerPage>("GET", url, { key });
  expect(res.status, res.text).toBe(200);
  return res.body;
};

/** A page's link (asserting there is one). */
const path = (link: string | null) => {
  expect(link).toMatch(/^http:\/\/localhost\/v1\/account\/ledger\?/);
  return link ?? "";
};

const noSource = { message_ids: [], message_ids_truncated: false, campaign_id: null, otp_id: null };

/**
 * Seeds ledger entries of `accountId` at the given times (epoch ms), oldest first, straight into
 * D1 (the list is what is tested here; billing/ledger.ts makes the real ones in other tests).
 */
async function seedEntries(
  accountId: string,
  entries: { kind: Entry["kind"]; at: number }[],
): Promise<string[]> {
  const ids = entries.map(() => crypto.randomUUID());
  const d1 = await accountD1(accountId);
  await d1.batch(
    entries.map((entry, i) =>
      d1
        .prepare(
          `INSERT INTO ledger_entries (id, account_id, kind, amount, balance_after, message_count, created_at)
         VALUES (?, ?, ?, ?, 0, 0, ?)`,
        )
        .bind(ids[i], accountId, entry.kind, entry.kind === "charge" ? -1 : 1, entry.at),
    ),
  );
  return ids;
}

describe("what caused each entry", () => {
  it("shows the opening balance, an admin credit with its note, a send with its messages and the refund of a failed one", async () => {
    const { key, accountId } = await createAccount(1);
    const credited = await call("POST", `/admin/accounts/${accountId}/credits`, {
      key: ADMIN_TOKEN,
      body: { amount: 2.5, description: "Invoice 2026-114" },
    });
    expect(credited.status).toBe(200);
    const session = (await connectedSession(key)).id;
    const sent = await sendText(key, session, ["+14155552671", "+14155552672", "+14155550000"], {
      delay_between: 0,
    });
    expect(sent.status).toBe(201);
    const ids = sent.body.data.messages.map((m) => m.id);
    await waitForMessages(key, [ids[2] ?? ""], (m) => m.status === "failed");

    const { data } = await ledger(key);
    expect(data).toEqual([
      {
        id: expect.any(String),
        kind: "refund",
        amount: 0.01,
        balance_after: 3.48,
        message_count: 1,
        source: { ...noSource, type: "messages", message_ids: [ids[2]], description: null },
        created_at: expect.stringMatching(TIMESTAMP),
      },
      {
        id: expect.any(String),
        kind: "charge",
        amount: -0.03,
        balance_after: 3.47,
        message_count: 3,
        source: { ...noSource, type: "messages", message_ids: ids, description: null },
        created_at: expect.stringMatching(TIMESTAMP),
      },
      {
        id: expect.any(String),
        kind: "credit",
        amount: 2.5,
        balance_after: 3.5,
        message_count: 0,
        source: { ...noSource, type: "admin", description: "Invoice 2026-114" },
        created_at: expect.stringMatching(TIMESTAMP),
      },
      {
        id: expect.any(String),
        kind: "credit",
        amount: 1,
        balance_after: 1,
        message_count: 0,
        source: { ...noSource, type: "admin", description: "Opening balance" },
        created_at: expect.stringMatching(TIMESTAMP),
      },
    ]);
    // The charge is the messages' charge; the refund is the failed one's.
    const row = await (await accountD1(accountId))
      .prepare("SELECT charge_id, refund_id FROM messages WHERE id = ?")
      .bind(ids[2])
      .first();
    expect(row).toEqual({ charge_id: data[1]?.id, refund_id: data[0]?.id });
  });

  it("lists the first 100 message ids in send order, and says when there are more", async () => {
    const { key } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const to = Array.from({ length: 101 }, (_, i) => `+1415555${String(4000 + i)}`);
    // Scheduled a day ahead: nothing is sent while the test reads the ledger.
    const sent = await sendText(key, session, to, {
      scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(sent.status).toBe(201);
    const [charge] = (await ledger(key, "?filter[kind]=charge")).data;
    expect(charge?.message_count).toBe(101);
    expect(charge?.source.message_ids).toEqual(sent.body.data.messages.slice(0, 100).map((m) => m.id));
    expect(charge?.source.message_ids_truncated).toBe(true);
  });

  it("names the OTP of a one-time code's charge", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: {
        name: "Acme",
        sender_id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        message_template: "Your code is {{code}}.",
        chatapp_session_id: session,
      },
    });
    expect(app.status).toBe(201);
    const otp = await call<{ data: { id: string; message_id: string } }>(
      "POST",
      `/v1/apps/${app.body.data.id}/otp`,
      {
        key,
        body: { to_number: "+14155552671" },
      },
    );
    expect(otp.status).toBe(201);
    const [charge] = (await ledger(key, "?filter[kind]=charge")).data;
    expect(charge).toMatchObject({
      kind: "charge",
      amount: -0.01,
      message_count: 1,
      source: {
        type: "otp",
        otp_id: otp.body.data.id,
        campaign_id: null,
        message_ids: [otp.body.data.message_id],
        message_ids_truncated: false,
        description: null,
      },
    });
  });

  it("names the campaign of its charge, with its messages in recipient order, and of its cancel's refund", async () => {
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const draft = await createCampaign(key, { chatapp_session_ids: [session], recipients: recipients(3) });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    await waitForCampaign(key, draft.id, (c) => c.status === "completed");
    const made = await campaignMessages(draft.id);
    const [charge] = (await ledger(key, "?filter[kind]=charge")).data;
    expect(charge).toMatchObject({
      amount: -0.03,
      message_count: 3,
      source: {
        type: "campaign",
        campaign_id: draft.id,
        otp_id: null,
        message_ids: made.map((m) => m.id),
        message_ids_truncated: false,
      },
    });

    // A second campaign cancelled before any message was made: its refund is by count.
    const other = await createCampaign(key, {
      chatapp_session_ids: [session],
      recipients: recipients(4, 10),
    });
    await startCampaign(heldCampaignQueue().env, await accountDb(accountId), accountId, other.id);
    expect((await command(key, other.id, "cancel")).status).toBe(200);
    const [refund, otherCharge] = (await ledger(key, "?filter[kind]=refund,charge")).data;
    expect(otherCharge).toMatchObject({
      kind: "charge",
      amount: -0.04,
      source: { campaign_id: other.id, message_ids: [] },
    });
    expect(refund).toMatchObject({
      kind: "refund",
      amount: 0.04,
      message_count: 4,
      source: { type: "campaign", campaign_id: other.id, message_ids: [], message_ids_truncated: false },
    });
  });
});

describe("paging and filters", () => {
  const T = Date.parse("2026-03-01T00:00:00Z");
  const H = 3_600_000;

  it("pages newest first with cursors, both ways, `limit` at a time", async () => {
    const { key, accountId } = await createAccount(0);
    const kinds = ["credit", "charge", "charge", "refund", "charge", "credit", "charge"] as const;
    const ids = await seedEntries(
      accountId,
      kinds.map((kind, i) => ({ kind, at: T + i * H })),
    );
    const newestFirst = [...ids].reverse();

    const first = await ledger(key, "?limit=3");
    expect(first.data.map((e) => e.id)).toEqual(newestFirst.slice(0, 3));
    expect(first.meta).toMatchObject({ per_page: 3, prev_cursor: null });
    expect(first.links.prev).toBeNull();
    const second = await ledger(key, path(first.links.next));
    expect(second.data.map((e) => e.id)).toEqual(newestFirst.slice(3, 6));
    const third = await ledger(key, path(second.links.next));
    expect(third.data.map((e) => e.id)).toEqual(newestFirst.slice(6));
    expect(third.links.next).toBeNull();
    const back = await ledger(key, path(third.links.prev));
    expect(back.data.map((e) => e.id)).toEqual(newestFirst.slice(3, 6));
    expect(back.data.map((e) => e.created_at)).toEqual(
      [3, 2, 1].map((i) => new Date(T + i * H).toISOString().replace("Z", "000Z")),
    );
    expect((await ledger(key)).data).toHaveLength(7); // default limit 10
  });

  it("filters by kind (repeated or comma-separated) and by time, inclusive, keeping the filters in the links", async () => {
    const { key, accountId } = await createAccount(0);
    const kinds = ["credit", "charge", "charge", "refund", "charge", "credit", "charge"] as const;
    const ids = await seedEntries(
      accountId,
      kinds.map((kind, i) => ({ kind, at: T + i * H })),
    );
    const of = (...indexes: number[]) => indexes.map((i) => ids[i]);

    expect((await ledger(key, "?filter[kind]=charge")).data.map((e) => e.id)).toEqual(of(6, 4, 2, 1));
    expect((await ledger(key, "?filter[kind]=credit,refund")).data.map((e) => e.id)).toEqual(of(5, 3, 0));
    expect((await ledger(key, "?filter[kind]=refund&filter[kind]=credit")).data.map((e) => e.id)).toEqual(
      of(5, 3, 0),
    );
    const from = new Date(T + 2 * H).toISOString();
    const to = new Date(T + 5 * H).toISOString();
    expect((await ledger(key, `?time_from=${from}&time_to=${to}`)).data.map((e) => e.id)).toEqual(
      of(5, 4, 3, 2),
    );
    const page = await ledger(key, `?filter[kind]=charge&time_from=${from}&time_to=${to}&limit=1`);
    expect(page.data.map((e) => e.id)).toEqual(of(4));
    expect(page.links.next).toContain("filter%5Bkind%5D=charge");
    expect((await ledger(key, path(page.links.next))).data.map((e) => e.id)).toEqual(of(2));
    expect((await ledger(key, "?time_from=2026-03-02")).data).toEqual([]);
  });

  it("refuses bad parameters with 422 under their names", async () => {
    const { key } = await createAccount(0);
    const cases: [string, string][] = [
      ["?filter[kind]=gift", "filter[kind].0"],
      ["?limit=0", "limit"],
      ["?limit=101", "limit"],
      ["?cursor=nonsense", "cursor"],
      ["?time_from=yesterday", "time_from"],
    ];
    for (const [query, field] of cases) {
      const res = await call("GET", `/v1/account/ledger${query}`, { key });
      const problem = expectProblem(res, 422, "validation_failed");
      expect(Object.keys(problem.errors as object)).toContain(field);
    }
  });

  it("shows only the caller's entries", async () => {
    const mine = await createAccount(1);
    const theirs = await createAccount(2);
    await seedEntries(theirs.accountId, [{ kind: "charge", at: T }]);
    const { data } = await ledger(mine.key);
    expect(data.map((e) => [e.kind, e.amount])).toEqual([["credit", 1]]);
    const their = await ledger(theirs.key);
    expect(their.data.map((e) => e.kind)).toEqual(["credit", "charge"]);
  });

  it("reads a page from the ledger's indexes in order, and each entry's messages in order from an index", async () => {
    const d1 = firstAccountD1();
    const db = createDb(d1);
    const query = { kinds: [], limit: 10, cursor: null, timeFrom: T, timeTo: T + H };
    for (const kind of [null, "charge"] as const) {
      const { sql, params } = buildLedgerQuery(db, crypto.randomUUID(), query, kind).toSQL();
      const plan = await d1
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...params)
        .all<{ detail: string }>();
      const details = plan.results.map((r) => r.detail).join("\n");
      expect(details).toMatch(
        kind === null
          ? /SEARCH ledger_entries USING INDEX ledger_entries_account \(account_id=\?/
          : /SEARCH ledger_entries USING INDEX ledger_entries_account_kind \(account_id=\? AND kind=\?/,
      );
      // A campaign's charge (the partial index), a send's charge (its millisecond), a refund.
      expect(details).toMatch(/SEARCH messages USING INDEX messages_charge \(charge_id=\?\)/);
      expect(details).toMatch(
        /SEARCH messages USING INDEX messages_account_created \(account_number=\? AND created_at=\?\)/,
      );
      expect(details).toMatch(/SEARCH messages USING COVERING INDEX messages_refund \(refund_id=\?\)/);
      expect(details).not.toMatch(/TEMP B-TREE/);
    }
  });

  it("reads about as many messages as an entry lists, however many its send made", async () => {
    const { key, accountId } = await createAccount(100);
    const session = (await connectedSession(key)).id;
    const later = { scheduled_at: new Date(Date.now() + 86_400_000).toISOString() };
    const to = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => `+1415555${String(from + i).padStart(4, "0")}`);
    // Two sends of 400 (nothing is sent while the test reads), and a lone one between them.
    const big = await sendText(key, session, to(1000, 400), later);
    const lone = await sendText(key, session, to(2000, 1), later);
    const other = await sendText(key, session, to(3000, 400), later);
    expect([big.status, lone.status, other.status]).toEqual([201, 201, 201]);
    const query = { kinds: [], limit: 10, cursor: null };
    const { sql, params } = buildLedgerQuery(await accountDb(accountId), accountId, query, null).toSQL();
    const read = await (await accountD1(accountId))
      .prepare(sql)
      .bind(...params)
      .all<Record<string, unknown>>();
    // The message ids are the last column (drizzle reads columns by position).
    const listed = read.results.map((row) => JSON.parse(String(Object.values(row).at(-1))) as string[]);
    // Newest first: the second big send, the lone one, the first big one, the opening credit.
    expect(listed.map((ids) => ids.length)).toEqual([101, 1, 101, 0]);
    expect(listed[0]).toEqual(other.body.data.messages.slice(0, 101).map((m) => m.id));
    expect(listed[1]).toEqual(lone.body.data.messages.map((m) => m.id));
    expect(listed[2]).toEqual(big.body.data.messages.slice(0, 101).map((m) => m.id));
    // The four entries and the 203 messages listed, each read once, and none of the 598 others.
    expect(read.meta.rows_read).toBeLessThanOrEqual(4 + 203 + 4);
  });
});
