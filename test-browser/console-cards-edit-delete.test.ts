import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, baseUrl, createAccount } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";
import { connectedSession, signIn, until, watchErrors } from "./console-page";

// The console's contact cards (docs/messages.md, Sending messages → Contact cards) and its delete and edit
// actions on a sent message's page (docs/messages.md, Chat actions): what the page shows, and what the API
// says after a click.

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const CONTACT = "+14155552672";

type Message = { id: string; status: string; content: string | null; metadata: Record<string, unknown> };

async function message(key: string, id: string): Promise<Message> {
  const res = await api<{ data: Message }>("GET", `/v1/chatapp/messages/${id}`, { token: key });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function send(key: string, body: Record<string, unknown>): Promise<string> {
  const res = await api<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
    token: key,
    body: { to_number: [CONTACT], ...body },
  });
  expect(res.status).toBe(201);
  return res.body.data.messages[0]?.id ?? "";
}

async function openMessage(page: Page, id: string): Promise<void> {
  await page.goto(`${baseUrl()}/console#/messages/${encodeURIComponent(id)}`);
  await page.locator("#timeline").waitFor();
}

describe("the web console: contact cards", () => {
  it("shows each card: name, workplace, a phone linked to its WhatsApp chat, email and web links", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await send(apiKey, {
      chatapp_session_id: session,
      type: "contacts",
      contacts: [
        {
          name: { formatted_name: "Ana Silva" },
          phones: [{ phone: "+351 912 345 678", type: "WORK", wa_id: "351912345678" }],
          emails: [{ email: "ana@example.com" }],
          org: { company: "Acme", title: "Agent" },
          urls: [{ url: "https://example.com/support" }],
        },
        { name: { formatted_name: "<b>Help desk</b>" }, phones: [{ phone: "+14155550100" }] },
      ],
    });
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    await page.locator("#message-contacts").waitFor();
    expect(await page.locator("#contact-cards-title").textContent()).toBe("Contact cards");
    const first = page.locator("#contact-card-0");
    expect(await first.locator("h3").textContent()).toBe("Ana Silva");
    expect(await first.locator(".card-org").textContent()).toBe("Agent, Acme");
    expect(await first.locator(".card-phone").textContent()).toBe("+351 912 345 678 (WORK)");
    expect(await first.locator(".card-phone a").getAttribute("href")).toBe("https://wa.me/351912345678");
    expect(await first.locator(".card-email a").getAttribute("href")).toBe("mailto:ana@example.com");
    expect(await first.locator(".card-url a").getAttribute("href")).toBe("https://example.com/support");
    // A name is text, never markup; a phone without a WhatsApp id is not a link.
    const second = page.locator("#contact-card-1");
    expect(await second.locator("h3").textContent()).toBe("<b>Help desk</b>");
    expect(await second.locator("b").count()).toBe(0);
    expect(await second.locator(".card-phone a").count()).toBe(0);
    await screenshot(page, "console-message-contacts");
    expect(errors).toEqual([]);
  });
});

