import { createRouter } from "../router";
import * as handlers from "./sessions.handlers";
import * as routes from "./sessions.routes";

/**
 * `/v1/chatapp/sessions` (the `Sessions` operations of openapi.json; docs/sessions.md, Creating, listing and
 * linking).
 */
export const sessionRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.create, handlers.create)
  .openapi(routes.show, handlers.show)
  .openapi(routes.qrCode, handlers.qrCode)
  .openapi(routes.disconnect, handlers.disconnect)
  .openapi(routes.reconnect, handlers.reconnect)
  .openapi(routes.remove, handlers.remove)
  .openapi(routes.pairingCode, handlers.pairingCode)
  .openapi(routes.gatewayHealth, handlers.gatewayHealth)
  .openapi(routes.live, handlers.live)
  .openapi(routes.createLinkUrl, handlers.createLinkUrl)
  .openapi(routes.revokeLinkUrls, handlers.revokeLinkUrls);
