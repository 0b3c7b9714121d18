import { createRoute, z } from "@hono/zod-openapi";
import { json, problems, publicOperation } from "../openapi";

const tags = ["Gateway events"];

/** What an events endpoint answers a gateway: 200 for every authentic event, known or not. */
export const EventReceiptSchema = z
  .object({
    success: z.literal(true),
    ignored: z.boolean().openapi({
      description:
        "True when the event named no session we hold, or nothing we act on, or was dated more than 5 minutes off the service's clock (or not dated): such an event is dropped, and answered 200 so that it is not retried.",
    }),
  })
  .openapi("GatewayEventReceipt");

export const waha = createRoute({
  operationId: "receiveWahaEvent",
  ...publicOperation,
  tags,
  method: "post",
  path: "/waha/events",
  summary: "WAHA webhook: session status, messages and acks",
  description:
    "Registered at WAHA for each session (`session.status`, `message`, `message.ack`). The body is WAHA's webhook event; " +
    "`X-Webhook-Hmac` must be the hex HMAC-SHA512 of the raw body under `WAHA_WEBHOOK_HMAC_KEY`; an event whose `timestamp` is more than 5 minutes off the service's clock is dropped (`ignored`). Exists while `CHATAPP_GATEWAY=waha`.",
  responses: {
    200: json(EventReceiptSchema, "Received"),
    ...problems("invalid_signature", "invalid_json", "not_found"),
  },
});

export const evolution = createRoute({
  operationId: "receiveEvolutionEvent",
  ...publicOperation,
  tags,
  method: "post",
  path: "/evolution/events",
  summary: "Evolution API webhook: connection, QR and message updates",
  description:
    "Registered at Evolution API for each instance (`CONNECTION_UPDATE`, `QRCODE_UPDATED`, `MESSAGES_UPSERT`, `MESSAGES_UPDATE`). " +
    "The body is Evolution's webhook event; its `apikey` must be the instance's token, and an event whose `date_time` is missing or more than 5 minutes off the service's clock is dropped (`ignored`). Exists while `CHATAPP_GATEWAY=evolution`.",
  responses: {
    200: json(EventReceiptSchema, "Received"),
    ...problems("invalid_signature", "invalid_json", "not_found"),
  },
});

/** Meta's subscription handshake query (Meta's "Webhooks" guide, "Verification requests"). */
const HandshakeQuery = z.object({
  "hub.mode": z.string().max(64).optional().openapi({ description: "`subscribe`", example: "subscribe" }),
  "hub.verify_token": z
    .string()
    .max(256)
    .optional()
    .openapi({ description: "Must equal `CLOUD_API_VERIFY_TOKEN`." }),
  "hub.challenge": z
    .string()
    .max(256)
    .optional()
    .openapi({ description: "Echoed as the plain-text body.", example: "1158201444" }),
});

export const cloudApiHandshake = createRoute({
  operationId: "verifyCloudApiWebhook",
  ...publicOperation,
  tags,
  method: "get",
  path: "/cloud-api",
  summary: "WhatsApp Cloud API webhook: subscription handshake",
  description:
    "Meta calls it when the webhook URL is registered in the app's dashboard: with `hub.mode=subscribe` and `hub.verify_token` equal to `CLOUD_API_VERIFY_TOKEN` it answers 200 with `hub.challenge` as a plain-text body; anything else is 403 `verify_token_mismatch`. Exists while `CHATAPP_GATEWAYS` enables `cloud_api`.",
  request: { query: HandshakeQuery },
  responses: {
    200: {
      content: { "text/plain": { schema: z.string().openapi({ example: "1158201444" }) } },
      description: "The challenge, echoed",
    },
    ...problems("verify_token_mismatch", "not_found"),
  },
});

export const cloudApi = createRoute({
  operationId: "receiveCloudApiEvent",
  ...publicOperation,
  tags,
  method: "post",
  path: "/cloud-api",
  summary: "WhatsApp Cloud API webhook: statuses and incoming messages",
  description:
    "Registered in Meta's app dashboard (fields `messages`, `message_template_status_update` and `phone_number_quality_update`). The body is Meta's `WebhookPayload`; " +
    "`X-Hub-Signature-256` must be `sha256=` and the hex HMAC-SHA256 of the raw body under `CLOUD_API_APP_SECRET`. " +
    "Each `messages` change goes to the session of its `metadata.phone_number_id`: `statuses[]` become message receipts (each applied once, in any order, never moving a message back) and `messages[]` incoming messages. " +
    "Meta's body carries no send time and Meta retries for days, so no freshness window applies: a replayed body changes nothing. A number no session holds, or a field not acted on, is answered 200 (`ignored`). Exists while `CHATAPP_GATEWAYS` enables `cloud_api`.",
  responses: {
    200: json(EventReceiptSchema, "Received"),
    ...problems("invalid_signature", "invalid_json", "not_found"),
  },
});
