import { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ERROR_STATUS, type ErrorCode } from "../errors";
import type { OperationScope } from "../keys/scopes";
import { INVALID_USER_ID, userIdKind } from "../lib/contact-identity";
import { toE164 } from "../lib/phone";
import { MEDIA_PROBLEM_REASONS } from "../media/fetch";
import { requireScope } from "../middleware/auth";

/** RFC 9457 problem details, as every error response renders them (errors.ts). */
export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "tag:chatapp-otp-api,2026:problems/validation_failed" }),
    title: z.string().openapi({ example: "Validation failed" }),
    status: z.number().int().openapi({ example: 422 }),
    detail: z.string(),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    request_id: z.string(),
    success: z.literal(false),
    attempts_remaining: z
      .int()
      .optional()
      .openapi({ description: "`otp_invalid`: wrong codes still allowed." }),
    scope: z
      .string()
      .optional()
      .openapi({ description: "`insufficient_scope`: the scope the operation needs." }),
    sends_remaining: z
      .int()
      .optional()
      .openapi({ description: "`rate_limited` on an OTP resend: codes it may still send." }),
    limit: z.enum(["max_sessions", "max_draft_recipients"]).optional().openapi({
      description: "`account_limit_reached`: the account limit the request would exceed.",
    }),
    max: z.int().optional().openapi({ description: "`account_limit_reached`: the limit's value." }),
    current: z
      .int()
      .optional()
      .openapi({ description: "`account_limit_reached`: how much of the limit the account uses now." }),
    requested: z.int().optional().openapi({
      description: "`account_limit_reached` on recipients: the new recipients the request would add.",
    }),
    reason: z.enum(MEDIA_PROBLEM_REASONS).optional().openapi({
      description:
        "`media_unavailable`: why the media cannot be sent (`unreachable`, `http_error`, `redirect_refused`, `too_large`, `wrong_type`, `empty`).",
    }),
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .openapi({
        description: "Field path → messages (validation failures only).",
        example: { "to_number.2": ["invalid phone number"] },
      }),
  })
  .openapi("Problem");

/**
 * OpenAPI `responses` entries for the given error codes, grouped by status, each documented as
 * `application/problem+json`. The problems every route shares (401, 400/413/415 for bodies, 404 for
 * path ids, 500) are added to the document by {@link withSharedProblems}.
 */
