import { describe, expect, it } from "vitest";
import { OTP_CODE_TEMPLATE } from "../../fakes/cloud-api/graph.ts";
import { checkBody } from "../../fakes/cloud-api/schema.ts";
import { accountD1 } from "../databases";
import { call, createAccount, expectProblem } from "../helpers";
import { balanceOf, storedMessageCount, waitForMessages } from "../message-fixtures";
import { metadataProblems } from "../metadata-check";
import { everyD1Row } from "./sessions-fixtures";
import { cloudApiSession, useFakeGraph } from "./webhooks-fixtures";

// One-time codes through a Cloud API session (docs/otp.md, Sending and verifying): the code goes as the app's
// authentication template (`otp_template`), never as free text, and is stored nowhere in clear.
// Meta's Graph API is the shared fake (fakes/cloud-api/graph.ts), every send checked against
// Meta's OpenAPI document; its WABAs hold the seeded `otp_code` authentication template.

const fake = useFakeGraph();
const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const TO = "+14155552671";

interface Otp {
  id: string;
  status: string;
  message_id: string | null;
}

/** An account with a Cloud API session whose WABA holds `otp_code`, and an app on it. */
async function cloudOtpApp(
  app: Record<string, unknown> = { otp_template: { name: "otp_code", language: "en_US" } },
) {
  const { key, accountId } = await createAccount();
  const graph = fake();
  const session = await cloudApiSession(graph, key);
  graph.addTemplate({ wabaId: session.wabaId, ...OTP_CODE_TEMPLATE });
  const created = await call<{ data: { id: string; otp_template: unknown } }>("POST", "/v1/apps", {
    key,
    body: { name: "Acme", sender_id: SENDER, chatapp_session_id: session.id, ...app },
  });
  expect(created.status, created.text).toBe(201);
  return {
    key,
    accountId,
    graph,
    sessionId: session.id,
    wabaId: session.wabaId,
    appId: created.body.data.id,
    app: created.body.data,
  };
}

const sendOtp = (key: string, appId: string) =>
  call<{ data: Otp }>("POST", `/v1/apps/${appId}/otp`, { key, body: { to_number: TO } });

