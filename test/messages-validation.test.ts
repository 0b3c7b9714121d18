import { beforeAll, describe, expect, it } from "vitest";
import { MAX_SCHEDULE_AHEAD_MS } from "../src/routes/messages/messages.schemas";
import { type ApiResponse, call, createAccount, expectProblem } from "./helpers";
import { balanceOf, connectedSession, ledgerOf, storedMessageCount } from "./message-fixtures";

// POST /v1/chatapp/messages: every rule of the send body (docs/messages.md, Sending messages) answers 422
// `validation_failed` with `errors` keyed by field path and creates nothing; the session's owner
// and state; atomic charging; and the exact 201 shape (this operation in openapi.json).

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const NUMBER = "+14155552671";
const IMAGE = "https://cdn.example.test/pictures/cat.png";

interface Sent {
  id: string;
  chatapp_session_id: string;
  to_number: string;
  status: string;
  [field: string]: unknown;
}
interface SendResponse {
  success: boolean;
  message: string;
  data: {
    messages: Sent[];
    count: number;
    total_cost: number;
    new_balance: number;
    remaining_messages: number;
  };
}

function send(key: string, body: unknown, headers?: Record<string, string>) {
  return call<SendResponse>("POST", "/v1/chatapp/messages", { key, body, headers });
}

/** Asserts a 422 whose `errors` name exactly the given field paths. */
function expectInvalid(res: ApiResponse<unknown>, ...fields: string[]) {
  const problem = expectProblem(res, 422, "validation_failed");
  const errors = problem.errors as Record<string, string[]>;
  expect(Object.keys(errors).sort()).toEqual([...fields].sort());
  for (const field of fields) {
    expect(errors[field]?.length).toBeGreaterThan(0);
    for (const message of errors[field] ?? []) expect(typeof message).toBe("string");
  }
  return errors;
}

