import { createRouter } from "../router";
import * as handlers from "./gateway-events.handlers";
import * as routes from "./gateway-events.routes";

/** `/gateway`: where real gateways post their webhook events (docs/gateways.md, Real gateways). */
export const gatewayEventRoutes = createRouter()
  .openapi(routes.waha, handlers.waha)
  .openapi(routes.evolution, handlers.evolution)
  .openapi(routes.cloudApiHandshake, handlers.cloudApiHandshake)
  .openapi(routes.cloudApi, handlers.cloudApi);
