import { createRouter } from "../router";
import * as handlers from "./media.handlers";
import * as routes from "./media.routes";

/** `/media`: stored media files, fetched by real gateways through signed links (docs/security.md, Media). */
export const mediaRoutes = createRouter().openapi(routes.get, handlers.get);