describe("body validation", () => {
  let key = "";
  let accountId = "";
  let session = "";
  const valid = () => ({ chatapp_session_id: session, to_number: [NUMBER], type: "text", content: "hello" });

  beforeAll(async () => {
    ({ key, accountId } = await createAccount(5));
    session = (await connectedSession(key)).id;
  });

  describe("to_number", () => {
    it("is required", async () => {
      const { to_number: _, ...body } = valid();
      expectInvalid(await send(key, body), "to_number");
    });
    it("must not be empty", async () => {
      expectInvalid(await send(key, { ...valid(), to_number: [] }), "to_number");
    });
    it("holds at most 1,000 numbers", async () => {
      const numbers = Array.from({ length: 1001 }, (_, i) => `+1415555${String(1000 + i).padStart(4, "0")}`);
      expectInvalid(await send(key, { ...valid(), to_number: numbers }), "to_number");
    });
    it("must be an array", async () => {
      expectInvalid(await send(key, { ...valid(), to_number: NUMBER }), "to_number");
    });
    it("names an invalid number by its index", async () => {
      const errors = expectInvalid(
        await send(key, { ...valid(), to_number: [NUMBER, "+14155552672", "12345"] }),
        "to_number.2",
      );
      expect(errors["to_number.2"]?.join(" ")).toMatch(/phone number/);
    });
    it("names every invalid number (letters, empty, too long)", async () => {
      expectInvalid(
        await send(key, { ...valid(), to_number: ["not a number", NUMBER, "", "+1".padEnd(40, "5")] }),
        "to_number.0",
        "to_number.2",
        "to_number.3",
      );
    });
    it("refuses a number that is not a string", async () => {
      expectInvalid(await send(key, { ...valid(), to_number: [NUMBER, 14155552672] }), "to_number.1");
      expectInvalid(await send(key, { ...valid(), to_number: [null] }), "to_number.0");
    });
  });

  it("type must be one the API sends", async () => {
    expectInvalid(await send(key, { ...valid(), type: "gif" }), "type");
    expectInvalid(await send(key, { ...valid(), type: "TEXT" }), "type");
    const { type: _, ...body } = valid();
    expectInvalid(await send(key, body), "type");
  });

  describe("content", () => {
    it("is required for text", async () => {
      const { content: _, ...body } = valid();
      expectInvalid(await send(key, body), "content");
      expectInvalid(await send(key, { ...valid(), content: null }), "content");
      expectInvalid(await send(key, { ...valid(), content: "" }), "content");
    });
    it("is at most 4,096 characters for text", async () => {
      expectInvalid(await send(key, { ...valid(), content: "x".repeat(4097) }), "content");
    });
    it("must be a string", async () => {
      expectInvalid(await send(key, { ...valid(), content: 42 }), "content");
    });
    it("text carries no media_url", async () => {
      expectInvalid(await send(key, { ...valid(), media_url: IMAGE }), "media_url");
    });
    it("a caption is at most 1,024 characters for image, video and document", async () => {
      for (const type of ["image", "video", "document"]) {
        expectInvalid(
          await send(key, { ...valid(), type, media_url: IMAGE, content: "c".repeat(1025) }),
          "content",
        );
      }
    });
    it("audio carries no caption", async () => {
      expectInvalid(
        await send(key, {
          ...valid(),
          type: "audio",
          media_url: "https://cdn.example.test/a.ogg",
          content: "hi",
        }),
        "content",
      );
    });
  });

  it("media_url is required for image, video, audio and document", async () => {
    for (const type of ["image", "video", "audio", "document"]) {
      const { content: _, ...body } = valid();
      expectInvalid(await send(key, { ...body, type }), "media_url");
      expectInvalid(await send(key, { ...body, type, media_url: null }), "media_url");
    }
  });

  describe("media_url is a public https URL (SSRF)", () => {
    const refused: [string, string][] = [
      ["not a URL", "not a url"],
      ["a relative URL", "/pictures/cat.png"],
      ["http", "http://cdn.example.test/cat.png"],
      ["ftp", "ftp://cdn.example.test/cat.png"],
      ["credentials", "https://user:secret@cdn.example.test/cat.png"],
      ["a user name only", "https://user@cdn.example.test/cat.png"],
      ["more than 2,048 characters", `https://cdn.example.test/${"a".repeat(2048)}`],
      ["localhost", "https://localhost/cat.png"],
      ["localhost with a trailing dot", "https://localhost./cat.png"],
      ["a .localhost name", "https://api.localhost/cat.png"],
      ["127.0.0.1", "https://127.0.0.1/cat.png"],
      ["127.1 (short IPv4)", "https://127.1/cat.png"],
      ["2130706433 (decimal IPv4)", "https://2130706433/cat.png"],
      ["0x7f000001 (hex IPv4)", "https://0x7f000001/cat.png"],
      ["0.0.0.0", "https://0.0.0.0/cat.png"],
      ["[::1]", "https://[::1]/cat.png"],
      ["[::ffff:127.0.0.1] (IPv4-mapped loopback)", "https://[::ffff:127.0.0.1]/cat.png"],
      ["10.x", "https://10.1.2.3/cat.png"],
      ["172.16.x", "https://172.16.0.1/cat.png"],
      ["192.168.x", "https://192.168.1.20/cat.png"],
      ["100.64.x (carrier-grade NAT)", "https://100.64.0.1/cat.png"],
      ["169.254.169.254 (metadata)", "https://169.254.169.254/latest/meta-data/"],
      ["[fd00::1] (unique local)", "https://[fd00::1]/cat.png"],
      ["[fe80::1] (link local)", "https://[fe80::1]/cat.png"],
      ["metadata.google.internal", "https://metadata.google.internal/computeMetadata/v1/"],
      ["a bare single-label host", "https://intranet/cat.png"],
      ["localhost in enclosed alphanumerics (IDNA)", "https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/cat.png"],
      ["localhost percent-encoded", "https://%6c%6f%63%61%6c%68%6f%73%74/cat.png"],
      ["loopback with a trailing dot and port", "https://127.0.0.1.:8443/cat.png"],
      ["[::] (unspecified)", "https://[::]/cat.png"],
      ["NAT64 of loopback", "https://[64:ff9b::7f00:1]/cat.png"],
      ["a .internal name", "https://db.corp.internal/cat.png"],
    ];
    it.each(refused)("refuses %s", async (_name, url) => {
      const { content: _, ...body } = valid();
      expectInvalid(await send(key, { ...body, type: "image", media_url: url }), "media_url");
    });
  });

  describe("delay_between", () => {
    it.each([
      ["-1", -1],
      ["60001", 60_001],
      ["1.5", 1.5],
      ['"500" (a string)', "500"],
      ["null", null],
    ])("refuses %s", async (_name, value) => {
      expectInvalid(await send(key, { ...valid(), delay_between: value }), "delay_between");
    });
  });

  describe("scheduled_at", () => {
    it.each([
      ["in the past", () => new Date(Date.now() - 60_000).toISOString()],
      ["now", () => new Date(Date.now() - 1).toISOString()],
      ["more than 30 days ahead", () => new Date(Date.now() + MAX_SCHEDULE_AHEAD_MS + 60_000).toISOString()],
      ["not ISO 8601", () => "tomorrow at noon"],
      ["a date without a time", () => "2099-01-01"],
      ["an impossible date", () => "2026-13-45T10:00:00Z"],
      ["a number", () => Date.now() + 60_000],
    ])("refuses a time %s", async (_name, value) => {
      expectInvalid(await send(key, { ...valid(), scheduled_at: value() }), "scheduled_at");
    });
  });

  it("refuses an unknown field, named by its path", async () => {
    const errors = expectInvalid(await send(key, { ...valid(), priority: "high" }), "priority");
    expect(errors.priority).toEqual(["unknown field"]);
  });

  it("refuses a session id that is not a uuid", async () => {
    expectInvalid(await send(key, { ...valid(), chatapp_session_id: "session_abc" }), "chatapp_session_id");
    const { chatapp_session_id: _, ...body } = valid();
    expectInvalid(await send(key, body), "chatapp_session_id");
  });

  it("reports every invalid field at once", async () => {
    expectInvalid(
      await send(key, {
        chatapp_session_id: session,
        to_number: ["+1", NUMBER],
        type: "image",
        content: "x".repeat(1025),
        delay_between: 1,
      }),
      "to_number.0",
      "content",
      "media_url",
    );
  });

  it("refuses a body that is not an object", async () => {
    expect((await send(key, [valid()])).status).toBe(422);
    expect((await send(key, "null")).status).toBe(422);
  });

  it("created nothing and charged nothing for any refused body", async () => {
    expect(await storedMessageCount(accountId)).toBe(0);
    expect(await balanceOf(accountId)).toBe(5);
  });

  it("accepts the edges of each range", async () => {
    const longText = await send(key, { ...valid(), content: "x".repeat(4096), delay_between: 0 });
    expect(longText.status).toBe(201);
    expect(longText.body.data.messages[0]?.content).toHaveLength(4096);
    const caption = await send(key, {
      ...valid(),
      type: "document",
      media_url: "https://cdn.example.test/a.pdf",
      content: "c".repeat(1024),
      delay_between: 60_000,
    });
    expect(caption.status).toBe(201);
    // Characters, not UTF-16 code units: 4,096 emoji are 4,096 characters (8,192 code units).
    const emoji = await send(key, { ...valid(), content: "😀".repeat(4096) });
    expect(emoji.status).toBe(201);
    expectInvalid(await send(key, { ...valid(), content: "😀".repeat(4097) }), "content");
    const emojiCaption = await send(key, {
      ...valid(),
      type: "image",
      media_url: IMAGE,
      content: "é😀".repeat(512),
    });
    expect(emojiCaption.status).toBe(201);
    expectInvalid(
      await send(key, { ...valid(), type: "image", media_url: IMAGE, content: "😀".repeat(1025) }),
      "content",
    );
    const audio = await send(key, {
      chatapp_session_id: session,
      to_number: [NUMBER],
      type: "audio",
      media_url: "https://cdn.example.test/a.ogg",
    });
    expect(audio.status).toBe(201);
    expect(audio.body.data.messages[0]).toMatchObject({
      type: "audio",
      content: null,
      media_url: "https://cdn.example.test/a.ogg",
    });
    const ahead = await send(key, {
      ...valid(),
      scheduled_at: new Date(Date.now() + MAX_SCHEDULE_AHEAD_MS - 60_000).toISOString(),
    });
    expect(ahead.status).toBe(201);
    expect(ahead.body.data.messages[0]?.status).toBe("scheduled");
  });

  it("sends duplicates (after normalisation to E.164) once", async () => {
    const before = await storedMessageCount(accountId);
    const res = await send(key, {
      ...valid(),
      to_number: [NUMBER, "1 (415) 555-2671", "14155552671", "+1 415-555-2671"],
    });
    expect(res.status).toBe(201);
    expect(res.body.data.count).toBe(1);
    expect(res.body.data.messages.map((m) => m.to_number)).toEqual([NUMBER]);
    expect(res.body.data.total_cost).toBe(0.01);
    expect(await storedMessageCount(accountId)).toBe(before + 1);
  });

  it("normalises every number to E.164 and keeps the order given", async () => {
    const res = await send(key, {
      ...valid(),
      to_number: ["1 415 555 2673", "+1 (415) 555-2674", "+14155552673"],
    });
    expect(res.status).toBe(201);
    expect(res.body.data.messages.map((m) => m.to_number)).toEqual(["+14155552673", "+14155552674"]);
  });
});

