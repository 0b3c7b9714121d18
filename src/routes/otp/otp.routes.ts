import { createRoute } from "@hono/zod-openapi";
import { idempotency, sealedIdempotency } from "../../middleware/idempotency";
import { sendRateLimit } from "../../middleware/rate-limit";
import { OTP_RULES, otpReplayKey } from "../../otp/code";
import { REVERSE_RULES } from "../../otp/reverse";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import { CreatedOtpEnvelopeSchema, OtpEnvelopeSchema, SendOtpBody, VerifyOtpBody } from "./otp.schemas";

const common = { tags: ["One-time codes"] };

export const send = createRoute({
  operationId: "sendOtp",
  ...requires("otp:send", sendRateLimit, sealedIdempotency(otpReplayKey)),
  ...common,
  method: "post",
  path: "/apps/{id}/otp",
  summary: "Send a one-time code, or start a reverse one",
  description:
    "Generates a code of the app's `code_size` digits, renders it into the app's `message_template` and sends it " +
    "as a text message through the app's chat session, ahead of any bulk send on that session. The message is " +
    "charged like any message; the code is never returned. One number gets at most `OTP_MAX_PER_NUMBER_PER_HOUR` " +
    "codes (sends and resends) from all the apps of the account together in a rolling hour (429 `rate_limited` with `Retry-After`), counted per " +
    "contact: its number and user ids together. A user known by a LID or a BSUID gets codes by `to_user_id` through the first connected " +
    "channel whose gateway sends to that kind of id (422 `recipient_not_supported` when none does, or for a Cloud API " +
    "authentication template with a code button to a BSUID). When the app has " +
    "`allowed_countries`, a number of another country, or of none (`+800…`), is refused with 422 " +
    "`otp_country_not_allowed` before anything is charged or sent. Through a Cloud API session the code goes " +
    "as the app's `otp_template` instead (an authentication template: the code as its body parameter and its " +
    "copy-code button's; priced `PRICE_TEMPLATE`, not limited by the 24-hour window): 422 " +
    "`app_has_no_otp_template` without one, 422 `template_not_found` when the session's cache has no such " +
    "`APPROVED` template, nothing charged. Send an `Idempotency-Key` header to make retries safe.\n\n" +
    'With `"mode": "reverse"` nothing is sent: the user sends the code to the app\'s first `connected` channel ' +
    "(409 `session_not_connected` when none is; 422 `app_has_no_channel` without any), and that incoming message " +
    "verifies the OTP, with `verified_number` its sender. The response is a ReverseOtp: the OTP plus `code`, a " +
    "`link` (`https://wa.me/<session number>?text=<the app's message_template with the code>`) and its `qr_code`, " +
    "shown in this response only. Codes are unique among the session's live reverse OTPs (503 " +
    `\`otp_codes_exhausted\` when no free one is drawn), and a session holds at most ${REVERSE_RULES.maxLivePerSession} live ones (409 ` +
    "`account_limit_reached`, limit `max_live_reverse_otps`). `to_number` is optional: given, only that number's " +
    "message verifies it (and it must be within `allowed_countries`); without it the app's `code_size` must be at " +
    `least ${REVERSE_RULES.minOpenCodeSize} (422 \`validation_failed\` naming \`to_number\`). A number that sent the session ${REVERSE_RULES.maxSenderFailures} wrong codes since the ` +
    "OTP was created, and a message dated before it was created, verify nothing (counted in `refused_messages`). " +
    "Nothing is charged now; the app's " +
    "`reverse_price` is charged when the OTP is verified (402 `insufficient_balance` now when the balance is " +
    "below it; a balance that no longer covers it at verification leaves the OTP verified and uncharged). Not " +
    "counted toward the per-number limit. The Idempotency-Key replay keeps this response for 24 hours sealed (AES-256-GCM under a key derived from `OTP_SECRET`), so the code is no more readable in the database than its HMACs.",
  request: { headers: IdempotencyKeyHeader, params: IdParam, body: jsonBody(SendOtpBody) },
  responses: {
    201: json(
      CreatedOtpEnvelopeSchema,
      "The OTP, pending: its code is on its way, or (reverse) the ReverseOtp with the code for the user to send",
    ),
    ...problems(
      "validation_failed",
      "not_found",
      "otp_country_not_allowed",
      "app_has_no_channel",
      "app_has_no_otp_template",
      "template_not_found",
      "recipient_not_supported",
      "session_not_connected",
      "session_limited",
      "insufficient_balance",
      "account_limit_reached",
      "rate_limited",
      "idempotency_key_in_use",
      "idempotency_key_reused",
      "otp_codes_exhausted",
    ),
  },
});

