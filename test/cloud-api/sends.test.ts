import { describe, expect, it } from "vitest";
import { checkBody } from "../../fakes/cloud-api/schema";
import { SEND_ERRORS } from "../../src/gateways/cloud-api/send";
import { PUBLIC_URL } from "../gateway-config";
import { call, createAccount } from "../helpers";
import { MEDIA_HOST } from "../media-host";
import {
  balanceOf,
  driveAlarmUntil,
  getMessage,
  type Message,
  type SendResponse,
  waitForMessages,
} from "../message-fixtures";
import { openWindow, useExampleNumber } from "./sessions-fixtures";
import { linkNumber } from "./webhooks-fixtures";

// Sends through a Cloud API session, the whole way: POST /v1/chatapp/messages, the outbound
// queue, the session object, and Meta's `POST /{Version}/{Phone-Number-ID}/messages` (operation
// `sendMessage` of Meta's OpenAPI document, request schema `Message`). The bodies are asserted
// exactly as the document's schema reads: `recipient_type` is sent because the document requires
// it (Meta's own examples omit it); `biz_opaque_callback_data`, which the document defines under
// `CallRequestPayload` only, is on every message as Meta's "Messages" reference documents it.

const TO = "+14155552671";

const meta = useExampleNumber();

async function send(key: string, session: string, body: Record<string, unknown>): Promise<Message> {
  if (body.type !== "template") await openWindow(meta.graph, meta.number.phoneNumberId, [TO]);
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: session, to_number: [TO], ...body },
  });
  expect(res.status, res.text).toBe(201);
  const message = res.body.data.messages[0];
  if (!message) throw new Error("no message");
  return message;
}

/** A signed link of ours to the stored copy (docs/security.md, Media): never the caller's URL. */
const OUR_LINK = expect.stringMatching(new RegExp(`^${PUBLIC_URL.replaceAll(".", "\\.")}/`));

describe("every send type reaches Meta as the document's `Message`", () => {
  it.each([
    ["text", { type: "text", content: "Your code is 123456" }, { text: { body: "Your code is 123456" } }],
    [
      "image with caption",
      { type: "image", media_url: `${MEDIA_HOST}/shop/cat.jpg`, content: "Look" },
      { image: { link: OUR_LINK, caption: "Look" } },
    ],
    [
      "video with caption",
      { type: "video", media_url: `${MEDIA_HOST}/clips/demo.mp4`, content: "Watch" },
      { video: { link: OUR_LINK, caption: "Watch" } },
    ],
    [
      "document with caption and filename",
      { type: "document", media_url: `${MEDIA_HOST}/files/invoice.pdf`, content: "Your invoice" },
      { document: { link: OUR_LINK, caption: "Your invoice", filename: "invoice.pdf" } },
    ],
    [
      "document with filename only",
      { type: "document", media_url: `${MEDIA_HOST}/files/terms.pdf` },
      { document: { link: OUR_LINK, filename: "terms.pdf" } },
    ],
    [
      "audio, without caption",
      { type: "audio", media_url: `${MEDIA_HOST}/voice/note.ogg` },
      { audio: { link: OUR_LINK } },
    ],
  ])("%s", async (_, request, object) => {
    const { key } = await createAccount();
    const session = await linkNumber(key, meta.number);
    const accepted = await send(key, session, request);
    const [message] = await waitForMessages(key, [accepted.id]);

    const sends = meta.graph.sendsOf(accepted.id);
    expect(sends).toHaveLength(1);
    expect(sends[0]?.id).toBe(meta.number.phoneNumberId);
    expect(sends[0]?.body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: request.type,
      biz_opaque_callback_data: accepted.id,
      ...object,
    });
    // Meta's document's `Message` schema accepts it (fakes/cloud-api/schema.ts says how its gaps are read).
    expect(checkBody("sendMessage", sends[0]?.body)).toEqual([]);
    expect(message).toMatchObject({
      status: "sent",
      provider_message_id: sends[0]?.wamid,
      from_number: "+15555555555",
      metadata: { gateway: "cloud_api", attempts: 1 },
    });
  });
});

const codes = (retryable: boolean) =>
  Object.entries(SEND_ERRORS)
    .filter(([, error]) => error.retryable === retryable)
    .map(([code, error]) => [Number(code), error.reason] as const);
const FINAL = codes(false);
const THROTTLED = codes(true);

describe("Meta's error codes", () => {
  it("cover every code the gateway maps", () => {
    expect(FINAL.map(([code]) => code).sort((a, b) => a - b)).toEqual([
      190, 368, 131026, 131047, 131049, 131050, 131062,
    ]);
    expect(THROTTLED.map(([code]) => code).sort((a, b) => a - b)).toEqual([130429, 131056]);
  });

  it.each(FINAL)("%s → failed with reason %s, refunded, after one call", async (code, reason) => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    meta.graph.failNext({ code, status: 400, message: `Meta error ${code}` });
    const accepted = await send(key, session, { type: "text", content: "Hello" });
    const [message] = await waitForMessages(key, [accepted.id], (m) => m.status === "failed");

    expect(message).toMatchObject({ status: "failed", reason, provider_message_id: null });
    expect(message?.metadata.send_attempts).toEqual([
      { at: expect.any(String), outcome: "rejected", reason },
    ]);
    expect(meta.graph.sendsOf(accepted.id)).toHaveLength(1);
    await expect.poll(() => balanceOf(accountId)).toBe(10);
  });

  it.each(THROTTLED)("%s → %s in metadata, retried with backoff, then sent", async (code, reason) => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    meta.graph.failNext({ code, status: 400, message: `Meta error ${code}` });
    const accepted = await send(key, session, { type: "text", content: "Hello" });
    await driveAlarmUntil(session, async () => (await getMessage(key, accepted.id)).status === "sent");

    const message = await getMessage(key, accepted.id);
    expect(message).toMatchObject({ status: "sent", metadata: { attempts: 2 } });
    expect(message.metadata.send_attempts).toEqual([{ at: expect.any(String), outcome: "rejected", reason }]);
    const sends = meta.graph.sendsOf(accepted.id);
    expect(sends.map((s) => s.wamid === null)).toEqual([true, false]);
    expect(message.provider_message_id).toBe(sends[1]?.wamid);
    expect(sends[1]?.body).toEqual(sends[0]?.body);
    expect(await balanceOf(accountId)).toBeLessThan(10);
  });
});
