import { env, runDurableObjectAlarm } from "cloudflare:test";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { MEDIA_DOWNLOAD_URL } from "../../fakes/cloud-api/graph.ts";
import { incomingMediaKey } from "../../src/media/incoming";
import { accountD1 } from "../databases";
import { PUBLIC_URL } from "../gateway-config";
import { call, createAccount, sessionStub } from "../helpers";
import { network } from "../network";
import { alarmAt } from "./sessions-fixtures";
import { cloudApiSession, deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

// The Cloud API's incoming media (docs/messages.md, Incoming media): the webhook names a media id; the
// session object asks the Graph API for its URL (Retrieve Media URL) and downloads it with the
// number's token as Bearer (Download Media), once, into R2.

const fake = useFakeGraph();
const BYTES = new TextEncoder().encode("an image from Meta");

async function incomingId(accountId: string, phoneNumberId: string): Promise<string> {
  const row = await (await accountD1(accountId))
    .prepare(
      `SELECT id FROM messages WHERE direction = 'incoming' AND chatapp_session_id =
       (SELECT session_id FROM cloud_api_numbers WHERE phone_number_id = ?)`,
    )
    .bind(phoneNumberId)
    .first<{ id: string }>();
  return row?.id ?? "";
}

describe("Cloud API incoming media", () => {
  it("retrieves the media URL by id and downloads it with the token, once", async () => {
    const graph = fake();
    network.use(http.get(`${MEDIA_DOWNLOAD_URL}*`, ({ request }) => graph.downloadMedia(request)));
    const { key, accountId } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncomingImage({
      phoneNumberId,
      from: "14155550123",
      caption: "Look",
      mimeType: "image/png",
      mediaId: "1037543291543636",
      bytes: BYTES,
    });
    await deliverWebhooks(graph);
    const id = await incomingId(accountId, phoneNumberId);
    for (let i = 0; i < 10 && !(await env.MEDIA.head(incomingMediaKey(id))); i++)
      await runDurableObjectAlarm(sessionStub(session));
    await runDurableObjectAlarm(sessionStub(session));

    expect(graph.mediaCalls).toEqual(["url 1037543291543636", "download 1037543291543636"]);
    const shown = await call<{ data: { media_url: string } }>("GET", `/v1/chatapp/messages/${id}`, { key });
    expect(shown.body.data.media_url).toBe(`${PUBLIC_URL}/v1/chatapp/messages/${id}/media`);
    const res = await call("GET", `/v1/chatapp/messages/${id}/media`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/png");
    expect(res.text).toBe("an image from Meta");
  });

  it("tries again when the download fails, then records the error", async () => {
    const graph = fake();
    const downloads: string[] = [];
    network.use(
      http.get(`${MEDIA_DOWNLOAD_URL}*`, ({ request }) => {
        downloads.push(request.url);
        return new HttpResponse("busy", { status: 500 });
      }),
    );
    const { key, accountId } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    graph.queueIncomingImage({
      phoneNumberId,
      from: "14155550123",
      mediaId: "2037543291543636",
      bytes: BYTES,
    });
    await deliverWebhooks(graph);
    const id = await incomingId(accountId, phoneNumberId);
    let metadata: Record<string, unknown> = {};
    // Each try's backoff (1 minute, then 5) passes at once: the alarm runs as of 10 minutes on.
    for (let i = 1; i < 15 && !metadata.media_error; i++) {
      await alarmAt(session, Date.now() + i * 10 * 60_000);
      const row = await (await accountD1(accountId))
        .prepare("SELECT metadata FROM messages WHERE id = ?")
        .bind(id)
        .first<{ metadata: string }>();
      metadata = JSON.parse(row?.metadata ?? "{}");
    }
    expect(downloads).toHaveLength(3);
    expect(metadata.media_error).toMatchObject({ reason: "http_error", tries: 3 });
  });
});
