import { getCountries } from "libphonenumber-js/max";
import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { type ApiResponse, call, createAccount, expectProblem, phoneText } from "./helpers";
import { balanceOf, connectedSession, ledgerOf } from "./message-fixtures";

// An app's `allowed_countries` (src/otp/countries.ts): set, replaced and cleared through the app
// routes, and enforced on every code sent, before anything is charged, stored or queued.

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const US = "+14155552671";
const CA = "+16135550123";
const GB = "+447400123456";
/** Guernsey: a +44 number that is not GB. */
const GG = "+447781123456";
/** International freephone (+800): valid, but of no country. */
const FREEPHONE = "+80012345678";
const FORMAT = "must be an ISO 3166-1 alpha-2 code: two upper-case letters, e.g. GB";

interface App {
  id: string;
  name: string;
  allowed_countries: string[] | null;
  updated_at: string;
}

interface Otp {
  id: string;
  to_number: string;
  status: string;
  sends_remaining: number;
  message_id: string | null;
}

interface Fixture {
  key: string;
  accountId: string;
  sessionId: string;
  appId: string;
}

/** An account (balance 100) with a connected sandbox session and an app sending through it. */
async function otpApp(app: Record<string, unknown> = {}): Promise<Fixture> {
  const { key, accountId } = await createAccount(100);
  const sessionId = (await connectedSession(key)).id;
  const created = await call<{ data: App }>("POST", "/v1/apps", {
    key,
    body: { name: "Acme", sender_id: SENDER, chatapp_session_id: sessionId, ...app },
  });
  expect(created.status).toBe(201);
  return { key, accountId, sessionId, appId: created.body.data.id };
}