export function problems(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes)
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const responses: Record<
    number,
    { description: string; content: { "application/problem+json": { schema: typeof ProblemSchema } } }
  > = {};
  for (const [status, list] of byStatus) {
    responses[status] = {
      description: `Problem: ${list.map((c) => `\`${c}\``).join(", ")}`,
      content: { "application/problem+json": { schema: ProblemSchema } },
    };
  }
  return responses;
}

/**
 * A decimal amount of money in major units, as the API shows balances (at most 2 decimals; stored
 * as integer minor units, lib/money.ts), from `min` to 1,000,000,000.
 */
export const moneyAmount = (min: number) =>
  z
    .number()
    .min(min)
    .max(1_000_000_000)
    .refine((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, "at most 2 decimal places")
    .openapi({ example: 50 });

/** `{ content: { "application/json": { schema } }, description }` for a JSON response or body. */
export function json<T extends z.ZodType>(schema: T, description: string) {
  return { content: { "application/json": { schema } }, description };
}

/** A JSON request body that must be present. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { content: { "application/json": { schema } }, required: true };
}

/** `{ id }` path parameter holding a uuid. A malformed id is answered 404, like an unknown one. */
export const IdParam = z.object({
  id: z
    .uuid()
    .max(36)
    .openapi({ param: { name: "id", in: "path" }, example: "0f8fad5b-d9cb-469f-a165-70867728950e" }),
});

/**
 * The document's top-level `tags`, in reading order: every tag an operation names is described
 * here (test/openapi.test.ts holds the two lists together).
 */
export const TAGS = [
  {
    name: "Sessions",
    description: "Chat-application accounts linked by QR code or pairing code, and their life.",
  },
  { name: "Messages", description: "Sends to one or many recipients, paced per session, and their status." },
  {
    name: "Campaigns",
    description: "Bulk sends with templates, pacing, pause, resume, cancel and statistics.",
  },
  { name: "Opt-outs", description: "The account's suppression list, which campaigns skip." },
  {
    name: "Contacts",
    description:
      "Whoever is on the other side of the account's chats, known by a phone number, a user id (BSUID or LID) or both (docs/contacts.md, Contacts).",
  },
  {
    name: "Erasures",
    description:
      "A contact's data erased on request (GDPR Art. 17), money left exact (docs/contacts.md, Erasure).",
  },
  { name: "Apps", description: "One-time-code settings: sender, template, code size, expiry, countries." },
  { name: "One-time codes", description: "Sending, resending and verifying one-time codes." },
  {
    name: "Webhooks",
    description: "Endpoints that receive the account's events, signed, and their deliveries.",
  },
  { name: "Events", description: "Every change, as the event log and as the webhooks it is delivered by." },
  { name: "Account", description: "The key's own account: balance, low-balance alert, ledger and usage." },
  { name: "API keys", description: "The account's keys, their scopes and expiry." },
  { name: "Link", description: "Hosted phone linking: what a link token opens, without an API key." },
  { name: "Sandbox", description: "The embedded sandbox gateway's test controls." },
  { name: "Gateway events", description: "Where WAHA and Evolution API post their webhooks." },
  {
    name: "Gateway media",
    description: "Where WAHA and Evolution API fetch a media message's stored file, by signed link.",
  },
  { name: "Admin", description: "The operator's API: accounts, keys, credits, metrics (ADMIN_TOKEN)." },
  { name: "Health", description: "Whether the service and its configuration are up." },
];

/**
 * Spread into the `createRoute` of an operation anyone may call (`security: []`): health, the
 * sandbox's pairing page, gateway events (which check the gateway's own signature or token, as
 * their descriptions say). Stated, not left out, so a linter can tell "public" from "forgotten".
 */
export const publicOperation = { security: [] as Record<string, string[]>[] };

/**
 * The security of every entry of the document's `webhooks`: what a receiver checks, the Standard
 * Webhooks signature (src/webhooks/sign.ts), registered as the `WebhookSignature` scheme.
 */
export const webhookSecurity = [{ WebhookSignature: [] as string[] }];

/**
 * What a `/v1` operation needs, spread into its `createRoute`: an API key holding `scope`
 * (src/keys/scopes.ts). The document's security requirement names the scope and the route's
 * middleware enforces it ({@link requireScope}), so the two cannot disagree; `middleware` runs
 * after the scope check, in order.
 */
export function requires(scope: OperationScope, ...middleware: MiddlewareHandler<AppEnv>[]) {
  return {
    security: [{ ApiKey: [scope] }],
    middleware: [requireScope(scope), ...middleware],
  };
}

/**
 * What a number field of a response says of an erased contact (src/erasures/address.ts): the
 * keyed hash stands where their number or user id stood.
 */
export const ERASED_NOTE =
  " Once the contact was erased, the keyed hash that stands for them (`erased:…`, docs/contacts.md, Erasure).";

/** A phone number in international format, normalised to E.164. */
export const PhoneNumber = z
  .string()
  .max(32)
  .transform((value, ctx) => {
    const e164 = toE164(value);
    if (!e164) {
      ctx.addIssue({
        code: "custom",
        message: "invalid phone number (use international format, e.g. +14155552671)",
      });
      return z.NEVER;
    }
    return e164;
  })
  .openapi({ type: "string", maxLength: 32, example: "+14155552671" });

/**
 * The network's id of a user who is not known by a phone number (docs/contacts.md, Contacts): a Cloud API
 * business-scoped user id (`US.13491208655302741918`, a parent `US.ENT.…`) or a linked-device id
 * (`<digits>@lid`), as the gateway gives it (src/lib/contact-identity.ts).
 */
export const UserId = z
  .string()
  .max(160)
  .refine((value) => userIdKind(value) !== null, { message: INVALID_USER_ID })
  .openapi({ example: "US.13491208655302741918" });

/**
 * The recipient of a body that names one by `to_number` or by `to_user_id` (docs/contacts.md, Contacts), or
 * by the two `fields` it names instead (`phone_number` and `user_id` of `POST /v1/erasures`): the
 * address given, or undefined when neither is; giving both is an issue on the user id's field
 * (422 `validation_failed`), answered as `z.NEVER`.
 */
export function eitherAddress<N extends string = "to_number", U extends string = "to_user_id">(
  body: { [F in N | U]?: string | undefined },
  ctx: z.core.$RefinementCtx,
  fields: { number: N; userId: U } = { number: "to_number", userId: "to_user_id" } as {
    number: N;
    userId: U;
  },
): string | undefined {
  const number = body[fields.number];
  const userId = body[fields.userId];
  if (number === undefined || userId === undefined) return number ?? userId;
  ctx.addIssue({
    code: "custom",
    path: [fields.userId],
    message: `give ${fields.number} or ${fields.userId}, not both`,
  });
  return z.NEVER;
}

/**
 * A recipient's address where either kind is taken (docs/contacts.md, Contacts): a user id ({@link UserId}'s
 * patterns) as given, else a phone number in international format, normalised to E.164.
 */
export const Address = z
  .string()
  .max(160)
  .transform((value, ctx) => {
    if (userIdKind(value) !== null) return value;
    const e164 = toE164(value);
    if (!e164) {
      ctx.addIssue({
        code: "custom",
        message:
          "invalid phone number or user id (e.g. +14155552671, US.13491208655302741918 or <digits>@lid)",
      });
      return z.NEVER;
    }
    return e164;
  })
  .openapi({ type: "string", maxLength: 160, example: "+14155552671" });

/**
 * The `Idempotency-Key` header of the POSTs that take one: 1–255 visible ASCII characters
 * (src/middleware/idempotency.ts checks it first and answers its own 422).
 */
export const IdempotencyKeyHeader = z.object({
  "idempotency-key": z.string().min(1).max(255).optional().openapi({
    description: "Makes a retry safe: the same key and body replay the first answer for 24 hours.",
  }),
});

/**
 * Problem responses shared by every operation that can produce them (`components.responses`):
 * each names the codes behind its status, which comes from {@link ERROR_STATUS}.
 */
const SHARED_PROBLEMS = {
  InvalidJson: ["invalid_json"],
  Unauthenticated: ["unauthenticated"],
  InsufficientScope: ["insufficient_scope"],
  RateLimited: ["rate_limited"],
  NotFound: ["not_found"],
  PayloadTooLarge: ["payload_too_large"],
  UnsupportedMediaType: ["unsupported_media_type"],
  ValidationFailed: ["validation_failed"],
  InternalError: ["internal_error", "gateway_misconfigured", "service_misconfigured"],
  AccountMoving: ["account_moving"],
} as const satisfies Record<string, readonly [ErrorCode, ...ErrorCode[]]>;

type SharedProblem = keyof typeof SHARED_PROBLEMS;

/** Paths without an API key that are rate limited per client IP (app.ts): the public ones and `/admin`. */
const RATE_LIMITED_PUBLIC_PATHS = /^\/(link|sandbox\/pair|gateway|media|admin)\//;

/**
 * `RateLimit-Policy` (IETF draft-ietf-httpapi-ratelimit-headers), `components.headers`: on every
 * answer of a rate-limited operation (src/middleware/rate-limit.ts).
 */
const RATE_LIMIT_POLICY = {
  description:
    'The limits the request counted against, e.g. `"send";q=100;w=10, "api";q=1000;w=10`: `q` requests per `w` seconds (docs/api.md, Rate limits). Present on the answers of rate-limited operations.',
  schema: { type: "string", maxLength: 200 },
};
const RATE_LIMIT_POLICY_REF = { $ref: "#/components/headers/RateLimitPolicy" };

/** The headers a 429 `rate_limited` answer carries (src/middleware/rate-limit.ts). */
const RATE_LIMIT_HEADERS = {
  "Retry-After": {
    description:
      "Seconds to wait before trying again: at most the limit's period (10 or 60 s) for a rate limit; until a code may be sent again (up to an hour) for a number's one-time-code limit.",
    schema: { type: "integer", format: "int32", minimum: 1, maximum: 3_600 },
  },
  "RateLimit-Policy": RATE_LIMIT_POLICY_REF,
  RateLimit: {
    description:
      'The rate limit that was reached: `"<name>";r=0;t=<seconds>` (not on a one-time-code limit).',
    schema: { type: "string", maxLength: 100 },
  },
};

/** `Retry-After` of 503 `account_moving` (src/db/databases.ts `ACCOUNT_MOVING_RETRY_SECONDS`). */
const RETRY_AFTER = {
  description:
    "Seconds to wait before trying again: the account is moving between databases (docs/databases.md, Databases).",
  schema: { type: "integer", format: "int32", minimum: 1, maximum: 60 },
};

/** Whether requests of this operation count against a rate limit: keyed ones, and the public paths. */
function rateLimited(path: string, operation: OperationLike): boolean {
  return scoped(operation) || RATE_LIMITED_PUBLIC_PATHS.test(path);
}

/** Whether the operation's security requirement names a scope (`requires`): it takes an API key. */
function scoped(operation: OperationLike): boolean {
  return (operation.security ?? []).some((requirement) =>
    Object.values(requirement).some((scopes) => Array.isArray(scopes) && scopes.length > 0),
  );
}

/** The methods whose bodies `bodyGuard` and `bodyLimit` check (src/middleware/body-guard.ts). */
const BODY_METHODS = new Set(["post", "put", "patch", "delete"]);

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"]);

/** The parts of an OpenAPI 3.1 document that {@link withSharedProblems} reads and writes. */
export interface OpenApiDocumentLike {
  info: { description?: string };
  paths?: Record<string, object>;
  components?: {
    securitySchemes?: Record<string, unknown>;
    responses?: Record<string, unknown>;
    headers?: Record<string, unknown>;
  };
}

interface OperationLike {
  security?: Record<string, unknown>[];
  parameters?: { in?: string }[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
}

/**
 * The shared problems the error model can answer an operation with, from facts of its definition:
 * - an HTTP (bearer) security scheme: 401 `unauthenticated` (src/middleware/auth.ts); the admin
 *   token also 404, since `/admin` does not exist without ADMIN_TOKEN;
 * - a security requirement naming a scope: 403 `insufficient_scope` (src/routes/openapi.ts,
 *   `requires`), and 429 `rate_limited` (per key); the public and admin paths of
 *   {@link RATE_LIMITED_PUBLIC_PATHS} 429 too (per IP; src/middleware/rate-limit.ts);
 * - a method that carries a body: 400 `invalid_json`, 413, 415 (src/middleware/body-guard.ts);
 * - a request body, query or header parameters: 422 `validation_failed` (src/routes/router.ts);
 * - path parameters: 404 `not_found` (a malformed one too, src/routes/router.ts);
 * - every operation: 500 (a bug, or a misconfigured service: src/config.ts);
 * - an operation on an API key's account: 503 `account_moving`, with `Retry-After`, while the
 *   account moves between databases (src/db/databases.ts `AccountMoving`).
 */
function sharedProblemsOf(
  path: string,
  method: string,
  operation: OperationLike,
  httpSchemes: Set<string>,
): SharedProblem[] {
  const problems: SharedProblem[] = [];
  const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (schemes.some((scheme) => httpSchemes.has(scheme))) problems.push("Unauthenticated");
  if (scoped(operation)) problems.push("InsufficientScope");
  if (rateLimited(path, operation)) problems.push("RateLimited");
  if (BODY_METHODS.has(method)) problems.push("InvalidJson", "PayloadTooLarge", "UnsupportedMediaType");
  const parameters = operation.parameters ?? [];
  if (operation.requestBody || parameters.some((p) => p.in === "query" || p.in === "header")) {
    problems.push("ValidationFailed");
  }
  if (parameters.some((p) => p.in === "path") || schemes.includes("AdminToken")) problems.push("NotFound");
  problems.push("InternalError");
  if (scoped(operation)) problems.push("AccountMoving");
  return problems;
}

/**
 * Adds the problems every route shares to a generated document, in one place rather than in each
 * route: `components.responses` gets one response per {@link SHARED_PROBLEMS} entry, and each
 * operation refers to those it can produce (see `sharedProblemsOf`) unless it documents that
 * status itself. A listed path called with another method answers 405 `method_not_allowed` with
 * `Allow`; no operation of the document can produce it, so `info.description` says so. Mutates
 * and returns `document`.
 */
export function withSharedProblems<D extends OpenApiDocumentLike>(document: D): D {
  document.components ??= {};
  const components = document.components;
  components.responses ??= {};
  const responses = components.responses;
  for (const [name, codes] of Object.entries(SHARED_PROBLEMS)) {
    responses[name] = {
      description: `Problem: ${codes.map((code) => `\`${code}\``).join(", ")}`,
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
      headers:
        name === "RateLimited"
          ? RATE_LIMIT_HEADERS
          : name === "AccountMoving"
            ? { "Retry-After": RETRY_AFTER, "RateLimit-Policy": RATE_LIMIT_POLICY_REF }
            : { "RateLimit-Policy": RATE_LIMIT_POLICY_REF },
    };
  }
  components.headers = { ...components.headers, RateLimitPolicy: RATE_LIMIT_POLICY };
  const httpSchemes = new Set(
    Object.entries(components.securitySchemes ?? {})
      .filter(([, scheme]) => (scheme as { type?: string }).type === "http")
      .map(([name]) => name),
  );
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, value] of Object.entries(item as Record<string, unknown>)) {
      if (!HTTP_METHODS.has(method)) continue;
      const operation = value as OperationLike;
      operation.responses ??= {};
      const own = operation.responses;
      for (const name of sharedProblemsOf(path, method, operation, httpSchemes)) {
        const status = String(ERROR_STATUS[SHARED_PROBLEMS[name][0]]);
        own[status] ??= { $ref: `#/components/responses/${name}` };
      }
      // The operation's own 2xx and 4xx answers carry the policy too (the shared ones have it).
      if (!rateLimited(path, operation)) continue;
      for (const [status, response] of Object.entries(own)) {
        if (!/^[24]/.test(status) || "$ref" in (response as object)) continue;
        const answer = response as { headers?: Record<string, unknown> };
        const own429 = status === "429" ? RATE_LIMIT_HEADERS : {};
        answer.headers = { ...answer.headers, ...own429, "RateLimit-Policy": RATE_LIMIT_POLICY_REF };
      }
    }
  }
  document.info.description = [
    document.info.description,
    "A listed path called with a method it does not list answers 405 `method_not_allowed`, with `Allow` naming the methods it has.",
  ]
    .filter(Boolean)
    .join("\n\n");
  return document;
}
