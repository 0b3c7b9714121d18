import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, baseUrl, createAccount } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

/** A pending session of a new account, and a link URL for it (`body`: the link-url request's). */
async function linkedSession(body: Record<string, unknown> = {}) {
  const { apiKey } = await createAccount();
  const created = await api<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { token: apiKey });
  expect(created.status).toBe(201);
  const sessionId = created.body.session.id;
  const link = await api<{ url: string }>("POST", `/v1/chatapp/sessions/${sessionId}/link-url`, {
    token: apiKey,
    body,
  });
  expect(link.status).toBe(201);
  return { apiKey, sessionId, url: link.body.url };
}

/**
 * The link page at `url` on a phone-sized viewport. It records the page's console errors (a
 * CSP violation is one) and its main-frame navigations, and waits for the live socket to open.
 */
async function openLinkPage(url: string): Promise<{ page: Page; errors: string[]; navigations: string[] }> {
  const page = await newPage(browser, "phone");
  const errors: string[] = [];
  const navigations: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") {
      errors.push(`${message.text()} ${message.location().url}`);
    }
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) navigations.push(frame.url());
  });
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  await page.waitForSelector("main[data-live='open']", { timeout: 10_000 });
  return { page, errors, navigations };
}

/**
 * The visible text on the page whose contrast with its background is under WCAG 2.1 AA's 4.5:1
 * (success criterion 1.4.3; relative luminance and contrast ratio as WCAG 2.1 defines them), as
 * `text (ratio)`. The background is the nearest ancestor's opaque one, else white.
 */
function lowContrast(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const rgb = (css: string) => (css.match(/[\d.]+/g) ?? []).map(Number);
    const channel = (c: number) =>
      c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4;
    const luminance = ([r = 0, g = 0, b = 0]: number[]) =>
      0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    const background = (element: Element | null): number[] => {
      for (let e = element; e; e = e.parentElement) {
        const [r, g, b, a = 1] = rgb(getComputedStyle(e).backgroundColor);
        if (a > 0.99 && r !== undefined) return [r, g ?? 0, b ?? 0];
      }
      return [255, 255, 255];
    };
    const failures: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const element = node.parentElement;
      if (!element || !node.textContent?.trim() || element.getClientRects().length === 0) continue;
      if (element.closest("[hidden], noscript")) continue;
      const [l1, l2] = [luminance(rgb(getComputedStyle(element).color)), luminance(background(element))];
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      if (ratio < 4.5) failures.push(`${node.textContent.trim()} (${ratio.toFixed(2)})`);
    }
    return failures;
  });
}

/** An element's text as read aloud: whitespace collapsed, trimmed. */
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();

const qrSrc = (page: Page) => page.locator("img#qr").getAttribute("src");