describe("codes through a Cloud API session", () => {
  it("go as the authentication template: the code as body parameter and copy-code button, never in clear in D1", async () => {
    const f = await cloudOtpApp();
    expect(f.app.otp_template).toEqual({ name: "otp_code", language: "en_US" });
    const res = await sendOtp(f.key, f.appId);
    expect(res.status, res.text).toBe(201);
    const otp = res.body.data;
    const [message] = await waitForMessages(f.key, [otp.message_id ?? ""], (m) => m.status === "sent");
    // Outside any 24-hour window (the contact never wrote): a template is exempt. PRICE_TEMPLATE.
    expect(message).toMatchObject({ type: "template", content: "otp_code", otp_id: otp.id, cost: 0.01 });
    expect(await balanceOf(f.accountId)).toBe(99.99);

    expect(f.graph.sent).toHaveLength(1);
    const body = f.graph.sent[0]?.body;
    const template = body?.template as { components: { parameters: { text: string }[] }[] };
    const code = template.components[0]?.parameters[0]?.text ?? "";
    expect(code).toMatch(/^\d{6}$/);
    expect(body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: "template",
      biz_opaque_callback_data: otp.message_id,
      template: {
        name: "otp_code",
        language: { code: "en_US", policy: "deterministic" },
        components: [
          { type: "body", parameters: [{ type: "text", text: code }] },
          { type: "button", sub_type: "url", index: "0", parameters: [{ type: "text", text: code }] },
        ],
      },
    });
    expect(checkBody("sendMessage", body)).toEqual([]);
    expect(f.graph.invalidBodies).toEqual([]);

    // Stored and shown masked: the message's metadata holds the template with its variables masked.
    expect((message?.metadata as Record<string, unknown> | undefined)?.template).toEqual({
      name: "otp_code",
      language: "en_US",
      variables: { body: ["••••••"], buttons: [{ index: 0, sub_type: "url", parameter: "••••••" }] },
    });
    expect(metadataProblems(message?.metadata)).toEqual([]);
    const rows = await everyD1Row();
    expect(rows).toContain(otp.message_id);
    expect(rows).not.toMatch(new RegExp(`(?<![0-9a-f-])${code}(?![0-9a-f-])`));

    const verified = await call<{ data: Otp }>("POST", `/v1/otp/${otp.id}/verify`, {
      key: f.key,
      body: { code },
    });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body.data.status).toBe("verified");
  });

  it("an app without otp_template: 422 app_has_no_otp_template, nothing sent, stored or charged", async () => {
    const f = await cloudOtpApp({});
    expect(f.app.otp_template).toBeNull();
    expectProblem(await sendOtp(f.key, f.appId), 422, "app_has_no_otp_template");
    expect(f.graph.sent).toEqual([]);
    expect(await balanceOf(f.accountId)).toBe(100);
    expect(await storedMessageCount(f.accountId)).toBe(0);
    const otps = await (await accountD1(f.accountId))
      .prepare("SELECT count(*) AS n FROM otps WHERE app_id = ?")
      .bind(f.appId)
      .first<{ n: number }>();
    expect(otps?.n).toBe(0);

    // Set, then removed with null, as the app's other settings.
    const set = await call<{ data: { otp_template: unknown } }>("PATCH", `/v1/apps/${f.appId}`, {
      key: f.key,
      body: { otp_template: { name: "otp_code", language: "en_US" } },
    });
    expect(set.body.data.otp_template).toEqual({ name: "otp_code", language: "en_US" });
    expect((await sendOtp(f.key, f.appId)).status).toBe(201);
    const removed = await call<{ data: { otp_template: unknown } }>("PATCH", `/v1/apps/${f.appId}`, {
      key: f.key,
      body: { otp_template: null },
    });
    expect(removed.body.data.otp_template).toBeNull();
  });

  it("an unknown template: 422 template_not_found, nothing sent or charged, no OTP kept", async () => {
    const f = await cloudOtpApp({ otp_template: { name: "otp_code", language: "pt_BR" } });
    expectProblem(await sendOtp(f.key, f.appId), 422, "template_not_found");
    expect(f.graph.sent).toEqual([]);
    expect(await balanceOf(f.accountId)).toBe(100);
    expect(await storedMessageCount(f.accountId)).toBe(0);
    const otps = await (await accountD1(f.accountId))
      .prepare("SELECT count(*) AS n FROM otps WHERE app_id = ?")
      .bind(f.appId)
      .first<{ n: number }>();
    expect(otps?.n).toBe(0);
  });

  it("a template that is not an authentication one: 422 validation_failed naming otp_template", async () => {
    const f = await cloudOtpApp({ otp_template: { name: "hello_world", language: "en_US" } });
    f.graph.addTemplate({
      wabaId: f.wabaId,
      name: "hello_world",
      language: "en_US",
      category: "UTILITY",
      components: [{ type: "BODY", text: "Hello" }],
    });
    const res = await call("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body: { to_number: TO } });
    expectProblem(res, 422, "validation_failed");
    expect(res.body.errors).toEqual({
      otp_template: ["the template's body takes 0 variable(s), not 1", "the template has no button 0"],
    });
    expect(f.graph.sent).toEqual([]);
    expect(await balanceOf(f.accountId)).toBe(100);
  });

  it("to a user id: a BSUID meets Meta's phone-number rule for code buttons (131062), a LID no channel; 422 recipient_not_supported, nothing kept", async () => {
    const f = await cloudOtpApp();
    const bsuid = "US.13491208655302741918";
    const toBsuid = await call("POST", `/v1/apps/${f.appId}/otp`, {
      key: f.key,
      body: { to_user_id: bsuid },
    });
    const refused = expectProblem(toBsuid, 422, "recipient_not_supported");
    expect(refused.recipients).toEqual([bsuid]);
    expect(refused.detail).toMatch(/authentication template with a code button/);

    const lid = "120363025246125888@lid";
    const toLid = await call("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body: { to_user_id: lid } });
    expect(expectProblem(toLid, 422, "recipient_not_supported").recipients).toEqual([lid]);

    expect(f.graph.sent).toEqual([]);
    expect(await balanceOf(f.accountId)).toBe(100);
    expect(await storedMessageCount(f.accountId)).toBe(0);
    const otps = await (await accountD1(f.accountId))
      .prepare("SELECT count(*) AS n FROM otps WHERE app_id = ?")
      .bind(f.appId)
      .first<{ n: number }>();
    expect(otps?.n).toBe(0);
  });

  it("refuses a malformed otp_template when the app is saved", async () => {
    const { key } = await createAccount();
    const res = await call("POST", "/v1/apps", {
      key,
      body: { name: "Acme", sender_id: SENDER, otp_template: { name: "", language: "en_US", extra: 1 } },
    });
    expectProblem(res, 422, "validation_failed");
    expect(Object.keys(res.body.errors as object).sort()).toEqual([
      "otp_template.extra",
      "otp_template.name",
    ]);
  });
});
