import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { call, createAccount, createSession } from "../helpers";
import { MEDIA_HOST } from "../media-host";
import { type SendResponse, waitForMessages } from "../message-fixtures";
import { network, useNetwork } from "../network";
import { webp } from "../sticker-bytes";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Stickers through Evolution API (docs/messages.md, Sending messages → Stickers): `POST
// /message/sendSticker/{instance}` (`stickerMessageSchema`) with the signed link to our stored
// WebP, sent under an id of Baileys' choosing (`mediaSticker` hands on no `messageId`).

useNetwork();

const PHONE = "+14155552671";
const CONTACT = "+14155550123";

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

describe("Evolution API: stickers", () => {
  it("are POST /message/sendSticker with the signed link, stored as a stickerMessage", async () => {
    const { key } = await createAccount(10);
    const { session } = await createSession(key);
    const name = session.session_id;
    await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
      sender: "14155552671@s.whatsapp.net",
    });
    const bytes = webp(512, 512);
    network.use(
      http.get(`${MEDIA_HOST}/s/ok.webp`, () =>
        HttpResponse.arrayBuffer(bytes.slice().buffer, { headers: { "Content-Type": "image/webp" } }),
      ),
    );
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: [CONTACT],
        type: "sticker",
        media_url: `${MEDIA_HOST}/s/ok.webp`,
      },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [done] = await waitForMessages(key, [id]);
    const [sent] = evolution.sent;
    expect(sent?.path).toBe(`/message/sendSticker/${name}`);
    expect(sent?.body).toEqual({
      number: "14155550123",
      sticker: expect.stringMatching(/\/media\/[0-9a-f-]+\?expires=\d+&signature=[0-9a-f]{64}$/),
      messageId: clientMessageIdOf(id),
    });
    expect(sent?.record).toMatchObject({ messageType: "stickerMessage" });
    expect(done).toMatchObject({ status: "sent", type: "sticker", provider_message_id: sent?.id });
  });
});