describe("the hosted link page (/link/{token}) on a phone", () => {
  it("shows the live QR code and the steps, and swaps in each new QR code without a reload", async () => {
    const { url } = await linkedSession();
    const { page, errors, navigations } = await openLinkPage(url);
    const qr = page.locator("img#qr");
    expect(await qr.isVisible()).toBe(true);
    expect(await qr.getAttribute("alt")).toBe("QR code to scan with WhatsApp on your phone");
    const first = await qrSrc(page);
    expect(first).toMatch(/^data:image\/png;base64,/);
    // Decoded and laid out: a real image, not a broken one, and within the phone's width.
    const size = await qr.evaluate((img: HTMLImageElement) => ({
      natural: img.naturalWidth,
      shown: img.getBoundingClientRect().width,
    }));
    expect(size.natural).toBeGreaterThan(0);
    expect(size.shown).toBeGreaterThan(200);
    expect(size.shown).toBeLessThanOrEqual(390);
    expect(await text(page.locator("ol.steps"))).toContain("Linked devices, then Link a device");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await lowContrast(page)).toEqual([]);
    await page.evaluate(() => Object.assign(window, { __marker: "before" }));
    await screenshot(page, "link-page-qr");

    // QR_ROTATE_SECONDS is 3 in the harness: a session.qr_updated frame brings the next one.
    await page.waitForFunction(
      (before) => document.querySelector("img#qr")?.getAttribute("src") !== before,
      first,
      { timeout: 10_000 },
    );
    const second = await qrSrc(page);
    expect(second).toMatch(/^data:image\/png;base64,/);
    expect(second).not.toBe(first);
    expect(await page.evaluate(() => (window as unknown as { __marker?: string }).__marker)).toBe("before");
    expect(navigations).toHaveLength(1);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("a sandbox scan turns the page into the success screen without a reload, in under 1 s, then returns", async () => {
    const { apiKey, sessionId, url } = await linkedSession({ return_url: "https://app.example.com/linked" });
    const { page, errors, navigations } = await openLinkPage(url);
    // The return_url's site, answered here (the machine has no internet).
    await page.route("https://app.example.com/**", (route) =>
      route.fulfill({ contentType: "text/html", body: "<h1>Back at the app</h1>" }),
    );
    await page.evaluate(() => Object.assign(window, { __marker: "before" }));

    const started = performance.now();
    const scan = api<{ session: { status: string } }>("POST", `/sandbox/sessions/${sessionId}/scan`, {
      token: apiKey,
      body: { phone_number: "+14155552671" },
    });
    await page.waitForSelector("#view-connected", { state: "visible", timeout: 5_000 });
    const elapsed = performance.now() - started;
    console.log(`link page: scan request → success screen in ${elapsed.toFixed(0)} ms`);
    expect((await scan).body.session.status).toBe("connected");
    expect(elapsed).toBeLessThan(1_000);

    expect(await text(page.locator("#linked-number"))).toBe("+14155552671");
    expect(await page.locator("#view-pending").isHidden()).toBe(true);
    const back = page.locator("a#return-link");
    expect(await back.isVisible()).toBe(true);
    expect(await back.getAttribute("href")).toBe("https://app.example.com/linked");
    expect(await page.evaluate(() => (window as unknown as { __marker?: string }).__marker)).toBe("before");
    expect(navigations).toHaveLength(1);
    expect(errors).toEqual([]);
    expect(await lowContrast(page)).toEqual([]);
    await screenshot(page, "link-page-linked");

    // About 2 s later the page follows return_url.
    const linkedAt = performance.now();
    await page.waitForURL("https://app.example.com/linked", { timeout: 5_000 });
    const waited = performance.now() - linkedAt;
    expect(waited).toBeGreaterThan(1_000);
    expect(waited).toBeLessThan(4_000);
    await page.context().close();
  });

  it("links with a phone number instead: the form shows the pairing code, which then links that phone", async () => {
    const { apiKey, sessionId, url } = await linkedSession();
    const { page, errors } = await openLinkPage(url);
    await page.getByRole("heading", { name: "Link with phone number instead" }).scrollIntoViewIfNeeded();
    await page.getByLabel("Your phone number, with country code").fill("+14155552672");
    await page.getByRole("button", { name: "Get a pairing code" }).click();
    const code = page.locator("#pairing-code");
    await code.waitFor({ state: "visible", timeout: 5_000 });
    const shown = await text(code);
    expect(shown).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    const fontSize = await code.evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));
    expect(fontSize).toBeGreaterThanOrEqual(28);
    expect(await lowContrast(page)).toEqual([]);
    await screenshot(page, "link-page-pairing-code");

    // A bad number is refused on the page, next to the form.
    await page.getByLabel("Your phone number, with country code").fill("12");
    await page.getByRole("button", { name: "Get a pairing code" }).click();
    await page.locator("#pairing-error").waitFor({ state: "visible" });

    // The phone enters the code (the sandbox stands in for it): the page shows that number linked.
    const scan = await api("POST", `/sandbox/sessions/${sessionId}/scan`, {
      token: apiKey,
      body: { pairing_code: shown },
    });
    expect(scan.status).toBe(200);
    await page.waitForSelector("#view-connected", { state: "visible", timeout: 5_000 });
    expect(await text(page.locator("#linked-number"))).toBe("+14155552672");
    expect(await page.locator("#done").isVisible()).toBe(true);
    // Only the refused number's 422, which the page showed next to the form.
    expect(errors).toEqual([expect.stringContaining("422")]);
    await page.context().close();
  });

  it("a disconnected session shows 'Try again', which reconnects it", async () => {
    const { apiKey, sessionId, url } = await linkedSession();
    await api("POST", `/sandbox/sessions/${sessionId}/scan`, { token: apiKey });
    const { page, errors } = await openLinkPage(url);
    await page.waitForSelector("#view-connected", { state: "visible" });
    const disconnected = await api("PATCH", `/v1/chatapp/sessions/${sessionId}/disconnect`, {
      token: apiKey,
    });
    expect(disconnected.status).toBe(200);
    await page.waitForSelector("#view-stopped", { state: "visible", timeout: 5_000 });
    expect(await text(page.locator("#stopped-reason"))).toBe("The link to your phone was ended.");
    expect(await lowContrast(page)).toEqual([]);
    await screenshot(page, "link-page-try-again");
    await page.getByRole("button", { name: "Try again" }).click();
    // The sandbox kept the link, so the session is connected again at once.
    await page.waitForSelector("#view-connected", { state: "visible", timeout: 5_000 });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("without its socket, the page falls back to polling and still reaches the success screen", async () => {
    const { apiKey, sessionId, url } = await linkedSession();
    const page = await newPage(browser, "phone");
    // Every live socket is refused at once, as a proxy that drops WebSockets would.
    await page.routeWebSocket(/\/live\?token=/, (ws) => ws.close({ code: 1011, reason: "no sockets here" }));
    await page.goto(url);
    await page.waitForSelector("main[data-live='closed']", { timeout: 5_000 });
    expect(await text(page.locator("#live-status"))).toBe("Connection lost. Reconnecting…");
    await api("POST", `/sandbox/sessions/${sessionId}/scan`, { token: apiKey });
    await page.waitForSelector("#view-connected", { state: "visible", timeout: 8_000 });
    await page.context().close();
  });

  it("an expired (revoked) link is a plain 410 page, and an open page turns to it when revoked", async () => {
    const { apiKey, sessionId, url } = await linkedSession();
    const { page } = await openLinkPage(url);
    const revoked = await api("DELETE", `/v1/chatapp/sessions/${sessionId}/link-url`, { token: apiKey });
    expect(revoked.status).toBe(204);
    // The open page: its socket closes with 4403 (link revoked).
    await page.waitForSelector("#view-gone", { state: "visible", timeout: 5_000 });
    expect(await text(page.locator("#gone-title"))).toBe("This link has expired");

    // Opening it again: the 410 page.
    const response = await page.goto(url);
    expect(response?.status()).toBe(410);
    expect(response?.headers()["content-type"]).toBe("text/html; charset=UTF-8");
    expect(await text(page.locator("h1"))).toBe("This link has expired");
    expect(await lowContrast(page)).toEqual([]);
    await screenshot(page, "link-page-expired");

    const unknown = await page.goto(`${baseUrl()}/link/${"A".repeat(43)}`);
    expect(unknown?.status()).toBe(404);
    expect(await text(page.locator("h1"))).toBe("This link is not valid");
    await page.context().close();
  });
});
