import { env, runDurableObjectAlarm } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { incomingMediaKey } from "../../src/media/incoming";
import { accountD1 } from "../databases";
import { PUBLIC_URL } from "../gateway-config";
import { call, createAccount, sessionStub } from "../helpers";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha, postWahaEvent } from "./fake-waha";

// WAHA's incoming media (docs/messages.md, Incoming media): its `message` event's `media.url` points at
// WAHA's own files (`/api/files/…`, behind the API key); the session object downloads the file
// once from WAHA_URL with `X-Api-Key`, keeps it in R2 and serves it to the account.

useNetwork();

const BYTES = new TextEncoder().encode("a voice note from WAHA");

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

describe("WAHA incoming media", () => {
  it("downloads WAHA's file once with the API key, keeps it and serves it", async () => {
    const { key, accountId } = await createAccount();
    const { id: sessionId, name } = await connectedWahaSession(waha, key);
    const url = waha.receiveFile(name, "AAAB.oga", BYTES, "audio/ogg");
    const payload = {
      id: "false_14155550199@c.us_AAAB",
      from: "14155550199@c.us",
      fromMe: false,
      body: "",
      hasMedia: true,
      media: { url, mimetype: "audio/ogg; codecs=opus", filename: null, error: null },
    };
    await postWahaEvent(name, "message", payload);
    await postWahaEvent(name, "message", payload);
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>();
    const id = row?.id ?? "";

    for (let i = 0; i < 10 && waha.calls.filter((c) => c.startsWith("GET /api/files/")).length === 0; i++)
      await runDurableObjectAlarm(sessionStub(sessionId));
    await runDurableObjectAlarm(sessionStub(sessionId));

    expect(waha.calls.filter((c) => c.startsWith("GET /api/files/"))).toEqual([
      `GET /api/files/${name}/AAAB.oga`,
    ]);
    const shown = await call<{ data: { media_url: string; metadata: Record<string, unknown> } }>(
      "GET",
      `/v1/chatapp/messages/${id}`,
      { key },
    );
    expect(shown.body.data.media_url).toBe(`${PUBLIC_URL}/v1/chatapp/messages/${id}/media`);
    // WAHA's URL is never shown.
    expect(shown.body.data.metadata).toEqual({ media: { mimetype: "audio/ogg; codecs=opus" } });
    const res = await call("GET", `/v1/chatapp/messages/${id}/media`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("audio/ogg");
    expect(res.text).toBe("a voice note from WAHA");
    expect(await env.MEDIA.head(incomingMediaKey(id))).not.toBeNull();
  });

  it("keeps only the path of media.url: a file named on another host is fetched from WAHA_URL", async () => {
    const { key, accountId } = await createAccount();
    const { id: sessionId, name } = await connectedWahaSession(waha, key);
    waha.receiveFile(name, "AAAC.jpeg", BYTES, "image/jpeg");
    await postWahaEvent(name, "message", {
      id: "false_14155550199@c.us_AAAC",
      from: "14155550199@c.us",
      fromMe: false,
      body: "photo",
      hasMedia: true,
      media: { url: `https://evil.example.test/api/files/${name}/AAAC.jpeg`, mimetype: "image/jpeg" },
    });
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'")
      .bind(accountId)
      .first<{ id: string }>();
    for (let i = 0; i < 10; i++) {
      await runDurableObjectAlarm(sessionStub(sessionId));
      if (await env.MEDIA.head(incomingMediaKey(row?.id ?? ""))) break;
    }
    expect(waha.calls).toContain(`GET /api/files/${name}/AAAC.jpeg`);
    expect((await call("GET", `/v1/chatapp/messages/${row?.id}/media`, { key })).status).toBe(200);
  });
});
