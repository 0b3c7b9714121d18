import { describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { CLOUD_API_VERIFY_TOKEN } from "../gateway-config";
import { call, createAccount, expectProblem } from "../helpers";
import { getMessage, sendText, waitForMessages } from "../message-fixtures";
import { metadataProblems } from "../metadata-check";
import {
  cloudApiSession,
  deliverWebhooks,
  messagesChange,
  postWebhook,
  status,
  useFakeGraph,
} from "./webhooks-fixtures";

// Meta's webhooks into the service: the subscription handshake, the signature, statuses as
// receipts (each once, in any order, never backwards), pricing, and incoming messages.

const fake = useFakeGraph();
const CONTACT = "+14155550123";

describe("GET /gateway/cloud-api (handshake)", () => {
  const handshake = (query: string) => call("GET", `/gateway/cloud-api?${query}`);

  it("echoes hub.challenge as plain text for subscribe with the verify token", async () => {
    const res = await handshake(
      `hub.mode=subscribe&hub.verify_token=${CLOUD_API_VERIFY_TOKEN}&hub.challenge=1158201444`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(res.text).toBe("1158201444");
  });

  it("refuses a wrong verify token, a missing one and another mode (403 verify_token_mismatch)", async () => {
    for (const query of [
      "hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1",
      "hub.mode=subscribe&hub.challenge=1",
      `hub.mode=unsubscribe&hub.verify_token=${CLOUD_API_VERIFY_TOKEN}&hub.challenge=1`,
    ]) {
      const res = await handshake(query);
      expectProblem(res, 403, "verify_token_mismatch");
      expect(res.text).not.toContain('"1"');
    }
  });
});

describe("POST /gateway/cloud-api (signature)", () => {
  it("accepts a body signed with the app secret, and refuses a missing, wrong or re-used signature", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const { phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId, from: "14155550123", text: "hi" });
    const [hook] = await graph.takeWebhooks();
    if (!hook) throw new Error("no webhook");

    expectProblem(await postWebhook(hook.body, null), 401, "invalid_signature");
    expectProblem(await postWebhook(hook.body, "sha256=00"), 401, "invalid_signature");
    expectProblem(
      await postWebhook(hook.body, hook.signature.replace("sha256=", "sha1=")),
      401,
      "invalid_signature",
    );
    // A captured body altered and replayed with its original signature.
    const altered = hook.body.replace('"hi"', '"pay me"');
    expect(altered).not.toBe(hook.body);
    expectProblem(await postWebhook(altered, hook.signature), 401, "invalid_signature");
    expect(await incomingOf(accountId, phoneNumberId)).toEqual([]);

    const good = await postWebhook(hook.body, hook.signature);
    expect(good.status).toBe(200);
    expect(good.body).toEqual({ success: true, ignored: false });
    expect((await incomingOf(accountId, phoneNumberId)).map((m) => m.content)).toEqual(["hi"]);
  });

  it("answers 200 ignored for a number no session holds, and for a field not acted on", async () => {
    const unknown = await postWebhook(
      messagesChange("999999999999999", { statuses: [status("wamid.X", "read")] }),
    );
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ success: true, ignored: true });
    const template = await postWebhook({
      object: "whatsapp_business_account",
      entry: [
        { id: "1", changes: [{ field: "message_template_status_update", value: { event: "APPROVED" } }] },
      ],
    });
    expect(template.body).toEqual({ success: true, ignored: true });
    expectProblem(await postWebhook("{not json"), 400, "invalid_json");
  });
});

describe("incoming messages", () => {
  it("stores text and image (media noted with its mimetype, no URL) once, and opens the window", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncoming({ phoneNumberId, from: "14155550123", text: "Hello there" });
    graph.queueIncomingImage({ phoneNumberId, from: "14155550123", caption: "Look", mimeType: "image/png" });
    const hooks = await deliverWebhooks(graph);
    // Meta retries: the same bodies again store nothing twice.
    for (const hook of hooks) await postWebhook(hook.body, hook.signature);

    const rows = await incomingOf(accountId, phoneNumberId);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      chatapp_session_id: session,
      from_number: CONTACT,
      to_number: "+15550100001",
      type: "text",
      content: "Hello there",
      media_url: null,
      status: "delivered",
    });
    expect(rows[1]).toMatchObject({ type: "image", content: "Look", media_url: null });
    expect(JSON.parse(String(rows[1]?.metadata))).toEqual({ media: { mimetype: "image/png" } });
    expect(String(rows[0]?.provider_message_id)).toMatch(/^wamid\./);
    const window = await (await accountD1(accountId))
      .prepare("SELECT * FROM contacts WHERE chatapp_session_id = ?")
      .bind(session)
      .all<{ phone_number: string; last_message_at: number }>();
    expect(window.results.map((w) => w.phone_number)).toEqual([CONTACT]);
    expect(Math.abs((window.results[0]?.last_message_at ?? 0) - Date.now())).toBeLessThan(5_000);
  });
});

