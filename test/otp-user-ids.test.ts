import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { type ApiResponse, call, createAccount, expectProblem, phoneText } from "./helpers";
import { balanceOf, connectedSession } from "./message-fixtures";

// One-time codes to users known by a user id (docs/otp.md, Sending and verifying; docs/contacts.md,
// Contacts): sent by `to_user_id`, limited per contact rather than per string, held to `allowed_countries` by
// the user's country, and reverse OTPs bound to a user id. Sandbox sessions send to LIDs and BSUIDs.

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const LID = "120363025246125888@lid";
const OTHER_LID = "120363025246125999@lid";
const NUMBER = "+14155552671";
const LIMIT = 5;

interface Otp {
  id: string;
  mode: string;
  to_number: string | null;
  to_user_id: string | null;
  status: string;
  message_id: string | null;
  verified_number: string | null;
  verified_contact: { phone_number: string | null; user_id: string | null } | null;
  refused_messages: number;
}

interface Message {
  to_number: string | null;
  otp_id: string | null;
  contact: { user_id: string | null; phone_number: string | null } | null;
}

interface Fixture {
  key: string;
  accountId: string;
  sessionId: string;
  appId: string;
}

/** An account with a connected sandbox session and an app (with `app`'s settings) on it. */
async function otpApp(app: Record<string, unknown> = {}): Promise<Fixture> {
  const { key, accountId } = await createAccount(100);
  const session = await connectedSession(key);
  const res = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: {
      name: "Acme",
      sender_id: SENDER,
      message_template: "Your {{app_name}} code is {{code}}.",
      chatapp_session_id: session.id,
      ...app,
    },
  });
  expect(res.status, res.text).toBe(201);
  return { key, accountId, sessionId: session.id, appId: res.body.data.id };
}

