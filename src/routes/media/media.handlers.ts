import type { RouteHandler } from "@hono/zod-openapi";
import { readConfig } from "../../config";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { checkMediaLink } from "../../media/link";
import type * as routes from "./media.routes";

/**
 * Serves a stored media file to the gateway that holds a valid signed link to it
 * (src/media/link.ts; docs/security.md, Media). Only sessions on a real gateway get links: when
 * the deployment enables none (the sandbox alone), none exists: 404.
 */
export const get: RouteHandler<typeof routes.get, AppEnv> = async (c) => {
  const secret = readConfig(c.env).mediaUrlSecret;
  if (secret === null) throw new ApiError("not_found", "No such resource.");
  const { key } = c.req.valid("param");
  const check = await checkMediaLink(secret, key, c.req.valid("query"), Date.now());
  if (check !== "valid") {
    throw new ApiError(
      "media_link_invalid",
      check === "expired" ? "The media link has expired." : "The media link's signature is missing or wrong.",
    );
  }
  const object = await c.env.MEDIA.get(key);
  if (!object) throw new ApiError("not_found", "No such media.");
  return c.body(object.body, 200, {
    "Content-Type": object.httpMetadata?.contentType ?? "application/octet-stream",
    "Content-Length": String(object.size),
    // A file, never a page of this origin, and never kept by a cache past the link.
    "Content-Disposition": "attachment",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "private, no-store",
  });
};
