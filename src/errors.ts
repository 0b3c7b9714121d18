import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * Stable error codes and the HTTP status each one answers with. Clients branch on `code`, never on
 * `title` or `detail`. Adding a code is backwards compatible; renaming one is not.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  unauthenticated: 401,
  invalid_signature: 401,
  insufficient_balance: 402,
  insufficient_scope: 403,
  media_link_invalid: 403,
  verify_token_mismatch: 403,
  not_found: 404,
  link_not_found: 404,
  media_not_kept: 404,
  message_archived: 404,
  otp_archived: 404,
  campaign_recipients_archived: 404,
  method_not_allowed: 405,
  session_not_pending: 409,
  session_not_connected: 409,
  session_not_disconnected: 409,
  session_not_linked: 409,
  session_limited: 409,
  reply_to_not_sent: 409,
  message_not_sent: 409,
  message_too_old: 409,
  idempotency_key_in_use: 409,
  otp_already_verified: 409,
  otp_is_reverse: 409,
  webhook_endpoint_limit: 409,
  webhook_endpoint_disabled: 409,
  campaign_not_draft: 409,
  campaign_not_running: 409,
  campaign_not_paused: 409,
  campaign_finished: 409,
  campaign_empty: 409,
  account_limit_reached: 409,
  account_move_in_progress: 409,
  not_supported_by_gateway: 409,
  phone_number_in_use: 409,
  otp_expired: 410,
  link_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  idempotency_key_reused: 422,
  app_has_no_channel: 422,
  app_has_no_otp_template: 422,
  otp_invalid: 422,
  otp_country_not_allowed: 422,
  pairing_code_invalid: 422,
  time_range_invalid: 422,
  media_unavailable: 422,
  reply_to_not_found: 422,
  message_not_incoming: 422,
  type_not_supported_by_gateway: 422,
  message_not_outgoing: 422,
  message_not_editable: 422,
  reply_to_other_chat: 422,
  reaction_other_chat: 422,
  gateway_credentials_invalid: 422,
  template_not_found: 422,
  template_rejected: 422,
  outside_service_window: 422,
  recipient_not_supported: 422,
  upgrade_required: 426,
  rate_limited: 429,
  otp_attempts_exceeded: 429,
  internal_error: 500,
  gateway_misconfigured: 500,
  service_misconfigured: 500,
  gateway_rejected: 502,
  gateway_unavailable: 503,
  service_unavailable: 503,
  otp_codes_exhausted: 503,
  account_moving: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

const TITLES: Record<ErrorCode, string> = {
  invalid_json: "Invalid JSON",
  unauthenticated: "Unauthenticated",
  insufficient_scope: "Insufficient scope",
  media_link_invalid: "Media link invalid",
  verify_token_mismatch: "Verify token mismatch",
  invalid_signature: "Invalid signature",
  insufficient_balance: "Insufficient balance",
  not_found: "Not found",
  link_not_found: "Link not found",
  media_not_kept: "Media not kept",
  message_archived: "Message archived",
  otp_archived: "OTP archived",
  campaign_recipients_archived: "Campaign recipients archived",
  method_not_allowed: "Method not allowed",
  session_not_pending: "Session is not pending",
  session_not_connected: "Session is not connected",
  session_not_disconnected: "Session is not disconnected",
  session_not_linked: "Session is not linked",
  session_limited: "Session is limited by the network",
  reply_to_not_sent: "Quoted message not sent yet",
  message_not_sent: "Message not sent",
  message_too_old: "Message too old",
  idempotency_key_in_use: "Idempotency key in use",
  otp_already_verified: "OTP already verified",
  otp_is_reverse: "Reverse OTP",
  webhook_endpoint_limit: "Webhook endpoint limit reached",
  webhook_endpoint_disabled: "Webhook endpoint disabled",
  campaign_not_draft: "Campaign not a draft",
  campaign_not_running: "Campaign not running",
  campaign_not_paused: "Campaign not paused",
  campaign_finished: "Campaign finished",
  campaign_empty: "Campaign has no recipients",
  account_limit_reached: "Account limit reached",
  account_move_in_progress: "Account move in progress",
  not_supported_by_gateway: "Not supported by the session's gateway",
  phone_number_in_use: "Phone number in use",
  otp_expired: "OTP expired",
  link_expired: "Link expired",
  payload_too_large: "Payload too large",
  unsupported_media_type: "Unsupported media type",
  validation_failed: "Validation failed",
  idempotency_key_reused: "Idempotency key reused",
  app_has_no_channel: "App has no channel",
  app_has_no_otp_template: "App has no OTP template",
  otp_invalid: "Invalid code",
  otp_country_not_allowed: "Country not allowed",
  pairing_code_invalid: "Invalid pairing code",
  time_range_invalid: "Invalid time range",
  media_unavailable: "Media unavailable",
  reply_to_not_found: "Quoted message not found",
  message_not_incoming: "Not an incoming message",
  type_not_supported_by_gateway: "Type not supported by the gateway",
  message_not_outgoing: "Not an outgoing message",
  message_not_editable: "Message not editable",
  reply_to_other_chat: "Quoted message in another chat",
  reaction_other_chat: "Reacted message in another chat",
  gateway_credentials_invalid: "Gateway credentials invalid",
  template_not_found: "Template not found",
  template_rejected: "Template rejected",
  outside_service_window: "Outside the customer service window",
  recipient_not_supported: "Recipient not supported",
  upgrade_required: "Upgrade required",
  rate_limited: "Too many requests",
  otp_attempts_exceeded: "Too many attempts",
  internal_error: "Internal error",
  gateway_misconfigured: "Gateway misconfigured",
  service_misconfigured: "Service misconfigured",
  gateway_rejected: "Gateway refused the request",
  gateway_unavailable: "Gateway unavailable",
  service_unavailable: "Service unavailable",
  otp_codes_exhausted: "No free code",
  account_moving: "Account moving",
};

