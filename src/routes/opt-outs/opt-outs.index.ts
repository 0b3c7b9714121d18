import { createRouter } from "../router";
import * as handlers from "./opt-outs.handlers";
import * as routes from "./opt-outs.routes";

/** `/v1/opt-outs`: the account's suppression list, which bulk campaigns skip. */
export const optOutRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create)
  .openapi(routes.show, handlers.show)
  .openapi(routes.remove, handlers.remove);
