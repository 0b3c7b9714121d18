import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { checkBody, checkWebhook } from "../../fakes/cloud-api/schema";
import { accountD1 } from "../databases";
import { call, createAccount } from "../helpers";
import { balanceOf, getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { openWindow, useExampleNumber } from "./sessions-fixtures";
import { deliverWebhooks, linkNumber } from "./webhooks-fixtures";

// Contact cards on a Cloud API session (docs/messages.md, Sending messages → Contact cards), against the
// fake Graph API: a send is Meta's `ContactsMessage` with the stored cards as they are (checked by
// the fake against the document's `ContactObject`), and a contact's cards arrive as
// `ContactSharingMessage` (`ContactObject_1`, any field possibly missing).

const TO = "+14155552671";
/** PRICE_CONTACTS (wrangler.toml) in minor units. */
const PRICE = Math.round(Number(env.PRICE_CONTACTS) * 100);

const CARD = {
  name: { formatted_name: "Ana Silva", first_name: "Ana", last_name: "Silva" },
  phones: [{ phone: "+351 912 345 678", type: "WORK", wa_id: "351912345678" }],
  emails: [{ email: "ana@example.com", type: "WORK" }],
  org: { company: "Acme", title: "Agent" },
  urls: [{ url: "https://example.com/support", type: "WORK" }],
};

const meta = useExampleNumber();

interface Shown extends Message {
  type: string;
  direction: string;
  content: string | null;
  metadata: Message["metadata"] & { contacts?: unknown };
}

describe("Cloud API: contact cards", () => {
  it("are Meta's ContactsMessage with the stored cards as they are, sent, and priced PRICE_CONTACTS", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, [TO]);
    const desk = { name: { formatted_name: "Help desk" }, phones: [{ phone: "+14155550100" }] };
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: { chatapp_session_id: session, to_number: [TO], type: "contacts", contacts: [CARD, desk] },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    expect((await waitForMessages(key, [id]))[0]?.status).toBe("sent");

    const sends = meta.graph.sendsOf(id);
    expect(sends).toHaveLength(1);
    expect(sends[0]?.body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "14155552671",
      type: "contacts",
      biz_opaque_callback_data: id,
      contacts: [CARD, desk],
    });
    expect(checkBody("sendMessage", sends[0]?.body)).toEqual([]);
    expect(meta.graph.invalidBodies).toEqual([]);
    expect(await getMessage(key, id)).toMatchObject({
      type: "contacts",
      status: "sent",
      content: "Ana Silva, Help desk",
      cost: PRICE / 100,
      metadata: { gateway: "cloud_api", contacts: [CARD, desk] },
    });
    expect(await balanceOf(accountId)).toBe((1000 - PRICE) / 100);
  });

  it("a contact's shared cards are an incoming contacts message; a card without a name is left out, addresses kept", async () => {
    const { key, accountId } = await createAccount(10);
    await linkNumber(key, meta.number);
    const shared = [
      {
        name: { first_name: "Lucía", last_name: "Gómez", formatted_name: "Lucía Gómez" },
        org: { company: "Google" },
        phones: [{ phone: "+1 (983) 555-2319", wa_id: "19835552319", type: "MOBILE" }],
        addresses: [{ city: "Menlo Park", country_code: "US", type: "Home" }],
        birthday: "1999-01-23",
      },
      { phones: [{ phone: "+1 555 0000" }] },
    ];
    const wamid = meta.graph.queueIncomingContacts({
      phoneNumberId: meta.number.phoneNumberId,
      from: TO,
      contacts: shared,
    });
    const posted = await deliverWebhooks(meta.graph);
    expect(posted.map((hook) => hook.res.body)).toEqual([{ success: true, ignored: false }]);
    expect(checkWebhook(JSON.parse(posted[0]?.body ?? "{}"))).toEqual([]);

    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM messages WHERE provider_message_id = ?")
      .bind(wamid)
      .first<{ id: string }>();
    const shown = (await getMessage(key, row?.id ?? "")) as Shown;
    expect(shown).toMatchObject({
      type: "contacts",
      direction: "incoming",
      content: "Lucía Gómez",
      from_number: TO,
      media_url: null,
    });
    expect(shown.metadata.contacts).toEqual([shared[0]]);
  });
});
