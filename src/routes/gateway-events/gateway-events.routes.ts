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
