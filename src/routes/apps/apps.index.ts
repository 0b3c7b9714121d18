import { createRouter } from "../router";
import * as handlers from "./apps.handlers";
import * as routes from "./apps.routes";

/**
 * `/v1/apps` (the `Apps` operations of openapi.json; docs/otp.md, Apps). PUT and PATCH share
 * one handler.
 */
export const appRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create)
  .openapi(routes.show, handlers.show)
  .openapi(routes.replace, handlers.update)
  .openapi(routes.update, handlers.update)
  .openapi(routes.remove, handlers.remove);
