import { createRouter } from "../router";
import * as handlers from "./archives.handlers";
import * as routes from "./archives.routes";

/** `/v1/account/archives`: the account's message archives (docs/retention.md, Archives). */
export const archiveRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.download, handlers.download);
