import { describe, expect, it } from "vitest";
import { checkAnswer, checkBody } from "../../fakes/cloud-api/schema";
import { markRead } from "../../src/gateways/cloud-api/read";
import { GatewayError } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { CLOUD_API_BASE_URL } from "../gateway-config";
import { call, createAccount, expectProblem } from "../helpers";
import { getMessage, type Message } from "../message-fixtures";
import { useExampleNumber } from "./sessions-fixtures";
import { deliverWebhooks, linkNumber } from "./webhooks-fixtures";

// Read receipts on a Cloud API session (docs/messages.md, Chat actions): `POST
// /v1/chatapp/messages/{id}/read` sends Meta `{ messaging_product: "whatsapp", status: "read", message_id }`
// on the messages edge (`MarkMessageRequestPayload`, checked by the fake, schema.ts reading l), answered
// `{ success: true }`; Meta's refusals become GatewayErrors the route shows as 502 or 503.

const CONTACT = "+14155552690";

const meta = useExampleNumber();

interface Shown extends Message {
  direction: string;
}

/** The contact writes `texts` to the session's number, in order: our ids and Meta's wamids. */
async function contactWrites(accountId: string, texts: string[]): Promise<{ id: string; wamid: string }[]> {
  const wamids = texts.map((text) =>
    meta.graph.queueIncoming({ phoneNumberId: meta.number.phoneNumberId, from: CONTACT, text }),
  );
  await deliverWebhooks(meta.graph);
  const d1 = await accountD1(accountId);
  return Promise.all(
    wamids.map(async (wamid) => {
      const row = await d1
        .prepare("SELECT id FROM messages WHERE account_id = ? AND provider_message_id = ?")
        .bind(accountId, wamid)
        .first<{ id: string }>();
      return { id: row?.id ?? "", wamid };
    }),
  );
}

function postRead(key: string, id: string) {
  return call<{ data: Shown; marked: number }>("POST", `/v1/chatapp/messages/${id}/read`, { key });
}

describe("POST /v1/chatapp/messages/{id}/read on a Cloud API session", () => {
  it("sends Meta exactly MarkMessageRequestPayload for the message's wamid, and marks the chat read", async () => {
    const { key, accountId } = await createAccount(10);
    await linkNumber(key, meta.number);
    const [first, second] = await contactWrites(accountId, ["Hi", "Are you open?"]);

    const res = await postRead(key, second?.id ?? "");
    expect(res.status, res.text).toBe(200);
    expect(res.body.marked).toBe(2);
    expect(res.body.data).toMatchObject({ id: second?.id, status: "read", direction: "incoming" });

    const calls = meta.graph.callsOf("sendMessage");
    expect(calls.map((c) => [c.id, c.body])).toEqual([
      [
        meta.number.phoneNumberId,
        { messaging_product: "whatsapp", status: "read", message_id: second?.wamid },
      ],
    ]);
    expect(checkBody("markRead", calls[0]?.body)).toEqual([]);
    expect(meta.graph.invalidBodies).toEqual([]);
    expect(meta.graph.reads).toEqual([
      {
        phoneNumberId: meta.number.phoneNumberId,
        messageId: second?.wamid,
        typingIndicator: false,
        at: expect.any(Number),
      },
    ]);
    expect(meta.graph.sent).toEqual([]);
    expect(await getMessage(key, first?.id ?? "")).toMatchObject({ status: "read" });
  });

  it("a refusal by Meta is 502 gateway_rejected, a throttle 503 gateway_unavailable; nothing is marked", async () => {
    const { key, accountId } = await createAccount(10);
    await linkNumber(key, meta.number);
    const [message] = await contactWrites(accountId, ["Hello"]);

    meta.graph.readFault = { code: 131009, message: "Parameter value is not valid" };
    const refused = await postRead(key, message?.id ?? "");
    const problem = expectProblem(refused, 502, "gateway_rejected");
    expect(problem.detail).toContain("meta_error_131009: Parameter value is not valid");

    meta.graph.readFault = { code: 130429, message: "Rate limit hit" };
    const throttled = await postRead(key, message?.id ?? "");
    const unavailable = expectProblem(throttled, 503, "gateway_unavailable");
    expect(unavailable.detail).toContain("throttled: Rate limit hit");

    expect(meta.graph.reads).toEqual([]);
    expect(await getMessage(key, message?.id ?? "")).toMatchObject({ status: "delivered", read_at: null });
  });
});

describe("read.ts markRead (gateway level)", () => {
  const http = () => ({
    baseUrl: `${CLOUD_API_BASE_URL}/v23.0`,
    headers: { Authorization: `Bearer ${meta.number.accessToken}` },
    timeoutMs: 2_000,
    mediaTimeoutMs: 2_000,
  });

  it("answers when Meta answers { success: true }, as MarkMessageResponsePayload has it", async () => {
    const wamid = meta.graph.queueIncoming({
      phoneNumberId: meta.number.phoneNumberId,
      from: CONTACT,
      text: "Hi",
    });
    await expect(
      markRead(http(), meta.number.phoneNumberId, { chat: CONTACT, providerMessageId: wamid }),
    ).resolves.toBeUndefined();
    expect(meta.graph.callsOf("sendMessage")[0]?.body).toEqual({
      messaging_product: "whatsapp",
      status: "read",
      message_id: wamid,
    });
    expect(checkAnswer("markRead", { success: true })).toEqual([]);
  });

  it("maps Meta's errors: a 4xx is permanent with Meta's message, a throttle or a 5xx transient, 190 token_invalid", async () => {
    const wamid = meta.graph.queueIncoming({
      phoneNumberId: meta.number.phoneNumberId,
      from: CONTACT,
      text: "Hi",
    });
    const read = { chat: CONTACT, providerMessageId: wamid };
    const failure = async () => {
      try {
        await markRead(http(), meta.number.phoneNumberId, read);
      } catch (error) {
        if (error instanceof GatewayError)
          return {
            reason: error.reason,
            permanent: error.permanent,
            status: error.status,
            message: error.message,
          };
        throw error;
      }
      throw new Error("markRead did not throw");
    };

    meta.graph.readFault = { code: 131009, message: "Parameter value is not valid", details: "message_id" };
    expect(await failure()).toEqual({
      reason: "meta_error_131009",
      permanent: true,
      status: 400,
      message: "meta_error_131009: Parameter value is not valid (message_id)",
    });
    meta.graph.readFault = { code: 130429, message: "Rate limit hit" };
    expect(await failure()).toMatchObject({ reason: "throttled", permanent: false, status: 400 });
    meta.graph.readFault = { code: 190, message: "Invalid OAuth access token", status: 401 };
    expect(await failure()).toMatchObject({ reason: "token_invalid", permanent: true, status: 401 });
    meta.graph.readFault = { code: 2, message: "Service temporarily unavailable", status: 503 };
    expect(await failure()).toMatchObject({ reason: "meta_error_2", permanent: false, status: 503 });
    // A message the number never received: Meta's error 100, permanent.
    meta.graph.readFault = null;
    const unknown = markRead(http(), meta.number.phoneNumberId, {
      chat: CONTACT,
      providerMessageId: "wamid.X",
    });
    await expect(unknown).rejects.toMatchObject({ reason: "meta_error_100", permanent: true, status: 400 });
    expect(meta.graph.reads).toEqual([]);
  });
});
