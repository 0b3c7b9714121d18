import { describe, expect, it } from "vitest";
import { purgeChecks } from "../src/db/queries/contact-checks";
import { sandboxOnNetwork } from "../src/gateways/sandbox";
import { CONTACT_CHECK_TTL_MS } from "../src/number-checks/check";
import { accountD1, accountDb } from "./databases";
import { ADMIN_TOKEN, call, createAccount, createSession, expectProblem, TIMESTAMP } from "./helpers";
import { connectedSession } from "./message-fixtures";

// Number checks on the sandbox (docs/sessions.md, Number checks): `POST
// /v1/chatapp/sessions/{id}/contacts/check` answers true, false or null per number (…0000 is not on the
// network, …9999 the sandbox cannot tell), in request order, each number once; answers are cached per account
// for 7 days in D1 `contact_checks` (null answers are not), and the route refuses bad bodies, others'
// sessions and sessions that are not connected.

interface Check {
  number: string;
  on_chatapp: boolean | null;
  checked_at: string;
}

const ON = "+14155552671";
const OFF = "+14155550000";
const UNKNOWN = "+14155559999";

function check(key: string, sessionId: string, numbers: unknown) {
  return call<{ success: boolean; data: Check[] }>(
    "POST",
    `/v1/chatapp/sessions/${sessionId}/contacts/check`,
    {
      key,
      body: { numbers },
    },
  );
}

/** The account's stored checks, by number. */
async function storedChecks(accountId: string) {
  const { results } = await (await accountD1(accountId))
    .prepare("SELECT number, on_chatapp, checked_at FROM contact_checks WHERE account_id = ? ORDER BY number")
    .bind(accountId)
    .all<{ number: string; on_chatapp: number; checked_at: number }>();
  return results;
}

describe("the sandbox's answers", () => {
  it("…0000 is not on the network, …9999 cannot be told, any other number is", () => {
    expect([ON, OFF, UNKNOWN, "+12125550001"].map(sandboxOnNetwork)).toEqual([true, false, null, true]);
  });
});

