import { createRoute } from "@hono/zod-openapi";
import { IdParam, json, jsonBody, problems, requires } from "../openapi";
import {
  DeliveryListQuery,
  DeliveryParams,
  RecoverBody,
  RecoveryEnvelopeSchema,
  TestResultEnvelopeSchema,
  WebhookDeliveryEnvelopeSchema,
  WebhookDeliveryListSchema,
} from "./deliveries.schemas";

const common = { tags: ["Webhooks"] };

export const listDeliveries = createRoute({
  operationId: "listWebhookDeliveries",
  ...requires("webhooks:read"),
  ...common,
  method: "get",
  path: "/{id}/deliveries",
  summary: "List an endpoint's deliveries with their attempts",
  description:
    "One delivery per event sent to the endpoint, listed from its first attempt on, newest first, each with every attempt made " +
    "(time, HTTP status, duration, the first 1 KiB of the answer). Kept 30 days. Cursor-paged like the message list.",
  request: { params: IdParam, query: DeliveryListQuery },
  responses: {
    200: json(WebhookDeliveryListSchema, "A page of deliveries"),
    ...problems("unauthenticated", "not_found", "validation_failed"),
  },
});

export const showDelivery = createRoute({
  operationId: "getWebhookDelivery",
  ...requires("webhooks:read"),
  ...common,
  method: "get",
  path: "/{id}/deliveries/{event_id}",
  summary: "Show one delivery with its attempts",
  request: { params: DeliveryParams },
  responses: {
    200: json(WebhookDeliveryEnvelopeSchema, "The delivery"),
    ...problems("unauthenticated", "not_found"),
  },
});

export const retryDelivery = createRoute({
  operationId: "retryWebhookDelivery",
  ...requires("webhooks:write"),
  ...common,
  method: "post",
  path: "/{id}/deliveries/{event_id}/retry",
  summary: "Re-send one delivery now",
  description:
    "Makes one attempt now, whatever the delivery's status, and answers when it is done (at most 15 seconds) with the " +
    "delivery and its new attempt. The receiver gets the same event with the same `webhook-id`. A failed attempt keeps " +
    "the delivery `pending` on the retry schedule from where it stood; one whose retries had run out is `failed` again. " +
    'An endpoint that is turned off is 409 `webhook_endpoint_disabled`: turn it on first (`PATCH {"enabled": true}`).',
  request: { params: DeliveryParams },
  responses: {
    200: json(WebhookDeliveryEnvelopeSchema, "The delivery after the attempt"),
    ...problems("unauthenticated", "not_found", "webhook_endpoint_disabled"),
  },
});

export const recover = createRoute({
  operationId: "recoverWebhookDeliveries",
  ...requires("webhooks:write"),
  ...common,
  method: "post",
  path: "/{id}/recover",
  summary: "Re-send every failed delivery since a time",
  description:
    "Every `failed` delivery of an event created at or after `since` (the oldest 10,000 a call; `more` says whether " +
    "to call again) becomes `pending` and is sent again in the background, in the order the queue takes them; follow them with `GET …/deliveries?filter[status]=pending`. " +
    "Useful after an outage of the receiver. An endpoint that is turned off is 409 `webhook_endpoint_disabled`.",
  request: { params: IdParam, body: jsonBody(RecoverBody) },
  responses: {
    202: json(RecoveryEnvelopeSchema, "How many deliveries are being sent again"),
    ...problems("unauthenticated", "not_found", "validation_failed", "webhook_endpoint_disabled"),
  },
});

export const test = createRoute({
  operationId: "testWebhook",
  ...requires("webhooks:write"),
  ...common,
  method: "post",
  path: "/{id}/test",
  summary: "Send a test event to an endpoint now",
  description:
    "Posts a `webhook.test` event (its `data` is the endpoint) to the endpoint's URL, signed like every delivery, and " +
    "answers with the result: whether it succeeded, the HTTP status, the duration and the first 1 KiB of the answer. " +
    "Works whether or not the endpoint is enabled or subscribed; the event is not stored and is not retried.",
  request: { params: IdParam },
  responses: {
    200: json(TestResultEnvelopeSchema, "What the receiver answered"),
    ...problems("unauthenticated", "not_found"),
  },
});
