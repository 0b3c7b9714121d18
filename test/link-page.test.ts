import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/lib/crypto";
import { RATE_LIMITS } from "../src/middleware/rate-limit";
import { accountD1 } from "./databases";
import { call, createAccount, createSession } from "./helpers";
import { linkUrl } from "./live";

/** GET /link/{token} as a browser asks for it. */
const open = (token: string) => call("GET", `/link/${token}`, { headers: { Accept: "text/html" } });

interface Element {
  attrs: Record<string, string>;
  text: string;
}

/** The elements of `html` matching `selector` (workerd's HTMLRewriter): attributes and text. */
async function select(html: string, selector: string): Promise<Element[]> {
  const found: Element[] = [];
  await new HTMLRewriter()
    .on(selector, {
      element(element) {
        found.push({ attrs: Object.fromEntries(element.attributes), text: "" });
      },
      text(chunk) {
        const last = found.at(-1);
        if (last) last.text += chunk.text;
      },
    })
    .transform(new Response(html))
    .text();
  return found;
}

async function one(html: string, selector: string): Promise<Element> {
  const [element, ...more] = await select(html, selector);
  expect(more).toHaveLength(0);
  if (!element) throw new Error(`no ${selector} in the page`);
  return element;
}

/** The `<section id="view-…">` the page shows (the one without `hidden`). */
async function shownView(html: string): Promise<string> {
  const views = await select(html, "section[id^='view-']");
  const shown = views.filter((view) => !("hidden" in view.attrs)).map((view) => view.attrs.id);
  expect(shown).toHaveLength(1);
  return shown[0] as string;
}

async function linkedAccount() {
  const { accountId, key } = await createAccount();
  const { session } = await createSession(key);
  return { accountId, key, session };
}

