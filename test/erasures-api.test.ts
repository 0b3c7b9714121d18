import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { eraseRowsStatements } from "../src/db/queries/erasures";
import { sha256Hex } from "../src/lib/crypto";
import { number } from "./campaign-fixtures";
import { accountD1, firstAccountD1 } from "./databases";
import { ERASED, type Erasure, erase, NOTHING, shownErasure } from "./erasure-fixtures";
import { ADMIN_TOKEN, call, createAccount, expectProblem, TIMESTAMP } from "./helpers";
import { connectedSession, seedMessages } from "./message-fixtures";

// `/v1/erasures` as an API (docs/contacts.md, Erasure): its answers and errors, its paging, its
// Idempotency-Key, erasure by user id, the opt-out kept as a hash, and a pending erasure that the
// hourly `complete_erasures` job completes once the contact's last message has left.

/** A number of this test only. */
const fresh = () => number(Number.parseInt(crypto.randomUUID().slice(0, 6), 16) % 9_000);

async function keyWith(accountId: string, scopes: string[]): Promise<string> {
  const res = await call<{ data: { api_key: string } }>("POST", `/admin/accounts/${accountId}/keys`, {
    key: ADMIN_TOKEN,
    body: { name: "scoped", scopes },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.api_key;
}

function inbound(key: string, sessionId: string, body: Record<string, unknown>) {
  return call<{ data: { id: string; contact: { id: string } | null } }>(
    "POST",
    `/sandbox/sessions/${sessionId}/inbound`,
    { key, body: { type: "text", content: "hello", ...body } },
  );
}

describe("POST /v1/erasures", () => {
  it("completes an erasure of a contact the account never met, erasing nothing, and shows and lists it", async () => {
    const { key, accountId } = await createAccount(1);
    const before = Date.now();
    const erased = await erase(key, { phone_number: "+1 (415) 555-2671" });
    expect(erased).toEqual({
      id: expect.stringMatching(/^ers_[0-9a-f]{32}$/),
      address: expect.stringMatching(ERASED),
      status: "completed",
      counts: NOTHING,
      created_at: expect.stringMatching(TIMESTAMP),
      completed_at: expect.stringMatching(TIMESTAMP),
    });
    expect(Date.parse(erased.created_at)).toBeGreaterThanOrEqual(before);
    expect(await shownErasure(key, erased.id)).toEqual(erased);
    // The same number, however written, is the same hash; another number another.
    expect((await erase(key, { phone_number: "14155552671" })).address).toBe(erased.address);
    expect((await erase(key, { phone_number: "+14155552672" })).address).not.toBe(erased.address);
    // The row keeps the hash alone, and nothing sealed once completed.
    const row = await (await accountD1(accountId))
      .prepare("SELECT * FROM erasures WHERE id = ?")
      .bind(erased.id)
      .first();
    expect(JSON.stringify(row)).not.toContain("4155552671");
    expect(row).toMatchObject({ address: erased.address, sealed_addresses: null });
  });

  it("hashes the same address differently in another account", async () => {
    const [a, b] = await Promise.all([createAccount(1), createAccount(1)]);
    const [first, second] = await Promise.all([
      erase(a.key, { phone_number: "+14155552671" }),
      erase(b.key, { phone_number: "+14155552671" }),
    ]);
    expect(first.address).not.toBe(second.address);
  });

  it("refuses a body without exactly one valid address with 422 validation_failed on the field", async () => {
    const { key } = await createAccount(1);
    const cases: [unknown, string][] = [
      [{}, "phone_number"],
      [{ phone_number: "12" }, "phone_number"],
      [{ phone_number: 14155552671 }, "phone_number"],
      [{ user_id: "nobody" }, "user_id"],
      [{ phone_number: "+14155552671", user_id: "US.13491208655302741918" }, "user_id"],
      [{ phone_number: "+14155552671", to_number: "+14155552671" }, "to_number"],
    ];
    for (const [body, field] of cases) {
      const res = await call("POST", "/v1/erasures", { key, body });
      const problem = expectProblem(res, 422, "validation_failed");
      expect(Object.keys(problem.errors as object), JSON.stringify(body)).toEqual([field]);
    }
    const list = await call<{ data: unknown[] }>("GET", "/v1/erasures", { key });
    expect(list.body.data).toEqual([]);
  });

  it("replays the first answer to a retry with the same Idempotency-Key, whose stored hash is keyed", async () => {
    const { key, accountId } = await createAccount(1);
    const body = { phone_number: "+14155552671" };
    const headers = { "Idempotency-Key": "erase-once" };
    const first = await call<{ data: Erasure }>("POST", "/v1/erasures", { key, body, headers });
    expect(first.status).toBe(201);
    const again = await call<{ data: Erasure }>("POST", "/v1/erasures", { key, body, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expectProblem(
      await call("POST", "/v1/erasures", { key, body: { phone_number: "+14155552672" }, headers }),
      422,
      "idempotency_key_reused",
    );
    const list = await call<{ data: Erasure[] }>("GET", "/v1/erasures", { key });
    expect(list.body.data.map((e) => e.id)).toEqual([first.body.data.id]);
    // A plain hash of the body would let a guessed number be checked against the database.
    const stored = await (await accountD1(accountId))
      .prepare("SELECT request_hash FROM idempotency_keys WHERE account_id = ?")
      .bind(accountId)
      .first<{ request_hash: string }>();
    expect(stored?.request_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored?.request_hash).not.toBe(await sha256Hex(`POST /v1/erasures\n${JSON.stringify(body)}`));
  });
});

describe("the erasure's statements", () => {
  it("bind at most 100 parameters each, as D1 allows, however many addresses and contacts", () => {
    const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const scope = {
      id: "ers_0",
      accountId: "a",
      createdAt: 0,
      hashes: new Map(many(50, "+1415555").map((a) => [a, `erased:${a}`])),
      contactIds: many(20, "ct_"),
      waiting: ["queued", "scheduled"],
      active: ["scheduled", "running", "paused"],
    };
    const dialect = new SQLiteAsyncDialect({ casing: "snake_case" });
    const statements = eraseRowsStatements(scope, {
      mediaObjects: 0,
      erasedAt: "2026-01-01T00:00:00.000000Z",
      removed: ["$.template", "$.reactions"],
      now: 0,
    });
    const counts = statements.map((statement) => dialect.sqlToQuery(statement).params.length);
    expect(Math.max(...counts)).toBeLessThanOrEqual(100);
  });

  it("find the person's rows by index, never walking a table", async () => {
    const dialect = new SQLiteAsyncDialect({ casing: "snake_case" });
    const statements = eraseRowsStatements(
      {
        id: "ers_0",
        accountId: "a",
        createdAt: 0,
        hashes: new Map([["+14155552671", "erased:0"]]),
        contactIds: ["ct_0"],
        waiting: ["queued"],
        active: ["running"],
      },
      { mediaObjects: 0, erasedAt: "", removed: ["$.template"], now: 0 },
    );
    const plans: string[] = [];
    for (const statement of statements) {
      const query = dialect.sqlToQuery(statement);
      const plan = await firstAccountD1()
        .prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
        .bind(...query.params)
        .all<{ detail: string }>();
      plans.push(plan.results.map((r) => r.detail).join("\n"));
    }
    // Only the lists themselves are walked. (The account's OTPs and events are read by index
    // range: an OTP has no index by number, and an event is found by what its snapshot names.)
    const scans = plans.flatMap((plan) =>
      plan.split("\n").filter((line) => /^SCAN /.test(line) && !/VIRTUAL TABLE|CONSTANT ROW/.test(line)),
    );
    expect(scans).toEqual([]);
    // A message is found by its address or contact, never by a range of the account's messages.
    const all = plans.join("\n");
    expect(all).toMatch(/messages_account_to \(account_number=\? AND to_number=\?/);
    expect(all).toMatch(/messages_account_from \(account_number=\? AND from_number=\?/);
    expect(all).not.toMatch(
      /USING (COVERING )?INDEX messages_account_(created|direction|status|type|session)/,
    );
  });
});

describe("GET /v1/erasures", () => {
  it("pages the account's erasures newest first, and another account's are 404", async () => {
    const { key } = await createAccount(1);
    const made: string[] = [];
    for (const n of [1, 2, 3]) made.push((await erase(key, { phone_number: number(n) })).id);
    const first = await call<{ data: Erasure[]; meta: { next_cursor: string | null } }>(
      "GET",
      "/v1/erasures?limit=2",
      { key },
    );
    expect(first.status).toBe(200);
    expect(first.body.data.map((e) => e.id)).toEqual([made[2], made[1]]);
    const next = await call<{ data: Erasure[]; meta: { next_cursor: string | null } }>(
      "GET",
      `/v1/erasures?limit=2&cursor=${first.body.meta.next_cursor}`,
      { key },
    );
    expect(next.status, next.text).toBe(200);
    expect(next.body.data.map((e) => e.id)).toEqual([made[0]]);
    expect(next.body.meta.next_cursor).toBeNull();

    const other = await createAccount(1);
    expectProblem(await call("GET", `/v1/erasures/${made[0]}`, { key: other.key }), 404, "not_found");
    expectProblem(await call("GET", "/v1/erasures/ers_nope", { key }), 404, "not_found");
    const theirs = await call<{ data: Erasure[] }>("GET", "/v1/erasures", { key: other.key });
    expect(theirs.body.data).toEqual([]);
  });

  it("needs erasures:write to erase and erasures:read (or write) to read", async () => {
    const { key, accountId } = await createAccount(1);
    const made = await erase(key, { phone_number: "+14155552671" });
    const reader = await keyWith(accountId, ["erasures:read"]);
    const writer = await keyWith(accountId, ["erasures:write"]);
    const neither = await keyWith(accountId, ["contacts:read", "opt-outs:write"]);
    const refused = expectProblem(
      await call("POST", "/v1/erasures", { key: reader, body: { phone_number: "+14155552672" } }),
      403,
      "insufficient_scope",
    );
    expect(refused.scope).toBe("erasures:write");
    expect(
      expectProblem(await call("GET", "/v1/erasures", { key: neither }), 403, "insufficient_scope").scope,
    ).toBe("erasures:read");
    expectProblem(await call("GET", `/v1/erasures/${made.id}`, { key: neither }), 403, "insufficient_scope");
    expect((await call("GET", `/v1/erasures/${made.id}`, { key: reader })).status).toBe(200);
    expect((await call("GET", `/v1/erasures/${made.id}`, { key: writer })).status).toBe(200);
    expect(
      (await call("POST", "/v1/erasures", { key: writer, body: { phone_number: "+14155552672" } })).status,
    ).toBe(201);
    // Its event needs erasures:read too.
    expectProblem(
      await call("GET", "/v1/events?filter[type]=contact.erased", {
        key: await keyWith(accountId, ["events:read"]),
      }),
      403,
      "insufficient_scope",
    );
  });
});

describe("an erasure by user id, and the opt-out it keeps", () => {
  it("erases the contact known by a user id and a number, by both, and its kept opt-out still names them", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedSession(key);
    const phone = fresh();
    const userId = `US.${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
    // First by user id alone, then revealing the number; then STOP.
    expect((await inbound(key, session.id, { from_user_id: userId, content: "who am i" })).status).toBe(201);
    const named = await inbound(key, session.id, { from_user_id: userId, from_number: phone, content: "me" });
    expect(named.status).toBe(201);
    expect((await inbound(key, session.id, { from_number: phone, content: "STOP" })).status).toBe(201);
    const listed = await call<{ data: { to_number: string | null; user_id: string | null }[] }>(
      "GET",
      "/v1/opt-outs",
      { key },
    );
    expect(listed.body.data).toHaveLength(2);

    const erased = await erase(key, { user_id: userId });
    expect(erased).toMatchObject({ status: "completed", counts: { messages: 3, contacts: 1, opt_outs: 2 } });
    const rows = await (await accountD1(accountId))
      .prepare(
        "SELECT to_number, from_number, content, contact_id FROM messages WHERE account_id = ? AND direction = 'incoming'",
      )
      .bind(accountId)
      .all<{ from_number: string | null; content: string | null; contact_id: string | null }>();
    for (const row of rows.results) {
      expect(row.content).toBeNull();
      expect(row.contact_id).toBeNull();
      // The one written by user id alone had no number; the others name the number's hash.
      expect(row.from_number === null || ERASED.test(row.from_number)).toBe(true);
    }
    // The number's hash is the one a later erasure by number gives.
    const byNumber = await erase(key, { phone_number: phone });
    expect(byNumber.counts).toEqual(NOTHING);
    const kept = await call<{ data: { to_number: string; user_id: string | null }[] }>(
      "GET",
      "/v1/opt-outs",
      {
        key,
      },
    );
    // Listed by their hash, and paged by it.
    const page = await call<{ data: unknown[]; meta: { next_cursor: string } }>(
      "GET",
      "/v1/opt-outs?limit=1",
      {
        key,
      },
    );
    const rest = await call<{ data: unknown[] }>(
      "GET",
      `/v1/opt-outs?limit=1&cursor=${page.body.meta.next_cursor}`,
      { key },
    );
    expect(rest.status, rest.text).toBe(200);
    expect([...page.body.data, ...rest.body.data]).toEqual(kept.body.data);
    expect(kept.body.data.map((o) => o.to_number).sort()).toEqual([byNumber.address, erased.address].sort());

    // The person writes again: a new contact, opted out by the hash of their number.
    const back = await inbound(key, session.id, { from_number: phone, content: "back again" });
    const contactId = back.body.data.contact?.id ?? "";
    const shown = await call<{ data: { opted_out: boolean } }>("GET", `/v1/contacts/${contactId}`, { key });
    expect(shown.body.data.opted_out).toBe(true);
    // Deleting by the number deletes the kept one: the contact opted back in.
    expect((await call("DELETE", `/v1/opt-outs/${encodeURIComponent(phone)}`, { key })).status).toBe(204);
    const after = await call<{ data: { opted_out: boolean } }>("GET", `/v1/contacts/${contactId}`, { key });
    expect(after.body.data.opted_out).toBe(false);
    expectProblem(await call("GET", `/v1/opt-outs/${encodeURIComponent(phone)}`, { key }), 404, "not_found");
  });
});

describe("a pending erasure", () => {
  it("waits for a message still to be sent, and the hourly complete_erasures job completes it once it left", async () => {
    const { key, accountId } = await createAccount(10);
    const phone = fresh();
    const now = Date.now() - 1_000;
    const [waiting, gone] = await seedMessages([
      { accountId, sessionId: null, toNumber: phone, status: "queued", content: "not yet", createdAt: now },
      { accountId, sessionId: null, toNumber: phone, status: "sent", content: "gone", createdAt: now },
    ]);
    const pending = await erase(key, { phone_number: phone });
    expect(pending).toMatchObject({
      status: "pending",
      completed_at: null,
      counts: { ...NOTHING, messages: 1 },
    });
    const d1 = await accountD1(accountId);
    const content = (id: string | undefined) =>
      d1
        .prepare("SELECT to_number, content FROM messages WHERE id = ?")
        .bind(id ?? "")
        .first();
    expect(await content(waiting)).toEqual({ to_number: phone, content: "not yet" });
    expect(await content(gone)).toEqual({ to_number: pending.address, content: null });
    // Pending, it keeps the addresses it still needs, sealed.
    const sealed = await d1
      .prepare("SELECT sealed_addresses FROM erasures WHERE id = ?")
      .bind(pending.id)
      .first<{ sealed_addresses: string }>();
    expect(sealed?.sealed_addresses).toMatch(/^v1\./);
    expect(sealed?.sealed_addresses).not.toContain(phone.slice(1));

    // The job finds nothing to do while the message waits.
    const run = () =>
      call<{ data: { result: number } }>("POST", "/admin/jobs/complete_erasures", { key: ADMIN_TOKEN });
    expect((await run()).body.data.result).toBe(0);
    expect((await shownErasure(key, pending.id)).status).toBe("pending");

    // The message fails (it left the queue); the next run erases it and completes.
    await d1
      .prepare("UPDATE messages SET status = 'failed' WHERE id = ?")
      .bind(waiting ?? "")
      .run();
    expect((await run()).body.data.result).toBe(1);
    const done = await shownErasure(key, pending.id);
    expect(done).toMatchObject({ status: "completed", counts: { ...NOTHING, messages: 2 } });
    expect(Date.parse(done.completed_at ?? "")).toBeGreaterThan(Date.parse(done.created_at));
    expect(await content(waiting)).toEqual({ to_number: pending.address, content: null });
    const events = await call<{ data: { data: Erasure }[] }>(
      "GET",
      "/v1/events?filter[type]=contact.erased",
      { key },
    );
    expect(events.body.data.map((e) => e.data)).toEqual([done]);
    // Completed, nothing runs it again.
    expect((await run()).body.data.result).toBe(0);
  });
});
