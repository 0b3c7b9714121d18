import { env, runDurableObjectAlarm } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { incomingMediaKey } from "../../src/media/incoming";
import { PUBLIC_URL } from "../gateway-config";
import { call, createAccount, createSession, sessionStub } from "../helpers";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Evolution API's incoming media (README, Incoming media): the session object asks
// `POST /chat/getBase64FromMediaMessage/{instance}` once for the message's id, decodes the base64
// and keeps the bytes in R2.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const BYTES = new TextEncoder().encode("an image from Evolution");

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

async function connectedEvolutionSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
    sender: OWNER_JID,
  });
  return { id: session.id, name };
}

const mediaCalls = () => evolution.calls.filter((c) => c.startsWith("POST /chat/getBase64FromMediaMessage/"));

describe("Evolution API incoming media", () => {
  it("downloads the media once by the message id, keeps it and serves it", async () => {
    const { key, accountId } = await createAccount();
    const { id: sessionId, name } = await connectedEvolutionSession(key);
    const data = evolution.incomingImage(name, "3EB0MEDIA0001", "+14155550199", BYTES);
    await postEvolutionEvent(name, "messages.upsert", data);
    await postEvolutionEvent(name, "messages.upsert", data);
    const row = await env.DB.prepare(
      "SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'",
    )
      .bind(accountId)
      .first<{ id: string }>();
    const id = row?.id ?? "";
    for (let i = 0; i < 10 && !(await env.MEDIA.head(incomingMediaKey(id))); i++)
      await runDurableObjectAlarm(sessionStub(sessionId));
    await runDurableObjectAlarm(sessionStub(sessionId));

    expect(mediaCalls()).toEqual([`POST /chat/getBase64FromMediaMessage/${name}`]);
    const body = evolution.bodies.find((b) =>
      b.call.startsWith("POST /chat/getBase64FromMediaMessage/"),
    )?.body;
    expect(body).toEqual({ message: { key: { id: "3EB0MEDIA0001" } } });
    const shown = await call<{ data: { media_url: string; type: string } }>(
      "GET",
      `/v1/chatapp/messages/${id}`,
      {
        key,
      },
    );
    expect(shown.body.data).toMatchObject({
      type: "image",
      media_url: `${PUBLIC_URL}/v1/chatapp/messages/${id}/media`,
    });
    const res = await call("GET", `/v1/chatapp/messages/${id}/media`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/jpeg");
    expect(res.text).toBe("an image from Evolution");
  });

  it("records an error when Evolution no longer holds the message (400), without trying again", async () => {
    const { key, accountId } = await createAccount();
    const { id: sessionId, name } = await connectedEvolutionSession(key);
    const data = evolution.incomingImage(name, "3EB0MEDIA0002", "+14155550199", BYTES);
    evolution.media.clear();
    await postEvolutionEvent(name, "messages.upsert", data);
    const row = await env.DB.prepare(
      "SELECT id FROM messages WHERE account_id = ? AND direction = 'incoming'",
    )
      .bind(accountId)
      .first<{ id: string }>();
    let metadata: Record<string, unknown> = {};
    for (let i = 0; i < 10 && !metadata.media_error; i++) {
      await runDurableObjectAlarm(sessionStub(sessionId));
      const found = await env.DB.prepare("SELECT metadata FROM messages WHERE id = ?")
        .bind(row?.id ?? "")
        .first<{ metadata: string }>();
      metadata = JSON.parse(found?.metadata ?? "{}");
    }
    expect(metadata.media_error).toMatchObject({ reason: "http_error", tries: 1 });
    expect(mediaCalls()).toHaveLength(1);
  });
});
