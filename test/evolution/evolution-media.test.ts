import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { PUBLIC_URL } from "../gateway-config";
import { call, createAccount, createSession } from "../helpers";
import { MEDIA_HOST, mediaBytes } from "../media-host";
import { type SendResponse, waitForMessages } from "../message-fixtures";
import { network } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Evolution API, like WAHA, runs inside the operator's network: it gets a signed link of ours to
// the stored copy, never the caller's media_url (docs/security.md, Media).

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

async function connectedEvolutionSession(key: string) {
  const { session } = await createSession(key);
  const data = evolution.link(session.session_id, PHONE, "Ada");
  await postEvolutionEvent(session.session_id, "connection.update", data, { sender: OWNER_JID });
  return session.id;
}

describe("media on Evolution API", () => {
  it("sends a document as a signed link of ours with its stored mimetype and the caller's file name", async () => {
    const hits: string[] = [];
    network.use(
      http.get(`${MEDIA_HOST}/files/Price%20list.pdf`, ({ request }) => {
        hits.push(request.url);
        return HttpResponse.arrayBuffer(mediaBytes("prices").slice().buffer, {
          headers: { "Content-Type": "application/pdf" },
        });
      }),
    );
    const { key } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_number: ["+14155550123", "+14155550124"],
        type: "document",
        media_url: `${MEDIA_HOST}/files/Price%20list.pdf`,
        content: "Prices",
      },
    });
    expect(res.status).toBe(201);
    await waitForMessages(
      key,
      res.body.data.messages.map((m) => m.id),
    );

    const sends = evolution.bodies.filter((b) => b.call.startsWith("POST /message/sendMedia/"));
    expect(sends).toHaveLength(2);
    for (const { body } of sends) {
      const media = body as { media: string; mimetype: string; fileName: string; mediatype: string };
      expect(media).toMatchObject({
        mediatype: "document",
        mimetype: "application/pdf",
        fileName: "Price list.pdf",
      });
      expect(media.media.startsWith(`${PUBLIC_URL}/media/`)).toBe(true);
      const link = new URL(media.media);
      const served = await call("GET", `${link.pathname}${link.search}`);
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe("application/pdf");
      expect(new TextEncoder().encode(served.text)).toEqual(mediaBytes("prices"));
    }
    expect(JSON.stringify(evolution.bodies)).not.toContain(MEDIA_HOST);
    expect(hits).toHaveLength(1);
  });
});
