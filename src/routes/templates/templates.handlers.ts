import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { createTemplate, templateOwnerOf, templatesOf } from "../../gateways/cloud-api/template-cache";
import { formatTimestamp } from "../../lib/time";
import { toTemplateRecord } from "../../presenters/template";
import type * as routes from "./templates.routes";

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const owner = await templateOwnerOf(c.env, c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  const templates = await templatesOf(c.var.db, owner, { refresh: c.req.valid("query").refresh === "true" });
  return c.json(
    {
      success: true as const,
      data: templates.rows.map(toTemplateRecord),
      meta: { synced_at: formatTimestamp(templates.syncedAt), stale: templates.stale },
    },
    200,
  );
};

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const owner = await templateOwnerOf(c.env, c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  const row = await createTemplate(c.var.db, owner, c.req.valid("json"));
  return c.json({ success: true as const, data: toTemplateRecord(row) }, 201);
};
