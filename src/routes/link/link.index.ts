import { linkTokenAuth } from "../../middleware/auth";
import { createRouter } from "../router";
import * as handlers from "./link.handlers";
import * as routes from "./link.routes";

/**
 * `/link/{token}/…`: what the hosted link page calls, authenticated by the link token in the
 * path (src/links/tokens.ts) instead of an API key, and reaching only the token's session.
 */
export const linkRoutes = createRouter();
linkRoutes.use(
  "/:token/*",
  linkTokenAuth((c) => c.req.param("token")),
);
linkRoutes
  .openapi(routes.view, handlers.view)
  .openapi(routes.pairingCode, handlers.pairingCode)
  .openapi(routes.reconnect, handlers.reconnect);
