import { createRouter } from "../router";
import * as handlers from "./templates.handlers";
import * as routes from "./templates.routes";

/** `/v1/chatapp/sessions/{id}/templates`: a Cloud API session's message templates at Meta. */
export const templateRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create);
