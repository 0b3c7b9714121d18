import { createRoute } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { sendRateLimit } from "../../middleware/rate-limit";
import { OTP_RULES } from "../../otp/code";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import { OtpEnvelopeSchema, SendOtpBody, VerifyOtpBody } from "./otp.schemas";

const common = { tags: ["One-time codes"] };

export const send = createRoute({
  operationId: "sendOtp",
  ...requires("otp:send", sendRateLimit, idempotency),
  ...common,
  method: "post",
  path: "/apps/{id}/otp",
  summary: "Send a one-time code",
  description:
    "Generates a code of the app's `code_size` digits, renders it into the app's `message_template` and sends it " +
    "as a text message through the app's chat session, ahead of any bulk send on that session. The message is " +
    "charged like any message; the code is never returned. One number gets at most `OTP_MAX_PER_NUMBER_PER_HOUR` " +
    "codes (sends and resends) from all the apps of the account together in a rolling hour (429 `rate_limited` with `Retry-After`). When the app has " +
    "`allowed_countries`, a number of another country, or of none (`+800…`), is refused with 422 " +
    "`otp_country_not_allowed` before anything is charged or sent. Through a Cloud API session the code goes " +
    "as the app's `otp_template` instead (an authentication template: the code as its body parameter and its " +
    "copy-code button's; priced `PRICE_TEMPLATE`, not limited by the 24-hour window): 422 " +
    "`app_has_no_otp_template` without one, 422 `template_not_found` when the session's cache has no such " +
    "`APPROVED` template, nothing charged. Send an `Idempotency-Key` header to make retries safe.",
  request: { headers: IdempotencyKeyHeader, params: IdParam, body: jsonBody(SendOtpBody) },
  responses: {
    201: json(OtpEnvelopeSchema, "The OTP, pending; its code is on its way"),
    ...problems(
      "validation_failed",
      "not_found",
      "otp_country_not_allowed",
      "app_has_no_channel",
      "app_has_no_otp_template",
      "template_not_found",
      "session_not_connected",
      "insufficient_balance",
      "rate_limited",
      "idempotency_key_in_use",
      "idempotency_key_reused",
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
  request: { params: IdParam },
  responses: { 200: json(OtpEnvelopeSchema, "The OTP"), ...problems("not_found") },
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
    "After `expires_at`: 410 `otp_expired`. Already verified: 409 `otp_already_verified`.",
  request: { params: IdParam, body: jsonBody(VerifyOtpBody) },
  responses: {
    200: json(OtpEnvelopeSchema, "The OTP, verified"),
    ...problems(
      "validation_failed",
      "not_found",
      "otp_invalid",
      "otp_attempts_exceeded",
      "otp_expired",
      "otp_already_verified",
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
    "app's `otp_template`, as at the send.",
  request: { headers: IdempotencyKeyHeader, params: IdParam },
  responses: {
    200: json(OtpEnvelopeSchema, "The OTP with its new code on its way"),
    ...problems(
      "not_found",
      "otp_country_not_allowed",
      "app_has_no_channel",
      "app_has_no_otp_template",
      "template_not_found",
      "session_not_connected",
      "insufficient_balance",
      "rate_limited",
      "otp_attempts_exceeded",
      "otp_expired",
      "otp_already_verified",
      "idempotency_key_in_use",
      "idempotency_key_reused",
    ),
  },
});
