import type { RouteHandler } from "@hono/zod-openapi";
import { addOptOut, deleteOptOut, findOptOut, listOptOuts } from "../../db/queries/opt-outs";
import type { AppEnv } from "../../env";
import { erasedFormOf } from "../../erasures/opt-outs";
import { ApiError } from "../../errors";
import { toOptOutRecord } from "../../presenters/opt-out";
import { pageLinks } from "../paging";
import type * as routes from "./opt-outs.routes";

const notListed = () => new ApiError("not_found", "The number or user id is not on the opt-out list.");

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const page = { limit: query.limit, cursor: query.cursor ?? null };
  const { rows, more } = await listOptOuts(c.var.db, c.var.principal.accountId, page);
  const keys = rows.map((row) => ({ createdAt: row.createdAt, id: row.toNumber }));
  return c.json(
    { success: true as const, data: rows.map(toOptOutRecord), ...pageLinks(c, keys, { ...page, more }) },
    200,
  );
};

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const { address } = c.req.valid("json");
  const { row, created } = await addOptOut(c.var.db, c.var.principal.accountId, address, Date.now());
  return c.json({ success: true as const, data: toOptOutRecord(row) }, created ? 201 : 200);
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const { accountId } = c.var.principal;
  const address = c.req.valid("param").to_number;
  const row = await findOptOut(c.var.db, accountId, address, await erasedFormOf(c.env, accountId, address));
  if (!row) throw notListed();
  return c.json({ success: true as const, data: toOptOutRecord(row) }, 200);
};

export const remove: RouteHandler<typeof routes.remove, AppEnv> = async (c) => {
  const { accountId } = c.var.principal;
  const address = c.req.valid("param").to_number;
  if (!(await deleteOptOut(c.var.db, accountId, address, await erasedFormOf(c.env, accountId, address))))
    throw notListed();
  return c.body(null, 204);
};