describe("POST /v1/chatapp/sessions/{id}/contacts/check", () => {
  it("answers each number once, in request order, normalised; caches true and false, not null", async () => {
    const { key, accountId } = await createAccount(1);
    const { id } = await connectedSession(key);
    const before = Date.now();

    const res = await check(key, id, ["+1 415 555 2671", OFF, UNKNOWN, ON, "+1 (415) 555-0000"]);

    expect(res.status, res.text).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.map((c) => [c.number, c.on_chatapp])).toEqual([
      [ON, true],
      [OFF, false],
      [UNKNOWN, null],
    ]);
    for (const c of res.body.data) {
      expect(c.checked_at).toMatch(TIMESTAMP);
      expect(Date.parse(c.checked_at)).toBeGreaterThanOrEqual(before);
    }
    const stored = await storedChecks(accountId);
    expect(stored.map((row) => [row.number, row.on_chatapp])).toEqual([
      [OFF, 0],
      [ON, 1],
    ]);
    expect(stored.map((row) => row.checked_at)).toEqual(
      [OFF, ON].map((n) => Date.parse(res.body.data.find((c) => c.number === n)?.checked_at ?? "")),
    );
  });

  it("serves an answer younger than 7 days from the cache, without asking, and asks again after", async () => {
    const { key, accountId } = await createAccount(1);
    const { id } = await connectedSession(key);
    await check(key, id, [ON]);
    // The cache says otherwise than the sandbox would: an answer from it shows.
    const dayAgo = Date.now() - 86_400_000;
    const d1 = await accountD1(accountId);
    await d1
      .prepare("UPDATE contact_checks SET on_chatapp = 0, checked_at = ? WHERE account_id = ? AND number = ?")
      .bind(dayAgo, accountId, ON)
      .run();

    const cached = await check(key, id, [ON, UNKNOWN]);
    expect(cached.body.data).toEqual([
      { number: ON, on_chatapp: false, checked_at: new Date(dayAgo).toISOString().replace("Z", "000Z") },
      { number: UNKNOWN, on_chatapp: null, checked_at: expect.stringMatching(TIMESTAMP) },
    ]);

    // Just past its 7 days, the sandbox is asked again and the row takes the new answer.
    const expired = Date.now() - CONTACT_CHECK_TTL_MS - 1_000;
    await d1
      .prepare("UPDATE contact_checks SET checked_at = ? WHERE account_id = ? AND number = ?")
      .bind(expired, accountId, ON)
      .run();
    const asked = await check(key, id, [ON]);
    expect(asked.body.data[0]).toMatchObject({ number: ON, on_chatapp: true });
    const stored = await storedChecks(accountId);
    expect(stored).toEqual([
      { number: ON, on_chatapp: 1, checked_at: Date.parse(asked.body.data[0]?.checked_at ?? "") },
    ]);
    expect(stored[0]?.checked_at).toBeGreaterThan(expired + CONTACT_CHECK_TTL_MS);
  });

  it("keeps each account's answers apart", async () => {
    const first = await createAccount(1);
    const second = await createAccount(1);
    const session = await connectedSession(first.key);
    const other = await connectedSession(second.key);
    await check(first.key, session.id, [ON]);
    await (await accountD1(first.accountId))
      .prepare("UPDATE contact_checks SET on_chatapp = 0 WHERE account_id = ?")
      .bind(first.accountId)
      .run();

    const res = await check(second.key, other.id, [ON]);
    expect(res.body.data[0]).toMatchObject({ number: ON, on_chatapp: true });
    expect((await storedChecks(second.accountId)).map((row) => row.on_chatapp)).toEqual([1]);
    expect((await storedChecks(first.accountId)).map((row) => row.on_chatapp)).toEqual([0]);
  });

  it.each([
    ["no numbers", [], "numbers"],
    ["101 numbers", Array.from({ length: 101 }, (_, i) => `+1415555${String(1000 + i)}`), "numbers"],
    ["a number that is not one", [ON, "not a number"], "numbers.1"],
  ])("refuses %s with 422 validation_failed, asking nothing", async (_name, numbers, field) => {
    const { key, accountId } = await createAccount(1);
    const { id } = await connectedSession(key);
    const body = expectProblem(await check(key, id, numbers), 422, "validation_failed");
    expect(Object.keys(body.errors as Record<string, string[]>)).toEqual([field]);
    expect(await storedChecks(accountId)).toEqual([]);
  });

  it("refuses a body without numbers, or with another field, with 422", async () => {
    const { key } = await createAccount(1);
    const { id } = await connectedSession(key);
    const path = `/v1/chatapp/sessions/${id}/contacts/check`;
    const missing = expectProblem(await call("POST", path, { key, body: {} }), 422, "validation_failed");
    expect(Object.keys(missing.errors as object)).toEqual(["numbers"]);
    const extra = expectProblem(
      await call("POST", path, { key, body: { numbers: [ON], force: true } }),
      422,
      "validation_failed",
    );
    expect(extra.errors).toEqual({ force: ["unknown field"] });
  });

  it("answers 404 for another account's session and for an unknown one", async () => {
    const mine = await createAccount(1);
    const theirs = await createAccount(1);
    const { id } = await connectedSession(theirs.key);
    expectProblem(await check(mine.key, id, [ON]), 404, "not_found");
    expectProblem(await check(mine.key, crypto.randomUUID(), [ON]), 404, "not_found");
    expect(await storedChecks(mine.accountId)).toEqual([]);
    expect(await storedChecks(theirs.accountId)).toEqual([]);
  });

  it("answers 409 session_not_connected for a session that is not connected, cached answers or not", async () => {
    const { key, accountId } = await createAccount(1);
    const { session } = await createSession(key);
    const pending = expectProblem(await check(key, session.id, [ON]), 409, "session_not_connected");
    expect(pending.detail).toContain("pending");

    const { id } = await connectedSession(key);
    await check(key, id, [ON]);
    await call("PATCH", `/v1/chatapp/sessions/${id}/disconnect`, { key });
    expectProblem(await check(key, id, [ON]), 409, "session_not_connected");
    expect((await storedChecks(accountId)).map((row) => row.number)).toEqual([ON]);
  });

  it("takes a send key (messages:send), and refuses a key that only reads sessions", async () => {
    const { key, accountId } = await createAccount(1);
    const { id } = await connectedSession(key);
    const keyWith = async (scopes: string[]) => {
      const res = await call<{ data: { api_key: string } }>("POST", `/admin/accounts/${accountId}/keys`, {
        key: ADMIN_TOKEN,
        body: { name: "scoped", scopes },
      });
      return res.body.data.api_key;
    };
    expect((await check(await keyWith(["messages:send"]), id, [ON])).status).toBe(200);
    const refused = expectProblem(
      await check(await keyWith(["sessions:read"]), id, [ON]),
      403,
      "insufficient_scope",
    );
    expect(refused.detail).toContain("messages:send");
  });
});

describe("the hourly purge of number checks", () => {
  it("deletes the answers checked before the cut-off, of every account, and keeps the others", async () => {
    const { key, accountId } = await createAccount(1);
    const { id } = await connectedSession(key);
    await check(key, id, [ON, OFF]);
    const cutOff = Date.now() - CONTACT_CHECK_TTL_MS;
    await (await accountD1(accountId))
      .prepare("UPDATE contact_checks SET checked_at = ? WHERE account_id = ? AND number = ?")
      .bind(cutOff - 1, accountId, OFF)
      .run();

    expect((await purgeChecks(await accountDb(accountId), cutOff)).deleted).toBeGreaterThanOrEqual(1);
    expect((await storedChecks(accountId)).map((row) => row.number)).toEqual([ON]);
  });
});
