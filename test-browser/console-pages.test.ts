import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, createAccount } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";
import { connectedSession, openConsole, signIn, until, watchErrors } from "./console-page";

// The console's campaigns, API keys, opt-outs and events pages, driven as a person would: create,
// act, and see the result in the page and through the API.

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

type Campaign = { id: string; name: string; status: string; stats: Record<string, number> };

/** The account's campaigns through the API, newest first. */
async function campaigns(key: string): Promise<Campaign[]> {
  const res = await api<{ data: Campaign[] }>("GET", "/v1/chatapp/campaigns", { token: key });
  return res.body.data;
}

describe("console pages", () => {
  it("reads pasted CSV per RFC 4180 and checks each row against the template", async () => {
    const page = await newPage(browser);
    await openConsole(page);
    // The page's own module, imported in the page (a string: vitest would rewrite an import()).
    const result = (await page.evaluate(`(async () => {
      const csv = await import("/console/campaign-csv.js");
      const text =
        '\\uFEFFto_number, name ,note\\r\\n+14155552671,"Ada, Countess","said ""hi""\\non two lines"\\r\\n\\n' +
        "+14155552672,Grace\\n+14155552673,,x\\n+1 (415) 555-2674,Alan,late,extra\\n";
      return {
        records: csv.parseCsv(text).map((r) => [r.line, r.fields]),
        read: csv.readRecipients(text, "Hi {{ name }} {note}"),
        filled: csv.fillTemplate("{{a}} {b} {{c}}", { a: "{{b}}", b: "2" }),
        header: csv.readRecipients("phone,first-name\\n+14155552671,Ada", "").headerProblems,
      };
    })()`)) as {
      records: unknown[];
      read: { header: string[]; rows: unknown[] };
      filled: string;
      header: string[];
    };
    expect(result.records).toEqual([
      [1, ["to_number", " name ", "note"]],
      [2, ["+14155552671", "Ada, Countess", 'said "hi"\non two lines']],
      [4, [""]],
      [5, ["+14155552672", "Grace"]],
      [6, ["+14155552673", "", "x"]],
      [7, ["+1 (415) 555-2674", "Alan", "late", "extra"]],
    ]);
    expect(result.read.header).toEqual(["to_number", "name", "note"]);
    expect(result.read.rows).toEqual([
      {
        line: 2,
        to_number: "+14155552671",
        variables: { name: "Ada, Countess", note: 'said "hi"\non two lines' },
        problems: [],
      },
      {
        line: 5,
        to_number: "+14155552672",
        variables: { name: "Grace" },
        problems: ["2 fields where the header has 3", "no value for {{note}}"],
      },
      { line: 6, to_number: "+14155552673", variables: { note: "x" }, problems: ["no value for {{name}}"] },
      {
        line: 7,
        to_number: "+1 (415) 555-2674",
        variables: { name: "Alan", note: "late" },
        problems: ["4 fields where the header has 3"],
      },
    ]);
    // One pass: a value holding braces never becomes a placeholder; unknown names stay as written.
    expect(result.filled).toBe("{{b}} 2 {{c}}");
    // "phone" is a well-formed variable; the number column is missing.
    expect(result.header).toEqual([
      "The header row has no to_number column.",
      'Column "first-name" is not a variable name (letters, digits and _).',
    ]);
  });

  it("creates a campaign from CSV (preview, a bad row flagged, the API's row errors), starts it and watches it complete", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    // An opted-out number: the campaign skips it, and the bar shows it as skipped.
    await api("POST", "/v1/opt-outs", { token: apiKey, body: { to_number: "+14155552684" } });
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/campaigns"]');
    await page.locator("text=No campaigns yet.").waitFor();
    // The only connected session is chosen already.
    await page.locator(`#campaign-sessions input[value="${session}"]:checked`).waitFor();

    await page.fill("#campaign-name", "November offer");
    await page.fill("#campaign-delay", "1500");
    await page.fill("#campaign-content", "Hi {{name}}, your code {{code}} takes 10% off.");
    await page.fill(
      "#campaign-csv",
      [
        "to_number,name,code",
        '+14155552681,"Lovelace, Ada",ADA10',
        '+1 415 555 2682,"Grace ""Amazing"" Hopper",GRACE10',
        "12ab,Alan,ALAN10",
        "+14155552684,Ken,",
      ].join("\n"),
    );
    const preview = page.locator("#campaign-preview li");
    await until(async () => ((await preview.count()) === 3 ? true : undefined));
    expect(await preview.allTextContents()).toEqual([
      "+14155552681: Hi Lovelace, Ada, your code ADA10 takes 10% off.",
      '+1 415 555 2682: Hi Grace "Amazing" Hopper, your code GRACE10 takes 10% off.',
      "12ab: Hi Alan, your code ALAN10 takes 10% off.",
    ]);
    const problems = page.locator("#campaign-row-problems tbody tr");
    expect(await problems.allTextContents()).toEqual([
      '412ab"12ab" is not an international number',
      "5+14155552684no value for {{code}}",
    ]);
    await screenshot(page, "console-campaign-csv-problems");
    // A submit with problems is refused in the browser: nothing reaches the API.
    await page.click("#create-campaign-form button[type=submit]");
    await page.locator("#create-campaign-form .error[role=alert]").waitFor();
    expect(await campaigns(apiKey)).toEqual([]);

    // A number of E.164's shape that no country's plan has: the API refuses it under
    // `recipients.2.to_number`, shown on CSV line 4.
    await page.fill(
      "#campaign-csv",
      [
        "to_number,name,code",
        '+14155552681,"Lovelace, Ada",ADA10',
        '+1 415 555 2682,"Grace ""Amazing"" Hopper",GRACE10',
        "+10000000000,Alan,ALAN10",
        "+14155552684,Ken,KEN10",
      ].join("\n"),
    );
    await page
      .locator("#campaign-row-count")
      .filter({ hasText: "4 recipients, no problems found." })
      .waitFor();
    await page.click("#create-campaign-form button[type=submit]");
    await page.locator("#create-campaign-form .problem[role=alert]").waitFor();
    expect(await problems.allTextContents()).toEqual(["4+10000000000to_number: invalid phone number (API)"]);
    expect(await page.locator("#create-campaign-form .problem[role=alert]").textContent()).toContain(
      "recipients.2.to_number",
    );
    expect(await campaigns(apiKey)).toEqual([]);

    await page.fill(
      "#campaign-csv",
      [
        "to_number,name,code",
        '+14155552681,"Lovelace, Ada",ADA10',
        '+1 415 555 2682,"Grace ""Amazing"" Hopper",GRACE10',
        "+14155552683,Alan,ALAN10",
        "+14155552684,Ken,KEN10",
      ].join("\n"),
    );
    await page.click("#create-campaign-form button[type=submit]");
    await page.locator("text=Draft “November offer” created with 4 recipients").waitFor();
    const [draft] = await campaigns(apiKey);
    expect(draft?.status).toBe("draft");
    const row = page.locator("#campaign-list tbody tr").filter({ hasText: "November offer" });
    await row.filter({ hasText: "draft" }).waitFor();
    expect(await row.locator(".campaign-done").textContent()).toBe("0 of 4 done");

    // Start: the list follows the campaign while it runs (1.5 s between messages) and after it
    // completes, until the receipts are in (SANDBOX_READ_MS is 600).
    await row.locator("button", { hasText: "Start" }).click();
    const seen = new Set<string>();
    let running = false;
    await until(async () => {
      const status = await row.locator(".badge").first().textContent();
      const done = (await row.locator(".campaign-done").textContent()) ?? "";
      seen.add(done);
      if (status === "running" && /^[23] of 4 done$/.test(done) && !running) {
        running = true;
        await screenshot(page, "console-campaign-running");
      }
      return status === "completed" ? true : undefined;
    }, 30_000);
    expect(running).toBe(true);
    expect([...seen].some((text) => /^[23] of 4 done$/.test(text))).toBe(true);
    await until(async () =>
      (await row.locator(".campaign-done").textContent()) === "4 of 4 done" ? true : undefined,
    );
    await until(
      async () => ((await row.locator('[data-part="read"]').textContent()) === "read 3" ? true : undefined),
      15_000,
    );
    const bar = row.locator("[role=progressbar]");
    expect(await bar.getAttribute("aria-valuenow")).toBe("4");
    expect(await bar.getAttribute("aria-valuemax")).toBe("4");
    expect(await row.locator('[data-part="skipped"]').textContent()).toBe("skipped 1");
    expect(await row.locator('[data-part="queued"]').textContent()).toBe("queued 0");
    expect(await row.locator("button").count()).toBe(0);
    await page.locator("#account").filter({ hasText: "Balance 9.97" }).waitFor();
    await screenshot(page, "console-campaigns-completed");

    // Its page: the recipients, most recently added first, each with its status and message.
    await row.locator("a", { hasText: "November offer" }).click();
    const recipients = page.locator("#campaign-recipients tbody tr");
    await until(async () => ((await recipients.count()) === 4 ? true : undefined));
    const ken = recipients.filter({ hasText: "+14155552684" });
    expect(await ken.locator(".badge").textContent()).toBe("skipped");
    expect(await ken.textContent()).toContain("recipient_opted_out");
    const ada = recipients.filter({ hasText: "+14155552681" });
    expect(await ada.locator(".badge").textContent()).toBe("read");
    expect(await ada.textContent()).toContain("name=Lovelace, Ada");
    const messageLink = ada.locator("a");
    const messageId = (await messageLink.textContent()) ?? "";
    expect(messageId).toMatch(/^[0-9a-f-]{36}$/);
    const message = await api<{ data: { content: string; campaign_id: string } }>(
      "GET",
      `/v1/chatapp/messages/${messageId}`,
      { token: apiKey },
    );
    expect(message.body.data.content).toBe("Hi Lovelace, Ada, your code ADA10 takes 10% off.");
    expect(message.body.data.campaign_id).toBe(draft?.id);
    expect(await page.locator("#campaign-detail").textContent()).toContain("Cost0.03");
    await screenshot(page, "console-campaign-detail");
    // Only the refused create's 422 (the browser logs failed requests).
    expect(errors.filter((text) => !/422/.test(text))).toEqual([]);
  });

  it("pauses, resumes and cancels a running campaign; the cancel refunds what was not sent", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const created = await api<{ data: { id: string } }>("POST", "/v1/chatapp/campaigns", {
      token: apiKey,
      body: {
        name: "Slow reminder",
        chatapp_session_ids: [session],
        type: "text",
        content: "See you on Friday.",
        delay_between: 20_000,
        recipients: [
          { to_number: "+14155552701" },
          { to_number: "+14155552702" },
          { to_number: "+14155552703" },
        ],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const page = await newPage(browser);
    const errors = watchErrors(page);
    page.on("dialog", (dialog) => dialog.accept());
    await signIn(page, apiKey);
    await page.goto(`${page.url().split("#")[0]}#/campaigns/${id}`);
    const detail = page.locator("#campaign-detail");
    await detail.locator("h1").filter({ hasText: "draft" }).waitFor();
    await detail.locator("button", { hasText: "Start" }).click();
    await detail.locator("h1").filter({ hasText: "running" }).waitFor();
    await detail.locator("button", { hasText: "Pause" }).click();
    await detail.locator("h1").filter({ hasText: "paused" }).waitFor();
    expect((await campaigns(apiKey))[0]?.status).toBe("paused");
    expect(await detail.locator("button").allTextContents()).toEqual(["Resume", "Cancel"]);
    await screenshot(page, "console-campaign-paused");
    await detail.locator("button", { hasText: "Resume" }).click();
    await detail.locator("h1").filter({ hasText: "running" }).waitFor();
    await detail.locator("button", { hasText: "Cancel" }).click();
    await detail.locator("h1").filter({ hasText: "cancelled" }).waitFor();
    const [campaign] = await campaigns(apiKey);
    expect(campaign?.status).toBe("cancelled");
    // With 20 s between messages, at most the first one went out; the rest failed, refunded.
    const stats = campaign?.stats ?? {};
    expect(stats.queued).toBe(0);
    expect((stats.failed ?? 0) + (stats.sent ?? 0) + (stats.delivered ?? 0) + (stats.read ?? 0)).toBe(3);
    expect(stats.failed).toBeGreaterThanOrEqual(2);
    await until(async () =>
      (await detail.locator(".campaign-done").textContent()) === "3 of 3 done" ? true : undefined,
    );
    expect(await detail.locator('[data-part="failed"]').textContent()).toBe(`failed ${stats.failed}`);
    expect(await detail.locator("button").count()).toBe(0);
    const failed = page.locator("#campaign-recipients tbody tr").filter({ hasText: "campaign_cancelled" });
    await until(async () => ((await failed.count()) >= 2 ? true : undefined));
    await screenshot(page, "console-campaign-cancelled");
    expect(errors).toEqual([]);
  });

  it("creates an API key with chosen scopes, shows its secret once with a copy button, and revokes it", async () => {
    const { apiKey } = await createAccount(10);
    const page = await newPage(browser);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    const errors = watchErrors(page);
    page.on("dialog", (dialog) => dialog.accept());
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/api-keys"]');
    // The scope list is the API's own (its OpenAPI document), `*` included.
    await page.locator('#key-scopes input[value="opt-outs:write"]').waitFor();
    const doc = await api<{
      components: { schemas: { ApiKey: { properties: { scopes: { items: { enum: string[] } } } } } };
    }>("GET", "/openapi.json");
    const scopes = doc.body.components.schemas.ApiKey.properties.scopes.items.enum;
    expect(scopes.length).toBeGreaterThan(20);
    expect(
      await page
        .locator("#key-scopes input")
        .evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value)),
    ).toEqual(scopes);
    const own = page.locator("#key-list tbody tr").filter({ hasText: "this console's key" });
    expect(await own.locator("code").textContent()).toBe(`${apiKey.slice(0, 11)}…`);

    await page.fill("#key-name", "checkout backend");
    await page.check('#key-scopes input[value="messages:send"]');
    await page.check('#key-scopes input[value="opt-outs:read"]');
    await page.click("#create-key-form button[type=submit]");
    const secret = page.locator("#key-secret");
    await secret.waitFor();
    const value = await secret.inputValue();
    expect(value).toMatch(/^sk_/);
    expect(await page.locator("#key-created").textContent()).toContain(
      "Scopes: messages:send, opt-outs:read",
    );
    await page.click("#copy-key");
    const said = await until(async () => (await page.locator("#key-copy-status").textContent()) || undefined);
    if (said === "Copied to the clipboard.")
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value);
    else
      expect(
        await page.evaluate(() => window.getSelection()?.toString() || document.activeElement?.id),
      ).toBeTruthy();
    const row = page.locator("#key-list tbody tr").filter({ hasText: "checkout backend" });
    await row.waitFor();
    expect(await row.textContent()).toContain("messages:send, opt-outs:read");
    expect(await row.locator("code").textContent()).toBe(`${value.slice(0, 11)}…`);
    await screenshot(page, "console-api-key-secret");

    // The key does what its scopes allow, and nothing else.
    expect((await api("GET", "/v1/opt-outs", { token: value })).status).toBe(200);
    expect((await api("GET", "/v1/chatapp/sessions", { token: value })).status).toBe(403);

    // Shown once: gone after "I have stored it", and not on the page when it is opened again.
    await page.click("text=I have stored it");
    await page.reload();
    await row.waitFor();
    expect(await page.locator("#main").textContent()).not.toContain(value);
    expect(await page.locator("#key-secret").count()).toBe(0);

    await row.locator("button", { hasText: "Revoke" }).click();
    await page.locator("text=Revoked checkout backend.").waitFor();
    expect(await row.count()).toBe(0);
    expect((await api("GET", "/v1/opt-outs", { token: value })).status).toBe(401);
    expect((await api("GET", "/v1/opt-outs", { token: apiKey })).status).toBe(200);
    await screenshot(page, "console-api-keys");
    expect(errors).toEqual([]);
  });

  it("adds a number to the opt-out list, refuses an invalid one with the API's words, and removes it", async () => {
    const { apiKey } = await createAccount(10);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    page.on("dialog", (dialog) => dialog.accept());
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/opt-outs"]');
    await page.locator("text=No numbers are opted out.").waitFor();

    await page.fill("#opt-out-number", "+1 (415) 555-2671");
    await page.click("#add-opt-out-form button[type=submit]");
    await page.locator("text=+14155552671 is opted out.").waitFor();
    const row = page.locator("#opt-out-list tbody tr").filter({ hasText: "+14155552671" });
    await row.waitFor();
    expect(await row.locator(".badge").textContent()).toBe("api");
    const listed = await api<{ data: { to_number: string }[] }>("GET", "/v1/opt-outs", { token: apiKey });
    expect(listed.body.data.map((one) => one.to_number)).toEqual(["+14155552671"]);

    await page.fill("#opt-out-number", "not a number");
    await page.click("#add-opt-out-form button[type=submit]");
    const problem = page.locator("#add-opt-out-form .problem");
    await problem.waitFor();
    expect(await problem.textContent()).toContain("to_number");
    await screenshot(page, "console-opt-outs");

    await row.locator("button", { hasText: "Remove" }).click();
    await page.locator("text=Removed +14155552671.").waitFor();
    await page.locator("text=No numbers are opted out.").waitFor();
    expect((await api("GET", "/v1/opt-outs/%2B14155552671", { token: apiKey })).status).toBe(404);
    // Only the refused add's 422 (the browser logs failed requests).
    expect(errors.filter((text) => !/422/.test(text))).toEqual([]);
  });

  it("lists events newest first, filters them by type, pages through them and opens one", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const sent = await api<{ data: { messages: { id: string }[] } }>("POST", "/v1/chatapp/messages", {
      token: apiKey,
      body: {
        chatapp_session_id: session,
        to_number: ["+14155552671", "+14155552672", "+14155552673"],
        type: "text",
        content: "Events",
      },
    });
    expect(sent.status).toBe(201);
    const ids = sent.body.data.messages.map((m) => m.id);
    // Each message reaches `read` (SANDBOX_READ_MS is 600): three message.read events.
    await until(async () => {
      const res = await api<{ data: unknown[] }>("GET", "/v1/events?filter[type]=message.read", {
        token: apiKey,
      });
      return res.body.data.length === 3 ? true : undefined;
    });
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/events"]');
    const rows = page.locator("#event-list tbody tr");
    await rows.first().waitFor();
    const types = await rows.locator("code").allTextContents();
    expect(types).toContain("session.status_changed");
    expect(types).toContain("message.read");
    // Newest first.
    const times = await rows
      .locator("time")
      .evaluateAll((els) => els.map((el) => el.getAttribute("datetime") ?? ""));
    expect([...times].sort().reverse()).toEqual(times);

    // The type list is the API's own.
    await page.locator('#event-type option[value="campaign.completed"]').waitFor({ state: "attached" });
    await page.selectOption("#event-type", "message.read");
    await page.click("#event-filters button[type=submit]");
    await until(async () => {
      const shown = await rows.locator("code").allTextContents();
      return shown.length === 3 && shown.every((t) => t === "message.read") ? true : undefined;
    });
    expect(page.url()).toContain("filter%5Btype%5D=message.read");
    await screenshot(page, "console-events-filtered");

    // Two a page: the older page holds the third.
    await page.goto(`${page.url().split("#")[0]}#/events?filter%5Btype%5D=message.read&limit=2`);
    await until(async () => ((await rows.count()) === 2 ? true : undefined));
    const firstPage = await rows.locator(".mono").allTextContents();
    await page.click("button:has-text('Older →')");
    await until(async () => ((await rows.count()) === 1 ? true : undefined));
    const secondPage = await rows.locator(".mono").allTextContents();
    expect(firstPage).not.toContain(secondPage[0]);
    expect(await page.locator("button:has-text('Older →')").isDisabled()).toBe(true);

    await rows.first().locator("a", { hasText: "Open" }).click();
    const data = page.locator("#event-data");
    await data.waitFor();
    expect(await page.locator("#event-type-shown").textContent()).toBe("message.read");
    const parsed = JSON.parse((await data.textContent()) ?? "{}") as { id: string; status: string };
    expect(ids).toContain(parsed.id);
    expect(parsed.status).toBe("read");
    // Pretty-printed: one member a line.
    expect((await data.textContent())?.split("\n").length).toBeGreaterThan(3);
    await screenshot(page, "console-event-detail");
    expect(errors).toEqual([]);
  });
});
