import { createRouter } from "../router";
import * as handlers from "./messages.handlers";
import * as routes from "./messages.routes";

/** `/v1/chatapp/messages` (the `Messages` operations of openapi.json; docs/messages.md, Sending messages). */
export const messageRoutes = createRouter()
  .openapi(routes.send, handlers.send)
  .openapi(routes.list, handlers.list)
  .openapi(routes.listBySession, handlers.listBySession)
  .openapi(routes.show, handlers.show)
  .openapi(routes.markRead, handlers.markRead)
  .openapi(routes.remove, handlers.remove)
  .openapi(routes.edit, handlers.edit)
  .openapi(routes.media, handlers.media);
