import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { secureHeaders } from "hono/secure-headers";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../../env";
import { renderLinkErrorPage } from "./link-page";

/** The WebSocket origin of the request's own origin (`wss:` for `https:`), for `connect-src`. */
function socketOrigin(c: Context): string {
  const url = new URL(c.req.url);
  return `${url.protocol === "https:" ? "wss:" : "ws:"}//${url.host}`;
}

/**
 * Hono's secure-headers middleware, set for the link page and the sandbox's pairing page: a Content-Security-Policy that allows
 * only this origin (scripts and styles from it, `data:` images for the QR code, fetches and the
 * live WebSocket to it, spelled out as `ws:`/`wss:` for browsers whose `'self'` does not cover
 * them, CSP Level 3 §6.7.2.8), no framing (`frame-ancestors 'none'` and `X-Frame-Options: DENY`,
 * against clickjacking the "Link" step), and `Referrer-Policy: no-referrer`, so the token in the
 * page's URL never leaves in a `Referer` (OWASP Secure Headers Project).
 */
const linkPageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", "data:"],
    connectSrc: ["'self'", socketOrigin],
    formAction: ["'self'"],
    baseUri: ["'none'"],
    frameAncestors: ["'none'"],
  },
  xFrameOptions: "DENY",
  referrerPolicy: "no-referrer",
});

/**
 * `Cache-Control: no-store` on every answer, error pages included: a page whose URL holds a bearer
 * token (a link token, a sandbox pairing token) and a session's live state is kept by no cache.
 */
const noStore = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  c.res.headers.set("Cache-Control", "no-store");
});

/**
 * A browser page never answers with problem JSON: whatever failed below (a 404 or 410 of the link
 * token, the configuration check, an unexpected error already logged by `onError`), the response
 * becomes the matching HTML page with the same status (link-page.tsx `renderLinkErrorPage`).
 */
const linkPageErrors = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") return next();
  await next();
  if (c.error || c.res.status >= 400) {
    const status = (c.res.status >= 400 ? c.res.status : 500) as ContentfulStatusCode;
    c.res = await c.html(renderLinkErrorPage(status, c.get("requestId")), status);
  }
});

/**
 * The middleware of `GET /link/{token}`, outermost first: security headers, no caching, then HTML
 * error pages. Mounted before every other middleware of the path (app.ts), so that their failures
 * are pages too.
 */
export const linkPageGuard: MiddlewareHandler<AppEnv>[] = [linkPageHeaders, noStore, linkPageErrors];

/**
 * The middleware of the sandbox's pairing page (`GET` and `POST /sandbox/pair/{token}`, its 404
 * and 409 pages included): the link page's security headers (the same Content-Security-Policy,
 * `frame-ancestors 'none'`, `X-Frame-Options: DENY`, `X-Content-Type-Options: nosniff`,
 * `Referrer-Policy: no-referrer`) and no caching, as docs/security.md, "Hardening" says. Its own pages are
 * its errors (src/web/sandbox/pair-page.tsx), so no link error page replaces them.
 */
export const pairPageGuard: MiddlewareHandler<AppEnv>[] = [linkPageHeaders, noStore];
