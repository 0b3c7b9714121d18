import { createRouter } from "../router";
import * as handlers from "./api-keys.handlers";
import * as routes from "./api-keys.routes";

/** `/v1/api-keys`: the account's own keys, with scopes and expiry. */
export const apiKeyRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create)
  .openapi(routes.remove, handlers.remove);