describe("the session", () => {
  let key = "";
  let accountId = "";
  const body = (session: string) => ({
    chatapp_session_id: session,
    to_number: [NUMBER],
    type: "text",
    content: "hi",
  });

  beforeAll(async () => {
    ({ key, accountId } = await createAccount(5));
  });

  it("of another account is 404 not_found", async () => {
    const other = await createAccount(5);
    const theirs = (await connectedSession(other.key)).id;
    expectProblem(await send(key, body(theirs)), 404, "not_found");
    expect(await storedMessageCount(other.accountId)).toBe(0);
    expect(await balanceOf(other.accountId)).toBe(5);
  });

  it("unknown is 404 not_found", async () => {
    expectProblem(await send(key, body(crypto.randomUUID())), 404, "not_found");
  });

  it("pending is 409 session_not_connected", async () => {
    const created = await call<{ session: { id: string; status: string } }>("POST", "/v1/chatapp/sessions", {
      key,
    });
    expect(created.body.session.status).toBe("pending");
    const problem = expectProblem(
      await send(key, body(created.body.session.id)),
      409,
      "session_not_connected",
    );
    expect(problem.detail).toMatch(/pending/);
  });

  it("disconnected is 409 session_not_connected", async () => {
    const { id } = await connectedSession(key);
    const disconnected = await call<{ session: { status: string } }>(
      "PATCH",
      `/v1/chatapp/sessions/${id}/disconnect`,
      { key },
    );
    expect(disconnected.body.session.status).toBe("disconnected");
    const problem = expectProblem(await send(key, body(id)), 409, "session_not_connected");
    expect(problem.detail).toMatch(/disconnected/);
  });

  it("refused sends created and charged nothing", async () => {
    expect(await storedMessageCount(accountId)).toBe(0);
    expect(await balanceOf(accountId)).toBe(5);
  });
});

