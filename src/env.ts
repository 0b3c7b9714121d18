import type { RequestIdVariables } from "hono/request-id";
import type { Db } from "./db/client";
import type { LinkGrant } from "./db/queries/link-tokens";
import type { Scope } from "./keys/scopes";

// Secrets are not in wrangler.toml, so `wrangler types` cannot see them; declare them here.
// All are optional at the type level: an absent ADMIN_TOKEN turns the admin API off (404).
declare global {
  interface Env {
    /** Bearer token for `/admin`. Secret (`wrangler secret put ADMIN_TOKEN`). */
    ADMIN_TOKEN?: string;
    /** HMAC key for OTP codes. Secret (`wrangler secret put OTP_SECRET`). */
    OTP_SECRET?: string;
    /** Gateway settings (see config.ts); the keys are secrets, the URLs plain variables. */
    /** The gateways sessions may choose, comma-separated (default: `CHATAPP_GATEWAY`). */
    CHATAPP_GATEWAYS?: string;
    PUBLIC_URL?: string;
    WAHA_URL?: string;
    WAHA_API_KEY?: string;
    WAHA_WEBHOOK_HMAC_KEY?: string;
    EVOLUTION_URL?: string;
    EVOLUTION_API_KEY?: string;
    /** HMAC key of signed media links, for real gateways. Secret (`wrangler secret put MEDIA_URL_SECRET`). */
    MEDIA_URL_SECRET?: string;
  }
}

/** The authenticated caller of a `/v1` request. */
export interface Principal {
  accountId: string;
  apiKeyId: string;
  /** What the key may do (src/keys/scopes.ts). */
  scopes: Scope[];
  /** When the key expires (epoch ms), or null. */
  expiresAt: number | null;
}

/**
 * Hono environment: Worker bindings plus the per-request variables set by middleware.
 * `requestId` comes from `hono/request-id` (middleware/request-id.ts), under Hono's own name.
 */
export type AppEnv = {
  Bindings: Env;
  Variables: RequestIdVariables & {
    db: Db;
    principal: Principal;
    /**
     * Set instead of `principal` on routes a link token opens (`/link/{token}/…`, and `/live`
     * with `?token=`): the one session the token grants.
     */
    linkGrant?: LinkGrant;
  };
};
