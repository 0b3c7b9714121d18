import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, baseUrl, createAccount } from "./api";
import { launchBrowser, screenshot } from "./browser";
import { connectedSession, openConsole, signIn, until, watchErrors } from "./console-page";

// The console's details a newcomer trips over, each in the state it should be in: the usage
// chart's labels, ticks and legend; action buttons on one line; an incoming message's own
// timeline; apps of one name told apart; a long value kept inside the event's box; the campaigns
// page following a campaign started elsewhere; recipients' CSV read by Papa Parse.

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const DAY = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A page of `width`×800 CSS px in US English, so the chart's day labels read "Nov 29". */
async function page(width = 1280): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 800 }, locale: "en-US" });
  return context.newPage();
}

interface Message {
  id: string;
  status: string;
  delivered_at: string | null;
  read_at: string | null;
}

/** Sends texts from `session` to `numbers` and waits until each is read or failed. */
async function sendAndSettle(key: string, session: string, numbers: string[]): Promise<void> {
  const sent = await api<{ data: { messages: Message[] } }>("POST", "/v1/chatapp/messages", {
    token: key,
    body: { chatapp_session_id: session, to_number: numbers, type: "text", content: "hi", delay_between: 0 },
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

/**
 * The usage chart's x-axis labels, read from its canvas: the centre of each run of drawn pixels in
 * the band under the plot, as a bucket index (0 = under the first bucket's bar, 0.5 between the
 * first two). uPlot draws the axes on the canvas, so the pixels are where the labels are.
 */
async function axisLabels(page: Page, buckets: number): Promise<number[]> {
  const centres = await page.evaluate((buckets) => {
    const canvas = document.querySelector<HTMLCanvasElement>("#usage-chart canvas");
    const over = document.querySelector<HTMLElement>("#usage-chart .u-over");
    if (!canvas || !over) throw new Error("no chart");
    const box = canvas.getBoundingClientRect();
    const plot = over.getBoundingClientRect();
    const scale = canvas.width / box.width;
    // Below the tick marks (10 px) and clear of the cost axis's bottom label, above the legend.
    const top = Math.round((plot.bottom - box.top + 12) * scale);
    const height = Math.round(20 * scale);
    const image = canvas.getContext("2d")?.getImageData(0, top, canvas.width, height);
    if (!image) throw new Error("no pixels");
    const inked: number[] = [];
    for (let column = 0; column < image.width; column++) {
      for (let row = 0; row < image.height; row++) {
        if ((image.data[(row * image.width + column) * 4 + 3] ?? 0) > 100) {
          inked.push(column / scale + box.left);
          break;
        }
      }
    }
    const runs: [number, number][] = [];
    for (const x of inked) {
      const last = runs.at(-1);
      if (last && x - last[1] <= 8) last[1] = x;
      else runs.push([x, x]);
    }
    const slot = plot.width / buckets;
    return runs.map(([from, to]) => ((from + to) / 2 - plot.left) / slot - 0.5);
  }, buckets);
  // Each label is centred under a bar (a quarter of a slot's leeway for the glyphs' own widths).
  for (const centre of centres) expect(Math.abs(centre - Math.round(centre))).toBeLessThan(0.25);
  return centres.map((centre) => Math.round(centre) || 0);
}

/** The legend's values, in its order: the bucket, then failed … queued, then the cost. */
async function legend(page: Page): Promise<string[]> {
  return (await page.locator("#usage-chart .u-legend .u-value").allTextContents()).map((t) => t.trim());
}

describe("the console's rough edges", () => {
  it("usage: the bar's count above it, a daily axis with the last day labelled, the totals in the legend", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    // Two read, one failed (the sandbox fails …0000).
    await sendAndSettle(apiKey, session, ["+14155552671", "+14155552672", "+14155550000"]);
    const today = utcDay(Date.now());
    const todayLabel = new Date(`${today}T00:00:00Z`).toLocaleDateString("en-US", {
      month: "short",
      day: "numeric",
      timeZone: "UTC",
    });

    const tab = await page();
    const errors = watchErrors(tab);
    await signIn(tab, apiKey);
    await tab.goto(`${baseUrl()}/console#/usage`);
    await tab.locator("#usage-chart canvas").waitFor();
    await tab.locator("#usage-summary", { hasText: "3 messages" }).waitFor();

    // Without hovering, the legend shows the range's totals, as the summary line does.
    expect(await legend(tab)).toEqual(["total", "1", "2", "0", "0", "0", "0", "0.03"]);

    // Today's bar, the last of 30, carries its count, centred over its slot inside the plot.
    const labels = tab.locator("#usage-chart .usage-bar-label");
    expect(await labels.count()).toBe(1);
    expect(await labels.textContent()).toBe("3");
    expect(await labels.getAttribute("data-bucket")).toBe(`${today}T00:00:00.000Z`);
    const plot = await tab.locator("#usage-chart .u-over").boundingBox();
    const label = await labels.boundingBox();
    if (!plot || !label) throw new Error("no boxes");
    const slot = plot.width / 30;
    expect(Math.abs(label.x + label.width / 2 - (plot.x + plot.width - slot / 2))).toBeLessThan(2);
    expect(label.y + label.height).toBeLessThanOrEqual(plot.y + plot.height);
    expect(label.y).toBeGreaterThanOrEqual(plot.y);

    // The axis: a label under each ticked day, counted back from today, so today has one; none
    // between two days.
    const thirty = await axisLabels(tab, 30);
    expect(thirty.at(-1)).toBe(29);
    const steps = new Set(thirty.slice(1).map((at, i) => at - (thirty[i] ?? 0)));
    expect(steps.size).toBe(1);
    expect([...steps][0]).toBeGreaterThanOrEqual(1);
    await screenshot(tab, "rough-edges-usage-30-days");

    // Hovering today's bar shows that day; leaving the plot shows the totals again.
    await tab.mouse.move(plot.x + plot.width - slot / 2, plot.y + plot.height - 5);
    await until(async () => ((await legend(tab))[0] === today ? true : undefined));
    expect(await legend(tab)).toEqual([today, "1", "2", "0", "0", "0", "0", "0.03"]);
    await tab.mouse.move(plot.x + plot.width - slot * 1.5, plot.y + plot.height - 5);
    await until(async () => ((await legend(tab))[0] !== today ? true : undefined));
    expect(await legend(tab)).toEqual([utcDay(Date.now() - DAY), "0", "0", "0", "0", "0", "0", "0.00"]);
    await tab.mouse.move(5, 5);
    await until(async () => ((await legend(tab))[0] === "total" ? true : undefined));

    // The last 7 days: one label per day, each under its day (not hours between them).
    await tab.click("#usage-last-7");
    await tab.locator("#usage-summary", { hasText: `from ${utcDay(Date.now() - 6 * DAY)}` }).waitFor();
    await tab.locator("#usage-chart canvas").waitFor();
    expect(await axisLabels(tab, 7)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(await tab.locator("#usage-chart .usage-bar-label").textContent()).toBe("3");
    // The labels are the days themselves, as the module formats them (the axis is on the canvas).
    const named = (await tab.evaluate(`(async () => {
      const usage = await import("/console/usage.js");
      const x = [0, 1, 2, 3, 4, 5, 6].map((i) => Date.parse("${today}T00:00:00Z") / 1000 - (6 - i) * 86400);
      return { last: usage.dayLabel(x[6] * 1000), every2: usage.dayTicks(x, 2), every1: usage.dayTicks(x, 1) };
    })()`)) as { last: string; every2: number[]; every1: number[] };
    expect(named.last).toBe(todayLabel);
    expect(named.every1).toHaveLength(7);
    // Counted back from the last day, so the last day is always ticked.
    expect(named.every2.at(-1)).toBe(Date.parse(`${today}T00:00:00Z`) / 1000);
    expect(named.every2).toHaveLength(4);
    await screenshot(tab, "rough-edges-usage-7-days");
    expect(errors).toEqual([]);
  });

  it("keeps each row's action buttons on one line in the sessions and webhooks tables", async () => {
    const { apiKey } = await createAccount(10);
    await connectedSession(apiKey);
    const pending = await api("POST", "/v1/chatapp/sessions", { token: apiKey });
    expect(pending.status).toBe(201);
    const hook = await api("POST", "/v1/webhooks", {
      token: apiKey,
      body: {
        url: "https://hooks.example.com/services/T000/B000/a-rather-long-path-for-one-receiver",
        description: "Order notifications for the shop team",
      },
    });
    expect(hook.status).toBe(201);

    /**
     * Per row: how many buttons it has, and whether they share one line (each starts above the
     * bottom of every other: buttons with and without a border differ by a pixel in height).
     */
    const rows = (tab: Page) =>
      tab.locator("td > .actions").evaluateAll((cells) =>
        cells.map((cell) => {
          const boxes = Array.from(cell.children).map((button) => button.getBoundingClientRect());
          const oneLine = Math.max(...boxes.map((b) => b.top)) < Math.min(...boxes.map((b) => b.bottom));
          return { buttons: boxes.length, oneLine };
        }),
      );

    for (const width of [1024, 390]) {
      const tab = await page(width);
      const errors = watchErrors(tab);
      await signIn(tab, apiKey);
      await tab.goto(`${baseUrl()}/console#/sessions`);
      await tab.locator("td > .actions").nth(1).waitFor();
      // Pending: Show QR, Copy hosted link URL, Delete; connected: Disconnect, Copy…, Delete.
      expect(await rows(tab)).toEqual([
        { buttons: 3, oneLine: true },
        { buttons: 3, oneLine: true },
      ]);
      // A narrow screen scrolls the table sideways; the page itself stays as wide as the screen.
      expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await screenshot(tab, `rough-edges-sessions-${width}`);

      await tab.goto(`${baseUrl()}/console#/webhooks`);
      await tab.locator("td > .actions").first().waitFor();
      expect(await rows(tab)).toEqual([{ buttons: 4, oneLine: true }]);
      expect(await tab.locator("td > .actions > *").allTextContents()).toEqual([
        "Deliveries",
        "Send test",
        "Disable",
        "Delete",
      ]);
      expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await screenshot(tab, `rough-edges-webhooks-${width}`);
      expect(errors).toEqual([]);
    }
  });

  it("shows an incoming message's own times: received, then read once marked", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const res = await api<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
      token: apiKey,
      body: { from_number: "+14155552672", type: "text", content: "Is it open on Sunday?" },
    });
    expect(res.status).toBe(201);
    const id = res.body.data.id;
    const stored = (await api<{ data: Message }>("GET", `/v1/chatapp/messages/${id}`, { token: apiKey })).body
      .data;
    expect(stored.status).toBe("delivered");
    expect(stored.delivered_at).toEqual(expect.any(String));

    const tab = await page();
    const errors = watchErrors(tab);
    await signIn(tab, apiKey);
    await tab.goto(`${baseUrl()}/console#/messages/${id}`);
    const stages = tab.locator("#timeline li");
    await stages.first().waitFor();
    expect(await stages.locator("strong").allTextContents()).toEqual(["Received", "Read"]);
    expect(await stages.nth(0).locator("time").getAttribute("datetime")).toBe(stored.delivered_at);
    expect(await stages.nth(0).getAttribute("class")).toBe("done");
    expect(await stages.nth(1).textContent()).toBe("Read not yet");
    expect(await tab.locator("#timeline").textContent()).not.toContain("Sent");
    expect(await tab.locator("#timeline").textContent()).not.toContain("Queued");
    await screenshot(tab, "rough-edges-incoming-received");

    // Marked read through the API: the page, still following the message, shows when.
    const marked = await api("POST", `/v1/chatapp/messages/${id}/read`, { token: apiKey });
    expect(marked.status).toBe(200);
    const read = (await api<{ data: Message }>("GET", `/v1/chatapp/messages/${id}`, { token: apiKey })).body
      .data;
    await tab.locator("#timeline li.done").nth(1).waitFor();
    expect(await stages.nth(1).locator("time").getAttribute("datetime")).toBe(read.read_at);
    await screenshot(tab, "rough-edges-incoming-read");
    expect(errors).toEqual([]);
  });

  it("tells apart two apps of the same name by a short id, in the code form's list and the table", async () => {
    const { apiKey } = await createAccount(10);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const app = await api<{ data: { id: string } }>("POST", "/v1/apps", {
        token: apiKey,
        body: { name: "Shop", sender_id: crypto.randomUUID() },
      });
      expect(app.status).toBe(201);
      ids.push(app.body.data.id);
    }
    const tab = await page();
    const errors = watchErrors(tab);
    await signIn(tab, apiKey);
    await tab.goto(`${baseUrl()}/console#/apps`);
    await tab.locator("#otp-app").waitFor();
    const options = await tab
      .locator("#otp-app option")
      .evaluateAll((all) => all.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
    expect(options.sort()).toEqual(ids.map((id) => [id, `Shop (${id.slice(0, 8)})`]).sort());
    const names = await tab.locator("tbody tr td:first-child").allTextContents();
    expect(names.sort()).toEqual(ids.map((id) => `Shop${id.slice(0, 8)}`).sort());
    // The chosen one is the one the code goes out for.
    const second = ids[1] ?? "";
    await tab.selectOption("#otp-app", second);
    expect(await tab.locator("#otp-app option:checked").textContent()).toBe(`Shop (${second.slice(0, 8)})`);
    await screenshot(tab, "rough-edges-apps");
    expect(errors).toEqual([]);
  });

  it("keeps a long qr_code inside the event's box, on a desktop and on a phone", async () => {
    const { apiKey } = await createAccount(10);
    const created = await api<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { token: apiKey });
    expect(created.status).toBe(201);
    // QR_ROTATE_SECONDS is 3 in the harness: a session.qr_updated event with the next QR follows.
    const event = await until(async () => {
      const res = await api<{ data: { id: string; data: { qr_code: string } }[] }>(
        "GET",
        "/v1/events?filter[type]=session.qr_updated&limit=1",
        { token: apiKey },
      );
      return res.body.data[0];
    });
    expect(event.data.qr_code.length).toBeGreaterThan(1000);

    for (const width of [1280, 390]) {
      const tab = await page(width);
      const errors = watchErrors(tab);
      await signIn(tab, apiKey);
      await tab.goto(`${baseUrl()}/console#/events/${event.id}`);
      const box = tab.locator("#event-data");
      await box.waitFor();
      expect(await box.textContent()).toContain(`"qr_code": "${event.data.qr_code}"`);
      const fit = await box.evaluate((pre) => {
        const range = document.createRange();
        range.selectNodeContents(pre);
        const rects = Array.from(range.getClientRects());
        const outer = pre.getBoundingClientRect();
        return {
          right: Math.max(...rects.map((r) => r.right)),
          boxRight: outer.right,
          overflow: pre.scrollWidth - pre.clientWidth,
          page: document.documentElement.scrollWidth,
          height: outer.height,
          scrolls: pre.scrollHeight > pre.clientHeight,
        };
      });
      // Every line of the text ends inside the box; nothing to scroll sideways, in the box or the page.
      expect(fit.right).toBeLessThanOrEqual(fit.boxRight);
      expect(fit.overflow).toBe(0);
      expect(fit.page).toBeLessThanOrEqual(width);
      // The wrapped value scrolls within a box at most 40rem (640 px) tall, not down a long page.
      expect(fit.height).toBeLessThanOrEqual(640);
      expect(fit.scrolls).toBe(true);
      await screenshot(tab, `rough-edges-event-qr-${width}`);
      expect(errors).toEqual([]);
    }
  });

  it("campaigns: follows a draft started elsewhere to its end, and reads at once when shown again", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const created = await api<{ data: { id: string; status: string } }>("POST", "/v1/chatapp/campaigns", {
      token: apiKey,
      body: {
        name: "Started elsewhere",
        chatapp_session_ids: [session],
        type: "text",
        content: "Hi {{name}}",
        delay_between: 0,
        recipients: [
          { to_number: "+14155552691", variables: { name: "Ada" } },
          { to_number: "+14155552692", variables: { name: "Grace" } },
        ],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;

    const tab = await page();
    const errors = watchErrors(tab);
    await signIn(tab, apiKey);

    // The page's schedule: every few seconds while a campaign is not final, faster while one
    // moves, doubling while the page is hidden, and none once every campaign is final.
    const poll = (await tab.evaluate(`(async () => {
      const { nextPoll } = await import("/console/campaigns.js");
      const stats = { total: 2, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, queued: 2 };
      const at = (status, more = {}) => ({ status, stats: { ...stats, ...more }, completed_at: null, updated_at: "2026-01-01T00:00:00Z" });
      return {
        draft: nextPoll([at("draft")], null, false),
        paused: nextPoll([at("paused")], 4000, false),
        running: nextPoll([at("draft"), at("running")], null, false),
        final: nextPoll([at("completed", { read: 2, queued: 0 }), at("cancelled")], null, false),
        hidden: [nextPoll([at("draft")], null, true), nextPoll([at("draft")], 8000, true), nextPoll([at("draft")], 40000, true)],
        hiddenRunning: nextPoll([at("running")], 2000, true),
      };
    })()`)) as Record<string, unknown>;
    expect(poll).toEqual({
      draft: 4000,
      paused: 4000,
      running: 2000,
      final: null,
      hidden: [8000, 16000, 60000],
      hiddenRunning: 4000,
    });

    await tab.goto(`${baseUrl()}/console#/campaigns`);
    const row = tab.locator("#campaign-list tbody tr").filter({ hasText: "Started elsewhere" });
    await row.waitFor();
    expect(await row.locator(".badge").textContent()).toBe("draft");
    expect(await row.locator(".campaign-done").textContent()).toBe("0 of 2 done");
    await screenshot(tab, "rough-edges-campaign-draft");

    // Started through the API, not the page: the page reads it again and follows it to its end.
    const reads: number[] = [];
    tab.on("request", (request) => {
      if (new URL(request.url()).pathname === "/v1/chatapp/campaigns") reads.push(Date.now());
    });
    const started = await api("POST", `/v1/chatapp/campaigns/${id}/start`, { token: apiKey });
    expect(started.status).toBe(200);
    await row.locator(".badge", { hasText: /running|completed/ }).waitFor({ timeout: 15_000 });
    await row.locator(".campaign-done", { hasText: "2 of 2 done" }).waitFor({ timeout: 20_000 });
    await row.locator(".badge", { hasText: "completed" }).waitFor({ timeout: 20_000 });
    await until(async () =>
      (await row.locator('[data-part="read"]').textContent()) === "read 2" ? true : undefined,
    );
    expect(reads.length).toBeGreaterThan(0);
    await screenshot(tab, "rough-edges-campaign-followed");

    // Hidden, then shown again: one read at once, not at the next gap.
    await tab.evaluate(() => {
      Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    const before = reads.length;
    const shownAt = Date.now();
    await tab.evaluate(() => {
      Object.defineProperty(document, "hidden", { configurable: true, get: () => false });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await until(async () => (reads.length > before ? true : undefined), 3_000);
    expect((reads[before] ?? 0) - shownAt).toBeLessThan(1_000);
    expect(errors).toEqual([]);
  });

  it("reads recipients' CSV with the vendored Papa Parse", async () => {
    const tab = await page();
    const scripts: string[] = [];
    tab.on("request", (request) => scripts.push(new URL(request.url()).pathname));
    await openConsole(tab);
    const result = (await tab.evaluate(`(async () => {
      const csv = await import("/console/campaign-csv.js");
      return {
        papa: typeof window.Papa?.parse,
        records: csv.parseCsv('to_number,name\\r\\n+14155552671,"Hopper, Grace"\\r\\n+14155552672,"line\\r\\nbreak"\\r\\n+14155552673,Ada').map((r) => [r.line, r.fields]),
      };
    })()`)) as { papa: string; records: unknown[] };
    expect(result.papa).toBe("function");
    expect(scripts).toContain("/vendor/papaparse/papaparse-5.7.1.min.js");
    // Line numbers count the line break inside the quoted field; CRLF reads as LF.
    expect(result.records).toEqual([
      [1, ["to_number", "name"]],
      [2, ["+14155552671", "Hopper, Grace"]],
      [3, ["+14155552672", "line\nbreak"]],
      [5, ["+14155552673", "Ada"]],
    ]);
    const license = await fetch(`${baseUrl()}/vendor/papaparse/LICENSE`);
    expect(license.status).toBe(200);
    expect(await license.text()).toContain("Copyright (c) 2015 Matthew Holt");
  });
});
