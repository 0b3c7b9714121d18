import { beforeEach, describe, expect, it } from "vitest";
import { MAX_OPT_OUT_LOOKUP, optedOutAmong } from "../src/db/queries/opt-outs";
import { decodeCursor, encodeCursor } from "../src/lib/cursor";
import { DEFAULT_OPT_OUT_KEYWORDS, optOutKeyword } from "../src/opt-outs/keywords";
import { optOutRoutes } from "../src/routes/opt-outs/opt-outs.index";
import { accountD1, accountDb } from "./databases";
import { call, createAccount, expectProblem, sessionStub, TIMESTAMP } from "./helpers";
import { connectedSession } from "./message-fixtures";

interface OptOut {
  to_number: string;
  source: "api" | "keyword";
  keyword: string | null;
  created_at: string;
}

interface Page {
  success: boolean;
  data: OptOut[];
  links: { first: null; last: null; prev: string | null; next: string | null };
  meta: { path: string; per_page: number; next_cursor: string | null; prev_cursor: string | null };
}

let key: string;
let accountId: string;

beforeEach(async () => {
  ({ key, accountId } = await createAccount());
});

const encoded = (number: string) => encodeURIComponent(number);

function add(toNumber: unknown, apiKey = key) {
  return call<{ success: boolean; data: OptOut }>("POST", "/v1/opt-outs", {
    key: apiKey,
    body: { to_number: toNumber },
  });
}

function show(number: string, apiKey = key) {
  return call<{ success: boolean; data: OptOut }>("GET", `/v1/opt-outs/${encoded(number)}`, { key: apiKey });
}

function list(query = "", apiKey = key) {
  return call<Page>("GET", `/v1/opt-outs${query}`, { key: apiKey });
}

/** The account's stored opt-out rows, newest first. */
async function rows(account = accountId) {
  const { results } = await (await accountD1(account))
    .prepare(
      "SELECT to_number, source, keyword, created_at FROM opt_outs WHERE account_id = ? ORDER BY created_at DESC, to_number DESC",
    )
    .bind(account)
    .all<{ to_number: string; source: string; keyword: string | null; created_at: number }>();
  return results;
}

/** Seeds opt-outs straight into D1: `count` numbers, +1415555{1000+i}, one millisecond apart. */
async function seed(count: number, account = accountId, start = 1_800_000_000_000): Promise<string[]> {
  const numbers = Array.from({ length: count }, (_, i) => `+1415555${String(1000 + i)}`);
  await (await accountD1(account))
    .prepare(
      `INSERT INTO opt_outs (account_id, to_number, source, keyword, created_at)
     SELECT ?, value, 'api', NULL, ? + key FROM json_each(?)`,
    )
    .bind(account, start, JSON.stringify(numbers))
    .run();
  return numbers;
}

function inbound(sessionId: string, content: string, from = "+14155552699") {
  return call<{ data: { id: string; content: string } }>("POST", `/sandbox/sessions/${sessionId}/inbound`, {
    key,
    body: { from_number: from, type: "text", content },
  });
}

describe("POST /v1/opt-outs", () => {
  it("adds a number (201), normalised to E.164, then answers 200 with the same record", async () => {
    const before = Date.now();
    const res = await add("+1 (415) 555-2671");
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        to_number: "+14155552671",
        user_id: null,
        source: "api",
        keyword: null,
        created_at: expect.stringMatching(TIMESTAMP),
      },
    });
    const [stored] = await rows();
    expect(stored).toEqual({
      to_number: "+14155552671",
      source: "api",
      keyword: null,
      created_at: expect.any(Number),
    });
    expect(stored?.created_at).toBeGreaterThanOrEqual(before);

    const again = await add("14155552671");
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect(await rows()).toHaveLength(1);
  });

  it("refuses invalid numbers and bodies with 422 validation_failed on the field", async () => {
    for (const bad of ["12", "+1415555267", "not a number", "", "+999 1234 5678", 14155552671, null]) {
      const problem = expectProblem(await add(bad), 422, "validation_failed");
      expect(Object.keys(problem.errors as object)).toEqual(["to_number"]);
    }
    const extra = await call("POST", "/v1/opt-outs", {
      key,
      body: { to_number: "+14155552671", source: "keyword" },
    });
    expect(expectProblem(extra, 422, "validation_failed").errors).toEqual({ source: ["unknown field"] });
    expectProblem(await call("POST", "/v1/opt-outs", { key, body: {} }), 422, "validation_failed");
    expect(await rows()).toEqual([]);
  });
});

