import { createRoute } from "@hono/zod-openapi";
import { sealedIdempotency } from "../../middleware/idempotency";
import { webhookReplayKey } from "../../webhooks/secret";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import {
  CreateWebhookEndpointBody,
  MAX_WEBHOOK_ENDPOINTS,
  RotateSecretBody,
  UpdateWebhookEndpointBody,
  WebhookEndpointEnvelopeSchema,
  WebhookEndpointListSchema,
  WebhookEndpointWithSecretEnvelopeSchema,
} from "./webhooks.schemas";

const tags = ["Webhooks"];
const common = { tags };

const secretNote =
  "The response holds the signing secret in full (`secret`, Standard Webhooks format `whsec_…`); no other response shows it, only its `secret_prefix`. " +
  "The service stores it sealed (AES-256-GCM under a key derived from `OTP_SECRET`, bound to the endpoint), and an `Idempotency-Key` replay of this response sealed too; without `OTP_SECRET` this is 500 `service_misconfigured`.";

export const list = createRoute({
  operationId: "listWebhooks",
  ...requires("webhooks:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's webhook endpoints, newest first",
  description: `All of them in one response: an account has at most ${MAX_WEBHOOK_ENDPOINTS}.`,
  responses: {
    200: json(WebhookEndpointListSchema, "The endpoints"),
    ...problems("unauthenticated"),
  },
});

export const create = createRoute({
  operationId: "createWebhook",
  ...requires("webhooks:write", sealedIdempotency(webhookReplayKey)),
  ...common,
  method: "post",
  path: "/",
  summary: "Create a webhook endpoint",
  description:
    `Events of the chosen types (all by default) are posted to \`url\`, signed per Standard Webhooks. ${secretNote} ` +
    "A key subscribes an endpoint only to event types it may read (the scope each type names: `messages:read` for `message.*`, and so on): naming another is 403 `insufficient_scope`, and without `events` a key that is not `*` gets the list of the types it may read, not every type. " +
    `An account has at most ${MAX_WEBHOOK_ENDPOINTS} endpoints: one more is 409 \`webhook_endpoint_limit\`. ` +
    "Send an `Idempotency-Key` header to make retries safe: the first response is replayed for 24 hours.",
  request: {
    headers: IdempotencyKeyHeader,
    body: jsonBody(CreateWebhookEndpointBody),
  },
  responses: {
    201: json(WebhookEndpointWithSecretEnvelopeSchema, "The new endpoint, with its signing secret"),
    ...problems(
      "unauthenticated",
      "insufficient_scope",
      "validation_failed",
      "webhook_endpoint_limit",
      "idempotency_key_in_use",
      "idempotency_key_reused",
    ),
  },
});

export const show = createRoute({
  operationId: "getWebhook",
  ...requires("webhooks:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Show a webhook endpoint",
  request: { params: IdParam },
  responses: { 200: json(WebhookEndpointEnvelopeSchema, "The endpoint"), ...problems("not_found") },
});

export const update = createRoute({
  operationId: "updateWebhook",
  ...requires("webhooks:write"),
  ...common,
  method: "patch",
  path: "/{id}",
  summary: "Update a webhook endpoint (any subset of the fields)",
  description:
    "Fields left out keep their value; `events: null` restores every type, `description: null` removes the note. " +
    "`enabled: true` turns an endpoint back on, also one that delivery turned off, and clears `disabled_reason`. " +
    "`updated_at` always changes. " +
    "As on create, `events` may name only types the key may read, and `events: null` from a key that is not `*` sets the types it may read. " +
    "A new `url` needs a key that may read every type the endpoint receives (`*` for one subscribed to every type): else 403 `insufficient_scope`.",
  request: { params: IdParam, body: jsonBody(UpdateWebhookEndpointBody) },
  responses: {
    200: json(WebhookEndpointEnvelopeSchema, "The updated endpoint"),
    ...problems("insufficient_scope", "not_found", "validation_failed"),
  },
});

export const remove = createRoute({
  operationId: "deleteWebhook",
  ...requires("webhooks:write"),
  ...common,
  method: "delete",
  path: "/{id}",
  summary: "Delete a webhook endpoint",
  description: "Permanent: nothing more is posted to it, and it is then not found anywhere.",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted" }, ...problems("not_found") },
});

export const rotateSecret = createRoute({
  operationId: "rotateWebhookSecret",
  ...requires("webhooks:write", sealedIdempotency(webhookReplayKey)),
  ...common,
  method: "post",
  path: "/{id}/rotate-secret",
  summary: "Rotate a webhook endpoint's signing secret",
  description:
    `Makes a new signing secret. ${secretNote} The previous secret keeps signing alongside the new one ` +
    "(each delivery carries both signatures, as Standard Webhooks allows) for `expires_in_seconds`, 24 hours by default, " +
    "so receivers can switch without missing a delivery; `previous_secret_expires_at` says until when. " +
    "A secret kept from an earlier rotation stops signing. The body is optional. " +
    "Send an `Idempotency-Key` header to make retries safe: a retry whose first response was lost gets that response (and secret) again, instead of rotating twice and pushing out the secret the receiver still holds.",
  request: {
    params: IdParam,
    headers: IdempotencyKeyHeader,
    body: { ...jsonBody(RotateSecretBody), required: false },
  },
  responses: {
    200: json(WebhookEndpointWithSecretEnvelopeSchema, "The endpoint, with its new signing secret"),
    ...problems("not_found", "validation_failed", "idempotency_key_in_use", "idempotency_key_reused"),
  },
});
