import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Db } from "../db/client";
import { directoryOf } from "../db/databases";
import {
  completeKey,
  IN_PROGRESS_TIMEOUT_MS,
  reserveKey,
  settleAbandonedKey,
} from "../db/queries/idempotency";
import type { AppEnv } from "../env";
import { ApiError, problemResponse } from "../errors";
import { hmacSha256Hex, sha256Hex } from "../lib/crypto";
import { log } from "../lib/log";
import { openSecret, sealSecret } from "../lib/sealed-secret";
import { formatTimestamp } from "../lib/time";

/** Keys are 1–255 visible ASCII characters (Stripe's and the IETF draft's practice). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` support for POSTs that create something or move money (Stripe's semantics,
 * https://docs.stripe.com/api/idempotent_requests, and draft-ietf-httpapi-idempotency-key-header),
 * with keys kept apart per `scope` (an account id, or {@link ADMIN_SCOPE} for the operator's admin
 * API). Per scope and key:
 * - the first response is stored for 24 hours and replayed to a retry with the same request
 *   (header `Idempotent-Replayed: true`), whatever its status;
 * - that includes a 5xx, as Stripe replays its 500s: a request that failed may have changed
 *   something first (charged, created messages) and the middleware cannot tell whether it did, so
 *   it does not guess and run the request again. Check the outcome (messages, ledger), then send
 *   it under a new key if it is still wanted;
 * - a request that stopped before its answer was stored (the Worker killed, or D1 refusing that
 *   last write) has, for the same reason, its key answered with a stored 500 `internal_error`
 *   once it has been held for IN_PROGRESS_TIMEOUT_MS (2 minutes), never run again;
 * - the same key with another method, path or body is 422 `idempotency_key_reused`;
 * - a retry while the first request still runs is 409 `idempotency_key_in_use` (`Retry-After`).
 *
 * With `seal`, a stored success (status below 400) is sealed (AES-256-GCM, bound to the scope and
 * key) under the key `seal` derives from the deployment's secrets, for routes whose answers carry a
 * secret that must not sit in D1 readable (a reverse OTP's code). Problem details carry no secret
 * and are stored as they are, so a failure to derive the key (a missing secret, a 500) is replayed
 * too.
 *
 * With `requestKey`, the request's hash is HMAC-SHA256 (RFC 2104) under the key it derives rather
 * than a plain SHA-256, for routes whose bodies name a person (`POST /v1/erasures`): the stored
 * hash of a body holding a phone number cannot be matched against guessed numbers without it.
 */
export function idempotencyIn(
  scope: (c: Context<AppEnv>) => { scope: string; db: Db },
  seal?: ReplaySeal,
  requestKey?: ReplaySeal,
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const key = c.req.header("idempotency-key");
    if (key === undefined) return next();
    if (!KEY_PATTERN.test(key)) {
      throw new ApiError(
        "validation_failed",
        "The Idempotency-Key header must be 1–255 visible ASCII characters.",
        {
          fields: { "Idempotency-Key": ["must be 1–255 visible ASCII characters"] },
        },
      );
    }
    const { scope: accountId, db } = scope(c);
    const request = `${c.req.method} ${c.req.path}\n${await c.req.raw.clone().text()}`;
    const requestHash = requestKey
      ? await hmacSha256Hex(await requestKey(c.env), request)
      : await sha256Hex(request);
    const now = Date.now();
    let existing = await reserveKey(db, accountId, key, requestHash, now);
    if (existing) {
      if (existing.requestHash !== requestHash) {
        throw new ApiError(
          "idempotency_key_reused",
          "This Idempotency-Key was used with a different request.",
        );
      }
      if (existing.status === "in_progress" && existing.createdAt < now - IN_PROGRESS_TIMEOUT_MS) {
        existing = await settleAbandoned(c, db, accountId, key, existing.createdAt);
      }
      if (!existing || existing.status === "in_progress" || existing.responseStatus === null) {
        throw new ApiError(
          "idempotency_key_in_use",
          "A request with this Idempotency-Key is still being processed.",
          {
            headers: { "Retry-After": "1" },
          },
        );
      }
      const body =
        seal && existing.responseBody !== null && existing.responseStatus < 400
          ? await openSecret(await seal(c.env), `${accountId}:${key}`, existing.responseBody)
          : existing.responseBody;
      return new Response(body, {
        status: existing.responseStatus,
        headers: {
          "Content-Type": existing.responseStatus < 400 ? "application/json" : "application/problem+json",
          "Idempotent-Replayed": "true",
          "X-Request-Id": c.var.requestId,
        },
      });
    }
    // Hono renders a thrown error as the response where it is thrown, so `c.res` is final here,
    // problem details included: a retry sees the same answer, a 5xx too (see above).
    await next();
    const answer = await c.res.clone().text();
    const stored =
      seal && c.res.status < 400
        ? await sealSecret(await seal(c.env), `${accountId}:${key}`, answer)
        : answer;
    await completeKey(db, accountId, key, c.res.status, stored);
  });
}

/**
 * Answers for a request that stopped before it stored its answer (its key `in_progress` since
 * `createdAt`, past IN_PROGRESS_TIMEOUT_MS): a 500 `internal_error` saying so, stored as the key's
 * answer and logged (`idempotency_request_lost`). Returns the key's row as it then stands.
 */
async function settleAbandoned(c: Context<AppEnv>, db: Db, scope: string, key: string, createdAt: number) {
  log.error("idempotency_request_lost", {
    scope,
    request_id: c.var.requestId,
    first_request_at: formatTimestamp(createdAt),
  });
  const answer = problemResponse(
    c,
    new ApiError(
      "internal_error",
      "The first request with this Idempotency-Key stopped before it answered. Whatever it did stands " +
        "(it may have charged and sent), and this key will not run it again: check the outcome, then " +
        "use a new key for what is missing.",
    ),
  );
  return settleAbandonedKey(db, scope, key, createdAt, answer.status, await answer.text());
}

/** Derives the 32-byte key (standard base64) that seals a route's stored answers. */
export type ReplaySeal = (env: Env) => Promise<string>;

/** The account API's keys: per account, in its database. */
const accountScope = (c: Context<AppEnv>) => ({ scope: c.var.principal.accountId, db: c.var.db });

/** Keys of the account API: per account. */
export const idempotency = idempotencyIn(accountScope);

/** Keys of the account API whose stored answers are sealed under the key `seal` derives. */
export const sealedIdempotency = (seal: ReplaySeal) => idempotencyIn(accountScope, seal);

/** Keys of the account API whose request hashes are keyed under the key `requestKey` derives. */
export const keyedIdempotency = (requestKey: ReplaySeal) =>
  idempotencyIn(accountScope, undefined, requestKey);

/** The admin API's keys live apart from every account's (account ids are uuids). */
export const ADMIN_SCOPE = "admin";

/** Keys of the admin API (a retried credit must not credit twice), in the directory: they span accounts. */
export const adminIdempotency = idempotencyIn((c) => ({ scope: ADMIN_SCOPE, db: directoryOf(c.env) }));