/** Field path (dot-joined, e.g. `to_number.2`) → human-readable messages. */
export type FieldErrors = Record<string, string[]>;

export interface ApiErrorOptions {
  /** Per-field messages, rendered as the problem's `errors` member (validation failures). */
  fields?: FieldErrors;
  /** Extra problem members (RFC 9457 §3.2 extension members), e.g. `attempts_remaining`. */
  extra?: Record<string, unknown>;
  /** Response headers, e.g. `Retry-After` or `Allow`. */
  headers?: Record<string, string>;
  /**
   * The status when the code has a second one besides its {@link ERROR_STATUS} entry: only
   * `service_misconfigured`, 503 for a local-development setting in a deployment that is not
   * local (src/config.ts `localSettingsProblem`), since no request can succeed there until the
   * operator acts, rather than one variable being broken.
   */
  status?: 503;
}

/**
 * The one way a request fails. Throw it anywhere below a handler; `onError` renders it as
 * RFC 9457 problem details with the status from {@link ERROR_STATUS}.
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: ApiErrorOptions = {},
  ) {
    super(detail);
    this.name = "ApiError";
    this.status = options.status ?? ERROR_STATUS[code];
  }
}

/**
 * 409 `account_limit_reached`: creating `what` would take the account past its limit `limit`
 * (docs/security.md, Account limits), of which it uses `current` of `max`. The problem names them
 * as extension members `limit`, `max` and `current`, with `requested` when the request asked for
 * several (the recipients it would add).
 */
export function accountLimitReached(
  usage: { limit: string; max: number; current: number; requested?: number },
  what: string,
): ApiError {
  const { limit, max, current, requested } = usage;
  return new ApiError(
    "account_limit_reached",
    `The account holds ${current} of its ${limit} of ${max}: ${what} would exceed it. Free some up, or ask for a higher limit.`,
    { extra: { limit, max, current, ...(requested === undefined ? {} : { requested }) } },
  );
}

/**
 * The problem `type` URI for a code. RFC 9457 §3.1.1 allows non-resolvable type URIs and suggests
 * the `tag:` scheme (RFC 4151) for them; every code is documented in the OpenAPI reference.
 */
export function problemType(code: ErrorCode): string {
  return `tag:chatapp-otp-api,2026:problems/${code}`;
}

/** Renders an {@link ApiError} as an `application/problem+json` response (RFC 9457). */
export function problemResponse(c: Context, error: ApiError): Response {
  const body: Record<string, unknown> = {
    type: problemType(error.code),
    title: TITLES[error.code],
    status: error.status,
    detail: error.detail,
    code: error.code,
    request_id: c.get("requestId") ?? null,
    success: false,
    ...error.options.extra,
  };
  if (error.options.fields) body.errors = error.options.fields;
  const headers = { "Content-Type": "application/problem+json", ...error.options.headers };
  return c.body(JSON.stringify(body), error.status, headers);
}