describe("GET and DELETE /v1/opt-outs/{to_number}", () => {
  it("shows a listed number with its + encoded, raw or left out", async () => {
    const added = await add("+447911123456");
    expect(added.status).toBe(201);
    const created = added.body.data;
    for (const path of ["%2B447911123456", "+447911123456", "447911123456"]) {
      const res = await call<{ data: OptOut }>("GET", `/v1/opt-outs/${path}`, { key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: created });
    }
  });

  it("is 404 not_found for a number not on the list, and for one that is not a number", async () => {
    expectProblem(await show("+14155552671"), 404, "not_found");
    expectProblem(await call("GET", "/v1/opt-outs/12", { key }), 404, "not_found");
    expectProblem(await call("DELETE", "/v1/opt-outs/abc", { key }), 404, "not_found");
  });

  it("deletes a listed number (204), then it is gone (404)", async () => {
    await add("+14155552671");
    await add("+14155552672");
    const res = await call("DELETE", "/v1/opt-outs/14155552671", { key });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expectProblem(await show("+14155552671"), 404, "not_found");
    expectProblem(await call("DELETE", `/v1/opt-outs/${encoded("+14155552671")}`, { key }), 404, "not_found");
    expect((await rows()).map((r) => r.to_number)).toEqual(["+14155552672"]);
  });
});

describe("GET /v1/opt-outs", () => {
  it("is empty for a new account", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: [],
      links: { first: null, last: null, prev: null, next: null },
      meta: { path: "http://localhost/v1/opt-outs", per_page: 10, next_cursor: null, prev_cursor: null },
    });
  });

  it("pages newest first by cursor, forwards and back, numbers breaking ties", async () => {
    const numbers = await seed(25);
    // Two more at the newest time: the number orders them (descending).
    await (await accountD1(accountId))
      .prepare(
        "INSERT INTO opt_outs (account_id, to_number, source, keyword, created_at) VALUES (?, '+14155559001', 'keyword', 'STOP', ?), (?, '+14155559002', 'api', NULL, ?)",
      )
      .bind(accountId, 1_800_000_000_100, accountId, 1_800_000_000_100)
      .run();
    const expected = ["+14155559002", "+14155559001", ...numbers.toReversed()];

    const seen: string[] = [];
    const pages: Page[] = [];
    let query = "?limit=10";
    for (;;) {
      const res = await list(query);
      expect(res.status).toBe(200);
      pages.push(res.body);
      seen.push(...res.body.data.map((o) => o.to_number));
      if (!res.body.meta.next_cursor) break;
      expect(res.body.links.next).toBe(
        `http://localhost/v1/opt-outs?limit=10&cursor=${res.body.meta.next_cursor}`,
      );
      query = `?limit=10&cursor=${res.body.meta.next_cursor}`;
    }
    expect(seen).toEqual(expected);
    expect(pages.map((p) => p.data.length)).toEqual([10, 10, 7]);
    expect(pages[0]?.data[1]).toEqual({
      to_number: "+14155559001",
      user_id: null,
      source: "keyword",
      keyword: "STOP",
      created_at: "2027-01-15T08:00:00.100000Z",
    });
    expect(pages[0]?.meta.prev_cursor).toBeNull();

    // Back from the last page: the page before it, in the same order.
    const back = await list(`?limit=10&cursor=${pages[2]?.meta.prev_cursor}`);
    expect(back.body.data.map((o) => o.to_number)).toEqual(expected.slice(10, 20));
    const first = await list(`?limit=10&cursor=${back.body.meta.prev_cursor}`);
    expect(first.body.data.map((o) => o.to_number)).toEqual(expected.slice(0, 10));
    expect(first.body.meta.prev_cursor).toBeNull();
  });

  it("refuses a bad limit or cursor with 422", async () => {
    for (const query of ["?limit=0", "?limit=101", "?limit=x", "?cursor=abc"]) {
      expectProblem(await list(query), 422, "validation_failed");
    }
  });
});

describe("cursor ids", () => {
  it("carry an E.164 number, and refuse other strings", () => {
    for (const id of ["+14155552671", "+447911123456", "+12"]) {
      const cursor = { createdAt: 1_800_000_000_000, id, direction: "next" as const };
      expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    }
    for (const id of ["14155552671", "+04155552671", "+1234567890123456", "+1 415", "+1415'--"]) {
      expect(decodeCursor(encodeCursor({ createdAt: 1, id, direction: "next" }))).toBeNull();
    }
  });
});

