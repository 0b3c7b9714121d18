import { describe, expect, it } from "vitest";
import { command, number, recipients } from "./campaign-fixtures";
import { accountD1 } from "./databases";
import {
  ADMIN_TOKEN,
  call,
  createAccount,
  createSession,
  expectProblem,
  type SessionEnvelope,
  type SessionRecord,
} from "./helpers";

// Account limits (docs/security.md, Account limits): `max_sessions` and `max_draft_recipients`,
// set by the admin, shown to the account with their use, and enforced before anything is made,
// also against requests racing for the last of a limit.

interface Limits {
  max_sessions: { max: number; current: number };
  max_draft_recipients: { max: number; current: number };
}

interface AdminAccount {
  id: string;
  max_sessions: number;
  max_draft_recipients: number;
  updated_at: string;
}

const admin = <T>(method: string, path: string, body?: unknown) =>
  call<{ data: { account: T } }>(method, path, { key: ADMIN_TOKEN, body });

/** An account with these limits set through the admin API; returns its id and key. */
async function limitedAccount(limits: { max_sessions?: number; max_draft_recipients?: number }) {
  const { accountId, key } = await createAccount();
  const res = await admin<AdminAccount>("PATCH", `/admin/accounts/${accountId}`, limits);
  expect(res.status).toBe(200);
  return { accountId, key };
}

async function limitsOf(key: string): Promise<Limits> {
  const res = await call<{ data: { limits: Limits } }>("GET", "/v1/account", { key });
  expect(res.status).toBe(200);
  return res.body.data.limits;
}

async function storedSessions(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? -1;
}

/** A connected sandbox session of the account, for campaigns. */
async function connectedSession(key: string): Promise<string> {
  const { session } = await createSession(key);
  const res = await call<SessionEnvelope>("POST", `/sandbox/sessions/${session.id}/scan`, { key });
  expect(res.status).toBe(200);
  return session.id;
}

const newCampaign = (key: string, sessionId: string, list: unknown[]) =>
  call<{ data: { id: string; stats: { total: number } }; recipients: unknown }>(
    "POST",
    "/v1/chatapp/campaigns",
    {
      key,
      body: {
        name: "Limits",
        type: "text",
        content: "Hi {{name}}",
        chatapp_session_ids: [sessionId],
        recipients: list,
      },
    },
  );

const addTo = (key: string, id: string, list: unknown[]) =>
  call<{ data: { added: number; duplicates: number; total: number } }>(
    "POST",
    `/v1/chatapp/campaigns/${id}/recipients`,
    { key, body: { recipients: list } },
  );

describe("limits through the admin API", () => {
  it("creates an account with the defaults, or with the limits given", async () => {
    const plain = await admin<AdminAccount>("POST", "/admin/accounts", { name: "Defaults" });
    expect(plain.body.data.account).toMatchObject({ max_sessions: 50, max_draft_recipients: 1_000_000 });
    const custom = await admin<AdminAccount>("POST", "/admin/accounts", {
      name: "Custom",
      max_sessions: 3,
      max_draft_recipients: 250,
    });
    expect(custom.status).toBe(201);
    expect(custom.body.data.account).toMatchObject({ max_sessions: 3, max_draft_recipients: 250 });
    const shown = await admin<AdminAccount>("GET", `/admin/accounts/${custom.body.data.account.id}`);
    expect(shown.body.data.account).toMatchObject({ max_sessions: 3, max_draft_recipients: 250 });
  });

  it("changes each limit given and keeps the other", async () => {
    const { accountId, key } = await createAccount();
    const first = await admin<AdminAccount>("PATCH", `/admin/accounts/${accountId}`, { max_sessions: 7 });
    expect(first.status).toBe(200);
    expect(first.body.data.account).toMatchObject({
      id: accountId,
      max_sessions: 7,
      max_draft_recipients: 1_000_000,
    });
    const second = await admin<AdminAccount>("PATCH", `/admin/accounts/${accountId}`, {
      max_draft_recipients: 0,
    });
    expect(second.body.data.account).toMatchObject({ max_sessions: 7, max_draft_recipients: 0 });
    expect(await limitsOf(key)).toEqual({
      max_sessions: { max: 7, current: 0 },
      max_draft_recipients: { max: 0, current: 0 },
    });
  });

  it.each([
    ["a negative limit", { max_sessions: -1 }, "max_sessions"],
    ["a fraction", { max_draft_recipients: 1.5 }, "max_draft_recipients"],
    ["a string", { max_sessions: "10" }, "max_sessions"],
    ["a limit over the ceiling", { max_sessions: 100_001 }, "max_sessions"],
    ["an unknown field", { balance: 5 }, "balance"],
  ])("refuses %s with 422 and changes nothing", async (_label, body, field) => {
    const { accountId, key } = await createAccount();
    const res = await admin("PATCH", `/admin/accounts/${accountId}`, body);
    const problem = expectProblem(res, 422, "validation_failed");
    expect(Object.keys(problem.errors as object)).toEqual([field]);
    expect((await limitsOf(key)).max_sessions.max).toBe(50);
  });

  it("answers 404 for an unknown account, and 401 without the admin token", async () => {
    expectProblem(
      await admin("PATCH", `/admin/accounts/${crypto.randomUUID()}`, { max_sessions: 1 }),
      404,
      "not_found",
    );
    const { accountId, key } = await createAccount();
    const res = await call("PATCH", `/admin/accounts/${accountId}`, { key, body: { max_sessions: 1000 } });
    expectProblem(res, 401, "unauthenticated");
    expect((await limitsOf(key)).max_sessions.max).toBe(50);
  });
});

