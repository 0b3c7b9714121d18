import type { OpenAPIHono } from "@hono/zod-openapi";
import { TEST_EVENT_TYPE } from "../../events/catalogue";
import { eventOperationId } from "../events/events.index";
import { jsonBody, webhookSecurity } from "../openapi";
import { createRouter } from "../router";
import * as deliveryHandlers from "./deliveries.handlers";
import * as deliveryRoutes from "./deliveries.routes";
import { TestEventSchema } from "./deliveries.schemas";
import * as handlers from "./webhooks.handlers";
import * as routes from "./webhooks.routes";

/** `/v1/webhooks`: the account's webhook endpoints (Standard Webhooks), at most 10 each, with
 * their delivery history, retries, recovery and test sends. */
export const webhookRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create)
  .openapi(routes.show, handlers.show)
  .openapi(routes.update, handlers.update)
  .openapi(routes.remove, handlers.remove)
  .openapi(routes.rotateSecret, handlers.rotateSecret)
  .openapi(deliveryRoutes.listDeliveries, deliveryHandlers.listDeliveries)
  .openapi(deliveryRoutes.showDelivery, deliveryHandlers.showDelivery)
  .openapi(deliveryRoutes.retryDelivery, deliveryHandlers.retryDelivery)
  .openapi(deliveryRoutes.recover, deliveryHandlers.recover)
  .openapi(deliveryRoutes.test, deliveryHandlers.test);

/**
 * Lists the `webhook.test` event that `POST /v1/webhooks/{id}/test` sends in the document's
 * top-level `webhooks`, after the stored event types (src/routes/events/events.index.ts).
 */
export function registerTestEventWebhook(registry: OpenAPIHono["openAPIRegistry"]): void {
  registry.registerWebhook({
    operationId: eventOperationId(TEST_EVENT_TYPE),
    method: "post",
    path: TEST_EVENT_TYPE,
    tags: ["Events"],
    security: webhookSecurity,
    summary: `The \`${TEST_EVENT_TYPE}\` event`,
    description:
      "Sent by `POST /v1/webhooks/{id}/test` to check a receiver, whatever the endpoint subscribes to; never stored or retried.",
    request: { body: jsonBody(TestEventSchema) },
    responses: { 200: { description: "Any 2xx answer within 15 seconds counts as success." } },
  });
}
