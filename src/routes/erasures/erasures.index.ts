import { createRouter } from "../router";
import * as handlers from "./erasures.handlers";
import * as routes from "./erasures.routes";

/** `/v1/erasures`: a contact's data erased on request (docs/contacts.md, Erasure). */
export const erasureRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create)
  .openapi(routes.show, handlers.show);