describe("the web console: delete and edit", () => {
  it("edits a sent text from its page, then deletes it for everyone; the buttons go once it is deleted", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await send(apiKey, { chatapp_session_id: session, type: "text", content: "See you at 5" });
    await until(async () => ((await message(apiKey, id)).status === "queued" ? undefined : true));
    const page = await newPage(browser);
    const errors = watchErrors(page);
    page.on("dialog", (dialog) => dialog.accept());
    await signIn(page, apiKey);
    await openMessage(page, id);
    await page.locator("#edit-message").waitFor({ state: "visible" });
    expect(await page.locator("#edit-form").isVisible()).toBe(false);

    await page.click("#edit-message");
    expect(await page.locator("#edit-content").inputValue()).toBe("See you at 5");
    await page.fill("#edit-content", "See you at 6");
    await page.click("#edit-save");
    await page.locator("#chat-action-result .success").waitFor();
    expect(await page.locator("#chat-action-result").textContent()).toBe("Edited.");
    const edited = await message(apiKey, id);
    expect(edited.content).toBe("See you at 6");
    expect(edited.metadata.edits).toEqual([{ content: "See you at 5", at: expect.any(String) }]);
    expect(await page.locator("#edit-form").isVisible()).toBe(false);
    await screenshot(page, "console-message-edited");

    await page.click("#delete-message");
    await until(
      async () => (await page.locator("#chat-action-result").textContent()) === "Deleted for everyone.",
    );
    expect((await message(apiKey, id)).metadata.deleted_at).toEqual(expect.any(String));
    expect(await page.locator("#delete-message").isVisible()).toBe(false);
    expect(await page.locator("#edit-message").isVisible()).toBe(false);
    expect(errors).toEqual([]);
  });

  it("shows the API's problem when an edit is refused, and changes nothing", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await send(apiKey, { chatapp_session_id: session, type: "text", content: "Hello" });
    await until(async () => ((await message(apiKey, id)).status === "queued" ? undefined : true));
    const page = await newPage(browser);
    await signIn(page, apiKey);
    await openMessage(page, id);
    await page.click("#edit-message");
    await page.fill("#edit-content", "");
    await page.click("#edit-save");
    await page.locator("#chat-action-result .problem, #chat-action-result [role=alert]").first().waitFor();
    expect(await page.locator("#chat-action-result").textContent()).toContain("content");
    expect((await message(apiKey, id)).content).toBe("Hello");
  });

  it("offers neither on a contact's message", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const res = await api<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
      token: apiKey,
      body: { from_number: CONTACT, type: "text", content: "Hi" },
    });
    const page = await newPage(browser);
    await signIn(page, apiKey);
    await openMessage(page, res.body.data.id);
    await page.locator("#mark-read").waitFor({ state: "visible" });
    expect(await page.locator("#delete-message").isVisible()).toBe(false);
    expect(await page.locator("#edit-message").isVisible()).toBe(false);
  });
});

describe("the web console: polls", () => {
  it("shows the question, each option's votes as text, and how many contacts voted", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await send(apiKey, {
      chatapp_session_id: session,
      type: "poll",
      poll: { question: "Which day suits you?", options: ["Monday", "Tuesday", "<i>Friday</i>"] },
    });
    const vote = (from: string, options: string[]) =>
      api("POST", `/sandbox/sessions/${session}/inbound`, {
        token: apiKey,
        body: { from_number: from, type: "poll_vote", reply_to: id, poll_vote: { options } },
      });
    await until(async () => ((await message(apiKey, id)).status === "queued" ? undefined : true));
    expect((await vote(CONTACT, ["Tuesday"])).status).toBe(200);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    await page.locator("#message-poll").waitFor();
    expect(await page.locator("#poll-question").textContent()).toBe("Which day suits you?");
    const options = page.locator("#poll-options li");
    expect(await options.allTextContents()).toEqual([
      "Monday 0 votes",
      "Tuesday 1 vote",
      "<i>Friday</i> 0 votes",
    ]);
    expect(await page.locator("#poll-options i").count()).toBe(0);
    expect(await page.locator("#poll-voters").textContent()).toBe("1");
    await screenshot(page, "console-message-poll");
    expect(errors).toEqual([]);
  });
});

describe("the web console: stickers", () => {
  /** A 1×1 lossless WebP, the bytes of the kept sticker. */
  const WEBP = Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64");

  it("shows a contact's kept sticker as an image, fetched with the console's key", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const res = await api<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
      token: apiKey,
      body: {
        from_number: CONTACT,
        type: "sticker",
        media_url: "https://media.chatapp-example.net/in/wave.webp",
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.data.id;
    // The Worker under `npm run dev` reaches no https host here: the kept bytes are answered at the
    // page's boundary, in the shape of `GET /v1/chatapp/messages/{id}/media` (docs/messages.md, Incoming
    // media).
    const page = await newPage(browser);
    const errors = watchErrors(page);
    const authorizations: (string | undefined)[] = [];
    await page.route(`${baseUrl()}/v1/chatapp/messages/${id}/media`, (route) => {
      authorizations.push(route.request().headers().authorization);
      return route.fulfill({
        status: 200,
        body: WEBP,
        headers: {
          "Content-Type": "image/webp",
          "Content-Disposition": "inline",
          "X-Content-Type-Options": "nosniff",
        },
      });
    });
    await signIn(page, apiKey);
    await openMessage(page, id);
    const image = page.locator("#message-media img");
    await image.waitFor();
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>("#message-media img");
      return img?.complete && img.naturalWidth > 0;
    });
    expect(await image.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight])).toEqual([
      1, 1,
    ]);
    expect(await image.getAttribute("alt")).toBe(`sticker from ${CONTACT}`);
    expect(authorizations).toEqual([`Bearer ${apiKey}`]);
    expect(errors).toEqual([]);
  });
});
