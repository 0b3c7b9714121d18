import { createRouter } from "../router";
import * as handlers from "./webhooks.handlers";
import * as routes from "./webhooks.routes";

/** `/v1/webhooks`: the account's webhook endpoints (Standard Webhooks), at most 10 each. */
export const webhookRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create)
  .openapi(routes.show, handlers.show)
  .openapi(routes.update, handlers.update)
  .openapi(routes.remove, handlers.remove)
  .openapi(routes.rotateSecret, handlers.rotateSecret);
