import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, baseUrl, createAccount } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";
import { connectedSession, signIn, until, watchErrors } from "./console-page";

// The console's view of interactive messages (docs/messages.md, Sending messages → Buttons and lists): an
// interactive message's header, body, footer and buttons or list on its page, a contact's tap
// with a link to the message tapped, and the list's Type filter for both.

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const CONTACT = "+14155552672";
/** The statuses of a message the contact has, which the sandbox lets them tap. */
const ON_THE_NETWORK = new Set(["sent", "delivered", "read"]);

type Message = {
  id: string;
  type: string;
  status: string;
  direction: string;
  content: string | null;
  reply_to: string | null;
  metadata: Record<string, unknown>;
};

const BUTTONS = {
  type: "button",
  header: { type: "text", text: "Order A-17" },
  body: { text: "Your order A-17 has shipped." },
  footer: { text: "Reply any time" },
  action: {
    buttons: [
      { type: "reply", reply: { id: "track", title: "Track" } },
      { type: "reply", reply: { id: "help", title: "Talk to us" } },
      { type: "reply", reply: { id: "cancel-a17", title: "Cancel" } },
    ],
  },
};

const LIST = {
  type: "list",
  body: { text: "Pick a delivery slot." },
  action: {
    button: "Slots",
    sections: [
      {
        title: "Morning",
        rows: [
          { id: "mon-am", title: "Monday 9–12", description: "Driver calls ahead" },
          { id: "tue-am", title: "Tuesday 9–12" },
        ],
      },
      { title: "Evening", rows: [{ id: "mon-pm", title: "Monday 18–21", description: "Leave at the door" }] },
    ],
  },
};

