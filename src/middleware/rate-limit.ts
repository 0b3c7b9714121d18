import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";

/**
 * The service's rate limits: each a Workers Rate Limiting binding of wrangler.toml's
 * `[[ratelimits]]`, whose `limit` (requests) and `period` (seconds) are repeated here for the
 * `RateLimit-Policy` header (test/rate-limits.test.ts checks that they agree).
 *
 * - `api`: every `/v1` and sandbox session request, per API key.
 * - `send`: sends and one-time codes, per API key, on top of `api`.
 * - `public`: per client IP, routes without a key that face the internet (`/link/…`,
 *   `/sandbox/pair/…`).
 * - `gateway`: per client IP, gateway events (`/gateway/…`) and their media fetches (`/media/…`).
 * - `admin`: per client IP, the admin API (`/admin/…`), counted before the token is checked, so
 *   guessing `ADMIN_TOKEN` is slowed as much as using it: an operator's scripts make a few calls
 *   a second at most.
 */
export const RATE_LIMITS = {
  api: { binding: "API_RATE_LIMIT", limit: 1000, period: 10 },
  send: { binding: "SEND_RATE_LIMIT", limit: 100, period: 10 },
  public: { binding: "PUBLIC_RATE_LIMIT", limit: 100, period: 10 },
  gateway: { binding: "GATEWAY_RATE_LIMIT", limit: 2000, period: 10 },
  admin: { binding: "ADMIN_RATE_LIMIT", limit: 30, period: 10 },
} as const satisfies Record<string, { binding: keyof Env; limit: number; period: 10 | 60 }>;

export type RateLimitName = keyof typeof RATE_LIMITS;

/** The client's address, as Cloudflare gives it (`CF-Connecting-IP`). */
export function clientIp(c: Context<AppEnv>): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}

/** The caller's API key, or its address on a request a link token opened. */
function callerKey(c: Context<AppEnv>): string {
  return c.var.linkGrant || !c.var.principal ? `ip:${clientIp(c)}` : c.var.principal.apiKeyId;
}

/**
 * Middleware counting each request against limit `name`, under `keyOf(c)`. Every answer it lets
 * through states the limit in `RateLimit-Policy` (IETF draft-ietf-httpapi-ratelimit-headers:
 * `"send";q=100;w=10`; a request under several limits lists each). Over the limit it answers 429
 * `rate_limited` with `Retry-After` and `RateLimit: "<name>";r=0;t=<period>`: the binding tells
 * only whether a request passes, not how many remain or when its window ends, so `t` and
 * `Retry-After` give the period, the longest the wait can be.
 */
export function rateLimit(name: RateLimitName, keyOf: (c: Context<AppEnv>) => string) {
  const { binding, limit, period } = RATE_LIMITS[name];
  const policy = `"${name}";q=${limit};w=${period}`;
  return createMiddleware<AppEnv>(async (c, next) => {
    const { success } = await c.env[binding].limit({ key: keyOf(c) });
    if (!success)
      throw new ApiError(
        "rate_limited",
        `More than ${limit} requests in ${period} s (the \`${name}\` limit). Try again in at most ${period} s.`,
        {
          headers: {
            "Retry-After": String(period),
            "RateLimit-Policy": policy,
            RateLimit: `"${name}";r=0;t=${period}`,
          },
        },
      );
    await next();
    // A WebSocket upgrade (101) passes the session object's own response on, whose headers are fixed.
    if (c.res.status !== 101) c.res.headers.append("RateLimit-Policy", policy);
  });
}

/** The `api` limit, per API key. */
export const apiRateLimit = rateLimit("api", callerKey);
/** The `send` limit, per API key: declared by the send routes with their scope. */
export const sendRateLimit = rateLimit("send", callerKey);
/** The `public` limit, per client IP. */
export const publicRateLimit = rateLimit("public", clientIp);
/** The `gateway` limit, per client IP. */
export const gatewayRateLimit = rateLimit("gateway", clientIp);
/** The `admin` limit, per client IP. */
export const adminRateLimit = rateLimit("admin", clientIp);
