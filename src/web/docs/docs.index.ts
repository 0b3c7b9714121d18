import { Scalar } from "@scalar/hono-api-reference";
import { Hono } from "hono";
import { NONCE, secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../../env";

/**
 * The API reference's script, served from `public/` (a static asset, before the Worker) so /docs
 * works without reaching a CDN: `dist/browser/standalone.js` of `@scalar/api-reference` 1.71.0,
 * the release `@scalar/hono-api-reference` 0.12.4 was published with (both on `@scalar/types`
 * 0.21.0). It is committed rather than installed: one file of a 250-package tree. To upgrade, take
 * the file from `npm pack @scalar/api-reference@<version>` and rename it.
 */
const SCALAR_SCRIPT = "/vendor/scalar/api-reference-1.71.0.js";

/**
 * The reference page's security headers (Hono's secure-headers middleware). The
 * Content-Security-Policy lets scripts run only with this response's nonce (Scalar puts it on its
 * two script tags: the bundle from this origin and the call that starts it; CSP Level 3 §8.2, a
 * nonce-based policy), and everything else come from this origin only: the API document and "Test
 * request" calls (`connect-src`), images (`data:` for inline icons), fonts. Styles also allow
 * `'unsafe-inline'`: the bundle injects its stylesheet and style attributes at run time without a
 * nonce, and a style cannot run code. No `'unsafe-eval'`: the bundle's zod only probes for it
 * (`Function("")` in a try) and validates without it. No framing (`frame-ancestors 'none'` and
 * `X-Frame-Options: DENY`, against clickjacking), no forms posted anywhere, no `<base>`.
 * test-browser/docs.test.ts renders the page under it.
 */
const docsHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: [NONCE],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", "data:"],
    fontSrc: ["'self'", "data:"],
    connectSrc: ["'self'"],
    formAction: ["'none'"],
    baseUri: ["'none'"],
    frameAncestors: ["'none'"],
  },
  xFrameOptions: "DENY",
  referrerPolicy: "no-referrer",
});

/** `/docs`: the API reference (Scalar), reading `/openapi.json`. */
export const docsRoutes = new Hono<AppEnv>().get(
  "/",
  docsHeaders,
  Scalar<AppEnv>((c) => ({
    url: "/openapi.json",
    pageTitle: "API reference",
    cdn: SCALAR_SCRIPT,
    nonce: c.get("secureHeadersNonce"),
    // Nothing from another host: no web fonts (the page uses system fonts), no telemetry.
    withDefaultFonts: false,
    telemetry: false,
  })),
);
