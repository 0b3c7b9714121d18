import { createRouter } from "../router";
import * as handlers from "./account.handlers";
import * as routes from "./account.routes";

/**
 * `/v1/account`: the caller's own account (its balance, name and low-balance alert), its ledger
 * and its usage, for clients such as the web console.
 */
export const accountRoutes = createRouter()
  .openapi(routes.show, handlers.show)
  .openapi(routes.update, handlers.update)
  .openapi(routes.ledger, handlers.ledger)
  .openapi(routes.usage, handlers.usage);
