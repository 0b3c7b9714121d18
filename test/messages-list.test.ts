import { beforeAll, describe, expect, it } from "vitest";
import { call, createAccount, expectProblem, waitFor } from "./helpers";
import { connectedSession, seedMessages } from "./message-fixtures";

// Reading messages (the `Message` schema and `GET /v1/chatapp/messages` in openapi.json; docs/messages.md,
// Sending messages): one message with every field; the account's list and one session's list with
// every filter, newest first, in Laravel's cursor-paginator shape, paged forward and back.

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const STATUSES = ["queued", "sent", "delivered", "read", "failed", "scheduled"] as const;
const TYPES = ["text", "image", "video", "audio", "document"] as const;
const CONTACTS = [
  "+14155552601",
  "+14155552602",
  "+14155552603",
  "+14155552604",
  "+14155552605",
  "+14155552606",
];
const BASE = Date.UTC(2026, 5, 1, 8);
const ORIGIN = "http://localhost";

interface Record_ {
  id: string;
  chatapp_session_id: string;
  to_number: string;
  from_number: string | null;
  status: string;
  direction: string;
  type: string;
  created_at: string;
  [field: string]: unknown;
}
interface Page {
  success: boolean;
  data: Record_[];
  links: { first: string | null; last: string | null; prev: string | null; next: string | null };
  meta: { path: string; per_page: number; next_cursor: string | null; prev_cursor: string | null };
}

interface Row {
  id: string;
  session: string;
  to: string;
  from: string | null;
  status: (typeof STATUSES)[number];
  direction: "incoming" | "outgoing";
  type: (typeof TYPES)[number];
  createdAt: number;
}

const q = encodeURIComponent;

