import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, baseUrl, createAccount } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";
import { connectedSession, signIn, watchErrors } from "./console-page";

// The console's view of incoming media (docs/messages.md, Incoming media), of a session's health
// (docs/sessions.md, Session health) and of the number check (docs/sessions.md, Number checks).

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const CONTACT = "+14155550101";

/** A 4×3 PNG (one colour), the bytes of the kept image. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAAEElEQVR4nGPgjrWGIwacHACS5Qeli7IRawAAAABJRU5ErkJggg==",
  "base64",
);

/** An incoming image on a new connected sandbox session of `key`, from `mediaUrl`; its message id. */
async function inboundImage(key: string, mediaUrl: string): Promise<string> {
  const session = await connectedSession(key);
  const res = await api<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
    token: key,
    body: { from_number: CONTACT, type: "image", content: "Look", media_url: mediaUrl },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/** Opens message `id`'s page in the console. */
async function openMessage(page: Page, id: string): Promise<void> {
  await page.goto(`${baseUrl()}/console#/messages/${encodeURIComponent(id)}`);
  await page.locator("#timeline").waitFor();
}

/** Opens session `id`'s page in the console. */
async function openSession(page: Page, id: string): Promise<void> {
  await page.goto(`${baseUrl()}/console#/sessions/${encodeURIComponent(id)}`);
  await page.locator("#health-quality").waitFor();
}

describe("the web console: incoming media", () => {
  it("shows a kept image inline, fetched with the console's key and shown through an object URL", async () => {
    const { apiKey } = await createAccount(10);
    const id = await inboundImage(apiKey, "https://media.chatapp-example.net/in/photo.png");
    // The Worker under `npm run dev` reaches no https host on this closed network, so the bytes
    // the API would serve once the image is kept are answered here at the page's boundary, in the
    // shape of `GET /v1/chatapp/messages/{id}/media` (docs/messages.md, Incoming media); the console's own
    // fetch, with its bearer key, is what this test watches.
    const page = await newPage(browser);
    const errors = watchErrors(page);
    const authorizations: (string | undefined)[] = [];
    await page.route(`${baseUrl()}/v1/chatapp/messages/${id}/media`, (route) => {
      authorizations.push(route.request().headers().authorization);
      return route.fulfill({
        status: 200,
        body: PNG,
        headers: {
          "Content-Type": "image/png",
          "Content-Disposition": "inline",
          "X-Content-Type-Options": "nosniff",
          "Cache-Control": "private, no-store",
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
      4, 3,
    ]);
    expect(await image.getAttribute("src")).toMatch(/^blob:/);
    expect(await image.getAttribute("alt")).toBe("image: Look");
    expect(authorizations).toEqual([`Bearer ${apiKey}`]);
    // The page polls the message again; the image is fetched once.
    await page.waitForTimeout(2_500);
    expect(authorizations).toHaveLength(1);
    await screenshot(page, "console-message-media");
    expect(errors).toEqual([]);
  });

  it("offers a kept document as a download link with its file name and bytes", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const inbound = await api<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
      token: apiKey,
      body: {
        from_number: CONTACT,
        type: "document",
        content: "Invoice",
        media_url: "https://media.chatapp-example.net/in/invoice.pdf",
      },
    });
    expect(inbound.status).toBe(201);
    const id = inbound.body.data.id;
    const pdf = Buffer.from("%PDF-1.4\n%console test\n");
    const page = await newPage(browser);
    const errors = watchErrors(page);
    // The bytes the API serves once kept, answered at the page's boundary (see the image test).
    await page.route(`${baseUrl()}/v1/chatapp/messages/${id}/media`, (route) =>
      route.fulfill({ status: 200, body: pdf, headers: { "Content-Type": "application/pdf" } }),
    );
    await signIn(page, apiKey);
    await openMessage(page, id);
    const link = page.locator("#message-media a.media-download");
    await link.waitFor();
    const name = `document-${id.slice(0, 8)}.pdf`;
    expect(await link.textContent()).toBe(`Download ${name} (${pdf.byteLength} bytes)`);
    expect(await link.getAttribute("download")).toBe(name);
    expect(await link.getAttribute("href")).toMatch(/^blob:/);
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    expect(download.suggestedFilename()).toBe(name);
    const saved = await download.path();
    expect(readFileSync(saved)).toEqual(pdf);
    expect(errors).toEqual([]);
  });

  it("never renders a file served as an attachment: a text/html document, an SVG image, each a download of application/octet-stream", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    const html = Buffer.from("<script>document.title = 'ran on the console';</script>");
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const files = [
      { type: "document", contentType: "text/html", body: html, name: "bin" },
      { type: "image", contentType: "image/svg+xml", body: svg, name: "bin" },
    ];
    for (const file of files) {
      const inbound = await api<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
        token: apiKey,
        body: {
          from_number: CONTACT,
          type: file.type,
          content: "File",
          media_url: "https://media.chatapp-example.net/in/f",
        },
      });
      expect(inbound.status).toBe(201);
      const id = inbound.body.data.id;
      // As the API serves any type but an image, audio or video one (docs/security.md, Hardening).
      await page.route(`${baseUrl()}/v1/chatapp/messages/${id}/media`, (route) =>
        route.fulfill({
          status: 200,
          body: file.body,
          headers: {
            "Content-Type": file.contentType,
            "Content-Disposition": "attachment",
            "X-Content-Type-Options": "nosniff",
          },
        }),
      );
      if (file === files[0]) await signIn(page, apiKey);
      await openMessage(page, id);
      const link = page.locator("#message-media a.media-download");
      await link.waitFor();
      expect(await page.locator("#message-media img").count()).toBe(0);
      const name = `${file.type}-${id.slice(0, 8)}.${file.name}`;
      expect(await link.getAttribute("download")).toBe(name);
      const href = (await link.getAttribute("href")) ?? "";
      expect(href).toMatch(/^blob:/);
      // The object URL opened in a tab of its own (as "Open link in new tab" does) would be a page
      // of the console's origin: it is a download instead, of the bytes as served.
      const tab = await page.context().newPage();
      const [download] = await Promise.all([
        tab.waitForEvent("download", { timeout: 5_000 }),
        tab.goto(href).catch(() => null),
      ]);
      expect(readFileSync(await download.path())).toEqual(file.body);
      await tab.close();
    }
    expect(await page.title()).not.toBe("ran on the console");
    expect(errors).toEqual([]);
  });

  it("says the media is not kept while the API answers 404 media_not_kept", async () => {
    const { apiKey } = await createAccount(10);
    // No host answers here: the first download try fails and the next is a minute away.
    const id = await inboundImage(apiKey, "https://media.chatapp-example.net/in/late.png");
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    const note = page.locator("#message-media .media-note");
    await note.waitFor();
    expect(await note.textContent()).toBe("Media not kept: The message's media is not kept (yet).");
    expect(await page.locator("#message-media img").count()).toBe(0);
    // The one error is the browser's note of the 404.
    expect(errors.filter((text) => !/404/.test(text))).toEqual([]);
  });

  it("says why the media could not be kept (metadata.media_error)", async () => {
    const { apiKey } = await createAccount(10);
    // A plain-http URL is refused at once, and for good: the error is recorded on the first try.
    const id = await inboundImage(apiKey, "http://media.chatapp-example.net/in/photo.png");
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openMessage(page, id);
    const failed = page.locator("#message-media .media-failed");
    await failed.waitFor({ timeout: 15_000 });
    expect(await failed.textContent()).toMatch(
      /^The media could not be kept: refused \(.+\), after 1 try\.$/,
    );
    expect(await page.locator("#message-media img").count()).toBe(0);
    expect(errors.filter((text) => !/404/.test(text))).toEqual([]);
  });
});

