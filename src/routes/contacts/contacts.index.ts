import { createRouter } from "../router";
import * as handlers from "./contacts.handlers";
import * as routes from "./contacts.routes";

/** `/v1/contacts`: whoever is on the other side of the account's chats (docs/contacts.md, Contacts). */
export const contactRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.show, handlers.show);
