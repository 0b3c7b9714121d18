import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, baseUrl, createAccount } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";
import { connectedSession, signIn, until, watchErrors } from "./console-page";

// The console's view of locations (docs/messages.md, Sending messages → Locations) and its Mark read action
// (docs/messages.md, Chat actions): what the page shows, and what the API says after a click.

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const CONTACT = "+14155552672";

type Message = {
  id: string;
  status: string;
  direction: string;
  content: string | null;
  read_at: string | null;
  metadata: Record<string, unknown>;
};

/** Message `id` through the API. */
async function message(key: string, id: string): Promise<Message> {
  const res = await api<{ data: Message }>("GET", `/v1/chatapp/messages/${id}`, { token: key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** A message from the contact on `session` (the sandbox's inbound); its id. */
async function inbound(key: string, session: string, body: Record<string, unknown>): Promise<string> {
  const res = await api<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
    token: key,
    body: { from_number: CONTACT, ...body },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/** Sends one message through the API; its id. */
async function send(key: string, body: Record<string, unknown>): Promise<string> {
  const res = await api<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
    token: key,
    body: { to_number: [CONTACT], ...body },
  });
  expect(res.status).toBe(201);
  const [sent] = res.body.data.messages;
  if (!sent) throw new Error("no message sent");
  return sent.id;
}

/** Opens message `id`'s page in the console and waits for it to be drawn. */
async function openMessage(page: Page, id: string): Promise<void> {
  await page.goto(`${baseUrl()}/console#/messages/${encodeURIComponent(id)}`);
  await page.locator("#timeline").waitFor();
}

describe("the web console: locations", () => {
  it("shows a sent location's place, coordinates and a map link that opens in a new tab", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await send(apiKey, {
      chatapp_session_id: session,
      type: "location",
      location: { latitude: 38.7223, longitude: -9.1393, name: "Lisbon store", address: "Rua Augusta 1" },
    });
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    const section = page.locator("#message-location");
    await section.waitFor();
    expect(await section.locator("h2").textContent()).toBe("Location");
    expect(await page.locator("#location-name").textContent()).toBe("Lisbon store");
    expect(await page.locator("#location-address").textContent()).toBe("Rua Augusta 1");
    expect(await page.locator("#location-coordinates").textContent()).toBe("38.7223, -9.1393");
    const link = page.locator("#location-map");
    expect(await link.textContent()).toBe("Open on the map");
    expect(await link.getAttribute("href")).toBe(
      "https://www.openstreetmap.org/?mlat=38.7223&mlon=-9.1393#map=17/38.7223/-9.1393",
    );
    expect(await link.getAttribute("target")).toBe("_blank");
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
    // An outgoing message is never marked read by the console.
    expect(await page.locator("#mark-read").isVisible()).toBe(false);
    await screenshot(page, "console-message-location");

    // The list shows the name as the message's content.
    await page.goto(`${baseUrl()}/console#/messages`);
    const row = page.locator("tbody tr").filter({ has: page.locator(`a[href="#/messages/${id}"]`) });
    await row.waitFor();
    expect(await row.locator("td").nth(4).textContent()).toBe("location");
    expect(await row.locator("td").nth(5).textContent()).toBe("Lisbon store");
    expect(errors).toEqual([]);
  });

  it("shows a bare point (no name, no address) by its coordinates, in the list and on its page", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await inbound(apiKey, session, {
      type: "location",
      location: { latitude: -33.8568, longitude: 151.2153 },
    });
    expect((await message(apiKey, id)).content).toBeNull();
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/messages"]');
    const row = page.locator("tbody tr").filter({ has: page.locator(`a[href="#/messages/${id}"]`) });
    await row.waitFor();
    expect(await row.locator("td").nth(5).textContent()).toBe("-33.8568, 151.2153");

    await openMessage(page, id);
    await page.locator("#message-location").waitFor();
    expect(await page.locator("#location-name").count()).toBe(0);
    expect(await page.locator("#location-address").count()).toBe(0);
    expect(await page.locator("#location-coordinates").textContent()).toBe("-33.8568, 151.2153");
    expect(await page.locator("#location-map").getAttribute("href")).toBe(
      "https://www.openstreetmap.org/?mlat=-33.8568&mlon=151.2153#map=17/-33.8568/151.2153",
    );
    expect(errors).toEqual([]);
  });

  it("shows a place's name as text, never as markup", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const name = "<img src=x onerror=\"document.title='ran'\">";
    const id = await inbound(apiKey, session, {
      type: "location",
      location: { latitude: 1.5, longitude: 2.5, name, address: "<b>Main St</b>" },
    });
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    await page.locator("#message-location").waitFor();
    expect(await page.locator("#location-name").textContent()).toBe(name);
    expect(await page.locator("#location-address").textContent()).toBe("<b>Main St</b>");
    expect(await page.locator("#message-location img, #message-location b").count()).toBe(0);
    expect(await page.title()).not.toBe("ran");
    expect(errors).toEqual([]);
  });
});

