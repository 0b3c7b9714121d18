import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { type ApiResponse, call, createAccount, expectProblem } from "./helpers";
import { balanceOf, connectedSession } from "./message-fixtures";

// The per-number limit `OTP_MAX_PER_NUMBER_PER_HOUR` (5 under vitest.config.ts) spans every app
// of an account (docs/otp.md, Sending and verifying): a second app does not double it, another account's apps
// keep their own count, and the count-and-insert stays one D1 batch, so concurrent sends from two
// apps cannot both take the last slot.

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const TO = "+14155552671";
const LIMIT = 5;
const HOUR_MS = 3_600_000;

interface Otp {
  id: string;
  app_id: string;
  to_number: string;
  status: string;
}

/** An account with one connected sandbox session and `apps` apps sending codes through it. */
async function accountWithApps(apps: number): Promise<{ key: string; accountId: string; appIds: string[] }> {
  const { key, accountId } = await createAccount(100);
  const session = await connectedSession(key);
  const appIds: string[] = [];
  for (let i = 0; i < apps; i++) {
    const res = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: {
        name: `Acme ${i + 1}`,
        sender_id: SENDER,
        message_template: "Your {{app_name}} code is {{code}}.",
        chatapp_session_id: session.id,
      },
    });
    expect(res.status).toBe(201);
    appIds.push(res.body.data.id);
  }
  return { key, accountId, appIds };
}

const send = (key: string, appId: string, to = TO) =>
  call<{ data: Otp }>("POST", `/v1/apps/${appId}/otp`, { key, body: { to_number: to } });

/** Sends a code that must go out; returns the OTP. */
async function sent(key: string, appId: string, to = TO): Promise<Otp> {
  const res = await send(key, appId, to);
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ app_id: appId, to_number: to, status: "pending" });
  return res.body.data;
}

/** The per-number refusal: 429 `rate_limited`, its detail and `Retry-After` (seconds). */
function perNumberRefusal(res: ApiResponse<unknown>): number {
  const body = expectProblem(res as ApiResponse, 429, "rate_limited");
  expect(body).toEqual({
    success: false,
    type: "tag:chatapp-otp-api,2026:problems/rate_limited",
    title: "Too many requests",
    status: 429,
    code: "rate_limited",
    detail: `This number has had ${LIMIT} codes from this account's apps in the last hour.`,
    request_id: res.headers.get("x-request-id"),
  });
  return Number(res.headers.get("retry-after"));
}

/** The count `query` reads in account `accountId`'s database. */
async function count(accountId: string, query: string, ...params: unknown[]): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare(query)
    .bind(...params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

const otpsOf = (accountId: string) =>
  count(accountId, "SELECT COUNT(*) AS n FROM otps WHERE account_id = ?", accountId);
const messagesOf = (accountId: string) =>
  count(accountId, "SELECT COUNT(*) AS n FROM messages WHERE account_id = ?", accountId);
const sendsTo = (accountId: string, to = TO) =>
  count(
    accountId,
    "SELECT COUNT(*) AS n FROM otp_sends WHERE to_number = ? AND otp_id IN (SELECT id FROM otps WHERE account_id = ?)",
    to,
    accountId,
  );

describe("per-number limit across the apps of an account", () => {
  it("counts the codes of every app: the second app's code past the limit is 429, resends too", async () => {
    const a = await accountWithApps(2);
    const [first, second] = a.appIds as [string, string];
    const balance = await balanceOf(a.accountId);
    const oldest = await sent(a.key, first);
    await sent(a.key, first);
    await sent(a.key, first);
    await sent(a.key, second);
    await sent(a.key, second); // the 5th code to TO from the account

    const refused = await send(a.key, second);
    const retryAfter = perNumberRefusal(refused);
    expect(retryAfter).toBeGreaterThan(3590);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    perNumberRefusal(await send(a.key, first));
    // A resend of the first app's OTP counts against the same limit.
    const d1 = await accountD1(a.accountId);
    await d1
      .prepare("UPDATE otps SET last_sent_at = last_sent_at - 31000 WHERE id = ?")
      .bind(oldest.id)
      .run();
    perNumberRefusal(await call("POST", `/v1/otp/${oldest.id}/resend`, { key: a.key }));
    expect(await count(a.accountId, "SELECT sends AS n FROM otps WHERE id = ?", oldest.id)).toBe(1);

    // Nothing was written or charged for the refusals.
    expect(await otpsOf(a.accountId)).toBe(LIMIT);
    expect(await messagesOf(a.accountId)).toBe(LIMIT);
    expect(await sendsTo(a.accountId)).toBe(LIMIT);
    expect(await balanceOf(a.accountId)).toBeCloseTo(balance - LIMIT * 0.01, 2);

    // Another number is not affected.
    await sent(a.key, second, "+14155552672");
    // Retry-After counts down to when the oldest code of the hour, from the first app, leaves the window.
    await d1
      .prepare("UPDATE otp_sends SET sent_at = ? WHERE otp_id = ?")
      .bind(Date.now() - 3_500_000, oldest.id)
      .run();
    const later = perNumberRefusal(await send(a.key, second));
    expect(later).toBeGreaterThan(90);
    expect(later).toBeLessThanOrEqual(100);

    // A deleted app's codes still count.
    expect((await call("DELETE", `/v1/apps/${first}`, { key: a.key })).status).toBe(204);
    perNumberRefusal(await send(a.key, second));
    // Once the oldest code is an hour old, one slot is free, for either app.
    await d1
      .prepare("UPDATE otp_sends SET sent_at = sent_at - ? WHERE otp_id = ?")
      .bind(HOUR_MS, oldest.id)
      .run();
    await sent(a.key, second);
    perNumberRefusal(await send(a.key, second));
  });

  it("leaves another account's apps their own limit", async () => {
    const a = await accountWithApps(2);
    const [first, second] = a.appIds as [string, string];
    for (let i = 0; i < 3; i++) await sent(a.key, first);
    for (let i = 0; i < 2; i++) await sent(a.key, second);
    perNumberRefusal(await send(a.key, second));

    // The same number, from another account's app: its own 5 codes, then 429.
    const b = await accountWithApps(1);
    const [other] = b.appIds as [string];
    for (let i = 0; i < LIMIT; i++) await sent(b.key, other);
    perNumberRefusal(await send(b.key, other));
    expect(await sendsTo(b.accountId)).toBe(LIMIT);
    expect(await sendsTo(a.accountId)).toBe(LIMIT);
  });

  it("lets exactly one of two simultaneous sends from two apps take the last slot", async () => {
    const a = await accountWithApps(2);
    const [first, second] = a.appIds as [string, string];
    for (let i = 0; i < 2; i++) await sent(a.key, first);
    for (let i = 0; i < 2; i++) await sent(a.key, second);

    const results = await Promise.all([send(a.key, first), send(a.key, second)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 429]);
    const refused = results.find((r) => r.status === 429);
    if (refused) perNumberRefusal(refused);
    expect(await otpsOf(a.accountId)).toBe(LIMIT);
    expect(await messagesOf(a.accountId)).toBe(LIMIT);
    expect(await sendsTo(a.accountId)).toBe(LIMIT);
  });
});