/** Message `id` through the API. */
async function message(key: string, id: string): Promise<Message> {
  const res = await api<{ data: Message }>("GET", `/v1/chatapp/messages/${id}`, { token: key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Sends `interactive` to the contact from `session`; its id. */
async function sendInteractive(key: string, session: string, interactive: unknown): Promise<string> {
  const res = await api<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
    token: key,
    body: { chatapp_session_id: session, to_number: [CONTACT], type: "interactive", interactive },
  });
  expect(res.status).toBe(201);
  const [sent] = res.body.data.messages;
  if (!sent) throw new Error("no message sent");
  return sent.id;
}

/**
 * The contact's tap on choice `choice` of message `tapped` (the sandbox's inbound), once that
 * message is on the network; the tap's message.
 */
async function tap(key: string, session: string, tapped: string, choice: string): Promise<Message> {
  await until(async () => (ON_THE_NETWORK.has((await message(key, tapped)).status) ? true : undefined));
  const res = await api<{ data: Message }>("POST", `/sandbox/sessions/${session}/inbound`, {
    token: key,
    body: {
      from_number: CONTACT,
      type: "interactive_reply",
      reply_to: tapped,
      interactive_reply: { id: choice },
    },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** Opens message `id`'s page in the console and waits for it to be drawn. */
async function openMessage(page: Page, id: string): Promise<void> {
  await page.goto(`${baseUrl()}/console#/messages/${encodeURIComponent(id)}`);
  await page.locator("#timeline").waitFor();
}

/** The cells' texts of each row of the table in `within`. */
async function rows(within: Locator): Promise<string[][]> {
  return within
    .locator("tbody tr")
    .evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent ?? "")),
    );
}

describe("the web console: interactive messages", () => {
  it("shows reply buttons' header, body, footer, and each button's title and id", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await sendInteractive(apiKey, session, BUTTONS);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    const section = page.locator("#message-interactive");
    await section.waitFor();
    expect(await section.locator("h2").textContent()).toBe("Reply buttons");
    expect(await page.locator("#interactive-header").textContent()).toBe("Order A-17");
    expect(await page.locator("#interactive-body").textContent()).toBe("Your order A-17 has shipped.");
    expect(await page.locator("#interactive-footer").textContent()).toBe("Reply any time");
    const buttons = page.locator("#interactive-buttons li");
    expect(await buttons.count()).toBe(3);
    const shown = await buttons.evaluateAll((items) =>
      items.map((li) => [li.querySelector(".choice")?.textContent, li.querySelector("code")?.textContent]),
    );
    expect(shown).toEqual([
      ["Track", "track"],
      ["Talk to us", "help"],
      ["Cancel", "cancel-a17"],
    ]);
    // Labels drawn as the contact sees them, not controls the console would press.
    expect(await section.locator("button, a").count()).toBe(0);
    // The message's content is the body's text; it is not a tap.
    expect(await page.locator("#message-tap").count()).toBe(0);
    expect((await message(apiKey, id)).content).toBe("Your order A-17 has shipped.");
    await screenshot(page, "console-message-buttons");
    expect(errors).toEqual([]);
  });

  it("shows a list's button, its sections and their rows, and a row's tap with its description", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await sendInteractive(apiKey, session, LIST);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    const section = page.locator("#message-interactive");
    await section.waitFor();
    expect(await section.locator("h2").textContent()).toBe("List");
    expect(await page.locator("#interactive-body").textContent()).toBe("Pick a delivery slot.");
    // No header or footer was sent: none is drawn.
    expect(await page.locator("#interactive-header, #interactive-footer").count()).toBe(0);
    expect(await page.locator("#interactive-list-button").textContent()).toBe("Slots");
    const sections = section.locator(".interactive-section");
    expect(await sections.count()).toBe(2);
    expect(await sections.nth(0).locator("h3").textContent()).toBe("Morning");
    expect(await sections.nth(1).locator("h3").textContent()).toBe("Evening");
    expect(await rows(sections.nth(0))).toEqual([
      ["Monday 9–12", "Driver calls ahead", "mon-am"],
      ["Tuesday 9–12", "—", "tue-am"],
    ]);
    expect(await rows(sections.nth(1))).toEqual([["Monday 18–21", "Leave at the door", "mon-pm"]]);
    await screenshot(page, "console-message-list");

    const reply = await tap(apiKey, session, id, "mon-pm");
    await openMessage(page, reply.id);
    await page.locator("#message-tap").waitFor();
    expect(await page.locator("#tap-choice").textContent()).toBe("Tapped: Monday 18–21");
    expect(await page.locator("#tap-id").textContent()).toBe("mon-pm");
    expect(await page.locator("#tap-description").textContent()).toBe("Leave at the door");
    expect(await page.locator("#tap-answers").getAttribute("href")).toBe(`#/messages/${id}`);
    expect(errors).toEqual([]);
  });

  it("shows a tap's title and id, and links to the buttons it answers", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await sendInteractive(apiKey, session, BUTTONS);
    const reply = await tap(apiKey, session, id, "help");
    expect(reply).toMatchObject({ type: "interactive_reply", direction: "incoming", content: "Talk to us" });
    expect(reply.reply_to).toBe(id);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, reply.id);
    const section = page.locator("#message-tap");
    await section.waitFor();
    expect(await section.locator("h2").textContent()).toBe("Tap");
    expect(await page.locator("#tap-choice").textContent()).toBe("Tapped: Talk to us");
    expect(await page.locator("#tap-id").textContent()).toBe("help");
    // A button has no description.
    expect(await page.locator("#tap-description").count()).toBe(0);
    const link = page.locator("#tap-answers");
    expect(await link.getAttribute("href")).toBe(`#/messages/${id}`);
    expect(await page.locator("#message-interactive").count()).toBe(0);
    await screenshot(page, "console-message-tap");

    // The page polls while the tap is `delivered`; a poll that changes nothing leaves the link
    // (and the keyboard's focus on it) in place.
    await link.focus();
    await page.waitForTimeout(2_500);
    expect(await link.evaluate((a) => a === document.activeElement)).toBe(true);

    await link.click();
    await page.waitForURL(`**/console#/messages/${id}`);
    await page.locator("#message-interactive").waitFor();
    expect(await page.locator("#interactive-body").textContent()).toBe("Your order A-17 has shipped.");
    expect(await page.locator("#interactive-buttons .choice").allTextContents()).toEqual([
      "Track",
      "Talk to us",
      "Cancel",
    ]);
    expect(await page.locator("#message-tap").count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it("offers interactive and interactive_reply in the list's Type filter, and filters by them", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const id = await sendInteractive(apiKey, session, BUTTONS);
    const reply = await tap(apiKey, session, id, "track");
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/messages"]');
    const options = await page
      .locator("#filter-type option")
      .evaluateAll((all) => all.map((option) => (option as HTMLOptionElement).value));
    expect(options).toEqual(expect.arrayContaining(["location", "interactive", "interactive_reply"]));

    const rowOf = (message: string) =>
      page.locator("tbody tr").filter({ has: page.locator(`a[href="#/messages/${message}"]`) });
    await page.selectOption("#filter-type", "interactive_reply");
    await page.click("#message-filters button[type=submit]");
    await page.waitForURL(/filter%5Btype%5D=interactive_reply/);
    const row = rowOf(reply.id);
    await row.waitFor();
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await row.locator("td").nth(4).textContent()).toBe("interactive_reply");
    expect(await row.locator("td").nth(5).textContent()).toBe("Track");
    expect(await page.locator("#filter-type").inputValue()).toBe("interactive_reply");

    await page.selectOption("#filter-type", "interactive");
    await page.click("#message-filters button[type=submit]");
    await page.waitForURL(/filter%5Btype%5D=interactive(&|$)/);
    const sent = rowOf(id);
    await sent.waitFor();
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await sent.locator("td").nth(5).textContent()).toBe("Your order A-17 has shipped.");
    expect(errors).toEqual([]);
  });

  it("shows an interactive message's texts and ids as text, never as markup", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const body = "<img src=x onerror=\"document.title='ran'\">";
    const id = await sendInteractive(apiKey, session, {
      type: "button",
      header: { type: "text", text: "<b>Bold</b>" },
      body: { text: body },
      action: { buttons: [{ type: "reply", reply: { id: "<i>x</i>", title: "<u>Yes</u>" } }] },
    });
    const reply = await tap(apiKey, session, id, "<i>x</i>");
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    await page.locator("#message-interactive").waitFor();
    expect(await page.locator("#interactive-header").textContent()).toBe("<b>Bold</b>");
    expect(await page.locator("#interactive-body").textContent()).toBe(body);
    expect(await page.locator("#interactive-buttons .choice").textContent()).toBe("<u>Yes</u>");
    expect(await page.locator("#interactive-buttons code").textContent()).toBe("<i>x</i>");
    expect(await page.locator("#message-interactive").locator("img, b, i, u").count()).toBe(0);

    await openMessage(page, reply.id);
    await page.locator("#message-tap").waitFor();
    expect(await page.locator("#tap-choice").textContent()).toBe("Tapped: <u>Yes</u>");
    expect(await page.locator("#tap-id").textContent()).toBe("<i>x</i>");
    expect(await page.locator("#message-tap").locator("img, b, i, u").count()).toBe(0);
    expect(await page.title()).not.toBe("ran");
    expect(errors).toEqual([]);
  });
});
