import type { RouteHandler } from "@hono/zod-openapi";
import { listKeys } from "../../db/queries/api-keys";
import type { AppEnv } from "../../env";
import { issueKey } from "../../keys/issue";
import { revokeKey } from "../../keys/revoke";
import { toKeyRecord, toRevocationRecord } from "../../presenters/key";
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
    c.env,
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
  const cascade = c.req.valid("query").cascade === "true";
  const { principal } = c.var;
  const revoked = await revokeKey(c.env, c.var.db, principal.accountId, id, principal, {
    cascade,
    now: Date.now(),
  });
  if (cascade) return c.json({ success: true as const, data: toRevocationRecord(revoked) }, 200);
  return c.body(null, 204);
};
