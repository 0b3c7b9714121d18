import { createRouter } from "../router";
import * as handlers from "./events.handlers";
import * as routes from "./events.routes";

/** `/v1/events`: the account's events (src/events/catalogue.ts), newest first. */
export const eventRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.show, handlers.show);
