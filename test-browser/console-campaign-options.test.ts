import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, createAccount } from "./api";
import { launchBrowser, screenshot } from "./browser";
import { connectedSession, openConsole, signIn, until, watchErrors } from "./console-page";
import { CLOUD_API_NUMBER } from "./global-setup";

// The console's "New campaign" form beyond a text campaign: media types, templates, a random
// delay range, a start time, a send window and the two options, each sent as the API takes it
// (docs/campaigns.md, Campaigns) and read back through the API; and the API's refusals shown by field.

/** The browser's zone in these tests, so `scheduled_at` carries an offset other than UTC's. */
const ZONE = "Europe/Berlin";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

/** A desktop page whose clock reads {@link ZONE}'s local time. */
async function zonedPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: ZONE });
  return context.newPage();
}

/** `instant` as a `datetime-local` value in `zone`, and that zone's UTC offset then ("+01:00"). */
function wallClock(instant: Date, zone: string): { local: string; offset: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "longOffset",
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return {
    local: `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`,
    offset: (parts.timeZoneName ?? "").replace("GMT", "") || "+00:00",
  };
}

/** Clicks "Create draft" and returns the body of the create request the form sent. */
async function submit(page: Page): Promise<Record<string, unknown>> {
  const [request] = await Promise.all([
    page.waitForRequest(
      (r: Request) => r.method() === "POST" && new URL(r.url()).pathname === "/v1/chatapp/campaigns",
    ),
    page.click("#create-campaign-form button[type=submit]"),
  ]);
  return request.postDataJSON() as Record<string, unknown>;
}

/** The account's campaigns through the API. */
async function campaigns(key: string): Promise<{ id: string }[]> {
  const res = await api<{ data: { id: string }[] }>("GET", "/v1/chatapp/campaigns", { token: key });
  return res.body.data;
}

const CSV = ["to_number,name,code", "+14155552691,Ada,ADA10", '+14155552692,"Hopper, Grace",GRACE10'].join(
  "\n",
);
const RECIPIENTS = [
  { to_number: "+14155552691", variables: { name: "Ada", code: "ADA10" } },
  { to_number: "+14155552692", variables: { name: "Hopper, Grace", code: "GRACE10" } },
];

