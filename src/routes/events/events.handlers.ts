import type { RouteHandler } from "@hono/zod-openapi";
import { findEvent, listEvents } from "../../db/queries/events";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { toEventRecord } from "../../presenters/event";
import { pageLinks } from "../paging";
import type * as routes from "./events.routes";

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const params = c.req.valid("query");
  const query = {
    types: params["filter[type]"] ?? [],
    timeFrom: params.time_from,
    timeTo: params.time_to,
    limit: params.limit,
    cursor: params.cursor ?? null,
  };
  const { rows, more } = await listEvents(c.var.db, c.var.principal.accountId, query);
  return c.json(
    {
      success: true as const,
      data: rows.map(toEventRecord),
      ...pageLinks(c, rows, { limit: query.limit, cursor: query.cursor, more }),
    },
    200,
  );
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findEvent(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row) throw new ApiError("not_found", "No such event.");
  return c.json({ success: true as const, data: toEventRecord(row) }, 200);
};
