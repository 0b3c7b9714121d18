import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, createAccount } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";
import { connectedSession, signIn, until, watchErrors } from "./console-page";

// The console's Usage page (docs/console.md, Web console): the chart of `GET /v1/account/usage` over a chosen
// range with its numbers as a table, and the ledger below it, filtered by kind.

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const DAY = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Message {
  id: string;
  status: string;
}

/** Sends texts from `session` to `numbers` and waits until each is read or failed. */
async function sendAndSettle(key: string, session: string, numbers: string[]): Promise<void> {
  const sent = await api<{ data: { messages: Message[] } }>("POST", "/v1/chatapp/messages", {
    token: key,
    body: {
      chatapp_session_id: session,
      to_number: numbers,
      type: "text",
      content: "usage",
      delay_between: 0,
    },
  });
  expect(sent.status).toBe(201);
  const ids = sent.body.data.messages.map((m) => m.id);
  await until(async () => {
    const statuses = await Promise.all(
      ids.map(
        async (id) =>
          (await api<{ data: Message }>("GET", `/v1/chatapp/messages/${id}`, { token: key })).body.data
            .status,
      ),
    );
    return statuses.every((s) => s === "read" || s === "failed") ? true : undefined;
  }, 20_000);
}

/** The cells of the usage table's rows, as text. */
async function usageRows(page: Page): Promise<string[][]> {
  return page
    .locator("#usage-table tbody tr")
    .evaluateAll((rows) =>
      rows.map((row) => Array.from(row.querySelectorAll("td")).map((td) => td.textContent ?? "")),
    );
}

/** The ledger's rows: kind, amount, balance after and source. */
async function ledgerRows(page: Page): Promise<string[][]> {
  return page.locator("#ledger tbody tr").evaluateAll((rows) =>
    rows.map((row) =>
      Array.from(row.querySelectorAll("td"))
        .slice(1)
        .map((td) => td.textContent ?? ""),
    ),
  );
}

/** Waits until the chart's canvas is drawn with a size; returns its box. */
async function chartCanvas(page: Page): Promise<{ width: number; height: number }> {
  const canvas = page.locator("#usage-chart canvas");
  await canvas.waitFor();
  const box = await canvas.boundingBox();
  expect(box?.width).toBeGreaterThan(200);
  expect(box?.height).toBeGreaterThan(100);
  return { width: box?.width ?? 0, height: box?.height ?? 0 };
}