describe("max_sessions", () => {
  it("refuses a session beyond the limit with 409 naming it, makes nothing, and takes one again once a session is deleted", async () => {
    const { accountId, key } = await limitedAccount({ max_sessions: 2 });
    const first = await createSession(key);
    await createSession(key);
    const res = await call("POST", "/v1/chatapp/sessions", { key });
    const problem = expectProblem(res, 409, "account_limit_reached");
    expect(problem).toMatchObject({ limit: "max_sessions", max: 2, current: 2 });
    expect(problem.detail).toContain("max_sessions");
    expect(await storedSessions(accountId)).toBe(2);
    const list = await call<{ sessions: SessionRecord[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(list.body.sessions).toHaveLength(2);
    expect(await limitsOf(key)).toMatchObject({ max_sessions: { max: 2, current: 2 } });

    // Failed sessions still count: they are the account's until deleted.
    expect((await call("DELETE", `/v1/chatapp/sessions/${first.session.id}`, { key })).status).toBe(200);
    expect((await limitsOf(key)).max_sessions.current).toBe(1);
    const again = await call<SessionEnvelope>("POST", "/v1/chatapp/sessions", { key });
    expect(again.status).toBe(201);
    expect(await storedSessions(accountId)).toBe(2);
  });

  it("keeps the sessions of an account whose limit was lowered below them, and refuses new ones", async () => {
    const { accountId, key } = await createAccount();
    await createSession(key);
    await createSession(key);
    await admin("PATCH", `/admin/accounts/${accountId}`, { max_sessions: 1 });
    expectProblem(await call("POST", "/v1/chatapp/sessions", { key }), 409, "account_limit_reached");
    expect(await storedSessions(accountId)).toBe(2);
    expect(await limitsOf(key)).toMatchObject({ max_sessions: { max: 1, current: 2 } });
  });

  it("lets exactly the free slots through when creates race for them", async () => {
    const { accountId, key } = await limitedAccount({ max_sessions: 3 });
    await createSession(key);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call("POST", "/v1/chatapp/sessions", { key })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 409, 409, 409, 409, 409, 409]);
    for (const refused of results.filter((r) => r.status === 409)) {
      expect(refused.body).toMatchObject({ code: "account_limit_reached", limit: "max_sessions", max: 3 });
    }
    expect(await storedSessions(accountId)).toBe(3);
  });

  it("counts only the account's own sessions", async () => {
    const other = await createAccount();
    await createSession(other.key);
    await createSession(other.key);
    const { key } = await limitedAccount({ max_sessions: 1 });
    expect((await call("POST", "/v1/chatapp/sessions", { key })).status).toBe(201);
  });
});

