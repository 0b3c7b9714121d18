import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, baseUrl, createAccount } from "./api";
import { launchBrowser, newPage, screenshot } from "./browser";
import { connectedSession, openConsole, signIn, until, watchErrors } from "./console-page";
import { CLOUD_API_NUMBER } from "./global-setup";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

describe("the web console", () => {
  it("refuses a wrong key with the API's own words and stays on the sign-in form; sign out forgets the key", async () => {
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await openConsole(page);
    await page.fill("#api-key", `sk_${"A".repeat(43)}`);
    await page.click("#sign-in-form button[type=submit]");
    const error = page.locator("#sign-in-error");
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^Unauthenticated: .+/);
    expect(await page.locator("#sign-in").isVisible()).toBe(true);
    expect(await page.locator("#view").isVisible()).toBe(false);
    expect(await page.locator("#nav").isVisible()).toBe(false);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await screenshot(page, "console-wrong-key");

    const { apiKey } = await createAccount(10);
    await page.fill("#api-key", apiKey);
    await page.click("#sign-in-form button[type=submit]");
    await page.locator("#account").filter({ hasText: "Balance 10.00" }).waitFor();
    expect(await page.locator("#account").textContent()).toBe("Balance 10.00 · 1000 messages left");
    expect(await page.evaluate(() => sessionStorage.getItem("console.api_key"))).toBe(apiKey);
    expect(await page.locator("#sign-in-error").isVisible()).toBe(false);
    // A reload keeps the tab signed in; signing out forgets the key.
    await page.reload();
    await page.locator("#nav").waitFor();
    await page.click("#sign-out");
    await page.locator("#sign-in").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.locator("#nav").isVisible()).toBe(false);
    // Errors only from the refused key's 401 (the browser logs failed requests).
    expect(errors.filter((text) => !/401/.test(text))).toEqual([]);
  });

  it("creates a session, links it live through the QR view, sends a message and sees it read", async () => {
    const { apiKey } = await createAccount(10);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.locator("#account").filter({ hasText: "1000 messages left" }).waitFor();

    await page.click("#create-session");
    const qr = page.locator("#live-qr");
    await qr.waitFor({ state: "visible" });
    const first = await qr.getAttribute("src");
    expect(first).toMatch(/^data:image\/png;base64,/);
    const id = (await page.locator("#live-session-id").textContent()) ?? "";
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await page.locator("#live-status").filter({ hasText: "Waiting for the scan" }).waitFor();
    // QR_ROTATE_SECONDS is 3 in the harness: a rotation replaces the image through the socket.
    await until(async () => ((await qr.getAttribute("src")) !== first ? true : undefined), 12_000);
    expect(await qr.getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    await screenshot(page, "console-session-qr");

    const scan = await api<{ session: { phone_number: string } }>("POST", `/sandbox/sessions/${id}/scan`, {
      token: apiKey,
      body: {},
    });
    expect(scan.status).toBe(200);
    const phone = scan.body.session.phone_number;
    await page.locator("#live-status").filter({ hasText: "connected" }).waitFor();
    expect(await page.locator("#live-status").textContent()).toBe(`connected with ${phone}`);
    expect(await qr.isVisible()).toBe(false);
    await page.locator("table").filter({ hasText: phone }).waitFor();
    expect(await page.locator("tbody tr").first().textContent()).toContain("connected");
    await screenshot(page, "console-session-connected");

    await page.click('#nav a[href="#/messages"]');
    await page.locator(`#send-session option[value="${id}"]`).waitFor({ state: "attached" });
    await page.fill("#send-to", "+14155552671");
    await page.fill("#send-content", "Hello <b>console</b>");
    await page.click("#send-form button[type=submit]");
    await page.locator("#send-form .success").waitFor();
    expect(await page.locator("#send-form .success").textContent()).toMatch(
      /1 message, cost 0\.01, balance 9\.99/,
    );
    await page.locator("#account").filter({ hasText: "Balance 9.99" }).waitFor();
    // The list follows the message (SANDBOX_READ_MS is 600) without a click.
    const row = page.locator("tbody tr").filter({ hasText: "+14155552671" });
    await row.filter({ hasText: "read" }).waitFor({ timeout: 15_000 });
    // Text from the API is shown as text, never parsed as HTML.
    expect(await row.locator("td").nth(5).textContent()).toBe("Hello <b>console</b>");
    expect(await page.locator("tbody b").count()).toBe(0);
    await screenshot(page, "console-messages");

    await row.locator("a", { hasText: "Details" }).click();
    const timeline = page.locator("#timeline li");
    await timeline.first().waitFor();
    expect(await timeline.allTextContents()).toEqual([
      expect.stringMatching(/^Queued /),
      expect.stringMatching(/^Sent /),
      expect.stringMatching(/^Delivered /),
      expect.stringMatching(/^Read /),
    ]);
    expect(await page.locator("#timeline li.done").count()).toBe(4);
    expect(await page.locator("pre.json").textContent()).toContain('"events"');
    await screenshot(page, "console-message-detail");

    // The filters go to the API: failed messages only is an empty list.
    await page.click('a[href="#/messages"]');
    await page.selectOption("#filter-status", "failed");
    await page.click("#message-filters button[type=submit]");
    await page.locator("text=No messages match.").waitFor();
    expect(page.url()).toContain("filter%5Bstatus%5D=failed");
    expect(errors).toEqual([]);
  });

  it("disconnects, reconnects, shows the hosted link URL and deletes a session", async () => {
    const { apiKey } = await createAccount(10);
    const id = await connectedSession(apiKey);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    page.on("dialog", (dialog) => dialog.accept());
    await signIn(page, apiKey);
    const row = page.locator("tbody tr").filter({ hasText: id });
    await row.filter({ hasText: "connected" }).waitFor();

    await row.locator("button", { hasText: "Disconnect" }).click();
    await row.filter({ hasText: "disconnected_by_user" }).waitFor();
    await row.locator("button", { hasText: "Reconnect" }).click();
    await row.locator("button", { hasText: "Disconnect" }).waitFor();
    expect(await row.locator(".badge").textContent()).toBe("connected");

    await row.locator("button", { hasText: "Copy hosted link URL" }).click();
    const url = await until(
      async () =>
        (await page
          .locator("#hosted-link-url")
          .inputValue()
          .catch(() => "")) || undefined,
    );
    expect(url).toMatch(new RegExp(`^${baseUrl()}/link/[A-Za-z0-9_-]{43}$`));
    const linked = await api<{ session: { id: string } }>("GET", `/link/${url.split("/link/")[1]}/session`);
    expect(linked.body.session.id).toBe(id);

    await row.locator("button", { hasText: "Delete" }).click();
    await page.locator("text=No sessions yet.").waitFor();
    expect((await api("GET", `/v1/chatapp/sessions/${id}`, { token: apiKey })).status).toBe(404);
    expect(errors).toEqual([]);
  });

  it("shows each session's gateway, and a Cloud API session's templates, without QR or link URL", async () => {
    const { apiKey } = await createAccount(10);
    const sandboxId = await connectedSession(apiKey);
    const created = await api<{ session: { id: string; status: string }; qr_code: string | null }>(
      "POST",
      "/v1/chatapp/sessions",
      { token: apiKey, body: { gateway: "cloud_api", cloud_api: CLOUD_API_NUMBER } },
    );
    expect(created.status).toBe(201);
    expect(created.body.session.status).toBe("connected");
    expect(created.body.qr_code).toBeNull();
    const cloudId = created.body.session.id;
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    const cloudRow = page.locator("tbody tr").filter({ hasText: cloudId });
    const sandboxRow = page.locator("tbody tr").filter({ hasText: sandboxId });
    await cloudRow.filter({ hasText: "connected" }).waitFor();
    expect(await cloudRow.locator(".gateway").textContent()).toBe("WhatsApp Cloud API");
    expect(await sandboxRow.locator(".gateway").textContent()).toBe("Sandbox");
    // A business number has no hosted link page; a sandbox session has.
    expect(await cloudRow.locator("button", { hasText: "Copy hosted link URL" }).count()).toBe(0);
    expect(await sandboxRow.locator("button", { hasText: "Copy hosted link URL" }).count()).toBe(1);

    await cloudRow.locator("button", { hasText: "Templates" }).click();
    const templates = page.locator("#templates");
    const otp = templates.locator("tbody tr").filter({ hasText: "otp_code" });
    await otp.waitFor();
    expect(await otp.locator("td").allTextContents()).toEqual([
      "otp_code",
      "en_US",
      "AUTHENTICATION",
      "approved",
      "{{1}} is your verification code.",
    ]);
    await screenshot(page, "console-cloud-api-templates");
    expect(errors).toEqual([]);
    expect((await api("DELETE", `/v1/chatapp/sessions/${cloudId}`, { token: apiKey })).status).toBe(200);
  });

  it("keeps the session list live: a ban made elsewhere shows without a click", async () => {
    const { apiKey } = await createAccount(10);
    const id = await connectedSession(apiKey);
    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    const row = page.locator("tbody tr").filter({ hasText: id });
    await row.filter({ hasText: "connected" }).waitFor();
    const ban = await api("POST", `/sandbox/sessions/${id}/ban`, { token: apiKey, body: {} });
    expect(ban.status).toBe(200);
    await row.locator(".badge", { hasText: "banned" }).waitFor({ timeout: 10_000 });
    expect(errors).toEqual([]);
  });

  it("pages through messages with the API's cursors", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const numbers = ["+14155552681", "+14155552682", "+14155552683"];
    const sent = await api("POST", "/v1/chatapp/messages", {
      token: apiKey,
      body: {
        chatapp_session_id: session,
        to_number: numbers,
        type: "text",
        content: "Paged",
        delay_between: 0,
      },
    });
    expect(sent.status).toBe(201);
    const page = await newPage(browser);
    await signIn(page, apiKey);
    await page.goto(`${baseUrl()}/console#/messages?limit=2`);
    const rows = page.locator("tbody tr");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    const older = page.locator("button", { hasText: "Older →" });
    const newer = page.locator("button", { hasText: "← Newer" });
    expect(await newer.isDisabled()).toBe(true);
    const firstPage = await rows.allTextContents();
    await older.click();
    await page.waitForURL(/cursor=/);
    await until(async () => ((await rows.count()) === 1 ? true : undefined));
    expect(await older.isDisabled()).toBe(true);
    expect(firstPage).not.toContain(await rows.first().textContent());
    await newer.click();
    await until(async () => ((await rows.count()) === 2 ? true : undefined));
  });

  it("adds a webhook endpoint, shows its secret once, sends a test, and lists and retries deliveries", async () => {
    const received: string[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        received.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const port = (receiver.address() as AddressInfo).port;
    try {
      const { apiKey } = await createAccount(10);
      const page = await newPage(browser);
      const errors = watchErrors(page);
      await signIn(page, apiKey);
      await page.click('#nav a[href="#/webhooks"]');
      await page.locator("#create-webhook-form input[value='session.status_changed']").waitFor();
      await page.fill("#webhook-url", `http://127.0.0.1:${port}/hooks`);
      await page.fill("#webhook-description", "console test");
      await page.check("#create-webhook-form input[value='session.status_changed']");
      await page.click("#create-webhook-form button[type=submit]");
      const secretBox = page.locator("#webhook-secret");
      await secretBox.waitFor();
      const secret = (await secretBox.locator("code").textContent()) ?? "";
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      const listed = await api<{ data: { id: string; secret_prefix: string; events: string[] }[] }>(
        "GET",
        "/v1/webhooks",
        { token: apiKey },
      );
      expect(listed.body.data).toHaveLength(1);
      expect(secret.startsWith(listed.body.data[0]?.secret_prefix ?? "-")).toBe(true);
      expect(listed.body.data[0]?.events).toEqual(["session.status_changed"]);
      await page
        .locator("tbody tr")
        .filter({ hasText: `127.0.0.1:${port}` })
        .waitFor();
      await screenshot(page, "console-webhook-secret");
      await page.click("text=I have stored it");
      expect(await page.locator("body").textContent()).not.toContain(secret);

      await page.click("button:has-text('Send test')");
      await page.locator("text=Delivered").first().waitFor();
      expect(await page.locator("#main [role=status]").first().textContent()).toContain("204");
      expect(received.some((body) => body.includes("webhook.test"))).toBe(true);

      await page.click("button:has-text('Disable')");
      await page.locator("tbody tr").filter({ hasText: "disabled" }).waitFor();
      await page.click("button:has-text('Enable')");
      await page.locator("tbody tr").filter({ hasText: "enabled" }).waitFor();

      // An event the endpoint subscribes to: a session linked through the sandbox.
      await connectedSession(apiKey);
      await page.click("a:has-text('Deliveries')");
      const delivery = page.locator("section.delivery").first();
      await until(async () => {
        if ((await delivery.count()) > 0 && (await delivery.locator("tbody tr").count()) > 0) return true;
        await page.click("button:has-text('Refresh')");
        await page.waitForTimeout(300);
        return undefined;
      });
      expect(await delivery.textContent()).toContain("session.status_changed");
      expect(await delivery.locator("tbody tr").first().textContent()).toContain("204");
      await delivery.locator("button:has-text('Retry now')").click();
      await until(async () =>
        (await page.locator("section.delivery").first().locator("tbody tr").count()) >= 2 ? true : undefined,
      );
      expect(await page.locator("#main").textContent()).toContain("Retry of session.status_changed");
      await screenshot(page, "console-webhook-deliveries");
      expect(errors).toEqual([]);
    } finally {
      receiver.close();
    }
  });

  it("on a phone: creates and edits an app, sends a one-time code and verifies it", async () => {
    const { apiKey } = await createAccount(10);
    const session = await connectedSession(apiKey);
    const page = await newPage(browser, "phone");
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/apps"]');
    await page.locator("#create-name").waitFor();
    await page.fill("#create-name", "Acme");
    await page.selectOption("#create-session", session);
    await page.click("#create-app-form button[type=submit]");
    await page.locator("tbody tr").filter({ hasText: "Acme" }).waitFor();
    expect(await page.locator("tbody tr").first().textContent()).toContain(
      "{{code}} is your Acme verification code",
    );

    await page.click("tbody button:has-text('Edit')");
    await page.fill("#edit-name", "Acme Shop");
    await page.fill("#edit-code-size", "8");
    await page.click("#edit-app-form button[type=submit]");
    await page.locator("tbody tr").filter({ hasText: "Acme Shop" }).waitFor();
    expect(await page.locator("tbody tr").first().textContent()).toContain("8");

    const to = "+14155550123";
    await page.fill("#otp-to", to);
    await page.click("#otp-form button[type=submit]");
    await page.locator("#otp-state").filter({ hasText: "pending" }).waitFor();
    // The code, where the recipient reads it: the sandbox phone.
    const code = await until(async () => {
      const res = await api<{ data: { content: string }[] }>(
        "GET",
        `/sandbox/sessions/${session}/received?to_number=${encodeURIComponent(to)}`,
        { token: apiKey },
      );
      const content = res.body.data[0]?.content;
      return content ? content.split(" ")[0] : undefined;
    });
    expect(code).toMatch(/^\d{8}$/);

    await page.fill("#otp-code", code === "00000000" ? "11111111" : "00000000");
    await page.click("#otp-verify");
    const problem = page.locator("#otp-form .problem");
    await problem.waitFor();
    expect(await problem.textContent()).toContain("Attempts remaining: 4");
    await page.fill("#otp-code", code);
    await page.click("#otp-verify");
    await page.locator("#otp-form .success").filter({ hasText: "Code verified." }).waitFor();
    expect(await page.locator("#otp-state").textContent()).toContain("verified");
    // Narrow screen: nothing wider than the viewport but the tables' own scroll boxes.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, "console-apps-otp-phone");
    // The one error is the browser's note of the wrong code's 422.
    expect(errors.filter((text) => !/422/.test(text))).toEqual([]);
  });

  it("shows the messages a code went out in, and a failover to the app's second channel as it happens", async () => {
    const { apiKey } = await createAccount(10);
    const first = await connectedSession(apiKey);
    const second = await connectedSession(apiKey);
    const phones = await Promise.all(
      [first, second].map(async (id) => {
        const res = await api<{ session: { phone_number: string } }>("GET", `/v1/chatapp/sessions/${id}`, {
          token: apiKey,
        });
        return res.body.session.phone_number;
      }),
    );
    // The first session's phone is offline: its message stays `sent`, with no delivered ack.
    await api("POST", `/sandbox/sessions/${first}/phone`, { token: apiKey, body: { online: false } });
    const app = await api("POST", "/v1/apps", {
      token: apiKey,
      body: {
        name: "Backup",
        sender_id: crypto.randomUUID(),
        channels: [first, second],
        failover_after_seconds: 5,
      },
    });
    expect(app.status).toBe(201);

    const page = await newPage(browser);
    const errors = watchErrors(page);
    await signIn(page, apiKey);
    await page.click('#nav a[href="#/apps"]');
    await page.locator("#otp-to").waitFor();
    await page.fill("#otp-to", "+14155550123");
    await page.click("#otp-form button[type=submit]");

    // One attempt at once, on the first channel; the panel reads the OTP again until it moves on.
    const rows = page.locator("#otp-attempts tbody tr");
    await rows.first().waitFor();
    const cells = async (row: number) =>
      (await rows.nth(row).locator("td").allTextContents()).map((t) => t.trim());
    expect((await cells(0)).slice(0, 3)).toEqual([phones[0], "#1", "Message"]);
    await rows.first().filter({ hasText: "sent" }).waitFor();
    // After failover_after_seconds (5 s), the same code on the second channel, delivered and read there.
    await rows.nth(1).filter({ hasText: "read" }).waitFor({ timeout: 20_000 });
    expect(await rows.count()).toBe(2);
    expect((await cells(0))[3]).toBe("sent");
    expect((await cells(1)).slice(0, 4)).toEqual([phones[1], "#1", "Message", "read"]);
    const link = await rows.nth(1).locator("a").getAttribute("href");
    const otp = await api<{ data: { message_id: string } }>(
      "GET",
      `/v1/otp/${(await page.locator("#otp-state .mono").first().textContent())?.trim()}`,
      { token: apiKey },
    );
    expect(link).toBe(`#/messages/${otp.body.data.message_id}`);
    await screenshot(page, "console-apps-otp-failover");
    expect(errors).toEqual([]);
  });
});
