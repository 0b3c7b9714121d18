import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { ConsolePage } from "./console-page";

/**
 * The security headers of the console page. Scripts, styles, images and API calls come from this
 * service only: `img-src data:` for the QR codes the API sends as data URIs, `img-src`/`media-src
 * blob:` for incoming media, which the console fetches with its key and shows as object URLs
 * (public/console/media.js), and `connect-src` with
 * the ws/wss origin of this host for the live session socket (CSP Level 3 lets `'self'` match it,
 * older browsers need it named). No framing (`frame-ancestors 'none'`: clickjacking), no referrer.
 */
export function consoleSecurityHeaders(requestUrl: string): Record<string, string> {
  const host = new URL(requestUrl).host;
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "media-src blob:",
    `connect-src 'self' ws://${host} wss://${host}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  return {
    "Content-Security-Policy": policy,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
  };
}

/** `/console`: the web console's shell; the client (public/console.js) does the rest through `/v1`. */
export const consoleRoutes = new Hono<AppEnv>().get("/", (c) => {
  for (const [name, value] of Object.entries(consoleSecurityHeaders(c.req.url))) c.header(name, value);
  return c.html(`<!doctype html>${<ConsolePage />}`);
});
