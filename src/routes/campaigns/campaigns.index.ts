import { createRouter } from "../router";
import * as handlers from "./campaigns.handlers";
import * as routes from "./campaigns.routes";

/** `/v1/chatapp/campaigns`: bulk sends across several sessions, and their recipients. */
export const campaignRoutes = createRouter()
  .openapi(routes.create, handlers.create)
  .openapi(routes.list, handlers.list)
  .openapi(routes.show, handlers.show)
  .openapi(routes.remove, handlers.remove)
  .openapi(routes.addRecipients, handlers.addRecipients)
  .openapi(routes.listRecipients, handlers.listRecipients)
  .openapi(routes.start, handlers.start)
  .openapi(routes.pause, handlers.pause)
  .openapi(routes.resume, handlers.resume)
  .openapi(routes.cancel, handlers.cancel);