describe("console campaign options", () => {
  it("builds the body from the template fields and renders each row's filled values", async () => {
    const page = await zonedPage();
    await openConsole(page);
    // The page's own module, imported in the page (a string: vitest would rewrite an import()).
    const result = (await page.evaluate(`(async () => {
      const m = await import("/console/campaign-body.js");
      const values = {
        name: " Codes ", sessionIds: ["s1"], type: "template", content: "ignored",
        templateName: "order_update", templateLanguage: "en_US",
        templateBody: "{{name}}\\r\\n\\n  {{code}} now ",
        templateButtons: "0,url,{{code}},x\\n1,quick_reply",
        pacing: "fixed", delayBetween: "", scheduledAt: "2026-07-01T09:30", windowStart: "",
        windowEnd: "", timeZone: "Europe/Berlin", checkNumbers: false, simulateTyping: false,
      };
      const rows = [{ to_number: "+14155552691", variables: { name: "Ada", code: "ADA10" } }];
      return {
        body: m.campaignBody(values, rows),
        preview: m.previewText(values, rows[0].variables),
        placeholders: m.placeholderText(values),
        winter: m.localIso("2026-11-26T10:00"),
        audio: m.campaignBody({ ...values, type: "audio", mediaUrl: " https://e.example/a.ogg ", pacing: "range",
          delayMin: "0", delayMax: "" }, []),
        caption: m.previewText({ type: "image", content: "Hi {{name}}" }, { name: "Ada" }),
      };
    })()`)) as Record<string, unknown>;
    expect(result.body).toEqual({
      name: "Codes",
      chatapp_session_ids: ["s1"],
      type: "template",
      template: {
        name: "order_update",
        language: "en_US",
        variables: {
          body: ["{{name}}", "{{code}} now"],
          buttons: [
            { index: 0, sub_type: "url", parameter: "{{code}},x" },
            { index: 1, sub_type: "quick_reply" },
          ],
        },
      },
      // Summer in Berlin: the browser's offset that day.
      scheduled_at: "2026-07-01T09:30:00+02:00",
      recipients: [{ to_number: "+14155552691", variables: { name: "Ada", code: "ADA10" } }],
    });
    expect(result.preview).toBe(
      "order_update (en_US): {{1}} = Ada; {{2}} = ADA10 now; button 0 (url) = ADA10,x; button 1 (quick_reply) = ",
    );
    expect(result.placeholders).toBe("{{name}}\n{{code}} now\n{{code}},x\n");
    expect(result.winter).toBe("2026-11-26T10:00:00+01:00");
    // Audio takes no caption; a range sends what was filled, for the API to name the rest.
    expect(result.audio).toEqual({
      name: "Codes",
      chatapp_session_ids: ["s1"],
      type: "audio",
      media_url: "https://e.example/a.ogg",
      delay_range: { min_ms: 0 },
      scheduled_at: "2026-07-01T09:30:00+02:00",
      recipients: [],
    });
    expect(result.caption).toBe("[image] Hi Ada");
  });

  it("sends a media campaign's fields, then creates a template campaign with every option and reads it back", async () => {
    const { apiKey } = await createAccount(10);
    const created = await api<{ session: { id: string; status: string } }>("POST", "/v1/chatapp/sessions", {
      token: apiKey,
      body: { gateway: "cloud_api", cloud_api: CLOUD_API_NUMBER },
    });
    expect(created.body.session.status).toBe("connected");
    const session = created.body.session.id;
    const page = await zonedPage();
    const errors = watchErrors(page);
    try {
      await signIn(page, apiKey);
      await page.click('#nav a[href="#/campaigns"]');
      await page.locator(`#campaign-sessions input[value="${session}"]:checked`).waitFor();
      expect(await page.locator("#campaign-sessions").textContent()).toContain("WhatsApp Cloud API");
      // Text: no media URL, no template fields; the options are folded away.
      expect(await page.locator("#campaign-media-url").isVisible()).toBe(false);
      expect(await page.locator("#campaign-template").isVisible()).toBe(false);
      expect(await page.locator("#campaign-scheduled-at").isVisible()).toBe(false);

      // Audio carries no caption.
      await page.selectOption("#campaign-type", "audio");
      expect(await page.locator("#campaign-media-url").isVisible()).toBe(true);
      expect(await page.locator("#campaign-content").isVisible()).toBe(false);

      await page.fill("#campaign-name", "Launch codes");
      await page.selectOption("#campaign-type", "image");
      expect(await page.locator('label[for="campaign-content"]').textContent()).toContain("Caption");
      // A host that never resolves (RFC 2606 `.invalid`): the server cannot fetch it, with or
      // without a network, so the API's media check answers for certain.
      const mediaUrl = "https://media.chatapp-example.invalid/launch.jpg";
      await page.fill("#campaign-media-url", mediaUrl);
      await page.fill("#campaign-content", "Hi {{name}}, {{code}} is yours.");
      await page.check("#campaign-pacing-range");
      expect(await page.locator("#campaign-delay").isVisible()).toBe(false);
      await page.fill("#campaign-delay-min", "1000");
      await page.fill("#campaign-delay-max", "3000");
      await page.click("#campaign-options summary");
      expect(await page.locator("#campaign-time-zone").inputValue()).toBe(ZONE);
      const at = new Date(Math.floor((Date.now() + 2 * 86_400_000) / 60_000) * 60_000);
      const { local, offset } = wallClock(at, ZONE);
      await page.fill("#campaign-scheduled-at", local);
      await page.fill("#campaign-window-start", "09:00");
      await page.fill("#campaign-window-end", "18:00");
      await page.check("#campaign-check-numbers");
      await page.check("#campaign-simulate-typing");
      await page.fill("#campaign-csv", CSV);
      const preview = page.locator("#campaign-preview li");
      await until(async () => ((await preview.count()) === 2 ? true : undefined));
      expect(await preview.allTextContents()).toEqual([
        "+14155552691: [image] Hi Ada, ADA10 is yours.",
        "+14155552692: [image] Hi Hopper, Grace, GRACE10 is yours.",
      ]);
      await screenshot(page, "console-campaign-options");

      const options = {
        delay_range: { min_ms: 1000, max_ms: 3000 },
        scheduled_at: `${local}:00${offset}`,
        send_window: { start: "09:00", end: "18:00", time_zone: ZONE },
        check_numbers: true,
        simulate_typing: true,
      };
      expect(await submit(page)).toEqual({
        name: "Launch codes",
        chatapp_session_ids: [session],
        type: "image",
        content: "Hi {{name}}, {{code}} is yours.",
        media_url: mediaUrl,
        ...options,
        recipients: RECIPIENTS,
      });
      const problem = page.locator("#create-campaign-form .problem[role=alert]");
      await problem.waitFor();
      expect(await problem.textContent()).toContain("media_url");
      expect(await campaigns(apiKey)).toEqual([]);

      // The same campaign as the Cloud API stand-in's approved `otp_code` template ({{1}} is the code).
      await page.selectOption("#campaign-type", "template");
      expect(await page.locator("#campaign-media-url").isVisible()).toBe(false);
      expect(await page.locator("#campaign-content").isVisible()).toBe(false);
      await page.fill("#campaign-template-name", "otp_code");
      await page.fill("#campaign-template-language", "en_US");
      await page.fill("#campaign-template-body", "{{code}}");
      await until(async () =>
        (await preview.first().textContent())?.endsWith("{{1}} = ADA10") ? true : undefined,
      );
      expect(await preview.allTextContents()).toEqual([
        "+14155552691: otp_code (en_US): {{1}} = ADA10",
        "+14155552692: otp_code (en_US): {{1}} = GRACE10",
      ]);
      await screenshot(page, "console-campaign-template");
      expect(await submit(page)).toEqual({
        name: "Launch codes",
        chatapp_session_ids: [session],
        type: "template",
        template: { name: "otp_code", language: "en_US", variables: { body: ["{{code}}"] } },
        ...options,
        recipients: RECIPIENTS,
      });
      await page.locator("text=Draft “Launch codes” created with 2 recipients").waitFor();
      const [listed] = await campaigns(apiKey);
      const id = listed?.id ?? "";
      const read = await api<{ data: Record<string, unknown> }>("GET", `/v1/chatapp/campaigns/${id}`, {
        token: apiKey,
      });
      const campaign = read.body.data;
      expect(campaign).toMatchObject({
        name: "Launch codes",
        status: "draft",
        type: "template",
        content: null,
        media_url: null,
        template: { name: "otp_code", language: "en_US", variables: { body: ["{{code}}"], buttons: [] } },
        delay_range: { min_ms: 1000, max_ms: 3000 },
        send_window: { start: "09:00", end: "18:00", time_zone: ZONE },
        check_numbers: true,
        simulate_typing: true,
      });
      expect(Date.parse(String(campaign.scheduled_at))).toBe(at.getTime());
      // The form is back to a text campaign with its defaults.
      expect(await page.locator("#campaign-type").inputValue()).toBe("text");
      expect(await page.locator("#campaign-time-zone").inputValue()).toBe(ZONE);

      // The list tells what was chosen; started, the campaign waits for its time.
      const row = page.locator("#campaign-list tbody tr").filter({ hasText: "Launch codes" });
      const summary = row.locator(".campaign-summary");
      await summary.waitFor();
      expect(await summary.textContent()).toMatch(
        /^template otp_code · 1000–3000 ms \(random\) · starts .+ · sends 09:00–18:00 Europe\/Berlin$/,
      );
      expect(await summary.locator("time").getAttribute("datetime")).toBe(campaign.scheduled_at);
      await row.locator("button", { hasText: "Start" }).click();
      await row.locator(".badge", { hasText: "scheduled" }).waitFor();
      const started = await api<{ data: { status: string; scheduled_at: string } }>(
        "GET",
        `/v1/chatapp/campaigns/${id}`,
        { token: apiKey },
      );
      expect(started.body.data.status).toBe("scheduled");
      expect(Date.parse(started.body.data.scheduled_at)).toBe(at.getTime());

      await row.locator("a", { hasText: "Launch codes" }).click();
      const detail = page.locator("#campaign-detail");
      await detail.locator("h1").filter({ hasText: "scheduled" }).waitFor();
      const text = (await detail.textContent()) ?? "";
      for (const shown of [
        "Typetemplate",
        "Templateotp_code (en_US): {{1}} = {{code}}",
        "Delay between1000–3000 ms (random)",
        "Send window09:00–18:00 Europe/Berlin",
        "Check numbersyes",
        "Simulate typingyes",
      ])
        expect(text).toContain(shown);
      // A template has no text or caption of its own.
      expect(text).not.toMatch(/Caption|Text/);
      expect(await detail.locator("dd time").first().getAttribute("datetime")).toBe(campaign.scheduled_at);
      await screenshot(page, "console-campaign-scheduled");
      // Only the refused create's 422 (the browser logs failed requests).
      expect(errors.filter((e) => !/422/.test(e))).toEqual([]);
      expect((await api("POST", `/v1/chatapp/campaigns/${id}/cancel`, { token: apiKey })).status).toBe(200);
    } finally {
      await api("DELETE", `/v1/chatapp/sessions/${session}`, { token: apiKey });
    }
  });

  it("shows the API's refusal of a field under that field, and creates nothing", async () => {
    const { apiKey } = await createAccount(10);
    await connectedSession(apiKey);
    const page = await zonedPage();
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/campaigns"]');
    await page.locator("#campaign-sessions input:checked").waitFor();
    await page.fill("#campaign-name", "Backwards");
    await page.fill("#campaign-content", "Hi {{name}}");
    await page.fill("#campaign-csv", CSV);
    await page.check("#campaign-pacing-range");
    await page.fill("#campaign-delay-min", "5000");
    await page.fill("#campaign-delay-max", "1000");
    expect(await submit(page)).toMatchObject({ delay_range: { min_ms: 5000, max_ms: 1000 } });
    const problem = page.locator("#create-campaign-form .problem[role=alert]");
    await problem.waitFor();
    expect(await problem.textContent()).toContain("delay_range.max_ms: min_ms must not exceed max_ms");
    expect(await page.locator("#campaign-delay-max").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#campaign-pacing .field-error").allTextContents()).toEqual([
      "delay_range.max_ms: min_ms must not exceed max_ms",
    ]);
    expect(await campaigns(apiKey)).toEqual([]);

    // A window that starts where it ends: named under its end, the folded options opened to show it.
    await page.fill("#campaign-delay-max", "6000");
    await page.click("#campaign-options summary");
    await page.fill("#campaign-window-start", "09:00");
    await page.fill("#campaign-window-end", "09:00");
    await page.click("#campaign-options summary");
    expect(await page.locator("#campaign-window-end").isVisible()).toBe(false);
    expect(await submit(page)).toMatchObject({
      delay_range: { min_ms: 5000, max_ms: 6000 },
      send_window: { start: "09:00", end: "09:00", time_zone: ZONE },
    });
    await until(async () =>
      (await problem.textContent().catch(() => ""))?.includes("send_window.end") ? true : undefined,
    );
    expect(await problem.textContent()).toContain("send_window.end: start and end must differ");
    expect(await page.locator("#campaign-window-end").isVisible()).toBe(true);
    expect(await page.locator("#campaign-window-end").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#campaign-delay-max").getAttribute("aria-invalid")).toBeNull();
    expect(await page.locator("#campaign-options .field-error").allTextContents()).toEqual([
      "send_window.end: start and end must differ",
    ]);
    await screenshot(page, "console-campaign-refused");
    expect(await campaigns(apiKey)).toEqual([]);
    expect(errors.filter((e) => !/422/.test(e))).toEqual([]);
  });
});
