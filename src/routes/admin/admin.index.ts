import { createRouter } from "../router";
import * as handlers from "./admin.handlers";
import * as routes from "./admin.routes";

/**
 * `/admin`: accounts, API keys and credits, the account databases and accounts' moves between them, the D1 counters and the hourly jobs, authorized by ADMIN_TOKEN
 * (docs/api.md, Overview).
 */
export const adminRoutes = createRouter()
  .openapi(routes.createAccount, handlers.createAccount)
  .openapi(routes.updateAccount, handlers.updateAccount)
  .openapi(routes.createKey, handlers.createKey)
  .openapi(routes.listKeys, handlers.listKeys)
  .openapi(routes.revokeKey, handlers.revokeKey)
  .openapi(routes.credit, handlers.credit)
  .openapi(routes.showAccount, handlers.showAccount)
  .openapi(routes.moveAccount, handlers.moveAccount)
  .openapi(routes.metrics, handlers.metrics)
  .openapi(routes.listDatabases, handlers.listDatabases)
  .openapi(routes.runJob, handlers.runJob);
