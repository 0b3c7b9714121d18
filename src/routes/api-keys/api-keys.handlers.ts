import type { RouteHandler } from "@hono/zod-openapi";
import { listKeys, revokeKey } from "../../db/queries/api-keys";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { issueKey } from "../../keys/issue";
import { toKeyRecord } from "../../presenters/key";
import { closeKeySockets } from "../../sessions/live-revocation";
import { pageLinks } from "../paging";
import type * as routes from "./api-keys.routes";

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const page = { limit: query.limit, cursor: query.cursor ?? null };
  const { rows, more } = await listKeys(c.var.db, c.var.principal.accountId, page);
  return c.json(
    { success: true as const, data: rows.map(toKeyRecord), ...pageLinks(c, rows, { ...page, more }) },
    200,
  );
};

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  const { principal } = c.var;
  const { row, plaintext } = await issueKey(
    c.var.db,
    principal.accountId,
    {
      name: body.name,
      scopes: body.scopes,
      expiresAt: body.expires_at ? Date.parse(body.expires_at) : null,
    },
    principal,
    Date.now(),
  );
  return c.json({ success: true as const, data: { key: toKeyRecord(row), api_key: plaintext } }, 201);
};

export const remove: RouteHandler<typeof routes.remove, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  if (!(await revokeKey(c.var.db, id, Date.now(), c.var.principal.accountId)))
    throw new ApiError("not_found", "No such live API key.");
  await closeKeySockets(c.env, c.var.db, c.var.principal.accountId, [id]);
  return c.body(null, 204);
};