describe("opt-out keywords from incoming messages", () => {
  it("match the whole text, trimmed, in any case", () => {
    expect(DEFAULT_OPT_OUT_KEYWORDS).toEqual(["STOP", "UNSUBSCRIBE", "CANCEL"]);
    expect(optOutKeyword("STOP")).toBe("STOP");
    expect(optOutKeyword("  stop\n")).toBe("STOP");
    expect(optOutKeyword("Unsubscribe")).toBe("UNSUBSCRIBE");
    expect(optOutKeyword("cancel")).toBe("CANCEL");
    for (const text of ["stop it please", "STOP!", "please cancel", "", "   ", null, "stopp"]) {
      expect(optOutKeyword(text)).toBeNull();
    }
  });

  it("adds the sender of a sandbox STOP with source keyword, once however often it is sent", async () => {
    const session = await connectedSession(key);
    const res = await inbound(session.id, "  Stop ");
    expect(res.status).toBe(201);
    const created = await show("+14155552699");
    expect(created.status).toBe(200);
    expect(created.body.data).toEqual({
      to_number: "+14155552699",
      user_id: null,
      source: "keyword",
      keyword: "STOP",
      created_at: expect.stringMatching(TIMESTAMP),
    });
    // The opt-out is the message's own time: both come from one batch.
    const message = await (await accountD1(accountId))
      .prepare("SELECT created_at FROM messages WHERE id = ?")
      .bind(res.body.data.id)
      .first<{ created_at: number }>();
    expect((await rows())[0]?.created_at).toBe(message?.created_at);

    // Another keyword from the same number is stored as a message and keeps the first opt-out.
    expect((await inbound(session.id, "UNSUBSCRIBE")).status).toBe(201);
    expect(await rows()).toEqual([
      { to_number: "+14155552699", source: "keyword", keyword: "STOP", created_at: message?.created_at },
    ]);
    // An API add of a number a keyword added answers 200 with the keyword record.
    const again = await add("+14155552699");
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(created.body.data);
  });

  it("adds nothing for a text that only contains a keyword", async () => {
    const session = await connectedSession(key);
    for (const text of ["stop it please", "Please CANCEL my order", "STOP!"]) {
      expect((await inbound(session.id, text)).status).toBe(201);
    }
    expect(await rows()).toEqual([]);
  });

  it("adds nothing when the gateway delivers the same STOP again", async () => {
    const session = await connectedSession(key);
    const event = {
      type: "incoming" as const,
      providerMessageId: "wamid.STOP-replayed",
      from: { phoneNumber: "+14155552698" },
      messageType: "text" as const,
      content: "STOP",
      mediaUrl: null,
      at: Date.now(),
    };
    expect(await sessionStub(session.id).gatewayEvents("sandbox", [event])).toHaveLength(1);
    expect(await rows()).toEqual([
      { to_number: "+14155552698", source: "keyword", keyword: "STOP", created_at: event.at },
    ]);
    // The replay stores no second message and no second row ...
    expect(await sessionStub(session.id).gatewayEvents("sandbox", [event])).toHaveLength(1);
    expect(await rows()).toHaveLength(1);
    // ... and, once the contact was taken off the list, does not put them back.
    expect((await call("DELETE", `/v1/opt-outs/${encoded("+14155552698")}`, { key })).status).toBe(204);
    expect(await sessionStub(session.id).gatewayEvents("sandbox", [event])).toHaveLength(1);
    expect(await rows()).toEqual([]);
    const stored = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM messages WHERE provider_message_id = ?")
      .bind(event.providerMessageId)
      .first<{ n: number }>();
    expect(stored?.n).toBe(1);
  });

  it("puts the number on the session's account's list only", async () => {
    const session = await connectedSession(key);
    await inbound(session.id, "CANCEL");
    const other = await createAccount();
    expectProblem(await show("+14155552699", other.key), 404, "not_found");
    expect((await list("", other.key)).body.data).toEqual([]);
    expect((await rows()).map((r) => [r.to_number, r.keyword])).toEqual([["+14155552699", "CANCEL"]]);
  });
});