describe("max_draft_recipients", () => {
  it("refuses an add that would take the drafts past the limit: 409 naming it, and nothing added", async () => {
    const { key } = await limitedAccount({ max_draft_recipients: 5 });
    const sessionId = await connectedSession(key);
    const created = await newCampaign(key, sessionId, recipients(3));
    expect(created.status).toBe(201);
    const id = created.body.data.id;

    const over = await addTo(key, id, recipients(3, 10));
    const problem = expectProblem(over, 409, "account_limit_reached");
    expect(problem).toMatchObject({ limit: "max_draft_recipients", max: 5, current: 3, requested: 3 });
    const campaign = await call<{ data: { stats: { total: number }; updated_at: string } }>(
      "GET",
      `/v1/chatapp/campaigns/${id}`,
      { key },
    );
    expect(campaign.body.data.stats.total).toBe(3);
    const listed = await call<{ data: unknown[] }>("GET", `/v1/chatapp/campaigns/${id}/recipients`, { key });
    expect(listed.body.data).toHaveLength(3);

    // Numbers already in the campaign are not new: 2 new ones fit exactly, with a repeat.
    const fits = await addTo(key, id, [...recipients(1), ...recipients(2, 10)]);
    expect(fits.status).toBe(200);
    expect(fits.body.data).toEqual({ added: 2, duplicates: 1, total: 5 });
    // At the limit, an add of numbers already there still answers (it creates none).
    const repeat = await addTo(key, id, recipients(2));
    expect(repeat.body.data).toEqual({ added: 0, duplicates: 2, total: 5 });
    expect(await limitsOf(key)).toMatchObject({ max_draft_recipients: { max: 5, current: 5 } });
  });

  it("counts every draft of the account: a new campaign over the limit is not created", async () => {
    const { key } = await limitedAccount({ max_draft_recipients: 4 });
    const sessionId = await connectedSession(key);
    expect((await newCampaign(key, sessionId, recipients(3))).status).toBe(201);
    const over = await newCampaign(key, sessionId, recipients(2, 20));
    expect(expectProblem(over, 409, "account_limit_reached")).toMatchObject({
      limit: "max_draft_recipients",
      max: 4,
      current: 3,
      requested: 2,
    });
    const list = await call<{ data: unknown[] }>("GET", "/v1/chatapp/campaigns", { key });
    expect(list.body.data).toHaveLength(1);
    // A draft without recipients holds none of the limit.
    expect((await newCampaign(key, sessionId, [])).status).toBe(201);
    expect((await newCampaign(key, sessionId, recipients(1, 30))).status).toBe(201);
  });

  it("frees a draft's recipients when it starts (they are charged) or is deleted", async () => {
    const { key } = await limitedAccount({ max_draft_recipients: 3 });
    const sessionId = await connectedSession(key);
    const first = await newCampaign(key, sessionId, recipients(3));
    const second = await newCampaign(key, sessionId, recipients(3, 50));
    expectProblem(second, 409, "account_limit_reached");

    expect((await command(key, first.body.data.id, "start")).status).toBe(200);
    expect((await limitsOf(key)).max_draft_recipients.current).toBe(0);
    const third = await newCampaign(key, sessionId, recipients(3, 50));
    expect(third.status).toBe(201);
    expect((await call("DELETE", `/v1/chatapp/campaigns/${third.body.data.id}`, { key })).status).toBe(204);
    expect((await limitsOf(key)).max_draft_recipients.current).toBe(0);
  });

  it("lets exactly what fits through when adds race for the last of the limit", async () => {
    const { key, accountId } = await limitedAccount({ max_draft_recipients: 10 });
    const sessionId = await connectedSession(key);
    const first = await newCampaign(key, sessionId, []);
    const second = await newCampaign(key, sessionId, []);
    const ids = [first.body.data.id, second.body.data.id];
    // Six adds of 3 new numbers each, alternating between two drafts: only 3 fit (9 of 10).
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => addTo(key, ids[i % 2] as string, recipients(3, 100 + i * 3))),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 409)).toHaveLength(3);
    expect(await limitsOf(key)).toMatchObject({ max_draft_recipients: { max: 10, current: 9 } });
    const totals = await (await accountD1(accountId))
      .prepare(
        "SELECT sum(total) AS total, (SELECT count(*) FROM campaign_recipients WHERE campaign_id IN (?, ?)) AS rows FROM campaigns WHERE id IN (?, ?)",
      )
      .bind(ids[0], ids[1], ids[0], ids[1])
      .first<{ total: number; rows: number }>();
    expect(totals).toEqual({ total: 9, rows: 9 });
  });

  it("uses the number as the sends do: a number in another format is a repeat", async () => {
    const { key } = await limitedAccount({ max_draft_recipients: 1 });
    const sessionId = await connectedSession(key);
    const created = await newCampaign(key, sessionId, [{ to_number: number(7), variables: { name: "A" } }]);
    const spaced = number(7).replace(/^(\+1)(\d{3})/, "$1 $2 ");
    const res = await addTo(key, created.body.data.id, [{ to_number: spaced, variables: { name: "A" } }]);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ added: 0, duplicates: 1, total: 1 });
  });
});
