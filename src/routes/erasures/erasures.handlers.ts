import type { RouteHandler } from "@hono/zod-openapi";
import { findErasure, listErasures } from "../../db/queries/erasures";
import type { AppEnv } from "../../env";
import { requestErasure } from "../../erasures/erase";
import { ApiError } from "../../errors";
import { toErasureRecord } from "../../presenters/erasure";
import { pageLinks } from "../paging";
import type * as routes from "./erasures.routes";

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const { address } = c.req.valid("json");
  const row = await requestErasure(c.env, c.var.db, c.var.principal.accountId, address, Date.now());
  return c.json({ success: true as const, data: toErasureRecord(row) }, 201);
};

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const page = { limit: query.limit, cursor: query.cursor ?? null };
  const { rows, more } = await listErasures(c.var.db, c.var.principal.accountId, page);
  return c.json(
    { success: true as const, data: rows.map(toErasureRecord), ...pageLinks(c, rows, { ...page, more }) },
    200,
  );
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findErasure(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row) throw new ApiError("not_found", "The account has no such erasure.");
  return c.json({ success: true as const, data: toErasureRecord(row) }, 200);
};