describe("optedOutAmong", () => {
  it("finds the opted-out numbers among 10,000 at once, for the account only", async () => {
    const listed = await seed(300);
    // Another account in the same database: only the account filter keeps its opt-out apart.
    const db = await accountDb(accountId);
    const d1 = await accountD1(accountId);
    let other = await createAccount();
    for (let tries = 0; (await accountD1(other.accountId)) !== d1; tries++) {
      if (tries === 10) throw new Error("no new account landed in the first account's database");
      other = await createAccount();
    }
    await d1
      .prepare(
        "INSERT INTO opt_outs (account_id, to_number, source, keyword, created_at) VALUES (?, '+14155553333', 'api', NULL, 1)",
      )
      .bind(other.accountId)
      .run();
    // 9,700 numbers not on the list (+1415556xxxx and +1415557xxxx), the 300 listed, and the other account's.
    const unlisted = Array.from({ length: MAX_OPT_OUT_LOOKUP - 301 }, (_, i) => `+141555${6000000 + i}`);
    const numbers = [
      ...unlisted,
      ...listed.filter((_, i) => i % 2 === 0),
      "+14155553333",
      ...listed.filter((_, i) => i % 2 === 1),
    ];
    expect(numbers).toHaveLength(MAX_OPT_OUT_LOOKUP);
    const found = await optedOutAmong(db, accountId, numbers);
    expect([...found].sort()).toEqual([...listed].sort());

    expect(await optedOutAmong(db, other.accountId, numbers)).toEqual(new Set(["+14155553333"]));
    expect(await optedOutAmong(db, accountId, [])).toEqual(new Set());
    expect(await optedOutAmong(db, accountId, [listed[0] ?? "", listed[0] ?? ""])).toEqual(
      new Set([listed[0]]),
    );
    await expect(optedOutAmong(db, accountId, [...numbers, "+14155550000"])).rejects.toThrow(RangeError);
  });
});

describe("ownership and authentication, for every opt-out route", () => {
  // Generated from the router, so that a new route cannot ship without these cases.
  const seen = new Set<string>();
  const routes: [string, string][] = [];
  for (const route of optOutRoutes.routes) {
    const entry = `${route.method} ${route.path}`;
    if (route.method === "ALL" || seen.has(entry)) continue;
    seen.add(entry);
    routes.push([route.method, route.path]);
  }
  const bodies: Record<string, unknown> = { "POST /": { to_number: "+14155552671" } };
  const pathOf = (path: string) => `/v1/opt-outs${path.replace(":to_number", encoded("+14155552671"))}`;

  it("covers the routes of the resource", () => {
    expect(routes.map(([method, path]) => `${method} ${path}`).sort()).toEqual(
      ["GET /", "POST /", "GET /:to_number", "DELETE /:to_number"].sort(),
    );
  });

  for (const [method, path] of routes) {
    it(`${method} /v1/opt-outs${path} without a key is 401`, async () => {
      expectProblem(
        await call(method, pathOf(path), { body: bodies[`${method} ${path}`] }),
        401,
        "unauthenticated",
      );
      expect(await rows()).toEqual([]);
    });
  }

  for (const [method, path] of routes.filter(([, path]) => path.includes(":to_number"))) {
    it(`${method} /v1/opt-outs${path}: another account's opt-out is 404 and stays`, async () => {
      const theirs = await createAccount();
      await add("+14155552671", theirs.key);
      const before = await rows(theirs.accountId);
      expectProblem(await call(method, pathOf(path), { key }), 404, "not_found");
      expect(await rows(theirs.accountId)).toEqual(before);
    });
  }

  it("another account's list and adds are its own", async () => {
    const theirs = await createAccount();
    await add("+14155552671", theirs.key);
    expect((await list()).body.data).toEqual([]);
    // Adding the same number here is a new record of this account (201), not theirs (200).
    expect((await add("+14155552671")).status).toBe(201);
    expect(await rows(theirs.accountId)).toHaveLength(1);
  });
});

describe("OpenAPI document", () => {
  it("documents the opt-out routes under their tag, with the record's fields", async () => {
    const res = await call<{
      paths: Record<
        string,
        Record<string, { tags: string[]; summary: string; responses: Record<string, unknown> }>
      >;
      components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
    }>("GET", "/openapi.json");
    const paths = res.body.paths;
    expect(Object.keys(paths["/v1/opt-outs"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(paths["/v1/opt-outs/{to_number}"] ?? {}).sort()).toEqual(["delete", "get"]);
    for (const operations of [paths["/v1/opt-outs"], paths["/v1/opt-outs/{to_number}"]]) {
      for (const operation of Object.values(operations ?? {})) {
        expect(operation.tags).toEqual(["Opt-outs"]);
        expect(operation.summary).toEqual(expect.any(String));
      }
    }
    expect(Object.keys(paths["/v1/opt-outs"]?.post?.responses ?? {}).sort()).toEqual([
      "200",
      "201",
      "400",
      "401",
      "403",
      "413",
      "415",
      "422",
      "429",
      "500",
      "503",
    ]);
    const record = res.body.components.schemas.OptOut?.properties ?? {};
    expect(Object.keys(record).sort()).toEqual(["created_at", "keyword", "source", "to_number", "user_id"]);
    for (const field of Object.values(record)) expect(field.description).toEqual(expect.any(String));
  });
});