const send = (f: Fixture, body: Record<string, unknown>) =>
  call<{ data: Otp }>("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body });

async function sent(f: Fixture, body: Record<string, unknown>): Promise<Otp> {
  const res = await send(f, body);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** The user `from` (sandbox inbound fields) writes `content` to the fixture's session. */
async function inbound(f: Fixture, from: Record<string, string>, content = "hi"): Promise<void> {
  const res = await call("POST", `/sandbox/sessions/${f.sessionId}/inbound`, {
    key: f.key,
    body: { ...from, type: "text", content },
  });
  expect(res.status, res.text).toBe(201);
}

async function otpCount(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT COUNT(*) AS n FROM otps WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

const problem = (res: ApiResponse<unknown>, status: number, code: string) =>
  expectProblem(res as ApiResponse, status, code);

describe("a code sent by to_user_id", () => {
  it("goes to the LID, shows to_user_id, and its code verifies the OTP", async () => {
    const f = await otpApp();
    const otp = await sent(f, { to_user_id: LID });
    expect(otp).toMatchObject({ mode: "send", to_number: null, to_user_id: LID, status: "pending" });

    const message = await call<{ data: Message }>("GET", `/v1/chatapp/messages/${otp.message_id}`, {
      key: f.key,
    });
    expect(message.body.data).toMatchObject({ to_number: null, otp_id: otp.id });
    const text = await phoneText(f.sessionId, LID, otp.message_id);
    const code = /^Your Acme code is (\d+)\.$/.exec(text)?.[1];
    expect(code).toMatch(/^\d{6}$/);

    const verified = await call<{ data: Otp }>("POST", `/v1/otp/${otp.id}/verify`, {
      key: f.key,
      body: { code },
    });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body.data).toMatchObject({ status: "verified", to_user_id: LID });
    const shown = await call<{ data: Otp }>("GET", `/v1/otp/${otp.id}`, { key: f.key });
    expect(shown.body.data).toMatchObject({ to_number: null, to_user_id: LID, status: "verified" });
  });

  it("refuses both recipients, a malformed user id, and none, naming the field, with nothing written", async () => {
    const f = await otpApp();
    const both = problem(await send(f, { to_number: NUMBER, to_user_id: LID }), 422, "validation_failed");
    expect(both.errors).toEqual({ to_user_id: ["give to_number or to_user_id, not both"] });
    const bad = problem(await send(f, { to_user_id: "jane" }), 422, "validation_failed");
    expect(Object.keys(bad.errors as object)).toEqual(["to_user_id"]);
    const none = problem(await send(f, {}), 422, "validation_failed");
    expect(none.errors).toEqual({ to_number: ["required when mode is send (or to_user_id)"] });
    expect(await otpCount(f.accountId)).toBe(0);
    expect(await balanceOf(f.accountId)).toBe(100);
  });
});

describe("the per-number limit counts the contact", () => {
  it("codes to a user's number and LID count together once a message links them; an unlinked LID keeps its own count", async () => {
    const f = await otpApp();
    await inbound(f, { from_number: NUMBER, from_user_id: LID });
    for (let i = 0; i < 3; i++) await sent(f, { to_number: NUMBER });
    for (let i = 0; i < 2; i++) await sent(f, { to_user_id: LID });

    const byLid = await send(f, { to_user_id: LID });
    const refusal = problem(byLid, 429, "rate_limited");
    expect(refusal.detail).toBe(
      `This number has had ${LIMIT} codes from this account's apps in the last hour.`,
    );
    expect(Number(byLid.headers.get("retry-after"))).toBeGreaterThan(3500);
    problem(await send(f, { to_number: NUMBER }), 429, "rate_limited");
    expect(await otpCount(f.accountId)).toBe(LIMIT);

    // Another user, never linked to that number: not counted with it.
    expect((await sent(f, { to_user_id: OTHER_LID })).to_user_id).toBe(OTHER_LID);
  });
});

describe("allowed_countries and user ids", () => {
  it("a BSUID's country is its prefix; a LID's is its linked number's, and an unlinked LID has none", async () => {
    const f = await otpApp({ allowed_countries: ["US"] });
    expect((await sent(f, { to_user_id: "US.13491208655302741918" })).to_user_id).toBe(
      "US.13491208655302741918",
    );
    const gb = problem(
      await send(f, { to_user_id: "GB.13491208655302741918" }),
      422,
      "otp_country_not_allowed",
    );
    expect(gb.detail).toBe(
      "The user is in GB, and this app sends codes only to numbers of its allowed_countries: US.",
    );

    const unknown = problem(await send(f, { to_user_id: LID }), 422, "otp_country_not_allowed");
    expect(unknown.detail).toBe(
      `The user's country is not known (no number is linked to ${LID} yet), and this app sends codes only to its allowed_countries: US.`,
    );
    await inbound(f, { from_number: NUMBER, from_user_id: LID });
    expect((await sent(f, { to_user_id: LID })).to_user_id).toBe(LID);

    await inbound(f, { from_number: "+442071838750", from_user_id: OTHER_LID });
    const linkedGb = problem(await send(f, { to_user_id: OTHER_LID }), 422, "otp_country_not_allowed");
    expect(linkedGb.detail).toBe(
      "The user is in GB, and this app sends codes only to numbers of its allowed_countries: US.",
    );
    expect(await otpCount(f.accountId)).toBe(2);
  });
});

describe("a reverse OTP bound to a user id", () => {
  it("is verified only by that user's message, whichever of their identifiers it comes with", async () => {
    const f = await otpApp();
    const res = await call<{ data: Otp & { code: string } }>("POST", `/v1/apps/${f.appId}/otp`, {
      key: f.key,
      body: { mode: "reverse", to_user_id: LID },
    });
    expect(res.status, res.text).toBe(201);
    const otp = res.body.data;
    expect(otp).toMatchObject({ mode: "reverse", to_number: null, to_user_id: LID });

    await inbound(f, { from_user_id: OTHER_LID }, otp.code);
    const refused = await call<{ data: Otp }>("GET", `/v1/otp/${otp.id}`, { key: f.key });
    expect(refused.body.data).toMatchObject({ status: "pending", refused_messages: 1 });

    await inbound(f, { from_number: NUMBER, from_user_id: LID }, otp.code);
    const verified = await call<{ data: Otp }>("GET", `/v1/otp/${otp.id}`, { key: f.key });
    expect(verified.body.data).toMatchObject({
      status: "verified",
      verified_number: NUMBER,
      verified_contact: { phone_number: NUMBER, user_id: LID },
    });
  });
});
