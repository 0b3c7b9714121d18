import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { campaignMessages, command, createCampaign, recipients, waitForCampaign } from "./campaign-fixtures";
import { call, createAccount, expectProblem } from "./helpers";
import { balanceOf, connectedSession, getMessage } from "./message-fixtures";

// Campaigns of a location, contact cards, reply buttons or a list (docs/campaigns.md, Campaigns): every
// recipient's message carries the campaign's object in its metadata, as a send's would, priced by
// its type; the object travels in the field named after the type, and only there.

const STORE = { latitude: 38.7223, longitude: -9.1393, name: "Lisbon store" };
const CARD = { name: { formatted_name: "Ana Silva" }, phones: [{ phone: "+351 912 345 678" }] };
const BUTTONS = {
  type: "button",
  body: { text: "Our sale starts today. Interested?" },
  action: { buttons: [{ type: "reply", reply: { id: "yes", title: "Yes" } }] },
};

describe("campaigns of locations, contact cards and interactive messages", () => {
  it.each([
    ["location", { location: STORE }, "Lisbon store", "PRICE_LOCATION"],
    ["contacts", { contacts: [CARD] }, "Ana Silva", "PRICE_CONTACTS"],
    ["interactive", { interactive: BUTTONS }, BUTTONS.body.text, "PRICE_INTERACTIVE"],
  ] as const)(
    "a %s campaign gives each recipient its object, its label as content, at its type's price",
    async (type, field, label, price) => {
      const { key, accountId } = await createAccount(10);
      const session = await connectedSession(key);
      const draft = await createCampaign(key, {
        chatapp_session_ids: [session.id],
        type,
        content: null,
        ...field,
        recipients: recipients(3),
      });
      expect(draft).toMatchObject({
        type,
        content: null,
        location: null,
        contacts: null,
        interactive: null,
        ...field,
      });
      expect((await command(key, draft.id, "start")).status).toBe(200);
      const done = await waitForCampaign(key, draft.id, (c) => c.status === "completed");
      expect(done.stats).toMatchObject({ total: 3, failed: 0 });
      const each = Math.round(Number(env[price]) * 100);
      expect(await balanceOf(accountId)).toBe((1000 - 3 * each) / 100);
      const messages = await campaignMessages(draft.id);
      expect(messages.map((m) => m.content)).toEqual([label, label, label]);
      for (const m of messages) expect(JSON.parse(m.metadata)).toMatchObject(field);
      const shown = await getMessage(key, messages[0]?.id ?? "");
      expect(shown).toMatchObject({ type, status: expect.stringMatching(/^(sent|delivered|read)$/) });
    },
  );

  it("refuses the object missing, on another type, or beside content or media (422 naming the field)", async () => {
    const { key } = await createAccount(10);
    const session = await connectedSession(key);
    const base = { name: "Run", chatapp_session_ids: [session.id] };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, type: "location" }, "location"],
      [{ ...base, type: "text", content: "Hi", location: STORE }, "location"],
      [{ ...base, type: "contacts", contacts: [CARD], content: "Hi" }, "content"],
      [
        { ...base, type: "interactive", interactive: BUTTONS, media_url: "https://cdn.example.test/a.png" },
        "media_url",
      ],
      [{ ...base, type: "contacts", contacts: [{ name: { formatted_name: "X" } }] }, "contacts.0.phones"],
    ];
    for (const [body, field] of cases) {
      const res = await call("POST", "/v1/chatapp/campaigns", { key, body });
      expectProblem(res, 422, "validation_failed");
      expect(Object.keys((res.body as { errors?: object }).errors ?? {}), field).toContain(field);
    }
  });
});