describe("the web console: usage", () => {
  it("charts the last 30 days by default, changes range and granularity, and filters the ledger by kind", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    // Two read, one failed (the sandbox fails …0000) and refunded.
    await sendAndSettle(apiKey, session, ["+14155552671", "+14155552672", "+14155550000"]);
    const now = Date.now();
    const today = utcDay(now);

    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/usage"]');
    expect(await page.locator('#nav a[aria-current="page"]').textContent()).toBe("Usage");

    // No range chosen: the API's default, the last 30 UTC days by day, shown in the form.
    await chartCanvas(page);
    expect(await page.inputValue("#usage-from")).toBe(utcDay(now - 29 * DAY));
    expect(await page.inputValue("#usage-to")).toBe(today);
    expect(await page.inputValue("#usage-granularity")).toBe("day");
    expect(await page.locator("#usage-summary").textContent()).toBe(
      `3 messages, cost 0.03, from ${utcDay(now - 29 * DAY)} to ${today} (UTC) by day.`,
    );
    // The legend names every status and the cost (uPlot's legend, from the vendored script).
    expect(await page.locator("#usage-chart .u-legend .u-label").allTextContents()).toEqual([
      "Day (UTC)",
      "failed",
      "read",
      "delivered",
      "sent",
      "scheduled",
      "queued",
      "cost",
    ]);
    await page.click("#usage-numbers summary");
    expect(await usageRows(page)).toEqual([
      [today, "text", "0", "0", "0", "0", "2", "1", "0.03", "0.01"],
      ["Total", "", "0", "0", "0", "0", "2", "1", "0.03", "0.01"],
    ]);
    // The ledger: the send's charge, the failed message's refund, the opening balance.
    await page.locator("#ledger tbody tr").nth(2).waitFor();
    expect(await ledgerRows(page)).toEqual([
      ["refund", "+0.01", "9.98", "messages · 1 message"],
      ["charge", "-0.03", "9.97", "messages · 3 messages"],
      ["credit", "+10.00", "10.00", "admin · Opening balance"],
    ]);
    await screenshot(page, "console-usage");

    // A preset: the last 7 days, in the hash.
    await page.click("#usage-last-7");
    await until(async () =>
      (await page.inputValue("#usage-from")) === utcDay(now - 6 * DAY) ? true : undefined,
    );
    expect(page.url()).toContain(`from=${utcDay(now - 6 * DAY)}&to=${today}`);
    await chartCanvas(page);
    await page.locator("#usage-summary", { hasText: "by day" }).waitFor();
    expect(await page.locator("#usage-summary").textContent()).toContain(
      `from ${utcDay(now - 6 * DAY)} to ${today}`,
    );

    // Today by hour: the messages in the hour they were created.
    await page.fill("#usage-from", today);
    await page.selectOption("#usage-granularity", "hour");
    await page.click("#usage-range button[type=submit]");
    await page.locator("#usage-summary", { hasText: "by hour" }).waitFor();
    await chartCanvas(page);
    expect(page.url()).toContain("granularity=hour");
    await page.click("#usage-numbers summary");
    const byHour = await usageRows(page);
    expect(byHour.at(-1)).toEqual(["Total", "", "0", "0", "0", "0", "2", "1", "0.03", "0.01"]);
    for (const row of byHour.slice(0, -1)) expect(row[0]).toMatch(new RegExp(`^${today}T\\d{2}:00 UTC$`));

    // A range by hour over 31 days is the API's problem, shown as on other pages.
    await page.fill("#usage-from", utcDay(now - 40 * DAY));
    await page.click("#usage-range button[type=submit]");
    const problem = page.locator("#main .problem");
    await problem.waitFor();
    expect(await problem.locator("strong").textContent()).toBeTruthy();
    expect(await problem.textContent()).toContain("time_to: at most 31 days after time_from");
    expect(await page.locator("#usage-chart canvas").count()).toBe(0);

    // A range without messages: an empty table, an empty ledger.
    await page.fill("#usage-from", "2026-01-01");
    await page.fill("#usage-to", "2026-01-31");
    await page.selectOption("#usage-granularity", "day");
    await page.click("#usage-range button[type=submit]");
    await page
      .locator("#usage-summary", { hasText: "0 messages, cost 0.00, from 2026-01-01 to 2026-01-31" })
      .waitFor();
    await chartCanvas(page);
    expect(await page.locator("#usage-table").textContent()).toBe("No messages in this range.");
    await page.locator("text=No entries match.").waitFor();

    // Back to the last 30 days; the ledger filtered by kind.
    await page.click("#usage-last-30");
    await page.locator("#ledger tbody tr").nth(2).waitFor();
    await page.selectOption("#ledger-kind", "refund");
    await until(async () => ((await ledgerRows(page)).length === 1 ? true : undefined));
    expect(page.url()).toContain("kind=refund");
    expect(await ledgerRows(page)).toEqual([["refund", "+0.01", "9.98", "messages · 1 message"]]);
    await page.selectOption("#ledger-kind", "charge");
    await until(async () => ((await ledgerRows(page))[0]?.[0] === "charge" ? true : undefined));
    expect(await ledgerRows(page)).toEqual([["charge", "-0.03", "9.97", "messages · 3 messages"]]);
    await page.selectOption("#ledger-kind", "credit");
    await until(async () => ((await ledgerRows(page))[0]?.[0] === "credit" ? true : undefined));
    expect(await ledgerRows(page)).toEqual([["credit", "+10.00", "10.00", "admin · Opening balance"]]);
    expect(await page.inputValue("#ledger-kind")).toBe("credit");
    await screenshot(page, "console-usage-ledger-credit");

    // Paging through links.next: 23 more sends make 26 entries, one more than a page (25).
    for (let i = 0; i < 23; i++) {
      const res = await api("POST", "/v1/chatapp/messages", {
        token: apiKey,
        body: {
          chatapp_session_id: session,
          to_number: ["+14155552671"],
          type: "text",
          content: `more ${i}`,
        },
      });
      expect(res.status).toBe(201);
    }
    await page.selectOption("#ledger-kind", "");
    await until(async () => ((await ledgerRows(page)).length === 25 ? true : undefined));
    expect(page.url()).not.toContain("kind=");
    expect((await ledgerRows(page))[0]).toEqual(["charge", "-0.01", "9.75", "messages · 1 message"]);
    await page.click("#ledger-more");
    await until(async () => ((await ledgerRows(page)).length === 26 ? true : undefined));
    expect((await ledgerRows(page)).at(-1)).toEqual(["credit", "+10.00", "10.00", "admin · Opening balance"]);
    expect(await page.locator("#ledger-more").isVisible()).toBe(false);

    // Only the 422 above logs an error (the browser reports the failed request).
    expect(errors.filter((text) => !/422/.test(text))).toEqual([]);
  });
});
