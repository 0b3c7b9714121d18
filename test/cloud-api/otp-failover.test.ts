import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OTP_CODE_TEMPLATE } from "../../fakes/cloud-api/graph.ts";
import { type FailoverJob, runFailoverJob } from "../../src/otp/failover";
import { accountDb } from "../databases";
import { call, createAccount, expectProblem, phoneText } from "../helpers";
import { balanceOf, connectedSession, waitForMessages } from "../message-fixtures";
import { cloudApiSession, useFakeGraph } from "./webhooks-fixtures";

// Failover of a code between gateways (docs/otp.md, Channels and failover): a Cloud API
// channel carries the same code as the app's authentication template, and is passed over when the
// app has no `otp_template`; as the first connected channel, it refuses the send instead.

const fake = useFakeGraph();
const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
const TO = "+14155552671";

interface Otp {
  id: string;
  message_id: string | null;
  attempts: { session_id: string; message_id: string | null; status: string | null }[];
}

/**
 * An account with a sandbox session whose phone is offline (its codes stay `sent`), a Cloud API
 * session, and a second sandbox session; an app whose channels are `order` of them.
 */
async function mixedApp(order: ("sandbox" | "cloud" | "spare")[], app: Record<string, unknown>) {
  const { key, accountId } = await createAccount();
  const graph = fake();
  const cloud = await cloudApiSession(graph, key);
  graph.addTemplate({ wabaId: cloud.wabaId, ...OTP_CODE_TEMPLATE });
  const sandbox = (await connectedSession(key)).id;
  const spare = (await connectedSession(key)).id;
  await call("POST", `/sandbox/sessions/${sandbox}/phone`, { key, body: { online: false } });
  const ids = { sandbox, cloud: cloud.id, spare };
  const created = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: {
      name: "Acme",
      sender_id: SENDER,
      message_template: "Your {{app_name}} code is {{code}}.",
      channels: order.map((name) => ids[name]),
      failover_after_seconds: 300,
      ...app,
    },
  });
  expect(created.status, created.text).toBe(201);
  return { key, accountId, graph, ids, appId: created.body.data.id };
}

/** Sends a code on the offline sandbox session; returns the OTP and the code its phone received. */
async function codeOnSandbox(f: Awaited<ReturnType<typeof mixedApp>>) {
  const res = await call<{ data: Otp }>("POST", `/v1/apps/${f.appId}/otp`, {
    key: f.key,
    body: { to_number: TO },
  });
  expect(res.status, res.text).toBe(201);
  const otp = res.body.data;
  await waitForMessages(f.key, [otp.message_id ?? ""], (m) => m.status === "sent");
  const received = await phoneText(f.ids.sandbox, TO, otp.message_id);
  const code = /(\d{6})/.exec(received)?.[1] ?? "";
  expect(code).toMatch(/^\d{6}$/);
  const job: FailoverJob = {
    otpId: otp.id,
    accountId: f.accountId,
    sendSeq: 1,
    attemptSeq: 1,
    code,
    deadline: Date.now() - 1,
    wait: 1,
  };
  return { otp, code, job };
}

const show = async (key: string, id: string) =>
  (await call<{ data: Otp }>("GET", `/v1/otp/${id}`, { key })).body.data;

describe("failover onto a Cloud API channel", () => {
  it("sends the same code as the app's authentication template", async () => {
    const f = await mixedApp(["sandbox", "cloud"], { otp_template: { name: "otp_code", language: "en_US" } });
    const { otp, code, job } = await codeOnSandbox(f);
    expect(await runFailoverJob(env, await accountDb(f.accountId), job, Date.now())).toBeNull();
    const shown = await show(f.key, otp.id);
    expect(shown.attempts.map((a) => a.session_id)).toEqual([f.ids.sandbox, f.ids.cloud]);
    const onCloud = shown.attempts[1]?.message_id ?? "";
    const [message] = await waitForMessages(f.key, [onCloud], (m) => m.status === "sent");
    expect(message).toMatchObject({ type: "template", content: "otp_code", otp_id: otp.id, cost: 0.01 });
    expect(f.graph.sent).toHaveLength(1);
    const template = f.graph.sent[0]?.body.template as { components: { parameters: { text: string }[] }[] };
    expect(template.components.map((c) => c.parameters[0]?.text)).toEqual([code, code]);
    expect(await balanceOf(f.accountId)).toBe(99.98);
  });

  it("passes over a Cloud API channel when the app has no otp_template", async () => {
    const f = await mixedApp(["sandbox", "cloud", "spare"], {});
    const { otp, job } = await codeOnSandbox(f);
    expect(await runFailoverJob(env, await accountDb(f.accountId), job, Date.now())).toBeNull();
    expect((await show(f.key, otp.id)).attempts.map((a) => a.session_id)).toEqual([
      f.ids.sandbox,
      f.ids.spare,
    ]);
    expect(f.graph.sent).toEqual([]);
  });

  it("refuses the send (422 app_has_no_otp_template) when that channel is the first connected one", async () => {
    const f = await mixedApp(["cloud", "spare"], {});
    const res = await call("POST", `/v1/apps/${f.appId}/otp`, { key: f.key, body: { to_number: TO } });
    expectProblem(res, 422, "app_has_no_otp_template");
    expect(f.graph.sent).toEqual([]);
    expect(await balanceOf(f.accountId)).toBe(100);
  });
});
