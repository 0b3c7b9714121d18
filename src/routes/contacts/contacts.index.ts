import { createRouter } from "../router";
import * as handlers from "./contacts.handlers";
import * as routes from "./contacts.routes";

/** `/v1/chatapp/sessions/{id}/contacts/check`: whether numbers are on the chat network (README, Number checks). */
export const contactRoutes = createRouter().openapi(routes.check, handlers.check);