export const show = createRoute({
  operationId: "getOtp",
  ...requires("otp:read"),
  ...common,
  method: "get",
  path: "/otp/{id}",
  summary: "Show a one-time code's state (never the code)",
  description:
    "The OTP as it stands now: a `pending` OTP past `expires_at` shows `expired`. A reverse OTP shows `verified_number` once verified, and never its code, link or QR code.",
  request: { params: IdParam },
  responses: { 200: json(OtpEnvelopeSchema, "The OTP"), ...problems("not_found", "otp_archived") },
});

export const verify = createRoute({
  operationId: "verifyOtp",
  ...requires("otp:verify"),
  ...common,
  method: "post",
  path: "/otp/{id}/verify",
  summary: "Check a code",
  description:
    `A right code verifies the OTP, once. A wrong one answers 422 \`otp_invalid\` with \`attempts_remaining\`; the ` +
    `${OTP_RULES.maxFailedAttempts}th wrong code fails the OTP and later tries answer 429 \`otp_attempts_exceeded\`. ` +
    "After `expires_at`: 410 `otp_expired`. Already verified: 409 `otp_already_verified`. A reverse OTP: 409 " +
    "`otp_is_reverse` (the user's message verifies it).",
  request: { params: IdParam, body: jsonBody(VerifyOtpBody) },
  responses: {
    200: json(OtpEnvelopeSchema, "The OTP, verified"),
    ...problems(
      "validation_failed",
      "not_found",
      "otp_archived",
      "otp_invalid",
      "otp_attempts_exceeded",
      "otp_expired",
      "otp_already_verified",
      "otp_is_reverse",
    ),
  },
});

export const resend = createRoute({
  operationId: "resendOtp",
  ...requires("otp:send", sendRateLimit, idempotency),
  ...common,
  method: "post",
  path: "/otp/{id}/resend",
  summary: "Send a new code",
  description:
    `Sends a new code and invalidates the previous one; \`expires_at\` restarts. At most ${OTP_RULES.maxSends} codes per ` +
    `OTP (then 429 \`rate_limited\` without \`Retry-After\`: start a new OTP), at least ` +
    `${OTP_RULES.resendIntervalMs / 1000} seconds apart (429 \`rate_limited\` with \`Retry-After\`), within the ` +
    "per-number limit (shared by all the apps of the account) and the app's current `allowed_countries` (422 `otp_country_not_allowed`). Wrong-code " +
    "attempts carry over. A verified (409), failed (429) or expired (410) OTP takes no new code. When the message " +
    "cannot be sent (402, 409, 422), the OTP is left as it was. Through a Cloud API session the code goes as the " +
    "app's `otp_template`, as at the send. A reverse OTP takes no code: 409 `otp_is_reverse`.",
  request: { headers: IdempotencyKeyHeader, params: IdParam },
  responses: {
    200: json(OtpEnvelopeSchema, "The OTP with its new code on its way"),
    ...problems(
      "not_found",
      "otp_archived",
      "otp_country_not_allowed",
      "app_has_no_channel",
      "app_has_no_otp_template",
      "template_not_found",
      "recipient_not_supported",
      "session_not_connected",
      "session_limited",
      "insufficient_balance",
      "rate_limited",
      "otp_attempts_exceeded",
      "otp_expired",
      "otp_already_verified",
      "otp_is_reverse",
      "idempotency_key_in_use",
      "idempotency_key_reused",
    ),
  },
});
