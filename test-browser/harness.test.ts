import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, baseUrl, createAccount } from "./api";
import { launchBrowser, newPage } from "./browser";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

describe("the browser harness", () => {
  it("reaches the service started by npm run dev, from Node and from Chromium", async () => {
    const { apiKey } = await createAccount();
    const me = await api<{ sessions: unknown[] }>("GET", "/v1/chatapp/sessions", { token: apiKey });
    expect(me.status).toBe(200);
    expect(me.body.sessions).toEqual([]);
    const page = await newPage(browser);
    await page.goto(`${baseUrl()}/health`);
    expect(JSON.parse((await page.locator("body").textContent()) ?? "")).toMatchObject({ status: "ok" });
  });
});