describe("statuses", () => {
  it("sent → delivered → read: the message reaches read, with Meta's pricing in its metadata", async () => {
    const { key, graph, id, wamid } = await sentMessage();
    const hooks = await deliverWebhooks(graph);
    expect(hooks.map((h) => h.res.body.ignored)).toEqual([false, false, false]);
    const message = await getMessage(key, id);
    expect(message).toMatchObject({ status: "read", provider_message_id: wamid });
    expect(message.delivered_at).not.toBeNull();
    expect(message.read_at).not.toBeNull();
    expect(message.metadata).toMatchObject({
      gateway: "cloud_api",
      settled_by: "answer",
      pricing: { category: "service", billable: false, pricing_model: "PMP" },
    });
    expect((message.metadata.events as { type: string }[]).map((e) => e.type)).toEqual(["delivered", "read"]);

    // Meta retries for days: every body again, in reverse, moves nothing and records nothing.
    for (const hook of [...hooks].reverse()) await postWebhook(hook.body, hook.signature);
    expect(await getMessage(key, id)).toEqual(message);
  });

  it("sent then read (delivered skipped): read, with delivered_at filled", async () => {
    const { key, graph, id } = await sentMessage();
    await deliverWebhooks(graph, (hooks) => hooks.filter((h) => !h.body.includes('"delivered"')));
    const message = await getMessage(key, id);
    expect(message.status).toBe("read");
    expect(message.delivered_at).toBe(message.read_at);
    expect((message.metadata.events as { type: string }[]).map((e) => e.type)).toEqual(["read"]);
  });

  it("read before sent and delivered: read, and the later ones change nothing", async () => {
    const { key, graph, id } = await sentMessage();
    await deliverWebhooks(graph, (hooks) => [...hooks].reverse());
    const message = await getMessage(key, id);
    expect(message.status).toBe("read");
    expect((message.metadata.events as { type: string }[]).map((e) => e.type)).toEqual(["read"]);
    expect((message.metadata as Record<string, unknown>).pricing).toEqual({
      category: "service",
      billable: false,
      pricing_model: "PMP",
    });
    expect(metadataProblems(message.metadata)).toEqual([]);
  });

  it("duplicates apply once", async () => {
    const { key, graph, id, wamid, phoneNumberId } = await sentMessage();
    await graph.takeWebhooks();
    const delivered = messagesChange(phoneNumberId, { statuses: [status(wamid, "delivered")] });
    for (let i = 0; i < 3; i++) expect((await postWebhook(delivered)).status).toBe(200);
    const message = await getMessage(key, id);
    expect(message.status).toBe("delivered");
    expect((message.metadata.events as { type: string }[]).map((e) => e.type)).toEqual(["delivered"]);
  });

  it("failed with errors[]: failed with the mapped reason, refunded; an unknown code gives meta_error_<code>", async () => {
    const { key, graph, id, wamid, accountId } = await sentMessage();
    await graph.takeWebhooks();
    graph.queueFailedStatus(wamid, 131026, "Message undeliverable");
    await deliverWebhooks(graph);
    expect(await getMessage(key, id)).toMatchObject({ status: "failed", reason: "undeliverable" });
    const balance = await (await accountD1(accountId))
      .prepare("SELECT balance FROM accounts WHERE id = ?")
      .bind(accountId)
      .first<{ balance: number }>();
    expect(balance?.balance).toBe(1000);

    const other = await sentMessage();
    await other.graph.takeWebhooks();
    await postWebhook(
      messagesChange(other.phoneNumberId, {
        statuses: [status(other.wamid, "failed", { errors: [{ code: 131999, title: "Something new" }] })],
      }),
    );
    expect(await getMessage(other.key, other.id)).toMatchObject({
      status: "failed",
      reason: "meta_error_131999",
    });
  });
});

/** Incoming messages stored for the session of `phoneNumberId` (of account `accountId`), oldest first. */
async function incomingOf(accountId: string, phoneNumberId: string) {
  const rows = await (await accountD1(accountId))
    .prepare(
      `SELECT * FROM messages WHERE direction = 'incoming' AND chatapp_session_id =
       (SELECT session_id FROM cloud_api_numbers WHERE phone_number_id = ?) ORDER BY created_at, rowid`,
    )
    .bind(phoneNumberId)
    .all<Record<string, unknown>>();
  return rows.results;
}

/** A text sent (and answered) on a new Cloud API session to a contact who wrote first. */
async function sentMessage() {
  const graph = fake();
  const { key, accountId } = await createAccount(10);
  const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
  graph.queueIncoming({ phoneNumberId, from: "14155550123", text: "hi" });
  await deliverWebhooks(graph);
  const sent = await sendText(key, session, [CONTACT]);
  expect(sent.status, sent.text).toBe(201);
  const id = sent.body.data.messages[0]?.id ?? "";
  await waitForMessages(key, [id], (m) => m.status === "sent");
  const sentToMeta = graph.sent.filter((s) => s.body.biz_opaque_callback_data === id);
  expect(sentToMeta).toHaveLength(1);
  const wamid = sentToMeta[0]?.wamid ?? "";
  return { key, accountId, graph, session, phoneNumberId, id, wamid };
}
