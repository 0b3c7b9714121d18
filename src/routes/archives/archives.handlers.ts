import type { RouteHandler } from "@hono/zod-openapi";
import { gunzip } from "../../archives/ndjson";
import { findArchive, listArchives } from "../../db/queries/archives";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { toArchiveRecord } from "../../presenters/archive";
import { pageLinks } from "../paging";
import type * as routes from "./archives.routes";

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const query = { limit, cursor: cursor ?? null };
  const { rows, more } = await listArchives(c.var.db, c.var.principal.accountId, query);
  return c.json(
    { success: true as const, data: rows.map(toArchiveRecord), ...pageLinks(c, rows, { ...query, more }) },
    200,
  );
};

/**
 * Serves an archive object (gzipped NDJSON): as a gzip file with `Accept: application/gzip`; as
 * NDJSON with `Content-Encoding: gzip`, passed through as stored (`encodeBody: "manual"`), when the
 * client accepts gzip (RFC 9110 §12.5.3); else decoded.
 */
export const download: RouteHandler<typeof routes.download, AppEnv> = async (c) => {
  const archive = await findArchive(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  const object = archive ? await c.env.ARCHIVES.get(archive.objectKey) : null;
  if (!archive || !object) throw new ApiError("not_found", "No such archive.");
  const common = { "Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff" };
  if (/\bapplication\/gzip\b/i.test(c.req.header("Accept") ?? ""))
    return c.body(object.body, 200, {
      ...common,
      "Content-Type": "application/gzip",
      "Content-Length": String(object.size),
      "Content-Disposition": `attachment; filename="${archive.day}-${archive.id}.ndjson.gz"`,
    });
  if (/\bgzip\b/i.test(c.req.header("Accept-Encoding") ?? ""))
    return new Response(object.body, {
      status: 200,
      encodeBody: "manual",
      headers: {
        ...common,
        "Content-Type": "application/x-ndjson",
        "Content-Encoding": "gzip",
        Vary: "Accept-Encoding",
      },
    }) as never;
  return c.body(gunzip(object.body), 200, {
    ...common,
    "Content-Type": "application/x-ndjson",
    Vary: "Accept-Encoding",
  });
};
