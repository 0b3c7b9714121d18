import { describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { EVENTS } from "../event-fixtures";
import { call, createAccount, expectProblem, sessionStub } from "../helpers";
import { ledgerOf, sendText } from "../message-fixtures";
import { cloudApiSession, deliverWebhooks, postWebhook, useFakeGraph } from "./webhooks-fixtures";

// A reverse OTP (docs/otp.md, Reverse OTP) on a Cloud API session: the user's message
// reaches the service as Meta's signed webhook, verifies the OTP, and opens the contact's 24-hour
// customer service window (Meta's "Customer service windows"), as any incoming message does.

const fake = useFakeGraph();
const SENDER_ID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const USER = "+14155550123";

interface ReverseOtp {
  id: string;
  status: string;
  verified_number: string | null;
  code: string;
  link: string;
}

/** An account with a Cloud API session and an app on it whose reverse OTPs cost 0.05. */
async function setUp() {
  const graph = fake();
  const { key, accountId } = await createAccount(10);
  const session = await cloudApiSession(graph, key);
  const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: { name: "Acme", sender_id: SENDER_ID, channels: [session.id], reverse_price: 0.05 },
  });
  expect(app.status, app.text).toBe(201);
  const res = await call<{ data: ReverseOtp }>("POST", `/v1/apps/${app.body.data.id}/otp`, {
    key,
    body: { mode: "reverse", to_number: USER },
  });
  expect(res.status, res.text).toBe(201);
  return { graph, key, accountId, session, otp: res.body.data };
}

const otpOf = (key: string, id: string) => call<{ data: ReverseOtp }>("GET", `/v1/otp/${id}`, { key });

describe("a reverse OTP on a Cloud API session", () => {
  it("links to the business number; the user's webhook message verifies it and opens the service window", async () => {
    const { graph, key, accountId, session, otp } = await setUp();
    // The session's number is the display number of webhooks-fixtures.ts, +1 555 010 0001.
    expect(otp.link).toBe(
      `https://wa.me/15550100001?text=${encodeURIComponent(`${otp.code} is your Acme verification code. Do not share it.`)}`,
    );
    // Before the user writes, a free-form text to them is outside the window.
    expectProblem(await sendText(key, session.id, [USER]), 422, "outside_service_window");

    const text = new URL(otp.link).searchParams.get("text") ?? "";
    graph.queueIncoming({
      phoneNumberId: session.phoneNumberId,
      from: USER.slice(1),
      text,
      profileName: "Ada",
    });
    const [hook] = await deliverWebhooks(graph);
    expect(hook?.res.body).toEqual({ success: true, ignored: false });

    expect((await otpOf(key, otp.id)).body.data).toMatchObject({ status: "verified", verified_number: USER });
    const window = await (await accountD1(accountId))
      .prepare("SELECT last_message_at FROM contacts WHERE chatapp_session_id = ? AND phone_number = ?")
      .bind(session.id, USER)
      .first<{ last_message_at: number }>();
    expect(window?.last_message_at).toEqual(expect.any(Number));
    const sent = await sendText(key, session.id, [USER]);
    expect(sent.status, sent.text).toBe(201);
    // The reverse OTP's price, then the text (a message costs 0.01).
    expect((await ledgerOf(accountId)).map((e) => [e.kind, e.amount, e.message_count])).toEqual([
      ["credit", 1000, 0],
      ["charge", -5, 0],
      ["charge", -1, 1],
    ]);
  });

  it("Meta's redelivered webhook verifies and charges once, and heals a verification lost after the message was stored", async () => {
    const { graph, key, accountId, session, otp } = await setUp();
    graph.queueIncoming({ phoneNumberId: session.phoneNumberId, from: USER.slice(1), text: otp.code });
    const [hook] = await graph.takeWebhooks();
    if (!hook) throw new Error("no webhook queued");

    // The message is stored but the Worker stops before verifying: the session object applied the
    // events, nothing above it ran.
    const body = JSON.parse(hook.body);
    const message = body.entry[0].changes[0].value.messages[0];
    const stored = await sessionStub(session.id).gatewayEvents("cloud_api", [
      {
        type: "incoming",
        providerMessageId: message.id,
        from: message.from,
        messageType: "text",
        content: message.text.body,
        mediaUrl: null,
        at: Number(message.timestamp) * 1000,
      },
    ]);
    expect(stored).toHaveLength(1);
    expect((await otpOf(key, otp.id)).body.data.status).toBe("pending");

    // Meta delivers the webhook again (it did not get a 200), twice.
    for (let i = 0; i < 2; i++) {
      const res = await postWebhook(hook.body, hook.signature);
      expect(res.status).toBe(200);
    }
    expect((await otpOf(key, otp.id)).body.data).toMatchObject({ status: "verified", verified_number: USER });
    const d1 = await accountD1(accountId);
    const messages = await d1
      .prepare("SELECT COUNT(*) AS n FROM messages WHERE provider_message_id = ?")
      .bind(message.id)
      .first<{ n: number }>();
    expect(messages?.n).toBe(1);
    expect((await ledgerOf(accountId)).filter((e) => e.kind === "charge")).toEqual([
      { kind: "charge", amount: -5, balance_after: 995, message_count: 0 },
    ]);
    const events = await d1
      .prepare(`SELECT COUNT(*) AS n FROM ${EVENTS} WHERE account_id = ? AND type = 'otp.verified'`)
      .bind(accountId)
      .first<{ n: number }>();
    expect(events?.n).toBe(1);
  });

  it("a username user known only by a BSUID verifies one bound to their user id, and another BSUID does not", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const session = await cloudApiSession(graph, key);
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: SENDER_ID, channels: [session.id] },
    });
    const bsuid = "US.13491208655302741918";
    const created = await call<{ data: ReverseOtp & { to_user_id: string | null } }>(
      "POST",
      `/v1/apps/${app.body.data.id}/otp`,
      { key, body: { mode: "reverse", to_user_id: bsuid } },
    );
    expect(created.status, created.text).toBe(201);
    const otp = created.body.data;
    expect(otp).toMatchObject({ to_user_id: bsuid, status: "pending" });
    const text = new URL(otp.link).searchParams.get("text") ?? "";

    graph.queueIncoming({ phoneNumberId: session.phoneNumberId, userId: "US.55555555555555555555", text });
    graph.queueIncoming({ phoneNumberId: session.phoneNumberId, userId: bsuid, username: "@ada", text });
    const hooks = await deliverWebhooks(graph);
    expect(hooks.map((h) => h.res.body)).toEqual([
      { success: true, ignored: false },
      { success: true, ignored: false },
    ]);
    expect((await otpOf(key, otp.id)).body.data).toMatchObject({
      status: "verified",
      verified_number: null,
      verified_contact: { phone_number: null, user_id: bsuid },
      refused_messages: 1,
    });
  });
});
