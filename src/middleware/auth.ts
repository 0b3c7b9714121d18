import { createMiddleware } from "hono/factory";
import { API_KEY_PATTERN, findLiveKey, touchKey } from "../db/queries/api-keys";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { timingSafeEqual } from "../lib/crypto";

/** `last_used_at` is rewritten at most once a minute per key, to keep reads free of writes. */
const TOUCH_INTERVAL_MS = 60_000;

function bearerToken(header: string | undefined): string | null {
  const match = header?.match(/^Bearer +(\S+)\s*$/i);
  return match?.[1] ?? null;
}

function unauthenticated(detail: string): ApiError {
  return new ApiError("unauthenticated", detail, { headers: { "WWW-Authenticate": 'Bearer realm="api"' } });
}

/**
 * Authenticates `/v1` and `/sandbox` API calls with `Authorization: Bearer <API key>` (RFC 6750)
 * and sets `c.var.principal`. A missing, malformed, unknown or revoked key is 401
 * `unauthenticated` with `WWW-Authenticate: Bearer`.
 */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw unauthenticated("Send an API key as `Authorization: Bearer <key>`.");
  if (!API_KEY_PATTERN.test(token)) throw unauthenticated("The API key is malformed.");
  const key = await findLiveKey(c.var.db, token);
  if (!key) throw unauthenticated("The API key is unknown or revoked.");
  const now = Date.now();
  if (key.lastUsedAt === null || now - key.lastUsedAt > TOUCH_INTERVAL_MS) {
    c.executionCtx.waitUntil(touchKey(c.var.db, key.id, now));
  }
  c.set("principal", { accountId: key.accountId, apiKeyId: key.id });
  await next();
});

/**
 * Authorizes `/admin` with `Authorization: Bearer <ADMIN_TOKEN>`. Without a configured
 * ADMIN_TOKEN the admin API does not exist (404 `not_found`); a wrong token is 401.
 */
export const adminAuth = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.env.ADMIN_TOKEN;
  if (!expected) throw new ApiError("not_found", "No such resource.");
  const token = bearerToken(c.req.header("authorization"));
  if (!token || !timingSafeEqual(token, expected)) throw unauthenticated("A valid admin token is required.");
  await next();
});
