import { createRouter } from "../router";
import * as deliveryHandlers from "./deliveries.handlers";
import * as deliveryRoutes from "./deliveries.routes";
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