describe("the web console: Mark read", () => {
  it("marks an incoming message and the chat's earlier one read, and redraws the message", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const earlier = await inbound(apiKey, session, { type: "text", content: "Hello?" });
    const id = await inbound(apiKey, session, { type: "text", content: "Is it open on Sunday?" });
    expect((await message(apiKey, id)).status).toBe("delivered");
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    expect(await page.locator("#message-status .badge").textContent()).toBe("delivered");
    // An incoming message's own stages: received, then read.
    expect(await page.locator("#timeline li strong").allTextContents()).toEqual(["Received", "Read"]);
    expect(await page.locator("#timeline li").nth(1).textContent()).toBe("Read not yet");
    const button = page.locator("#mark-read");
    expect(await button.isVisible()).toBe(true);
    expect(await button.textContent()).toBe("Mark read");

    await button.click();
    const outcome = page.locator("#mark-read-result .success");
    await outcome.waitFor();
    expect(await outcome.textContent()).toBe("Marked 2 messages read.");
    expect(await outcome.getAttribute("role")).toBe("status");
    expect(await page.locator("#message-status .badge").textContent()).toBe("read");
    expect(await button.isVisible()).toBe(false);

    const marked = await message(apiKey, id);
    expect(marked.status).toBe("read");
    expect(marked.read_at).toEqual(expect.any(String));
    const readTime = page.locator("#timeline li").nth(1).locator("time");
    expect(await readTime.getAttribute("datetime")).toBe(marked.read_at);
    const before = await message(apiKey, earlier);
    expect(before.status).toBe("read");
    expect(before.read_at).toEqual(expect.any(String));
    await screenshot(page, "console-mark-read");

    // A message already read offers no Mark read; the outcome stays through the page's redraws.
    await page.waitForTimeout(2_500);
    expect(await outcome.textContent()).toBe("Marked 2 messages read.");
    await openMessage(page, earlier);
    await page.locator("#message-status .badge", { hasText: "read" }).waitFor();
    expect(await page.locator("#mark-read").isVisible()).toBe(false);
    expect(errors).toEqual([]);
  });

  it("offers no Mark read on an outgoing message", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await send(apiKey, { chatapp_session_id: session, type: "text", content: "Hi" });
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    expect(await page.locator("#mark-read").isVisible()).toBe(false);
    // Through every status it takes, queued to read (the sandbox's receipts come within 600 ms).
    await page.locator("#message-status .badge", { hasText: "read" }).waitFor({ timeout: 15_000 });
    expect((await message(apiKey, id)).direction).toBe("outgoing");
    expect(await page.locator("#mark-read").isVisible()).toBe(false);
    expect(errors).toEqual([]);
  });

  it("shows the API's problem when the session is not connected, and leaves the message as it was", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await inbound(apiKey, session, { type: "text", content: "Anyone there?" });
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    const button = page.locator("#mark-read");
    expect(await button.isVisible()).toBe(true);
    const drop = await api("POST", `/sandbox/sessions/${session}/drop`, { token: apiKey, body: {} });
    expect(drop.status).toBe(200);

    await button.click();
    const problem = page.locator("#mark-read-result .problem");
    await problem.waitFor();
    expect(await problem.getAttribute("role")).toBe("alert");
    expect(await problem.locator("strong").textContent()).toBe("Session is not connected");
    expect(await page.locator("#mark-read-result .success").count()).toBe(0);
    // Still delivered, so still offered; the button is usable again.
    expect(await page.locator("#message-status .badge").textContent()).toBe("delivered");
    await until(async () => ((await button.isEnabled()) ? true : undefined));
    expect(await button.isVisible()).toBe(true);
    const after = await message(apiKey, id);
    expect(after.status).toBe("delivered");
    expect(after.read_at).toBeNull();
    // The one error is the browser's note of the 409.
    expect(errors.filter((text) => !/409/.test(text))).toEqual([]);
  });
});
