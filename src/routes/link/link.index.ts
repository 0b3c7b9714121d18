import { linkTokenAuth } from "../../middleware/auth";
import { createRouter } from "../router";
import * as handlers from "./link.handlers";
import * as routes from "./link.routes";

/**
 * `/link/{token}`: the hosted link page (src/web/link; its security headers and HTML error pages
 * are mounted in app.ts, outside every other middleware). `/link/{token}/…`: what the page calls, authenticated by the link token in the
 * path (src/links/tokens.ts) instead of an API key, and reaching only the token's session.
 */
export const linkRoutes = createRouter();
// `/:token/*` also matches `/:token`: the page is authenticated by its token as the API is.
linkRoutes.use(
  "/:token/*",
  linkTokenAuth((c) => c.req.param("token")),
);
linkRoutes
  .openapi(routes.page, handlers.page)
  .openapi(routes.view, handlers.view)
  .openapi(routes.pairingCode, handlers.pairingCode)
  .openapi(routes.reconnect, handlers.reconnect);
