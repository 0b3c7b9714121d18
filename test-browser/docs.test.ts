import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

describe("the API reference at /docs", () => {
  it("renders the API document under its Content-Security-Policy, refused nothing it needs, loading nothing from another host", async () => {
    const page = await newPage(browser);
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on("console", (message) => {
      // The browser asks for /favicon.ico by itself; the service has none (404).
      const { url } = message.location();
      if (message.type() === "error" && !url.endsWith("/favicon.ico"))
        errors.push(`${message.text()} ${url}`);
    });
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (!["data:", "blob:"].includes(url.protocol) && url.origin !== baseUrl()) foreign.push(request.url());
    });
    // Every violation of the policy, as the page itself sees it (CSP Level 3 §5.3).
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { violations: string[] }).violations = seen;
      document.addEventListener("securitypolicyviolation", (event) =>
        seen.push(`${event.effectiveDirective} ${event.blockedURI}`),
      );
    });

    const response = await page.goto(`${baseUrl()}/docs`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    // The document's title and an operation's summary, rendered by the reference's script.
    await page.getByText("Chat messaging and one-time-code API").first().waitFor({ timeout: 20_000 });
    await page.getByText("List the account's sessions, newest first").first().waitFor({ timeout: 20_000 });
    await screenshot(page, "docs");

    // The one refusal is by design: the bundle's zod probes whether it may compile code
    // (`Function("")`, in a try) and, refused, validates without it.
    const violations = await page.evaluate(() => (window as unknown as { violations: string[] }).violations);
    expect(violations.filter((violation) => violation !== "script-src eval")).toEqual([]);
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it("cannot be framed by another page", async () => {
    const page = await newPage(browser);
    const blocked: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") blocked.push(message.text());
    });
    await page.setContent(`<iframe src="${baseUrl()}/docs" width="800" height="600"></iframe>`);
    await expect.poll(() => blocked.join("\n"), { timeout: 10_000 }).toMatch(/frame-ancestors/);
  });
});