async function createApp(key: string, body: Record<string, unknown> = {}): Promise<App> {
  const res = await call<{ data: App }>("POST", "/v1/apps", {
    key,
    body: { name: "Acme", sender_id: SENDER, ...body },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function showApp(key: string, id: string): Promise<App> {
  const res = await call<{ data: App }>("GET", `/v1/apps/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The `allowed_countries` column of account `accountId`'s app as D1 stores it: JSON text, or SQL NULL. */
async function storedCountries(accountId: string, appId: string): Promise<string | null | undefined> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT allowed_countries FROM apps WHERE id = ?")
    .bind(appId)
    .first<{ allowed_countries: string | null }>();
  return row?.allowed_countries;
}

const send = (f: Fixture, to: string) =>
  call<{ data: Otp }>("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body: { to_number: to } });
const resend = (f: Fixture, id: string) =>
  call<{ data: Otp }>("POST", `/v1/otp/${id}/resend`, { key: f.key });
const setCountries = (f: Fixture, countries: string[] | null) =>
  call<{ data: App }>("PATCH", `/v1/apps/${f.appId}`, { key: f.key, body: { allowed_countries: countries } });

/** {@link expectProblem} for a response typed as a success. */
const problem = (res: ApiResponse<unknown>, status: number, code: string) =>
  expectProblem(res as ApiResponse, status, code);

/** The count `query` reads in the fixture's account's database. */
async function count(f: Fixture, query: string, ...params: unknown[]): Promise<number> {
  const row = await (await accountD1(f.accountId))
    .prepare(query)
    .bind(...params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Everything a send writes for the account: balance, ledger, OTPs, their send log, messages. */
async function footprint(f: Fixture) {
  return {
    balance: await balanceOf(f.accountId),
    ledger: await ledgerOf(f.accountId),
    otps: await count(f, "SELECT COUNT(*) AS n FROM otps WHERE account_id = ?", f.accountId),
    otpSends: await count(f, "SELECT COUNT(*) AS n FROM otp_sends WHERE app_id = ?", f.appId),
    messages: await count(f, "SELECT COUNT(*) AS n FROM messages WHERE account_id = ?", f.accountId),
  };
}

/** The text the recipient's phone received in message `messageId` (polls the sandbox phone). */
async function received(f: Fixture, messageId: string | null, to: string): Promise<string> {
  return phoneText(f.sessionId, to, messageId);
}

describe("allowed_countries on apps", () => {
  it("is null unless given, and keeps the codes given, in their order", async () => {
    const { key, accountId } = await createAccount();
    const open = await createApp(key);
    expect(open.allowed_countries).toBeNull();
    expect(await storedCountries(accountId, open.id)).toBeNull();
    expect((await createApp(key, { allowed_countries: null })).allowed_countries).toBeNull();

    const ruled = await createApp(key, { allowed_countries: ["US", "CA", "XK"] });
    expect(ruled.allowed_countries).toEqual(["US", "CA", "XK"]);
    expect(await storedCountries(accountId, ruled.id)).toBe('["US","CA","XK"]');
    expect((await showApp(key, ruled.id)).allowed_countries).toEqual(["US", "CA", "XK"]);
    const list = await call<{ data: App[] }>("GET", "/v1/apps", { key });
    expect(list.body.data.map((app) => app.allowed_countries)).toEqual([["US", "CA", "XK"], null, null]);
  });

  it("accepts every country libphonenumber has a numbering plan for", async () => {
    const { key } = await createAccount();
    const all = getCountries();
    // docs/otp.md's Sending and verifying gives the number; a libphonenumber-js update that changes
    // it changes that section.
    expect(all).toHaveLength(245);
    expect((await createApp(key, { allowed_countries: all })).allowed_countries).toEqual(all);
  });

  it.each(["PUT", "PATCH"])("%s sets, keeps, replaces and clears the rule", async (method) => {
    const { key, accountId } = await createAccount();
    const app = await createApp(key);
    const update = (body: Record<string, unknown>) =>
      call<{ data: App }>(method, `/v1/apps/${app.id}`, { key, body });

    const set = await update({ allowed_countries: ["GB"] });
    expect(set.status).toBe(200);
    expect(set.body.data.allowed_countries).toEqual(["GB"]);
    // Left out, it keeps its value.
    const renamed = await update({ name: "Renamed" });
    expect(renamed.body.data).toMatchObject({ name: "Renamed", allowed_countries: ["GB"] });
    expect((await update({ allowed_countries: ["US", "CA"] })).body.data.allowed_countries).toEqual([
      "US",
      "CA",
    ]);
    expect(await storedCountries(accountId, app.id)).toBe('["US","CA"]');

    const cleared = await update({ allowed_countries: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.allowed_countries).toBeNull();
    // SQL NULL, not the JSON text "null".
    expect(await storedCountries(accountId, app.id)).toBeNull();
    expect(await showApp(key, app.id)).toEqual(cleared.body.data);
  });

  const refusals: [string, unknown, Record<string, string[]>][] = [
    [
      "an unknown code",
      ["US", "XX"],
      { "allowed_countries.1": ["XX is not an ISO 3166-1 alpha-2 code of a country with phone numbers"] },
    ],
    [
      "an ISO code without phone numbers (Antarctica)",
      ["AQ"],
      { "allowed_countries.0": ["AQ is not an ISO 3166-1 alpha-2 code of a country with phone numbers"] },
    ],
    ["a lower-case code", ["gb"], { "allowed_countries.0": ["must be upper case: GB"] }],
    ["a mixed-case code", ["US", "Ca"], { "allowed_countries.1": ["must be upper case: CA"] }],
    ["an alpha-3 code", ["GBR"], { "allowed_countries.0": [FORMAT] }],
    ["a calling code", ["44"], { "allowed_countries.0": [FORMAT] }],
    ["an empty code", [""], { "allowed_countries.0": [FORMAT] }],
    [
      "repeated codes",
      ["US", "GB", "US", "CA", "GB", "US"],
      { allowed_countries: ["lists US, GB more than once"] },
    ],
    [
      "an empty list",
      [],
      { allowed_countries: ["must name at least one country (null allows every country)"] },
    ],
    [
      "251 codes",
      Array.from({ length: 251 }, () => "US"),
      { allowed_countries: ["must name at most 250 countries"] },
    ],
  ];

  it.each(refusals)("refuses %s on create (422) and creates nothing", async (_label, countries, errors) => {
    const { key } = await createAccount();
    const res = await call("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: SENDER, allowed_countries: countries },
    });
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual(errors);
    expect((await call<{ meta: { total: number } }>("GET", "/v1/apps", { key })).body.meta.total).toBe(0);
  });

  it.each(refusals)("refuses %s on update (422) and keeps the rule", async (_label, countries, errors) => {
    const { key } = await createAccount();
    const app = await createApp(key, { allowed_countries: ["FR"] });
    const res = await call("PATCH", `/v1/apps/${app.id}`, { key, body: { allowed_countries: countries } });
    expect(expectProblem(res, 422, "validation_failed").errors).toEqual(errors);
    expect(await showApp(key, app.id)).toEqual({ ...app, deleted_at: null });
  });

  it.each<[string, unknown]>([
    ["a string", "US"],
    ["a number in the list", ["US", 1]],
    ["an object", { US: true }],
  ])("refuses %s instead of a list (422)", async (_label, countries) => {
    const { key } = await createAccount();
    const res = await call("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: SENDER, allowed_countries: countries },
    });
    const errors = expectProblem(res, 422, "validation_failed").errors as Record<string, string[]>;
    expect(Object.keys(errors)).toEqual([
      Array.isArray(countries) ? "allowed_countries.1" : "allowed_countries",
    ]);
  });
});

describe("sending codes under allowed_countries", () => {
  it("sends and charges a code to a number of an allowed country", async () => {
    const f = await otpApp({ allowed_countries: ["US", "CA"] });
    const res = await send(f, "+1 613 555 0123");
    expect(res.status).toBe(201);
    const otp = res.body.data;
    expect(otp).toMatchObject({ to_number: CA, status: "pending", sends_remaining: 4 });
    expect(await received(f, otp.message_id, CA)).toMatch(/^\d{6} is your Acme verification code\./);
    expect(await footprint(f)).toEqual({
      balance: 99.99,
      ledger: [
        { kind: "credit", amount: 10_000, balance_after: 10_000, message_count: 0 },
        { kind: "charge", amount: -1, balance_after: 9_999, message_count: 1 },
      ],
      otps: 1,
      otpSends: 1,
      messages: 1,
    });
  });

  it.each<[string, string, string[], string]>([
    [
      "another country",
      GB,
      ["US", "CA"],
      "The number is in GB, and this app sends codes only to numbers of its allowed_countries: US, CA.",
    ],
    [
      "a Crown dependency sharing GB's +44",
      GG,
      ["GB"],
      "The number is in GG, and this app sends codes only to numbers of its allowed_countries: GB.",
    ],
    [
      "no country (+800 freephone)",
      FREEPHONE,
      ["US"],
      "The number belongs to no single country (a non-geographic number), and this app sends codes only to numbers of its allowed_countries: US.",
    ],
  ])(
    "refuses a number of %s with 422 before anything is charged, stored or sent",
    async (_label, to, allowed, detail) => {
      const f = await otpApp({ allowed_countries: allowed });
      const before = await footprint(f);
      expect(before).toEqual({
        balance: 100,
        ledger: [{ kind: "credit", amount: 10_000, balance_after: 10_000, message_count: 0 }],
        otps: 0,
        otpSends: 0,
        messages: 0,
      });
      const res = await send(f, to);
      expect(problem(res, 422, "otp_country_not_allowed")).toMatchObject({
        title: "Country not allowed",
        detail,
      });
      expect(await footprint(f)).toEqual(before);
    },
  );

  it("sends anywhere, +800 included, from an app without the rule", async () => {
    const f = await otpApp();
    for (const to of [US, GB, GG, FREEPHONE]) expect((await send(f, to)).status).toBe(201);
    const after = await footprint(f);
    expect(after).toMatchObject({ balance: 99.96, otps: 4, otpSends: 4, messages: 4 });
    expect(after.ledger.at(-1)).toEqual({
      kind: "charge",
      amount: -1,
      balance_after: 9_996,
      message_count: 1,
    });
  });

  it("applies a changed rule at once, and sends anywhere again once it is cleared", async () => {
    const f = await otpApp({ allowed_countries: ["GB"] });
    problem(await send(f, US), 422, "otp_country_not_allowed");
    expect((await setCountries(f, ["GB", "US"])).status).toBe(200);
    expect((await send(f, US)).status).toBe(201);
    expect((await setCountries(f, null)).status).toBe(200);
    expect((await send(f, CA)).status).toBe(201);
    expect(await footprint(f)).toMatchObject({ balance: 99.98, otps: 2, messages: 2 });
  });

  it("refuses a resend once the number's country has left the rule, and leaves the OTP as it was", async () => {
    const f = await otpApp();
    const otp = (await send(f, US)).body.data;
    expect((await setCountries(f, ["GB"])).status).toBe(200);
    // The 30 seconds between two codes of one OTP have passed.
    const d1 = await accountD1(f.accountId);
    await d1.prepare("UPDATE otps SET last_sent_at = last_sent_at - 31000 WHERE id = ?").bind(otp.id).run();
    const row = () => d1.prepare("SELECT * FROM otps WHERE id = ?").bind(otp.id).first();
    const before = { row: await row(), footprint: await footprint(f) };
    expect(before.footprint).toMatchObject({ balance: 99.99, otps: 1, otpSends: 1, messages: 1 });

    const refused = await resend(f, otp.id);
    expect(problem(refused, 422, "otp_country_not_allowed").detail).toBe(
      "The number is in US, and this app sends codes only to numbers of its allowed_countries: GB.",
    );
    expect({ row: await row(), footprint: await footprint(f) }).toEqual(before);

    expect((await setCountries(f, ["GB", "US"])).status).toBe(200);
    const again = await resend(f, otp.id);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ id: otp.id, sends_remaining: 3 });
    expect(await footprint(f)).toMatchObject({ balance: 99.98, otpSends: 2, messages: 2 });
  });
});

describe("OpenAPI reference", () => {
  it("documents allowed_countries with its bounds, and the new problem on the send routes", async () => {
    const res = await call<{
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    }>("GET", "/openapi.json");
    expect(res.status).toBe(200);
    for (const [path, method] of [
      ["/v1/apps/{id}/otp", "post"],
      ["/v1/otp/{id}/resend", "post"],
    ] as const) {
      expect(res.body.paths[path]?.[method]?.responses["422"]?.description).toContain(
        "`otp_country_not_allowed`",
      );
    }
    expect(res.body.components.schemas.App?.properties.allowed_countries).toMatchObject({
      type: ["array", "null"],
    });
    const body = JSON.stringify(res.body.paths["/v1/apps"]?.post);
    for (const fact of ['"minItems":1', '"maxItems":250', '"uniqueItems":true', '"pattern":"^[A-Z]{2}$"']) {
      expect(body).toContain(fact);
    }
    expect(body).toContain("ISO 3166-1 alpha-2");
    expect(body).toContain("Twilio Verify's geo permissions");
  });
});