describe("balance", () => {
  it("short of the whole send is 402 insufficient_balance and nothing is created", async () => {
    const { key, accountId } = await createAccount(0.05);
    const session = (await connectedSession(key)).id;
    const numbers = ["+14155552671", "+14155552672", "+14155552673"];
    // 3 images at 0.02 = 0.06 > 0.05: refused as a whole, not sent to the first two.
    const res = await send(key, {
      chatapp_session_id: session,
      to_number: numbers,
      type: "image",
      media_url: IMAGE,
    });
    const problem = expectProblem(res, 402, "insufficient_balance");
    expect(problem.errors).toBeUndefined();
    expect(await balanceOf(accountId)).toBe(0.05);
    expect(await storedMessageCount(accountId)).toBe(0);
    const list = await call<{ data: unknown[] }>("GET", "/v1/chatapp/messages", { key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    expect(await ledgerOf(accountId)).toEqual([
      { kind: "credit", amount: 5, balance_after: 5, message_count: 0 },
    ]);

    // Exactly the balance is enough, and leaves it at zero.
    const exact = await send(key, {
      chatapp_session_id: session,
      to_number: numbers,
      type: "text",
      content: "x",
    });
    expect(exact.status).toBe(201);
    const fits = await send(key, {
      chatapp_session_id: session,
      to_number: numbers.slice(0, 1),
      type: "image",
      media_url: IMAGE,
    });
    expect(fits.status).toBe(201);
    expect(fits.body.data).toMatchObject({
      count: 1,
      total_cost: 0.02,
      new_balance: 0,
      remaining_messages: 0,
    });
    expect(await balanceOf(accountId)).toBe(0);
    expectProblem(
      await send(key, { chatapp_session_id: session, to_number: [NUMBER], type: "text", content: "x" }),
      402,
      "insufficient_balance",
    );
    expect(await storedMessageCount(accountId)).toBe(4);
    expect(await ledgerOf(accountId)).toEqual([
      { kind: "credit", amount: 5, balance_after: 5, message_count: 0 },
      { kind: "charge", amount: -3, balance_after: 2, message_count: 3 },
      { kind: "charge", amount: -2, balance_after: 0, message_count: 1 },
    ]);
  });
});

describe("the 201 response (POST /v1/chatapp/messages in openapi.json)", () => {
  let key = "";
  let accountId = "";
  let session = "";

  beforeAll(async () => {
    ({ key, accountId } = await createAccount(1));
    session = (await connectedSession(key)).id;
  });

  it("has exactly the documented fields, values computed from the prices", async () => {
    const before = Date.now();
    const res = await send(key, {
      chatapp_session_id: session,
      to_number: [NUMBER, "+14155552672"],
      type: "text",
      content: "hello",
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(["data", "message", "success"]);
    expect(res.body.success).toBe(true);
    expect(res.body.message).toMatch(/queued/i);
    expect(Object.keys(res.body.data).sort()).toEqual([
      "count",
      "messages",
      "new_balance",
      "remaining_messages",
      "total_cost",
    ]);
    // PRICE_TEXT 0.01: two texts from 1.00.
    expect(res.body.data).toMatchObject({
      count: 2,
      total_cost: 0.02,
      new_balance: 0.98,
      remaining_messages: 98,
    });
    expect(res.body.data.messages).toHaveLength(2);
    res.body.data.messages.forEach((record, index) => {
      expect(Object.keys(record).sort()).toEqual(
        [
          "id",
          "chatapp_session_id",
          "campaign_id",
          "from_number",
          "to_number",
          "type",
          "content",
          "reply_to",
          "media_url",
          "status",
          "direction",
          "cost",
          "sent_at",
          "delivered_at",
          "read_at",
          "created_at",
          "updated_at",
        ].sort(),
      );
      expect(record).toMatchObject({
        chatapp_session_id: session,
        campaign_id: null,
        from_number: null,
        to_number: [NUMBER, "+14155552672"][index],
        type: "text",
        content: "hello",
        media_url: null,
        status: "queued",
        direction: "outgoing",
        cost: 0.01,
        sent_at: null,
        delivered_at: null,
        read_at: null,
      });
      expect(record.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(record.created_at).toMatch(TIMESTAMP);
      expect(record.updated_at).toBe(record.created_at);
      expect(Date.parse(record.created_at as string)).toBeGreaterThanOrEqual(before - 1);
    });
    expect(new Set(res.body.data.messages.map((m) => m.id)).size).toBe(2);
    expect(await balanceOf(accountId)).toBe(0.98);
  });

  it("prices each type from its variable", async () => {
    // 0.98 left: PRICE_IMAGE 0.02, PRICE_VIDEO 0.03, PRICE_AUDIO 0.02, PRICE_DOCUMENT 0.02.
    const image = await send(key, {
      chatapp_session_id: session,
      to_number: [NUMBER],
      type: "image",
      media_url: IMAGE,
      content: "a cat",
    });
    expect(image.body.data).toMatchObject({
      count: 1,
      total_cost: 0.02,
      new_balance: 0.96,
      remaining_messages: 48,
    });
    expect(image.body.data.messages[0]).toMatchObject({
      type: "image",
      content: "a cat",
      media_url: IMAGE,
      cost: 0.02,
    });
    const video = await send(key, {
      chatapp_session_id: session,
      to_number: [NUMBER, "+14155552672", "+14155552673"],
      type: "video",
      media_url: "https://cdn.example.test/v.mp4",
    });
    expect(video.body.data).toMatchObject({
      count: 3,
      total_cost: 0.09,
      new_balance: 0.87,
      remaining_messages: 29,
    });
    expect(video.body.data.messages.map((m) => m.cost)).toEqual([0.03, 0.03, 0.03]);
    const audio = await send(key, {
      chatapp_session_id: session,
      to_number: [NUMBER],
      type: "audio",
      media_url: "https://cdn.example.test/a.ogg",
    });
    expect(audio.body.data).toMatchObject({
      count: 1,
      total_cost: 0.02,
      new_balance: 0.85,
      remaining_messages: 42,
    });
    const doc = await send(key, {
      chatapp_session_id: session,
      to_number: [NUMBER],
      type: "document",
      media_url: "https://cdn.example.test/d.pdf",
    });
    expect(doc.body.data).toMatchObject({
      count: 1,
      total_cost: 0.02,
      new_balance: 0.83,
      remaining_messages: 41,
    });
    expect(await balanceOf(accountId)).toBe(0.83);
  });

  it("with scheduled_at, creates the messages scheduled and says so", async () => {
    const at = new Date(Date.now() + 3600_000).toISOString();
    const res = await send(key, {
      chatapp_session_id: session,
      to_number: [NUMBER, "+14155552672"],
      type: "text",
      content: "later",
      scheduled_at: at,
    });
    expect(res.status).toBe(201);
    expect(res.body.message).toMatch(/scheduled/i);
    expect(res.body.data.messages.map((m) => m.status)).toEqual(["scheduled", "scheduled"]);
    expect(res.body.data).toMatchObject({
      count: 2,
      total_cost: 0.02,
      new_balance: 0.81,
      remaining_messages: 81,
    });
    for (const record of res.body.data.messages) {
      expect(record).toMatchObject({
        sent_at: null,
        delivered_at: null,
        read_at: null,
        direction: "outgoing",
      });
      const shown = await call<{ data: { status: string } }>("GET", `/v1/chatapp/messages/${record.id}`, {
        key,
      });
      expect(shown.body.data.status).toBe("scheduled");
    }
  });

  it("accepts an offset in scheduled_at", async () => {
    const at = new Date(Date.now() + 7200_000);
    const local = at.toISOString().replace("Z", "+00:00");
    const res = await send(key, {
      chatapp_session_id: session,
      to_number: [NUMBER],
      type: "text",
      content: "later",
      scheduled_at: local,
    });
    expect(res.status).toBe(201);
    expect(res.body.data.messages[0]?.status).toBe("scheduled");
  });
});
