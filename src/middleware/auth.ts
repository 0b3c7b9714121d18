import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { readAdminToken } from "../config";
import { databaseFor, routeFor } from "../db/databases";
import { API_KEY_PATTERN, findLiveKey, touchKey } from "../db/queries/api-keys";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { grants, insufficientScope, type OperationScope, type Scope } from "../keys/scopes";
import { sha256Hex, timingSafeEqual } from "../lib/crypto";
import { resolveLinkToken } from "../links/tokens";

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
 * and sets `c.var.principal` and `c.var.db`, the database of the key's account. A missing, malformed, unknown or revoked key is 401
 * `unauthenticated` with `WWW-Authenticate: Bearer`.
 */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw unauthenticated("Send an API key as `Authorization: Bearer <key>`.");
  if (!API_KEY_PATTERN.test(token)) throw unauthenticated("The API key is malformed.");
  const now = Date.now();
  // The directory names the key's account; its database holds the key's state.
  const keyHash = await sha256Hex(token);
  const route = await routeFor(c.env, "api_key", keyHash);
  const db = route && (await databaseFor(c.env, route.accountId));
  const key = db && (await findLiveKey(db, keyHash, now));
  if (!db || !key) throw unauthenticated("The API key is unknown, revoked or expired.");
  if (key.lastUsedAt === null || now - key.lastUsedAt > TOUCH_INTERVAL_MS) {
    c.executionCtx.waitUntil(touchKey(db, key.id, now));
  }
  c.set("db", db);
  c.set("principal", {
    accountId: key.accountId,
    apiKeyId: key.id,
    scopes: key.scopes as Scope[],
    expiresAt: key.expiresAt,
  });
  await next();
});

/**
 * Route middleware: the caller's key must hold `scope` (src/keys/scopes.ts), else 403
 * `insufficient_scope` naming it, with `WWW-Authenticate: Bearer error="insufficient_scope"`
 * (RFC 6750 §3.1). A request a link token opened (the live route with `?token=`) holds no key and
 * passes: the token reaches its own session only. Declared with each route
 * (src/routes/openapi.ts, `requires`), never on its own.
 */
export function requireScope(scope: OperationScope) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const principal = c.var.linkGrant ? null : c.var.principal;
    if (principal && !grants(principal.scopes, scope))
      throw insufficientScope(scope, `This API key lacks the \`${scope}\` scope this operation needs.`);
    await next();
  });
}

/**
 * Authorizes `/admin` with `Authorization: Bearer <ADMIN_TOKEN>`. Without a configured
 * ADMIN_TOKEN the admin API does not exist (404 `not_found`); one shorter than 32 characters
 * refuses every request (500 `service_misconfigured`, config.ts `readAdminToken`); a wrong token
 * is 401.
 */
export const adminAuth = createMiddleware<AppEnv>(async (c, next) => {
  const expected = readAdminToken(c.env);
  if (!expected) throw new ApiError("not_found", "No such resource.");
  const token = bearerToken(c.req.header("authorization"));
  if (!token || !timingSafeEqual(token, expected)) throw unauthenticated("A valid admin token is required.");
  await next();
});

/**
 * Authenticates with a link token (src/links/tokens.ts) that `tokenOf` reads from the request,
 * and sets `c.var.linkGrant` to the one session it grants (and `c.var.db` to its account's database). A malformed or unknown token (or one
 * whose session is gone) is 404 `link_not_found`; an expired or revoked one is 410 `link_expired`.
 */
export function linkTokenAuth(tokenOf: (c: Context<AppEnv>) => string | undefined) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { grant, db } = await resolveLinkToken(c.env, tokenOf(c) ?? "", Date.now());
    c.set("db", db);
    c.set("linkGrant", grant);
    await next();
  });
}

// With or without a trailing slash, as the router takes it (src/routes/router.ts).
const LIVE_PATH = /^\/v1\/chatapp\/sessions\/[^/]+\/live\/?$/;
const liveTokenAuth = linkTokenAuth((c) => c.req.query("token"));

/**
 * Authentication of `/v1`: {@link apiKeyAuth}, except for a live watch
 * (`GET /v1/chatapp/sessions/{id}/live`) sent without `Authorization` and with `?token=`: browsers
 * cannot set headers on a WebSocket, so that one route also takes a link token in its query
 * ({@link linkTokenAuth}); its handler holds the token to its own session.
 */
export const v1Auth = createMiddleware<AppEnv>(async (c, next) => {
  const linkWatch =
    c.req.method === "GET" &&
    !c.req.header("authorization") &&
    LIVE_PATH.test(c.req.path) &&
    c.req.query("token") !== undefined;
  return linkWatch ? liveTokenAuth(c, next) : apiKeyAuth(c, next);
});
