import { gatewaySettingsOf, readConfig } from "../../config";
import { ApiError } from "../../errors";
import { createRouter } from "../router";
import * as handlers from "./sandbox.handlers";
import * as routes from "./sandbox.routes";

/**
 * `/sandbox`: drives the embedded sandbox gateway. Absent (404) when the deployment does not
 * enable the sandbox (`CHATAPP_GATEWAYS`); a session on another gateway is 404 `not_found` too.
 */
export const sandboxRoutes = createRouter();
sandboxRoutes.use("*", async (c, next) => {
  if (!gatewaySettingsOf(readConfig(c.env), "sandbox")) throw new ApiError("not_found", "No such resource.");
  await next();
});
sandboxRoutes
  .openapi(routes.scan, handlers.scan)
  .openapi(routes.drop, handlers.drop)
  .openapi(routes.ban, handlers.ban)
  .openapi(routes.health, handlers.health)
  .openapi(routes.inbound, handlers.inbound)
  .openapi(routes.inboundReaction, handlers.inboundReaction)
  .openapi(routes.received, handlers.received)
  .openapi(routes.setPhone, handlers.setPhone)
  .openapi(routes.showPhone, handlers.showPhone)
  .openapi(routes.pairPage, handlers.pairPage)
  .openapi(routes.pair, handlers.pair);
