import { createRouter } from "../router";
import * as handlers from "./number-checks.handlers";
import * as routes from "./number-checks.routes";

/**
 * `/v1/chatapp/sessions/{id}/contacts/check`: whether numbers are on the chat network (docs/sessions.md,
 * Number checks).
 */
export const numberCheckRoutes = createRouter().openapi(routes.check, handlers.check);
