import { describe, expect, it } from "vitest";
import { call } from "./helpers";

describe("GET /console", () => {
  it("serves the console's HTML shell: the sign-in form, the client script and its stylesheets", async () => {
    const res = await call("GET", "/console", { headers: { Accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html; charset=utf-8/i);
    expect(res.text.startsWith("<!doctype html>")).toBe(true);
    expect(res.text).toContain('<script type="module" src="/console.js"></script>');
    expect(res.text).toContain('<link rel="stylesheet" href="/web.css"/>');
    expect(res.text).toContain('<link rel="stylesheet" href="/console.css"/>');
    expect(res.text).toContain('<form id="sign-in-form"');
    expect(res.text).toMatch(/<input id="api-key"[^>]*type="password"/);
    expect(res.text).toContain('<div id="view" hidden="">');
  });

  it("holds the page to this service: CSP, no framing, no referrer", async () => {
    const res = await call("GET", "/console");
    const csp = res.headers.get("content-security-policy") ?? "";
    const directives = Object.fromEntries(
      csp.split(";").map((part) => {
        const [name, ...values] = part.trim().split(/\s+/);
        return [name, values.join(" ")];
      }),
    );
    expect(directives).toEqual({
      "default-src": "'none'",
      "script-src": "'self'",
      "style-src": "'self'",
      "img-src": "'self' data: blob:",
      "media-src": "blob:",
      "connect-src": "'self' ws://localhost wss://localhost",
      "base-uri": "'none'",
      "form-action": "'self'",
      "frame-ancestors": "'none'",
    });
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("needs no API key (the key is pasted into the page) and keeps nothing of one", async () => {
    const res = await call("GET", "/console", { key: "sk_not_a_key" });
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(res.text).not.toContain("sk_not_a_key");
  });

  it("answers other methods 405 with Allow", async () => {
    const res = await call("POST", "/console");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
  });

  it("leaves the static files to the assets layer: the Worker itself does not serve them", async () => {
    // public/ is served before the Worker ([assets] in wrangler.toml); this pool calls the Worker
    // directly, so the files themselves are tested in the browser (test-browser/console.test.ts).
    expect((await call("GET", "/console.js")).status).toBe(404);
  });
});