describe("the web console: a session's page", () => {
  it("shows the session's health and follows a change made elsewhere", async () => {
    const { apiKey } = await createAccount(10);
    const id = await connectedSession(apiKey);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    const row = page.locator("tbody tr").filter({ hasText: id });
    await row.locator(`a[href="#/sessions/${id}"]`).click();
    await page.locator("#health-quality").waitFor();
    expect(await page.locator("#health-timelock").textContent()).toBe("Not reported");
    expect(await page.locator("#health-cap").textContent()).toBe("Not reported");
    expect(await page.locator("#health-quality").textContent()).toBe("Not rated");

    const set = await api("POST", `/sandbox/sessions/${id}/health`, {
      token: apiKey,
      body: {
        timelock: { active: true, until: "2030-01-01T00:00:00Z" },
        cap: { level: "FIRST_WARNING", used: 640, total: 1000, cycle_end: "2030-01-31T23:59:59Z" },
        quality: "yellow",
      },
    });
    expect(set.status).toBe(200);
    // The page reads the session again every 5 s.
    const quality = page.locator("#health-quality .badge");
    await quality.waitFor({ timeout: 10_000 });
    expect(await quality.textContent()).toBe("Yellow: medium quality");
    const [until, cycleEnd] = await page.evaluate(() =>
      ["2030-01-01T00:00:00Z", "2030-01-31T23:59:59Z"].map((iso) => new Date(iso).toLocaleString()),
    );
    expect(await page.locator("#health-timelock").textContent()).toBe(`Active until ${until}`);
    expect(await page.locator("#health-cap").textContent()).toBe(
      `FIRST_WARNING 640 of 1000 new chats usedCycle ends ${cycleEnd}`,
    );
    expect(
      await page.locator("#health-cap meter").evaluate((m: HTMLMeterElement) => [m.value, m.max]),
    ).toEqual([640, 1000]);
    expect(await page.locator("#health-checked time").count()).toBe(1);
    expect(await page.locator("#session-health").getAttribute("aria-live")).toBe("polite");
    await screenshot(page, "console-session-health");

    // Cleared again: each part back to "not reported".
    await api("POST", `/sandbox/sessions/${id}/health`, {
      token: apiKey,
      body: { timelock: { active: false, until: null }, cap: null, quality: null },
    });
    await page.locator("#health-quality", { hasText: "Not rated" }).waitFor({ timeout: 10_000 });
    expect(await page.locator("#health-timelock").textContent()).toBe("Not active");
    expect(await page.locator("#health-cap").textContent()).toBe("Not reported");
    expect(errors).toEqual([]);
  });

  it("checks numbers and shows each answer: yes, no or unknown", async () => {
    const { apiKey } = await createAccount(10);
    const id = await connectedSession(apiKey);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openSession(page, id);
    await page.fill("#check-numbers", "+14155552671\n+14155550000, +14155559999\n\n");
    await page.click("#check-form button[type=submit]");
    const rows = page.locator("#check-result tbody tr");
    await rows.first().waitFor();
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) =>
        Array.from(tr.querySelectorAll("td"))
          .slice(0, 2)
          .map((td) => td.textContent),
      ),
    );
    expect(cells).toEqual([
      ["+14155552671", "Yes"],
      ["+14155550000", "No"],
      ["+14155559999", "Unknown"],
    ]);
    expect(await rows.nth(0).locator("time").count()).toBe(1);
    await screenshot(page, "console-number-check");
    expect(errors).toEqual([]);
  });

  it("shows the API's problem when a number to check is not valid", async () => {
    const { apiKey } = await createAccount(10);
    const id = await connectedSession(apiKey);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await openSession(page, id);
    await page.fill("#check-numbers", "+14155552671\nnot a number");
    await page.click("#check-form button[type=submit]");
    const problem = page.locator("#check-result .problem");
    await problem.waitFor();
    expect(await problem.getAttribute("role")).toBe("alert");
    expect(await problem.locator("strong").textContent()).toBe("Validation failed");
    expect(await problem.locator("li").allTextContents()).toEqual([expect.stringMatching(/^numbers\.1: .+/)]);
    expect(await page.locator("#check-result table").count()).toBe(0);
    expect(errors.filter((text) => !/422/.test(text))).toEqual([]);
  });
});
