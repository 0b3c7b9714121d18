import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { isAnimatedWebp, stickerProblem } from "../src/media/sticker";
import { accountD1 } from "./databases";
import { call, createAccount, expectProblem } from "./helpers";
import { MEDIA_HOST } from "./media-host";
import {
  balanceOf,
  connectedSession,
  getMessage,
  type SendResponse,
  waitForMessages,
} from "./message-fixtures";
import { network } from "./network";
import { webp } from "./sticker-bytes";

// Stickers through the sandbox (docs/messages.md, Sending messages → Stickers): a WebP of 512×512 pixels, at
// most 100 KB static and 500 KB animated (Meta's "Supported media types"), fetched and stored as
// other media; anything else is refused before a charge.

const TO = "+14155552671";
const PRICE = Math.round(Number(env.PRICE_STICKER) * 100);

/** Serves `body` as `image/webp` (or `contentType`) at `path` on the media host. */
function serve(path: string, body: Uint8Array, contentType = "image/webp") {
  network.use(
    http.get(`${MEDIA_HOST}${path}`, () =>
      HttpResponse.arrayBuffer(body.slice().buffer, { headers: { "Content-Type": contentType } }),
    ),
  );
}

async function sendSticker(
  key: string,
  sessionId: string,
  path: string,
  extra: Record<string, unknown> = {},
) {
  return call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: {
      chatapp_session_id: sessionId,
      to_number: [TO],
      type: "sticker",
      media_url: `${MEDIA_HOST}${path}`,
      ...extra,
    },
  });
}

describe("stickers", () => {
  it("sends a 512×512 WebP: stored as media, priced PRICE_STICKER, received by the phone", async () => {
    const { key, accountId } = await createAccount(1);
    const session = await connectedSession(key);
    serve("/s/wave.webp", webp(512, 512, { animated: true, bytes: 300 * 1024 }));
    const res = await sendSticker(key, session.id, "/s/wave.webp");
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    expect((await waitForMessages(key, [id]))[0]?.status).toBe("sent");
    expect(await getMessage(key, id)).toMatchObject({
      type: "sticker",
      content: null,
      media_url: `${MEDIA_HOST}/s/wave.webp`,
      cost: PRICE / 100,
    });
    const row = await (await accountD1(accountId))
      .prepare("SELECT media_key, media_content_type FROM messages WHERE id = ?")
      .bind(id)
      .first<{ media_key: string; media_content_type: string }>();
    expect(row?.media_content_type).toBe("image/webp");
    expect((await env.MEDIA.get(row?.media_key ?? ""))?.size).toBe(300 * 1024);
    expect(await balanceOf(accountId)).toBe((100 - PRICE) / 100);
    const phone = await call<{ data: { message_id: string; type: string }[] }>(
      "GET",
      `/sandbox/sessions/${session.id}/received?to_number=${encodeURIComponent(TO)}`,
      { key },
    );
    expect(phone.body.data[0]).toMatchObject({ message_id: id, type: "sticker" });
  });

  it.each([
    ["not 512×512", webp(256, 256), "it is 256×256 pixels; a sticker is 512×512."],
    ["static over 100 KB", webp(512, 512, { bytes: 101 * 1024 }), "static sticker of 103424 bytes"],
    ["not WebP at all", new TextEncoder().encode("RIFF....WEBPnope"), "not a WebP image"],
  ])(
    "refuses a sticker %s: 422 media_unavailable not_a_sticker, nothing charged or kept",
    async (_, body, words) => {
      const { key, accountId } = await createAccount(1);
      const session = await connectedSession(key);
      serve("/s/bad.webp", body);
      const res = await sendSticker(key, session.id, "/s/bad.webp");
      expectProblem(res, 422, "media_unavailable");
      expect(res.body).toMatchObject({ reason: "not_a_sticker" });
      expect(String((res.body as { detail?: string }).detail)).toContain(words);
      expect(await balanceOf(accountId)).toBe(1);
      const count = await (await accountD1(accountId))
        .prepare("SELECT COUNT(*) AS n FROM messages WHERE account_id = ?")
        .bind(accountId)
        .first<{ n: number }>();
      expect(count?.n).toBe(0);
    },
  );

  it("refuses what is over 500 KB, of another content type, or carries a caption", async () => {
    const { key } = await createAccount(1);
    const session = await connectedSession(key);
    serve("/s/huge.webp", webp(512, 512, { animated: true, bytes: 501 * 1024 }));
    const huge = await sendSticker(key, session.id, "/s/huge.webp");
    expectProblem(huge, 422, "media_unavailable");
    expect(huge.body).toMatchObject({ reason: "too_large" });
    expect((huge.body as { detail?: string }).detail).toContain("larger than 500 KB, the limit for sticker");
    serve("/s/cat.png", webp(512, 512), "image/png");
    expect((await sendSticker(key, session.id, "/s/cat.png")).body).toMatchObject({ reason: "wrong_type" });
    const captioned = await sendSticker(key, session.id, "/s/wave.webp", { content: "hi" });
    expectProblem(captioned, 422, "validation_failed");
    expect(Object.keys((captioned.body as { errors?: object }).errors ?? {})).toEqual(["content"]);
  });
});

describe("src/media/sticker.ts", () => {
  it("reads the Animation flag of VP8X and nothing else", () => {
    expect(isAnimatedWebp(webp(512, 512, { animated: true }))).toBe(true);
    expect(isAnimatedWebp(webp(512, 512))).toBe(false);
    expect(stickerProblem(webp(512, 512, { bytes: 100 * 1024 }))).toBeNull();
    expect(stickerProblem(webp(512, 512, { animated: true, bytes: 499 * 1024 }))).toBeNull();
  });
});
