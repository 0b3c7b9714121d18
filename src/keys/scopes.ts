// What an API key may do. Every `/v1` operation needs one scope, declared with its route
// (src/routes/openapi.ts, `requires`) and shown in the API document as the scopes of its
// `ApiKey` security requirement. Modelled on Stripe's restricted keys: a resource's `write`
// also reads it.

import { ApiError } from "../errors";

/**
 * 403 `insufficient_scope` for want of `scope`: `detail` says what needed it, the problem's
 * `scope` member and `WWW-Authenticate: Bearer error="insufficient_scope"` (RFC 6750 §3.1) name
 * it. The one shape of every scope refusal: a route's (src/middleware/auth.ts `requireScope`), an
 * event type's (src/keys/event-access.ts), a send's `mark_read`.
 */
export function insufficientScope(scope: Scope, detail: string): ApiError {
  return new ApiError("insufficient_scope", detail, {
    headers: { "WWW-Authenticate": `Bearer realm="api", error="insufficient_scope", scope="${scope}"` },
    extra: { scope },
  });
}

/**
 * Every scope a key may hold. `*` holds them all; `<resource>:write` also grants
 * `<resource>:read`; `otp:send` and `otp:verify` each grant `otp:read`. `messages:send` grants
 * only sending: a send-only key cannot list messages; `messages:write` (chat actions on the
 * account's messages: mark read) grants `messages:read`.
 */
export const SCOPES = [
  "*",
  "account:read",
  "account:write",
  "keys:read",
  "keys:write",
  "sessions:read",
  "sessions:write",
  "messages:read",
  "messages:send",
  "messages:write",
  "campaigns:read",
  "campaigns:write",
  "apps:read",
  "apps:write",
  "otp:read",
  "otp:send",
  "otp:verify",
  "webhooks:read",
  "webhooks:write",
  "events:read",
  "opt-outs:read",
  "opt-outs:write",
  "contacts:read",
  "erasures:read",
  "erasures:write",
] as const;

export type Scope = (typeof SCOPES)[number];

/** A scope an operation may require: any but `*`. */
export type OperationScope = Exclude<Scope, "*">;

/** What each scope grants beyond itself. */
const IMPLIES: Partial<Record<Scope, OperationScope[]>> = {
  "account:write": ["account:read"],
  "keys:write": ["keys:read"],
  "sessions:write": ["sessions:read"],
  "messages:write": ["messages:read"],
  "campaigns:write": ["campaigns:read"],
  "apps:write": ["apps:read"],
  "otp:send": ["otp:read"],
  "otp:verify": ["otp:read"],
  "webhooks:write": ["webhooks:read"],
  "opt-outs:write": ["opt-outs:read"],
  "erasures:write": ["erasures:read"],
};

/** Whether a key holding `held` may do what `needed` allows. */
export function grants(held: readonly Scope[], needed: Scope): boolean {
  if (held.includes("*")) return true;
  if (needed === "*") return false;
  return held.some((scope) => scope === needed || (IMPLIES[scope] ?? []).includes(needed));
}

/**
 * The scopes of `requested` that a key holding `held` does not hold itself, in request order: a key
 * may create keys only within its own scopes (no escalation).
 */
export function scopesBeyond(held: readonly Scope[], requested: readonly Scope[]): Scope[] {
  return requested.filter((scope) => !grants(held, scope));
}
