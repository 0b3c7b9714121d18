import { env, runDurableObjectAlarm } from "cloudflare:test";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { MEDIA_DOWNLOAD_URL } from "../../fakes/cloud-api/graph.ts";
import { checkBody, checkWebhook } from "../../fakes/cloud-api/schema";
import { incomingMediaKey } from "../../src/media/incoming";
import { accountD1 } from "../databases";
import { call, createAccount, sessionStub } from "../helpers";
import { MEDIA_HOST } from "../media-host";
import { getMessage, type SendResponse, waitForMessages } from "../message-fixtures";
import { network } from "../network";
import { webp } from "../sticker-bytes";
import { openWindow } from "./sessions-fixtures";
import { cloudApiSession, deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

// Stickers on a Cloud API session (docs/messages.md, Sending messages → Stickers): a send is Meta's
// `StickerMessage` (`sticker: { link }`, no caption) with the signed link to our stored copy, and
// a contact's sticker (`StickerMessage_1`) is an incoming `sticker` whose WebP is downloaded as
// any incoming media.

const fake = useFakeGraph();
const TO = "+14155552671";

describe("Cloud API: stickers", () => {
  it("sends StickerMessage by link, valid by Meta's document", async () => {
    const graph = fake();
    const { key } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    await openWindow(graph, phoneNumberId, [TO]);
    const bytes = webp(512, 512);
    network.use(
      http.get(`${MEDIA_HOST}/s/ok.webp`, () =>
        HttpResponse.arrayBuffer(bytes.slice().buffer, { headers: { "Content-Type": "image/webp" } }),
      ),
    );
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_number: [TO],
        type: "sticker",
        media_url: `${MEDIA_HOST}/s/ok.webp`,
      },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    expect((await waitForMessages(key, [id]))[0]?.status).toBe("sent");
    const [sent] = graph.sendsOf(id);
    expect(sent?.body).toMatchObject({
      type: "sticker",
      sticker: { link: expect.stringMatching(/\/media\/[0-9a-f-]+\?expires=/) },
    });
    expect(Object.keys((sent?.body as { sticker?: object } | undefined)?.sticker ?? {})).toEqual(["link"]);
    expect(checkBody("sendMessage", sent?.body)).toEqual([]);
  });

  it("a contact's sticker is an incoming sticker, its WebP downloaded once", async () => {
    const graph = fake();
    network.use(http.get(`${MEDIA_DOWNLOAD_URL}*`, ({ request }) => graph.downloadMedia(request)));
    const { key, accountId } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    const bytes = webp(512, 512, { animated: true });
    const wamid = graph.queueIncomingSticker({ phoneNumberId, from: "14155550123", animated: true, bytes });
    const posted = await deliverWebhooks(graph);
    expect(checkWebhook(JSON.parse(posted[0]?.body ?? "{}"))).toEqual([]);
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE provider_message_id = ?")
      .bind(wamid)
      .first<{ id: string }>();
    const id = row?.id ?? "";
    for (let i = 0; i < 10 && !(await env.MEDIA.head(incomingMediaKey(id))); i++)
      await runDurableObjectAlarm(sessionStub(session));
    expect(await getMessage(key, id)).toMatchObject({
      type: "sticker",
      direction: "incoming",
      content: null,
    });
    const media = await call("GET", `/v1/chatapp/messages/${id}/media`, { key });
    expect(media.status).toBe(200);
    expect(media.headers.get("Content-Type")).toBe("image/webp");
    const kept = await env.MEDIA.get(incomingMediaKey(id));
    expect(new Uint8Array((await kept?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(bytes);
  });
});