describe("GET /link/{token}: the hosted link page", () => {
  it("a pending session: 200 HTML with the QR code, its alt text, the steps and the pairing-code form", async () => {
    const { key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id);
    const res = await open(token);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect(res.text.startsWith("<!doctype html>")).toBe(true);
    expect(await shownView(res.text)).toBe("view-pending");

    const qr = await one(res.text, "img#qr");
    expect(qr.attrs.src).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    expect(qr.attrs.alt).toBe("QR code to scan with WhatsApp on your phone");
    expect("hidden" in qr.attrs).toBe(false);
    const served = await call<{ qr_code: string }>("GET", `/link/${token}/session`);
    expect(qr.attrs.src).toBe(served.body.qr_code);

    const steps = (await select(res.text, "ol.steps li")).map((li) => li.text.replace(/\s+/g, " ").trim());
    expect(steps).toEqual([
      "Open WhatsApp on your phone.",
      "Tap Settings (on Android, the ⋮ menu).",
      "Tap Linked devices, then Link a device.",
      "Point your phone at this screen to scan the QR code.",
    ]);
    expect((await one(res.text, "#phone-title")).text).toBe("Link with phone number instead");
    expect((await one(res.text, "input#phone")).attrs).toMatchObject({ name: "phone_number", type: "tel" });
    // The page's own script and styles, from this origin only.
    expect((await select(res.text, "script")).map((s) => s.attrs.src)).toEqual(["/link.js"]);
    expect((await select(res.text, "link[rel=stylesheet]")).map((s) => s.attrs.href)).toEqual([
      "/web.css",
      "/link.css",
    ]);
    expect((await one(res.text, "main")).attrs["data-session-id"]).toBe(session.id);
  });

  it("a connected session: the linked number and a visible link to return_url", async () => {
    const { key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id, {
      return_url: "https://app.example.com/done?x=1&y=<2>",
    });
    const scan = await call("POST", `/sandbox/sessions/${session.id}/scan`, {
      key,
      body: { phone_number: "+14155552671" },
    });
    expect(scan.status).toBe(200);
    const res = await open(token);
    expect(res.status).toBe(200);
    expect(await shownView(res.text)).toBe("view-connected");
    expect((await one(res.text, "#linked-number")).text).toBe("+14155552671");
    const back = await one(res.text, "a#return-link");
    // As written in the HTML: escaped (HTMLRewriter gives attributes undecoded).
    expect(back.attrs.href).toBe("https://app.example.com/done?x=1&amp;y=&lt;2&gt;");
    expect(res.text).not.toContain("y=<2>");
    expect("hidden" in (await one(res.text, "#return")).attrs).toBe(false);
    expect((await one(res.text, "img#qr")).attrs.src).toBeUndefined();
  });

  it("a disconnected session: the 'Try again' view, no QR code", async () => {
    const { key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id);
    await call("POST", `/sandbox/sessions/${session.id}/scan`, { key });
    expect((await call("PATCH", `/v1/chatapp/sessions/${session.id}/disconnect`, { key })).status).toBe(200);
    const res = await open(token);
    expect(res.status).toBe(200);
    expect(await shownView(res.text)).toBe("view-stopped");
    expect((await one(res.text, "button#retry")).text.trim()).toBe("Try again");
    expect((await one(res.text, "img#qr")).attrs.src).toBeUndefined();
  });

  it("reveals nothing of the account: no account id, no API key, no other session", async () => {
    const { accountId, key, session } = await linkedAccount();
    const { session: other } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    const res = await open(token);
    expect(res.status).toBe(200);
    for (const secret of [accountId, key, other.id, await sha256Hex(token), token]) {
      expect(res.text).not.toContain(secret);
    }
  });

  it("sends a CSP allowing only this origin, no framing, no referrer and no caching", async () => {
    const { key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id);
    const res = await open(token);
    expect(res.status).toBe(200);
    const csp = new Map(
      (res.headers.get("content-security-policy") ?? "").split(/;\s*/).map((directive) => {
        const [name = "", ...values] = directive.split(" ");
        return [name, values.join(" ")];
      }),
    );
    expect(Object.fromEntries(csp)).toEqual({
      "default-src": "'none'",
      "script-src": "'self'",
      "style-src": "'self'",
      "img-src": "'self' data:",
      "connect-src": "'self' ws://localhost",
      "form-action": "'self'",
      "base-uri": "'none'",
      "frame-ancestors": "'none'",
    });
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("on https, the live socket's origin is wss:", async () => {
    const { key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id);
    const { exports } = await import("cloudflare:workers");
    const res = await exports.default.fetch(new Request(`https://link.example.com/link/${token}`));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain(
      "connect-src 'self' wss://link.example.com;",
    );
  });
});

describe("GET /link/{token} when the link does not work: plain HTML pages, never JSON", () => {
  async function expectPage(
    res: Awaited<ReturnType<typeof open>>,
    status: number,
    title: string,
  ): Promise<void> {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect((await one(res.text, "h1")).text).toBe(title);
    expect((await one(res.text, "title")).text).toBe(title);
    expect(res.text).not.toMatch(/link_expired|link_not_found|problem|stack|Error/);
    expect(await select(res.text, "script")).toEqual([]);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  }

  it("an expired token: 410 'This link has expired'", async () => {
    const { accountId, key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id, { expires_in: 60 });
    await (await accountD1(accountId))
      .prepare("UPDATE link_tokens SET expires_at = ? WHERE token_hash = ?")
      .bind(Date.now() - 1, await sha256Hex(token))
      .run();
    await expectPage(await open(token), 410, "This link has expired");
  });

  it("a revoked token: 410 'This link has expired'", async () => {
    const { key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id);
    expect((await call("DELETE", `/v1/chatapp/sessions/${session.id}/link-url`, { key })).status).toBe(204);
    await expectPage(await open(token), 410, "This link has expired");
  });

  it("an unknown, malformed or over-long token, or one of a deleted session: 404 'This link is not valid'", async () => {
    const { key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id);
    expect((await call("DELETE", `/v1/chatapp/sessions/${session.id}`, { key })).status).toBe(200);
    for (const bad of [token, "A".repeat(43), "not-a-token", "x".repeat(300), "%3Cscript%3E"]) {
      await expectPage(await open(bad), 404, "This link is not valid");
    }
  });

  it("over the public rate limit: a 429 page with Retry-After, as the document says", async () => {
    const { key, session } = await linkedAccount();
    const { token } = await linkUrl(key, session.id);
    const headers = { Accept: "text/html", "CF-Connecting-IP": "203.0.113.77" };
    let res = await call("GET", `/link/${token}`, { headers });
    for (let i = 0; i < 3 * RATE_LIMITS.public.limit && res.status !== 429; i++) {
      res = await call("GET", `/link/${token}`, { headers });
    }
    await expectPage(res, 429, "This page is not available right now");
    expect(res.headers.get("retry-after")).toBe(String(RATE_LIMITS.public.period));
  });

  it("the JSON routes under the token still answer problem JSON", async () => {
    const res = await call("GET", `/link/${"A".repeat(43)}/session`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
  });
});