describe("GET /v1/chatapp/messages/{id}", () => {
  let key = "";
  let session = { id: "", sessionId: "", phone: "" };
  let sentId = "";
  let incomingId = "";

  beforeAll(async () => {
    ({ key } = await createAccount(1));
    session = await connectedSession(key);
    const sent = await call<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [CONTACTS[0]],
        type: "image",
        media_url: "https://cdn.example.test/c.png",
        content: "cap",
      },
    });
    expect(sent.status).toBe(201);
    sentId = sent.body.data.messages[0]?.id ?? "";
    const incoming = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${session.id}/inbound`, {
      key,
      body: { from_number: CONTACTS[3], type: "text", content: "hi there" },
    });
    expect(incoming.status).toBe(201);
    incomingId = incoming.body.data.id;
  });

  const FIELDS = [
    "id",
    "chatapp_session_id",
    "campaign_id",
    "otp_id",
    "provider_message_id",
    "from_number",
    "to_number",
    "contact",
    "type",
    "content",
    "reply_to",
    "media_url",
    "status",
    "direction",
    "reason",
    "cost",
    "sent_at",
    "delivered_at",
    "read_at",
    "metadata",
    "created_at",
    "updated_at",
  ].sort();

  it("shows an outgoing message with every field of the Message schema", async () => {
    const shown = await waitFor(
      async () => {
        const res = await call<{ success: boolean; data: Record_ }>("GET", `/v1/chatapp/messages/${sentId}`, {
          key,
        });
        return res.body.data.status === "queued" ? undefined : res;
      },
      {
        reason: "the message to leave queued (the outbound queue hands it over)",
        timeoutMs: 5_000,
        intervalMs: 100,
      },
    );
    expect(shown.status).toBe(200);
    expect(Object.keys(shown.body).sort()).toEqual(["data", "success"]);
    expect(shown.body.success).toBe(true);
    const message = shown.body.data;
    expect(Object.keys(message).sort()).toEqual(FIELDS);
    expect(message).toMatchObject({
      id: sentId,
      chatapp_session_id: session.id,
      campaign_id: null,
      otp_id: null,
      from_number: session.phone,
      to_number: CONTACTS[0],
      type: "image",
      content: "cap",
      media_url: "https://cdn.example.test/c.png",
      direction: "outgoing",
      reason: null,
      cost: 0.02,
    });
    expect(["sent", "delivered", "read"]).toContain(message.status);
    expect(message.provider_message_id).toEqual(expect.any(String));
    expect(message.sent_at).toMatch(TIMESTAMP);
    expect(message.created_at).toMatch(TIMESTAMP);
    expect(message.updated_at).toMatch(TIMESTAMP);
    expect(Date.parse(message.sent_at as string)).toBeGreaterThanOrEqual(Date.parse(message.created_at));
    expect(message.metadata).toMatchObject({ attempts: 1, gateway: "sandbox" });
  });

  it("shows an incoming message: delivered, cost 0, from the contact to the session's number", async () => {
    const shown = await call<{ data: Record_ }>("GET", `/v1/chatapp/messages/${incomingId}`, { key });
    expect(shown.status).toBe(200);
    expect(Object.keys(shown.body.data).sort()).toEqual(FIELDS);
    expect(shown.body.data).toMatchObject({
      id: incomingId,
      chatapp_session_id: session.id,
      campaign_id: null,
      otp_id: null,
      // The sandbox names an inbound message after our id, so a reply can quote it.
      provider_message_id: `sandbox.${incomingId}`,
      from_number: CONTACTS[3],
      to_number: session.phone,
      type: "text",
      content: "hi there",
      media_url: null,
      status: "delivered",
      direction: "incoming",
      reason: null,
      cost: 0,
      sent_at: null,
      read_at: null,
      metadata: {},
    });
    expect(shown.body.data.delivered_at).toBe(shown.body.data.created_at);
  });

  it("is 404 for another account's message, an unknown id and a malformed id", async () => {
    const other = await createAccount(1);
    expectProblem(await call("GET", `/v1/chatapp/messages/${sentId}`, { key: other.key }), 404, "not_found");
    expectProblem(
      await call("GET", `/v1/chatapp/messages/${crypto.randomUUID()}`, { key }),
      404,
      "not_found",
    );
    expectProblem(await call("GET", "/v1/chatapp/messages/not-a-uuid", { key }), 404, "not_found");
    expectProblem(await call("GET", `/v1/chatapp/messages/${sentId}x`, { key }), 404, "not_found");
  });

  it("lists incoming and outgoing by direction, newest first", async () => {
    const all = await call<Page>("GET", "/v1/chatapp/messages", { key });
    expect(all.body.data.map((m) => m.id)).toEqual([incomingId, sentId]);
    const incoming = await call<Page>("GET", "/v1/chatapp/messages?filter[direction]=incoming", { key });
    expect(incoming.body.data.map((m) => [m.id, m.direction])).toEqual([[incomingId, "incoming"]]);
    const outgoing = await call<Page>("GET", "/v1/chatapp/messages?filter[direction]=outgoing", { key });
    expect(outgoing.body.data.map((m) => [m.id, m.direction])).toEqual([[sentId, "outgoing"]]);
    const fromContact = await call<Page>(
      "GET",
      `/v1/chatapp/messages?filter[from_number]=${q(CONTACTS[3] ?? "")}`,
      { key },
    );
    expect(fromContact.body.data.map((m) => m.id)).toEqual([incomingId]);
    // A listed record is the record GET shows.
    const shown = await call<{ data: Record_ }>("GET", `/v1/chatapp/messages/${incomingId}`, { key });
    expect(all.body.data[0]).toEqual(shown.body.data);
  });
});

describe("listing", () => {
  let key = "";
  let accountId = "";
  let s1 = { id: "", sessionId: "", phone: "" };
  let s2 = { id: "", sessionId: "", phone: "" };
  let otherSession = "";
  const rows: Row[] = [];

  beforeAll(async () => {
    ({ key, accountId } = await createAccount(1));
    s1 = await connectedSession(key);
    s2 = await connectedSession(key);
    for (let i = 0; i < 60; i++) {
      const session = i % 3 === 0 ? s2 : s1;
      const direction = i % 4 === 0 ? "incoming" : "outgoing";
      const contact = CONTACTS[Math.floor(i / 3) % CONTACTS.length] ?? "";
      // Rows 20–24 and 40–41 share their creation time: the keyset's id breaks the tie.
      const at = i >= 20 && i <= 24 ? 20 : i === 41 ? 40 : i;
      rows.push({
        id: crypto.randomUUID(),
        session: session.id,
        direction,
        status: direction === "incoming" ? "delivered" : (STATUSES[i % STATUSES.length] ?? "queued"),
        type: TYPES[Math.floor(i / 2) % TYPES.length] ?? "text",
        to: direction === "incoming" ? session.phone : contact,
        from: direction === "incoming" ? contact : session.phone,
        createdAt: BASE + at * 60_000,
      });
    }
    await seedMessages(
      rows.map((r) => ({
        id: r.id,
        accountId,
        sessionId: r.session,
        toNumber: r.to,
        fromNumber: r.from,
        status: r.status,
        direction: r.direction,
        type: r.type,
        createdAt: r.createdAt,
      })),
    );
    // Another account with messages to the same numbers: never listed here.
    const other = await createAccount(1);
    const theirs = await connectedSession(other.key);
    otherSession = theirs.id;
    await seedMessages(
      CONTACTS.map((to, i) => ({
        accountId: other.accountId,
        sessionId: theirs.id,
        toNumber: to,
        fromNumber: theirs.phone,
        createdAt: BASE + i * 60_000 + 1,
      })),
    );
  });

  const newestFirst = (a: Row, b: Row) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1);
  const expected = (predicate: (row: Row) => boolean) =>
    rows
      .filter(predicate)
      .sort(newestFirst)
      .map((r) => r.id);

  /** Follows `links.next` from `path` to the last page; checks each page's shape on the way. */
  async function walk(path: string, limit: number) {
    const pages: Page[] = [];
    let next: string | null = path;
    while (next) {
      const res: { status: number; body: Page } = await call<Page>("GET", next.replace(ORIGIN, ""), { key });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      expect(res.body.meta.per_page).toBe(limit);
      pages.push(res.body);
      next = res.body.links.next;
      expect(pages.length).toBeLessThan(100);
    }
    return { ids: pages.flatMap((p) => p.data.map((m) => m.id)), pages };
  }

  async function expectListed(
    search: string,
    predicate: (row: Row) => boolean,
    base = "/v1/chatapp/messages",
  ) {
    const want = expected(predicate);
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(rows.length);
    // Small pages, so the filters must survive in the links.
    const { ids, pages } = await walk(`${base}?${search}&limit=4`, 4);
    expect(ids).toEqual(want);
    for (const page of pages.slice(0, -1)) {
      const link = new URL(page.links.next ?? "");
      for (const [name, value] of new URLSearchParams(search))
        expect(link.searchParams.getAll(name)).toContain(value);
    }
    return pages;
  }

  describe("filters", () => {
    it("filter[to_number] as repeated filter[to_number][]=", async () => {
      await expectListed(
        `filter[to_number][]=${q(CONTACTS[0] ?? "")}&filter[to_number][]=${q(CONTACTS[1] ?? "")}`,
        (r) => [CONTACTS[0], CONTACTS[1]].includes(r.to),
      );
    });
    it("filter[to_number] as indexed filter[to_number][0]=", async () => {
      await expectListed(
        `filter[to_number][0]=${q(CONTACTS[0] ?? "")}&filter[to_number][1]=${q(CONTACTS[2] ?? "")}`,
        (r) => [CONTACTS[0], CONTACTS[2]].includes(r.to),
      );
    });
    it("filter[to_number] comma-separated", async () => {
      await expectListed(`filter[to_number]=${q(`${CONTACTS[1]},${CONTACTS[2]}`)}`, (r) =>
        [CONTACTS[1], CONTACTS[2]].includes(r.to),
      );
      await expectListed(`filter[to_number]=${q(`${CONTACTS[1]}, ${CONTACTS[2]}`)}`, (r) =>
        [CONTACTS[1], CONTACTS[2]].includes(r.to),
      );
    });
    it("filter[to_number] repeated without brackets, and its forms mixed", async () => {
      await expectListed(
        `filter[to_number]=${q(CONTACTS[0] ?? "")}&filter[to_number]=${q(CONTACTS[1] ?? "")}`,
        (r) => [CONTACTS[0], CONTACTS[1]].includes(r.to),
      );
      await expectListed(
        `filter[to_number]=${q(CONTACTS[0] ?? "")}&filter[to_number][]=${q(CONTACTS[1] ?? "")}&filter[to_number][5]=${q(`${CONTACTS[2]},${CONTACTS[0]}`)}`,
        (r) => [CONTACTS[0], CONTACTS[1], CONTACTS[2]].includes(r.to),
      );
    });
    it("filter[to_number] normalises each number (and an unencoded + that arrives as a space)", async () => {
      await expectListed(`filter[to_number]=${q("1 (415) 555-2604")}`, (r) => r.to === CONTACTS[3]);
      await expectListed(`filter[to_number]=${CONTACTS[3]}`, (r) => r.to === CONTACTS[3]);
    });
    it("filter[from_number]", async () => {
      await expectListed(`filter[from_number]=${q(CONTACTS[2] ?? "")}`, (r) => r.from === CONTACTS[2]);
      await expectListed(`filter[from_number]=${q(s2.phone)}`, (r) => r.from === s2.phone);
    });
    it("filter[status], each status", async () => {
      for (const status of STATUSES)
        await expectListed(`filter[status]=${status}`, (r) => r.status === status);
    });
    it("filter[direction]", async () => {
      await expectListed("filter[direction]=incoming", (r) => r.direction === "incoming");
      await expectListed("filter[direction]=outgoing", (r) => r.direction === "outgoing");
    });
    it("filter[type], each type", async () => {
      for (const type of TYPES) await expectListed(`filter[type]=${type}`, (r) => r.type === type);
    });
    it("session_id as the uuid, in any case, or as session_<uuid>", async () => {
      await expectListed(`session_id=${s2.id}`, (r) => r.session === s2.id);
      await expectListed(`session_id=${s2.id.toUpperCase()}`, (r) => r.session === s2.id);
      expect(s1.sessionId).toBe(`session_${s1.id}`);
      await expectListed(`session_id=${s1.sessionId}`, (r) => r.session === s1.id);
    });
    it("time_from and time_to bound created_at, both inclusive", async () => {
      const iso = (minute: number) => new Date(BASE + minute * 60_000).toISOString();
      await expectListed(
        `time_from=${iso(20)}&time_to=${iso(40)}`,
        (r) => r.createdAt >= BASE + 20 * 60_000 && r.createdAt <= BASE + 40 * 60_000,
      );
      await expectListed(`time_from=${iso(50)}`, (r) => r.createdAt >= BASE + 50 * 60_000);
      await expectListed(`time_to=${iso(9)}`, (r) => r.createdAt <= BASE + 9 * 60_000);
      // A date-time without an offset is UTC.
      await expectListed(`time_to=${iso(9).slice(0, -1)}`, (r) => r.createdAt <= BASE + 9 * 60_000);
      // The API's own timestamp format (microseconds) works as a bound.
      const shown = await call<Page>("GET", `/v1/chatapp/messages?time_to=${iso(30)}&limit=1`, { key });
      const stamp = shown.body.data[0]?.created_at ?? "";
      expect(stamp).toMatch(TIMESTAMP);
      await expectListed(`time_to=${stamp}`, (r) => r.createdAt <= BASE + 30 * 60_000);
      // A date alone is midnight UTC; an offset is honoured.
      const dateOnly = await call<Page>("GET", "/v1/chatapp/messages?time_to=2026-06-01", { key });
      expect(dateOnly.body.data).toEqual([]);
      await expectListed(
        `time_from=${q("2026-06-01T10:30:00+02:00")}`,
        (r) => r.createdAt >= BASE + 30 * 60_000,
      );
      const empty = await call<Page>("GET", `/v1/chatapp/messages?time_from=${iso(40)}&time_to=${iso(20)}`, {
        key,
      });
      expect(empty.status).toBe(200);
      expect(empty.body.data).toEqual([]);
    });
    it("combines filters", async () => {
      await expectListed(
        `filter[direction]=outgoing&filter[status]=sent&session_id=${s1.id}`,
        (r) => r.status === "sent" && r.session === s1.id,
      );
      await expectListed(
        `filter[type]=image&filter[to_number][]=${q(s1.phone)}`,
        (r) => r.type === "image" && r.to === s1.phone,
      );
    });
    it("never lists another account's messages", async () => {
      const all = await walk("/v1/chatapp/messages?limit=100", 100);
      expect(all.ids).toEqual(expected(() => true));
      const theirs = await call<Page>("GET", `/v1/chatapp/messages?session_id=${otherSession}`, { key });
      expect(theirs.body.data).toEqual([]);
      const theirsByPath = await call<Page>("GET", `/v1/chatapp/messages/${otherSession}/session`, { key });
      expect(theirsByPath.body.data).toEqual([]);
    });
  });

  describe("GET /v1/chatapp/messages/{session_id}/session", () => {
    it("lists one session's messages, by uuid or session_<uuid>", async () => {
      const byUuid = await expectListed(
        "x=1",
        (r) => r.session === s2.id,
        `/v1/chatapp/messages/${s2.id}/session`,
      );
      expect(byUuid[0]?.meta.path).toBe(`${ORIGIN}/v1/chatapp/messages/${s2.id}/session`);
      await expectListed("x=1", (r) => r.session === s2.id, `/v1/chatapp/messages/${s2.sessionId}/session`);
    });
    it("accepts the same filters", async () => {
      await expectListed(
        "filter[direction]=incoming",
        (r) => r.session === s1.id && r.direction === "incoming",
        `/v1/chatapp/messages/${s1.id}/session`,
      );
      await expectListed(
        `filter[to_number]=${q(`${CONTACTS[0]},${CONTACTS[4]}`)}&filter[type]=text`,
        (r) => r.session === s1.id && [CONTACTS[0], CONTACTS[4]].includes(r.to) && r.type === "text",
        `/v1/chatapp/messages/${s1.sessionId}/session`,
      );
    });
    it("the path's session wins over a session_id parameter", async () => {
      await expectListed(
        `session_id=${s2.id}`,
        (r) => r.session === s1.id,
        `/v1/chatapp/messages/${s1.id}/session`,
      );
    });
    it("refuses a path that is no session id", async () => {
      const problem = expectProblem(
        await call("GET", "/v1/chatapp/messages/nonsense/session", { key }),
        422,
        "validation_failed",
      );
      expect(problem.errors).toEqual({ session_id: ["a session uuid or session_<uuid>"] });
    });
  });

  describe("limit", () => {
    it("defaults to 10", async () => {
      const res = await call<Page>("GET", "/v1/chatapp/messages", { key });
      expect(res.body.data.map((m) => m.id)).toEqual(expected(() => true).slice(0, 10));
      expect(res.body.meta.per_page).toBe(10);
    });
    it("is at most 100", async () => {
      const res = await call<Page>("GET", "/v1/chatapp/messages?limit=100", { key });
      expect(res.body.data).toHaveLength(60);
      expect(res.body.meta.per_page).toBe(100);
      expect(res.body.links.next).toBeNull();
      const one = await call<Page>("GET", "/v1/chatapp/messages?limit=1", { key });
      expect(one.body.data.map((m) => m.id)).toEqual(expected(() => true).slice(0, 1));
    });
    it.each(["101", "0", "-1", "1.5", "abc", "", "1e2"])("refuses limit=%s", async (limit) => {
      const problem = expectProblem(
        await call("GET", `/v1/chatapp/messages?limit=${limit}`, { key }),
        422,
        "validation_failed",
      );
      expect(Object.keys(problem.errors as object)).toEqual(["limit"]);
    });
  });

  describe("a bad filter value is 422, never 500", () => {
    const cursorOf = (value: unknown) => btoa(JSON.stringify(value)).replaceAll("=", "");
    it.each([
      ["an unknown filter", "filter[colour]=red", "filter[colour]"],
      ["an empty filter name", "filter[]=x", "filter[]"],
      ["a bad status", "filter[status]=lost", "filter[status]"],
      ["a bad direction", "filter[direction]=sideways", "filter[direction]"],
      ["a bad type", "filter[type]=gif", "filter[type]"],
      ["a bad to_number", `filter[to_number]=${q("+1415555")}`, "filter[to_number]"],
      [
        "a bad number in a list",
        `filter[to_number][]=${q(CONTACTS[0] ?? "")}&filter[to_number][]=abc`,
        "filter[to_number]",
      ],
      ["an empty to_number", "filter[to_number]=", "filter[to_number]"],
      [
        "a to_number key of another shape",
        `filter[to_number][x]=${q(CONTACTS[0] ?? "")}`,
        "filter[to_number][x]",
      ],
      ["a bad from_number", "filter[from_number]=12", "filter[from_number]"],
      ["a status given twice", "filter[status]=sent&filter[status]=read", "filter[status]"],
      ["a status as an array", "filter[status][]=sent", "filter[status][]"],
      ["a bad session_id", "session_id=session_123", "session_id"],
      ["a bad time_from", "time_from=yesterday", "time_from"],
      ["an impossible time_to", "time_to=2026-13-45T10:00:00Z", "time_to"],
      ["a day the month lacks", "time_to=2026-02-30", "time_to"],
      ["an hour out of range", "time_from=2026-01-01T25:00:00Z", "time_from"],
      ["a cursor that is not base64", "cursor=!!!", "cursor"],
      ["a cursor of garbage", `cursor=${btoa("garbage")}`, "cursor"],
      ["a cursor of the wrong shape", `cursor=${cursorOf({ t: "x", i: "y", d: "n" })}`, "cursor"],
      [
        "a cursor with a bad direction",
        `cursor=${cursorOf({ t: 1, i: crypto.randomUUID(), d: "x" })}`,
        "cursor",
      ],
      ["a cursor of JSON null", `cursor=${cursorOf(null)}`, "cursor"],
      ["a very long cursor", `cursor=${"A".repeat(500)}`, "cursor"],
      ["a limit given twice", "limit=5&limit=6", "limit"],
    ])("%s", async (_name, search, field) => {
      const res = await call("GET", `/v1/chatapp/messages?${search}`, { key });
      const problem = expectProblem(res, 422, "validation_failed");
      expect(Object.keys(problem.errors as object)).toEqual([field]);
    });
    it("says what is wrong with each parameter", async () => {
      const cases: [string, Record<string, string[]>][] = [
        ["limit=5&limit=6", { limit: ["give this parameter once"] }],
        ["limit=1e2", { limit: ["an integer from 1 to 100"] }],
        [
          "filter[status]=lost",
          { "filter[status]": ["one of queued, sent, delivered, read, failed, scheduled"] },
        ],
        [
          "filter[direction]=up&filter[direction]=down",
          { "filter[direction]": ["give this parameter once"] },
        ],
        ["filter[colour]=red", { "filter[colour]": ["unknown parameter"] }],
        [
          "filter[to_number]=123,abc",
          { "filter[to_number]": ["invalid phone number: 123", "invalid phone number: abc"] },
        ],
        ["time_to=2026-02-30", { time_to: ["an ISO 8601 date-time, e.g. 2026-06-01T10:30:00Z"] }],
        ["cursor=abc", { cursor: ["not a cursor from this API"] }],
        ["session_id=session_1", { session_id: ["a session uuid or session_<uuid>"] }],
      ];
      for (const [search, errors] of cases) {
        const res = await call("GET", `/v1/chatapp/messages?${search}`, { key });
        const problem = expectProblem(res, 422, "validation_failed");
        expect(problem.errors, search).toEqual(errors);
        expect(problem.detail).toBe("The query has invalid parameters.");
      }
    });
    it("refuses more than 100 numbers in filter[to_number], however they are given", async () => {
      const numbers = Array.from({ length: 101 }, (_, i) => `+1415555${String(3000 + i)}`);
      for (const search of [
        `filter[to_number]=${q(numbers.join(","))}`,
        numbers.map((n) => `filter[to_number][]=${q(n)}`).join("&"),
        `${numbers
          .slice(0, 60)
          .map((n, i) => `filter[to_number][${i}]=${q(n)}`)
          .join("&")}&filter[to_number]=${q(numbers.slice(60).join(","))}`,
      ]) {
        const problem = expectProblem(
          await call("GET", `/v1/chatapp/messages?${search}`, { key }),
          422,
          "validation_failed",
        );
        expect(problem.errors).toEqual({ "filter[to_number]": ["at most 100 numbers"] });
      }
      const hundred = await call<Page>(
        "GET",
        `/v1/chatapp/messages?filter[to_number]=${q(numbers.slice(0, 100).join(","))}`,
        { key },
      );
      expect(hundred.status).toBe(200);
      expect(hundred.body.data).toEqual([]);
    });
    it("names every bad parameter at once", async () => {
      const res = await call(
        "GET",
        "/v1/chatapp/messages?filter[from_number]=1&time_from=x&limit=0&filter[nope]=1",
        { key },
      );
      const problem = expectProblem(res, 422, "validation_failed");
      expect(Object.keys(problem.errors as object).sort()).toEqual([
        "filter[from_number]",
        "filter[nope]",
        "limit",
        "time_from",
      ]);
    });
    it("ignores query parameters that are not filters", async () => {
      const res = await call<Page>("GET", "/v1/chatapp/messages?page=2&sort=asc", { key });
      expect(res.status).toBe(200);
      expect(res.body.data.map((m) => m.id)).toEqual(expected(() => true).slice(0, 10));
    });
  });

  describe("cursor paging", () => {
    it("has Laravel's cursor-paginator shape; walks forward through every page and back with prev", async () => {
      const all = expected(() => true);
      const forward = await walk("/v1/chatapp/messages?limit=7", 7);
      expect(forward.ids).toEqual(all);
      expect(forward.pages).toHaveLength(Math.ceil(60 / 7));
      const path = `${ORIGIN}/v1/chatapp/messages`;
      forward.pages.forEach((page, index) => {
        expect(Object.keys(page).sort()).toEqual(["data", "links", "meta", "success"]);
        expect(Object.keys(page.links).sort()).toEqual(["first", "last", "next", "prev"]);
        expect(Object.keys(page.meta).sort()).toEqual(["next_cursor", "path", "per_page", "prev_cursor"]);
        expect(page.success).toBe(true);
        expect(page.links.first).toBeNull();
        expect(page.links.last).toBeNull();
        expect(page.meta.path).toBe(path);
        expect(page.meta.per_page).toBe(7);
        expect(page.data.map((m) => m.id)).toEqual(all.slice(index * 7, index * 7 + 7));
        const isFirst = index === 0;
        const isLast = index === forward.pages.length - 1;
        expect(page.meta.prev_cursor === null).toBe(isFirst);
        expect(page.meta.next_cursor === null).toBe(isLast);
        expect(page.links.prev).toBe(
          page.meta.prev_cursor && `${path}?limit=7&cursor=${page.meta.prev_cursor}`,
        );
        expect(page.links.next).toBe(
          page.meta.next_cursor && `${path}?limit=7&cursor=${page.meta.next_cursor}`,
        );
      });

      // Back from the last page with prev: the same pages in reverse, until prev is null.
      const last = forward.pages.at(-1);
      let prev = last?.links.prev ?? null;
      let index = forward.pages.length - 2;
      while (prev) {
        const res: { body: Page } = await call<Page>("GET", prev.replace(ORIGIN, ""), { key });
        const page = res.body;
        const same = forward.pages[index];
        expect(page.data.map((m) => m.id)).toEqual(same?.data.map((m) => m.id));
        expect(page.links.next).not.toBeNull();
        prev = page.links.prev;
        if (prev === null) expect(index).toBe(0);
        index--;
        expect(index).toBeGreaterThan(-2);
      }
      expect(index).toBe(-1);
    });

    it("pages through ties in created_at without losing or repeating a message", async () => {
      // Rows 20–24 share one time: pages of 2 cut through the tie.
      const { ids } = await walk(
        `/v1/chatapp/messages?limit=2&time_from=${new Date(BASE + 19 * 60_000).toISOString()}&time_to=${new Date(BASE + 25 * 60_000).toISOString()}`,
        2,
      );
      expect(ids).toEqual(
        expected((r) => r.createdAt >= BASE + 19 * 60_000 && r.createdAt <= BASE + 25 * 60_000),
      );
      expect(ids).toHaveLength(7);
    });

    it("a cursor from outside the time range still keeps to the range", async () => {
      const iso = (minute: number) => new Date(BASE + minute * 60_000).toISOString();
      // A next cursor near the newest rows, used with a range that ends well before it.
      const top = await call<Page>("GET", "/v1/chatapp/messages?limit=3", { key });
      const next = top.body.meta.next_cursor ?? "";
      const older = await call<Page>(
        "GET",
        `/v1/chatapp/messages?limit=3&time_to=${iso(30)}&cursor=${next}`,
        { key },
      );
      expect(older.body.data.map((m) => m.id)).toEqual(
        expected((r) => r.createdAt <= BASE + 30 * 60_000).slice(0, 3),
      );
      // A prev cursor near the oldest rows, used with a range that starts well after it.
      const bottom = await walk("/v1/chatapp/messages?limit=50", 50);
      const prev = bottom.pages.at(-1)?.meta.prev_cursor ?? "";
      const newer = await call<Page>(
        "GET",
        `/v1/chatapp/messages?limit=3&time_from=${iso(45)}&cursor=${prev}`,
        { key },
      );
      expect(newer.body.data.map((m) => m.id)).toEqual(
        expected((r) => r.createdAt >= BASE + 45 * 60_000).slice(-3),
      );
    });

    it("a page reached with prev from the second page is the first page", async () => {
      const first = await call<Page>("GET", "/v1/chatapp/messages?limit=5&filter[direction]=outgoing", {
        key,
      });
      const second = await call<Page>("GET", (first.body.links.next ?? "").replace(ORIGIN, ""), { key });
      expect(second.body.links.prev).toContain("filter%5Bdirection%5D=outgoing");
      const back = await call<Page>("GET", (second.body.links.prev ?? "").replace(ORIGIN, ""), { key });
      expect(back.body.data).toEqual(first.body.data);
      expect(back.body.links.prev).toBeNull();
      expect(back.body.meta.prev_cursor).toBeNull();
      expect(back.body.links.next).not.toBeNull();
    });

    it("an empty list has no links", async () => {
      const res = await call<Page>("GET", "/v1/chatapp/messages?filter[to_number]=%2B14155559999", { key });
      expect(res.body).toEqual({
        success: true,
        data: [],
        links: { first: null, last: null, prev: null, next: null },
        meta: { path: `${ORIGIN}/v1/chatapp/messages`, per_page: 10, next_cursor: null, prev_cursor: null },
      });
    });
  });
});

describe("the list's query in the OpenAPI document", () => {
  interface Parameter {
    name: string;
    in: string;
    required: boolean;
    schema: Record<string, unknown>;
  }
  type Doc = { paths: Record<string, Record<string, { parameters: Parameter[] }>> };

  it("types every parameter as the validator parses it", async () => {
    const doc = await call<Doc>("GET", "/openapi.json");
    const query = (path: string) =>
      Object.fromEntries(
        (doc.body.paths[path]?.get?.parameters ?? [])
          .filter((p) => p.in === "query")
          .map((p) => {
            const { description: _, ...schema } = p.schema;
            return [p.name, { required: p.required, ...schema }];
          }),
      );
    const dateTime = {
      required: false,
      anyOf: [
        { type: "string", format: "date-time", maxLength: 64 },
        { type: "string", format: "date", maxLength: 10 },
      ],
    };
    const expected = {
      "filter[to_number]": {
        required: false,
        type: "array",
        maxItems: 100,
        items: { type: "string", maxLength: 2000 },
      },
      "filter[from_number]": { required: false, type: "string", maxLength: 32 },
      "filter[user_id]": {
        required: false,
        type: "string",
        maxLength: 160,
        example: "US.13491208655302741918",
      },
      "filter[status]": { required: false, type: "string", enum: [...STATUSES] },
      "filter[direction]": { required: false, type: "string", enum: ["incoming", "outgoing"] },
      "filter[type]": {
        required: false,
        type: "string",
        enum: [
          ...TYPES,
          "template",
          "location",
          "interactive",
          "contacts",
          "sticker",
          "poll",
          "reaction",
          "interactive_reply",
        ],
      },
      session_id: {
        required: false,
        type: "string",
        maxLength: 44,
        pattern: "^(?:session_)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
      },
      time_from: dateTime,
      time_to: dateTime,
      limit: { required: false, type: "integer", format: "int32", minimum: 1, maximum: 100, default: 10 },
      cursor: { required: false, type: "string", maxLength: 200 },
    };
    expect(query("/v1/chatapp/messages")).toEqual(expected);
    const { session_id: _, ...bySession } = expected;
    expect(query("/v1/chatapp/messages/{session_id}/session")).toEqual(bySession);
  });
});
